package spdc

import (
	"context"
	"time"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/sched"
)

// startPool starts the worker pool and returns the thread budget and a
// batch's mean nonzeros, which the later set-up steps use.
func (s *solver) startPool() (threads int, batchNNZ float64) {
	threads = driver.ThreadBudget(s.set.threads)
	// Each iteration pays two barrier rounds and moves the touched
	// coordinates between cores; below about a thousand nonzeros per worker
	// and iteration that costs more than the work it shares: two workers
	// made the epochs of short-row data slower at small m.
	// So the thread count, asked for or not, is an upper bound, and a worker
	// is added per driver.MinBatchWork nonzeros of a batch; above one, the
	// first epoch then times one worker against all (calibrateThreads).
	batchNNZ = float64(s.x.NNZ()) / float64(s.nb) * float64(s.set.m)
	workers := driver.WorkersFor(threads, batchNNZ, float64(driver.MinBatchWork), driver.NoLimit)
	// More workers than blocks per iteration would only wait at barriers.
	s.pool = sched.NewPool(min(workers, s.set.m))
	return threads, batchNNZ
}

// startWorkers sets up what the pool's threads share, once the layout is
// chosen: the certificate's evaluator, the barrier and the batch loop, the
// coordinate owners, and each worker's state. The iterations start on all
// workers; with more than one, the first epoch calibrates.
func (s *solver) startWorkers() {
	threads := s.pool.Threads()
	s.eval = driver.NewEvaluator(s.prob, threads)
	s.bar = sched.NewBarrier(threads, 0)
	s.loop = sched.NewBatchLoop(s.pool, s.bar)
	s.pool.BreakOnPanic(s.bar)
	if threads == 1 {
		// One owner: no column counts to balance (they would cost 8 bytes
		// a coordinate at set-up's peak).
		s.certOwners = sched.Owners{Bounds: []int32{0, int32(s.d)}}
	} else {
		s.certOwners = s.balancedOwners(threads)
	}
	s.allWorkers = make([]workerState, threads)
	for w := range s.allWorkers {
		if s.fused {
			s.allWorkers[w].buf = make([]float64, s.d)
		}
	}
	s.setWorkers(threads)
	s.calibrate = threads > 1 && driver.CalibrateWorkers
}

// workerState is what each worker keeps to itself.
type workerState struct {
	buf     []float64 // fused dense reduction: Σ Δyₖaₖ over this worker's rows
	touched []int32   // lazy: coordinates this owner touched this iteration
	prev    []int32   // scaled lazy: ... and in the previous one
	stamp   uint32    // lazy: this owner's iteration count, for stamp[]
	t       int32     // the lazy segment's position in this iteration
	exps    int64     // exponentials the logistic prox took (proxExps)
	_       [64]byte
}

// balancedOwners cuts the coordinates into ranges of equal update work:
// the batch entries a range receives (its column counts) plus, for dense
// runs, the per-coordinate update.
func (s *solver) balancedOwners(threads int) sched.Owners {
	colNNZ := make([]int64, s.d)
	for _, j := range s.x.Indices {
		colNNZ[j]++
	}
	switch {
	case s.fused:
		// Owners only sum the workers' buffers: every coordinate costs the same.
		for j := range colNNZ {
			colNNZ[j] = 1
		}
	case !s.lazy:
		// The dense update costs every coordinate the same on top of the scatter.
		for j := range colNNZ {
			colNNZ[j] += int64(float64(s.x.NNZ()) / float64(s.d) / 4)
		}
	}
	return sched.NewOwners(colNNZ, threads)
}

// setWorkers makes the iterations run on the first n workers, with
// coordinates owned as certOwners has them for n > 1. Called between pool
// phases only. It leaves no per-worker state behind: every correction is
// cleared at the next update phase (scaled lazy), and the touch stamps
// start again (lazy with L1).
func (s *solver) setWorkers(n int) {
	s.workers = s.allWorkers[:n]
	s.loop.SetWorkers(n)
	if n == 1 {
		s.owners = sched.Owners{Bounds: []int32{0, int32(s.d)}}
	} else {
		s.owners = s.certOwners
	}
	if s.fastL2 {
		s.clearCorr = true
	}
	if s.lazy && !s.fastL2 {
		for j := range s.lz {
			s.lz[j].stamp = 0
		}
	}
	for w := range s.allWorkers {
		s.allWorkers[w].stamp = 0
		s.allWorkers[w].touched = s.allWorkers[w].touched[:0]
		s.allWorkers[w].prev = s.allWorkers[w].prev[:0]
	}
}

// calibrationRounds is how many rounds of iterations calibrateThreads runs
// at most in the first epoch, each a calibrationRounds-th of it: one on all
// workers to warm the caches and the workers, then one worker and all
// workers alternately. Shorter rounds (a sixteenth of the epoch each) last
// too little on small data to outweigh the host's jitter, and picked the
// wrong side. After the first pair, a ratio beyond calibrationClear decides.
const (
	calibrationRounds = 5
	calibrationClear  = 1.25
)

// calibrateThreads decides whether threads pay by measuring rather than
// guessing: how much a second core gains depends on how often the cores
// pass coordinates to each other, which depends on the data and the host
// (on one two-core host a second worker halved news20's epoch speed and
// raised url-shaped data's). It
// runs up to calibrationRounds rounds of c iterations of the first epoch
// and keeps the faster setting; the rounds are ordinary iterations, so the
// run is the same whatever it keeps. It returns the rounds it ran.
func (s *solver) calibrateThreads(ctx context.Context, c int) (int, error) {
	all := len(s.allWorkers)
	var one, many time.Duration // time spent on one worker and on all
	rounds := calibrationRounds
	for round := range calibrationRounds {
		single := round&1 == 1 // round 0 (all workers) warms up
		if single {
			s.setWorkers(1)
		} else {
			s.setWorkers(all)
		}
		t0 := time.Now()
		if _, err := s.iterate(ctx, 1, c); err != nil {
			return round + 1, err
		}
		switch {
		case single:
			one += time.Since(t0)
		case round > 0:
			many += time.Since(t0)
		}
		if ctx.Err() != nil {
			rounds = round + 1
			break
		}
		if round == 2 {
			if r := float64(one) / float64(many); r > calibrationClear || r < 1/calibrationClear {
				rounds = 3
				break
			}
		}
	}
	if many < one {
		s.setWorkers(all)
		if n := (rounds / 2) * c; n > 0 {
			s.oneIter = one / time.Duration(n)
		}
	} else {
		s.setWorkers(1)
	}
	return rounds, nil
}
