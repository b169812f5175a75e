package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// The asynchronous SDCA solvers (PASSCoDe; Hsieh, Yu & Dhillon, "PASSCoDe:
// Parallel ASynchronous Stochastic dual Co-ordinate Descent", ICML 2015).
const (
	// SolverSDCAAsync adds each step's change into the shared v with an
	// atomic compare-and-swap loop (PASSCoDe-Atomic): no update is lost.
	SolverSDCAAsync driver.Solver = "sdca-async"
	// SolverSDCAWild reads and writes v with atomic loads and stores but no
	// read-modify-write (PASSCoDe-Wild): two workers adding to the same
	// coordinate at once can lose one of the additions.
	SolverSDCAWild driver.Solver = "sdca-async-wild"
)

func init() {
	for _, e := range []struct {
		name    driver.Solver
		summary string
		rank    int
	}{
		{SolverSDCAAsync, "asynchronous SDCA, atomic adds to the shared v, the frequent columns' changes buffered per worker, no barrier per step (PASSCoDe-Atomic, Hsieh et al. 2015)", 22},
		{SolverSDCAWild, "asynchronous SDCA, unsynchronised adds to the shared v, updates may be lost (PASSCoDe-Wild, Hsieh et al. 2015)", 23},
	} {
		wild := e.name == SolverSDCAWild
		driver.Register(&driver.Entry{
			SolverInfo: driver.SolverInfo{
				Name:         e.name,
				Summary:      e.summary,
				Losses:       "any (squared, logistic, sqhinge, smoothhinge, hinge)",
				Regularizers: "elastic net with λ > 0 on every coordinate, optional centre and weights",
				Parallel:     true,
				Async:        true,
				Certified:    true,
				// Both forms take the last stage's duals.
				StageWarmStart: true,
				Reads:          []string{driver.CoordinateFamily, Family},
				Takes:          driver.Takes{L1: true, WarmDuals: true},
			},
			Rank:    e.rank,
			Workers: AsyncWorkers,
			Accepts: acceptsSDCAAsync,
			Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
				return startSDCAAsync(prob, opt, wild)
			},
		})
	}
}

func acceptsSDCAAsync(prob objective.Problem, opt driver.Options) error {
	if err := acceptsSDCA(prob, opt); err != nil {
		return err
	}
	if opt.Coordinate().M > 1 {
		return fmt.Errorf("engine: %s steps one sample at a time on each worker; m = %d mini-batches are sdca's", opt.Solver, opt.Coordinate().M)
	}
	return nil
}

// sdcaAsync is PASSCoDe. Every epoch draws a random permutation of the
// samples, and worker w steps the piece perm[bounds[w]:bounds[w+1]] in that
// order, with the duals of those samples. (Fixed ranges per worker, each
// shuffled on its own, were the first design; run one after the other they
// are a block-structured order, which on a9a left SDCA's relative gap at
// 3e-4 after 60 epochs where a full permutation reached 4e-11 (squared
// loss, λ = 1e-4, both measured serially with the sync solver's step), and
// two real workers did no better. Pieces of a fresh permutation are, run one
// after the other, a plain random permutation.) A
// step reads the row's coordinates of the shared v, computes the same exact
// dual step as sdca (sdcaSolver.step) and adds Δyₖ·aₖ/n into v, with no
// barrier: the other workers see the change whenever their loads reach it.
// The workers meet only at the end of an epoch (the pool phase). In the
// wild mode every certificate recomputes v from the duals, which undoes the
// lost updates before the next epoch; the atomic mode's v is exact up to
// rounding, which it bounds as it goes, so that its certificates need not
// recompute v (sdcaCore.certificateWithin).
//
// The rounding bound (atomic mode). A step adds cⱼ = fl(fl(fl(y′ₖ − yₖ)·
// fl(1/n))·aₖⱼ) for (y′ₖ − yₖ)aₖⱼ/n, four roundings off (< 5u|cⱼ|), and
// each addition t = fl(s + cⱼ), into vⱼ or a buffer, and each flush into
// vⱼ, errs by at most u|t|. So the workers sum |t| over their additions
// and 5|cⱼ| over their steps' changes (5|Δ|·Σⱼ|aₖⱼ| per step, the rows'
// ℓ1 norms computed once), and after each epoch drift grows by u times
// their sums: it bounds ‖v − (1/n)Σₖ yₖaₖ‖₁ since v was last recomputed
// (Higham, "Accuracy and Stability of Numerical Algorithms", §2.2, §3.1).
//
// Race freedom: v is the only memory written by one worker and read by
// another during an epoch, and every access to it in the epoch is an atomic
// load, store or compare-and-swap on the float64's bits; the duals and the
// logits of a sample belong to the worker that steps it in this epoch. The
// modes differ in the add:
//
//	atomic: repeat { old = load(vⱼ) } until CAS(vⱼ, old, old + δ): every
//	        add lands, v = (1/n) Σ yₖaₖ up to rounding at the epoch's end;
//	wild:   store(vⱼ, load(vⱼ) + δ): an add made by another worker between
//	        the load and the store is overwritten and lost, so v drifts from
//	        (1/n) Σ yₖaₖ (PASSCoDe-Wild's ŵ ≠ w̄). It skips the CAS's
//	        retry loop and its locked instruction.
//
// Both read stale values: a step may use a v that misses the latest steps
// of the other workers (PASSCoDe's bounded delay), which its analysis
// covers for the atomic mode when the delay is small next to n.
//
// Buffered columns (atomic mode). On data whose frequent columns come
// first (the column grouping of wide data puts them there), the first H
// coordinates of v appear in nearly every row: adding into them at every
// step moves their cache lines from core to core at every step. (That, not
// the locked instruction, is the cost: with the buffer, plain unlocked adds
// into the other columns, a race kept out of the code, ran the epochs no
// faster.) So each worker adds its changes to those coordinates into a
// private buffer δ_w, reads vⱼ + δ_wⱼ for them, and adds δ_w into v
// (atomically, then zeroes it) every B of its steps and at the end of its
// share. Every change still lands in v exactly once, so
// v = (1/n) Σ yₖaₖ up to rounding at the epoch's end, as without the
// buffer; the other workers see a worker's changes to the buffered
// coordinates up to B steps late, which adds at most B·(workers − 1) to
// PASSCoDe's delay. B is a power of two at most n/(64·workers) (so the
// delay stays small next to n) and at most 4096; H = min(d, 4B) keeps
// the flush, which reads the whole buffer, at four entries per step.
// Data too small for B ≥ 16 take the unbuffered path.
type sdcaAsync struct {
	*sdcaCore
	wild    bool
	pool    *sched.Pool
	perm    []int32 // this epoch's random order of the samples
	bounds  []int   // worker w steps perm[bounds[w]:bounds[w+1]]
	rng     *rand.Rand
	counts  []paddedCounter // samples stepped per worker in the last phase
	stopped atomic.Bool
	// roundings holds each worker's bound on the rounding errors of its
	// additions into v in the last phase, in units of u (see drift), and
	// rowL1 each row's Σⱼ |aₖⱼ|, by which a step's Σⱼ |cⱼ| is |a|·rowL1[k].
	roundings []paddedSum
	rowL1     []float64
	// buffers holds each worker's δ_w over the first coordinates of v
	// (nil: none; see Buffered columns above), flushEvery its B.
	buffers    []columnBuffer
	flushEvery int
}

// paddedSum keeps one worker's sum on its own cache line.
type paddedSum struct {
	x float64
	_ [56]byte
}

// unitRoundoff is u = 2⁻⁵³, the relative rounding error of one float64
// operation.
const unitRoundoff = 0x1p-53

// changeRounding bounds, in units of u, the relative error of a step's
// change cⱼ = fl(fl(fl(y′ₖ − yₖ)·fl(1/n))·aₖⱼ) against (y′ₖ − yₖ)aₖⱼ/n:
// four roundings, γ₄/(1 − γ₄) < 4.01u.
const changeRounding = 5

// columnBuffer is one worker's private buffer, padded so that two workers'
// slice headers do not share a cache line.
type columnBuffer struct {
	delta []float64
	_     [40]byte
}

// paddedCounter keeps one worker's counter on its own cache line.
type paddedCounter struct {
	n int64
	_ [56]byte
}

func startSDCAAsync(prob objective.Problem, opt driver.Options, wild bool) (driver.Method, error) {
	threads := AsyncWorkers(prob.X, opt.Threads)
	core, err := newSDCACore(prob, opt, nil, nil)
	if err != nil {
		return nil, err
	}
	core.runningExact = !wild // the atomic adds apply every update
	core.driftKnown = !wild   // and their rounding errors are bounded
	s := &sdcaAsync{sdcaCore: core, wild: wild, pool: sched.NewPool(threads)}
	s.bounds = make([]int, threads+1)
	s.counts = make([]paddedCounter, threads)
	s.roundings = make([]paddedSum, threads)
	if !wild {
		s.rowL1 = hugepage.Make[float64](core.n)
		if err := s.pool.Run(func(w int) {
			for k := core.n * w / threads; k < core.n*(w+1)/threads; k++ {
				val, _ := core.x.Row(k)
				var l1 float64
				for _, a := range val {
					l1 += math.Abs(a)
				}
				s.rowL1[k] = l1
			}
		}); err != nil {
			return nil, errors.Join(err, s.pool.Close(), core.closeCert())
		}
	}
	for w := range threads {
		s.bounds[w+1] = core.n * (w + 1) / threads
	}
	if h, b := BufferedColumns(prob.X, threads); !wild && h > 0 {
		s.flushEvery = b
		s.buffers = make([]columnBuffer, threads)
		for w := range s.buffers {
			s.buffers[w].delta = make([]float64, h)
		}
	}
	s.perm = make([]int32, core.n)
	for k := range s.perm {
		s.perm[k] = int32(k)
	}
	s.rng = rand.New(rand.NewPCG(opt.Seed, 0xa5dca))
	return s, nil
}

func (s *sdcaAsync) Certify() (driver.TracePoint, error) { return s.certificate() }
func (s *sdcaAsync) Threads() int                        { return s.pool.Threads() }

func (s *sdcaAsync) Finish(res *driver.Result) error {
	res.Duals = s.y
	return errors.Join(s.closeCert(), s.pool.Close())
}

// RunEpochs runs k epochs, one pool phase each: the end of a phase is the
// only point where the workers wait for each other.
func (s *sdcaAsync) RunEpochs(ctx context.Context, k int) (int, error) {
	s.wFresh = false
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		s.stopped.Store(false)
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		err := s.pool.Run(func(w int) { s.counts[w].n = s.work(ctx, w) })
		var roundings float64
		for w := range s.counts {
			s.sampled += s.counts[w].n
			roundings += s.roundings[w].x
		}
		// The workers' sums of positive terms carry relative errors far
		// below a percent (under 10¹³ terms), which the factor covers.
		s.drift += 1.01 * unitRoundoff * roundings
		if err != nil {
			return e + 1, fmt.Errorf("engine: %s: %w", s.name(), err)
		}
	}
	return k, nil
}

func (s *sdcaAsync) name() driver.Solver {
	if s.wild {
		return SolverSDCAWild
	}
	return SolverSDCAAsync
}

// AsyncWorkers returns the workers that sdca-async and sdca-async-wild
// run on for data x and Options.Threads threads (0: the cores): at most
// one per sample.
func AsyncWorkers(x *sparse.CSR, threads int) int {
	return driver.WorkersFor(threads, float64(x.Rows), 1, driver.NoLimit)
}

// BufferedColumns returns H, the number of leading columns of x whose
// changes each of sdca-async's workers keeps in a private buffer, and B,
// the steps between the buffer's additions into v (see sdcaAsync); 0, 0
// where it keeps none: on one worker, or on too few samples per worker.
func BufferedColumns(x *sparse.CSR, workers int) (columns, steps int) {
	if workers < 2 {
		return 0, 0
	}
	b := bufferedSteps(x.Rows, workers)
	return min(x.Cols, 4*b), b
}

// bufferedSteps returns B, the steps a worker buffers its changes to the
// frequent columns for, among threads workers over n samples: the largest
// power of two at most min(4096, n/(64·threads)), or 0 below 16.
func bufferedSteps(n, threads int) int {
	b := min(4096, n/(64*threads))
	if b < 16 {
		return 0
	}
	p := 16
	for 2*p <= b {
		p *= 2
	}
	return p
}

// work runs worker w's share of one epoch and returns the samples it
// stepped. The step is sdcaSolver.step's with atomic accesses to v.
func (s *sdcaAsync) work(ctx context.Context, w int) int64 {
	if s.buffers != nil {
		return s.workBuffered(ctx, w)
	}
	order := s.perm[s.bounds[w]:s.bounds[w+1]]
	indptr, values, indices := s.x.Indptr, s.x.Values, s.x.Indices
	v := s.v
	var roundings float64 // Σ (changeRounding·|cⱼ| + |new vⱼ|), in units of u
	defer func() { s.roundings[w].x = roundings }()
	rowL1 := s.rowL1
	for i, k32 := range order {
		if i&1023 == 1023 && (s.stopped.Load() || ctx.Err() != nil) {
			s.stopped.Store(true)
			return int64(i)
		}
		if next := i + prefetchAhead; next < len(order) {
			s.prefetchSample(int(order[next]))
		}
		k := int(k32)
		lo, hi := indptr[k], indptr[k+1]
		val, idx := values[lo:hi], indices[lo:hi]
		z := s.marginAtomic(val, idx, v)
		yk := s.y[k]
		yn := s.dualStep(k, z, s.sigma[k])
		d := yn - yk
		if d == 0 {
			continue
		}
		s.y[k] = yn
		a := d * s.invN
		if s.wild {
			for p, j := range idx {
				storeFloat(&v[j], loadFloat(&v[j])+a*val[p])
			}
		} else {
			var sums float64
			for p, j := range idx {
				sums += math.Abs(addFloat(&v[j], a*val[p]))
			}
			roundings += sums + changeRounding*math.Abs(a)*rowL1[k]
		}
	}
	return int64(len(order))
}

// workBuffered is work with the worker's changes to the first len(δ)
// coordinates of v kept in its buffer δ and added into v every flushEvery
// steps (see Buffered columns in sdcaAsync's doc).
func (s *sdcaAsync) workBuffered(ctx context.Context, w int) int64 {
	order := s.perm[s.bounds[w]:s.bounds[w+1]]
	indptr, values, indices := s.x.Indptr, s.x.Values, s.x.Indices
	v, delta := s.v, s.buffers[w].delta
	flush := s.flushEvery - 1 // flushEvery is a power of two
	var roundings float64     // as in work
	defer func() { s.roundings[w].x = roundings + flushBuffer(delta, v) }()
	rowL1 := s.rowL1
	for i, k32 := range order {
		if i&1023 == 1023 && (s.stopped.Load() || ctx.Err() != nil) {
			s.stopped.Store(true)
			return int64(i)
		}
		if i&flush == flush {
			roundings += flushBuffer(delta, v)
		}
		if next := i + prefetchAhead; next < len(order) {
			s.prefetchSample(int(order[next]))
		}
		k := int(k32)
		lo, hi := indptr[k], indptr[k+1]
		val, idx := values[lo:hi], indices[lo:hi]
		z := s.marginBuffered(val, idx, v, delta)
		yn := s.dualStep(k, z, s.sigma[k])
		d := yn - s.y[k]
		if d == 0 {
			continue
		}
		s.y[k] = yn
		a := d * s.invN
		var sums float64
		for p, j := range idx {
			c := a * val[p]
			if int(j) < len(delta) {
				t := delta[j] + c
				delta[j] = t
				sums += math.Abs(t)
			} else {
				sums += math.Abs(addFloat(&v[j], c))
			}
		}
		roundings += sums + changeRounding*math.Abs(a)*rowL1[k]
	}
	return int64(len(order))
}

// flushBuffer adds the buffer δ into the first len(δ) coordinates of v,
// atomically, zeroes it, and returns Σ |new vⱼ|, the bound on the
// additions' rounding errors in units of u.
func flushBuffer(delta, v []float64) float64 {
	v = v[:len(delta)]
	var roundings float64
	for j, d := range delta {
		if d != 0 {
			roundings += math.Abs(addFloat(&v[j], d))
			delta[j] = 0
		}
	}
	return roundings
}

// marginBuffered is marginAtomic with vⱼ + δⱼ for the buffered columns.
func (s *sdcaAsync) marginBuffered(val []float64, idx []int32, v, delta []float64) float64 {
	var z float64
	switch {
	case s.plainL2:
		for p, j := range idx {
			vj := loadFloat(&v[j])
			if int(j) < len(delta) {
				vj += delta[j]
			}
			z += val[p] * vj
		}
		return -z * s.invLam
	case s.plainEN:
		l1 := s.en.L1
		for p, j := range idx {
			vj := loadFloat(&v[j])
			if int(j) < len(delta) {
				vj += delta[j]
			}
			if a := math.Abs(vj) - l1; a > 0 {
				z -= val[p] * math.Copysign(a, vj)
			}
		}
		return z * s.invLam
	}
	for p, j := range idx {
		vj := loadFloat(&v[j])
		if int(j) < len(delta) {
			vj += delta[j]
		}
		z += val[p] * s.en.PrimalCoord(int(j), vj)
	}
	return z
}

// marginAtomic is sdcaCore.margin with every read of v an atomic load.
func (s *sdcaAsync) marginAtomic(val []float64, idx []int32, v []float64) float64 {
	var z float64
	switch {
	case s.plainL2:
		for p, j := range idx {
			z += val[p] * loadFloat(&v[j])
		}
		return -z * s.invLam
	case s.plainEN:
		l1 := s.en.L1
		for p, j := range idx {
			vj := loadFloat(&v[j])
			if a := math.Abs(vj) - l1; a > 0 {
				z -= val[p] * math.Copysign(a, vj)
			}
		}
		return z * s.invLam
	}
	for p, j := range idx {
		z += val[p] * s.en.PrimalCoord(int(j), loadFloat(&v[j]))
	}
	return z
}

// loadFloat atomically loads *p.
func loadFloat(p *float64) float64 {
	return math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(p))))
}

// storeFloat atomically stores f in *p.
func storeFloat(p *float64, f float64) {
	atomic.StoreUint64((*uint64)(unsafe.Pointer(p)), math.Float64bits(f))
}

// addFloat atomically adds d to *p with a compare-and-swap loop and
// returns the sum it stored.
func addFloat(p *float64, d float64) float64 {
	u := (*uint64)(unsafe.Pointer(p))
	for {
		old := atomic.LoadUint64(u)
		sum := math.Float64frombits(old) + d
		if atomic.CompareAndSwapUint64(u, old, math.Float64bits(sum)) {
			return sum
		}
	}
}
