package spdc

import (
	"context"
	"fmt"
	"time"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// This file holds the method as the driver sees it: the two solvers'
// registration, the solver's state, and the driver.Method interface. The
// set-up is in setup.go, the iteration's phases in iteration.go, the
// sampling in sampling.go, the storage layouts in layout.go, lazy.go and
// lazyl2.go, the workers in workers.go and the certificate in
// certificate.go.

// The family's solvers.
const (
	// SolverAdaSPDC uses per-block steps σᵢ from each block's spectral norm
	// and τ, θ from the largest norm of the sampled blocks (Zhu & Storkey
	// 2015, Eq. 10, 12, 15).
	SolverAdaSPDC driver.Solver = "adaspdc"
	// SolverSPDC is the constant-step baseline (Zhang & Xiao): every block
	// uses R = maxᵢ Rᵢ.
	SolverSPDC driver.Solver = "spdc"
)

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverAdaSPDC,
			Summary:        "adaptive stochastic primal-dual coordinate method, per-block steps (Zhu & Storkey 2015)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "elastic net with λ > 0, optional centre",
			Parallel:       true,
			Certified:      true,
			StageWarmStart: true,
			Reads:          []string{driver.CoordinateFamily},
			Takes:          driver.Takes{L1: true, WarmDuals: true},
		},
		Rank:    0,
		Accepts: acceptsAdaSPDC,
		Start:   startAdaSPDC,
	})
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:               SolverSPDC,
			Summary:            "stochastic primal-dual coordinate method, one step for all blocks (Zhang & Xiao 2015)",
			Losses:             "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:       "elastic net with λ > 0, optional centre",
			Parallel:           true,
			Certified:          true,
			ImportanceSampling: true,
			StageWarmStart:     true,
			Reads:              []string{driver.CoordinateFamily},
			Takes:              driver.Takes{L1: true, WarmDuals: true},
		},
		Rank:    10,
		Accepts: acceptsAdaSPDC,
		Start:   startAdaSPDC,
	})
}

// startAdaSPDC checks what AdaSPDC and SPDC need beyond a valid problem
// and builds the method.
func startAdaSPDC(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	s, err := newSolver(ctx, prob, opt)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// acceptsAdaSPDC reports why AdaSPDC or SPDC cannot solve prob: the steps
// (Eq. 10, 12, 15) need λ > 0 and γ > 0, and the update one λ for all
// coordinates.
func acceptsAdaSPDC(prob objective.Problem, opt driver.Options) error {
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the elastic net (with or without a centre), not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if en.Weights != nil {
		return fmt.Errorf("engine: %s does not take per-coordinate regularizer weights yet: its steps and lazy updates assume one λ for every coordinate", opt.Solver)
	}
	if err := objective.NeedStrongConvexity(en, string(opt.Solver)); err != nil {
		return err
	}
	if g := prob.Loss.Gamma(); !(g > 0) {
		return fmt.Errorf("engine: the %s loss has γ = %g: %s needs a smooth loss (φ* strongly convex, γ > 0)", prob.Loss.Name(), g, opt.Solver)
	}
	return nil
}

// solver holds the state of one AdaSPDC or SPDC run. Its fields are grouped
// by the phase that sets them: the problem and the set-up's blocks and
// steps, fixed for the run; the iterate and the storage layout that holds
// it; the lazy segment; the workers; and the batch state that the
// iterations pass from phase to phase.
type solver struct {
	// The problem P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x), with n = x.Rows
	// samples and d = x.Cols coordinates, and the options the method reads
	// (settingsFrom).
	prob  objective.Problem
	set   settings
	x     *sparse.CSR
	n, d  int
	lossG float64 // γ of φ*
	lam   float64
	// reg is the problem's elastic net without its centre c; a centre
	// enters through shift = λc, subtracted from r everywhere the iteration
	// keeps it (initIterate, certificate), and the certificate adds it
	// back.
	reg    objective.ElasticNet
	shift  []float64
	centre []float64

	// The set-up's blocks and steps (setup.go), fixed for the run: the n_b
	// dual blocks, the couplings Rᵢ the steps see, and Eq. 10, 12 and 15 in
	// the per-sample form that stepSizes derives.
	part   *blocks.Partition
	nb     int
	norms  []float64 // Rᵢ = ‖Aᵢ‖₂ per block, or ρᵢ (ESO); SolverSPDC: all the largest
	sigma  []float64 // per-sample dual step of block i: σᵢ·s (see stepSizes)
	scale  float64   // s/m: batch sum Σ Δyₖaₖ → (1/m) Σ ÃⱼΔyⱼ in Eq. 11
	rScale float64   // 1/n:  batch sum → Δr in Eq. 13
	tauC   float64   // τᵗ = tauC / Rᵗ_max
	thA    float64   // θᵗ = 1 − 1/(thA + thB·Rᵗ_max)
	thB    float64
	maxQ   int // largest block size

	// The iterate: duals y (one per sample, in sample order), and per
	// coordinate the primal x, the extrapolated x̄ and r = (1/n) Σₖ yₖ aₖ.
	// Lazy runs bring them up to date from their records at every
	// synchronisation (the end of an epoch), and one-worker runs copy y
	// from the per-sample records then.
	y    []float64
	xv   []float64
	xbar []float64
	r    []float64

	// The storage layout (layout.go, and the package doc's "Storage
	// layouts"), chosen once by chooseLayout and buildRecords. Per
	// coordinate: the arrays above (dense), lz (lazy, elastic net) or cs
	// (lazy, L2 only); per sample: rows, duals and binfo, or one.
	lazy   bool // a lazy run: untouched coordinates replay their recurrence
	fastL2 bool // a lazy run with L1 = 0, in the scaled form (cs)
	fused  bool // dense update with the reduction fused into the read phase
	// Lazy runs keep a coordinate's state in one record, so that a row's
	// read of a cold coordinate costs one cache miss rather than four; the
	// arrays above are brought up to date from it at every synchronisation.
	lz []lazyCoord
	// Lazy runs with L1 = 0 keep the scaled form of lazyl2.go instead:
	// one record per coordinate, O(1) work per iteration besides the rows.
	cs []coordL2
	// rows and duals hold each sample's state in block order (block b is
	// [part.Start[b], part.Start[b+1])): rows the label, step and row
	// extent, which the loop only reads, and duals the dual and the prox's
	// memory, which it writes. Apart, the read-only half stays shared by
	// every core's cache, while a sample's dual moves to the core that
	// drew it (one record: both did, and half the samples of a two-thread
	// epoch missed in the other core's cache).
	rows     []sampleRow
	duals    []sampleDual
	logistic bool // the loss is Logistic: its prox keeps the logit in sampleDual.aux
	// one replaces rows, duals and binfo when every batch is one block of
	// one sample on one worker (m = 1, BlockSize 1, uniform sampling,
	// scaled lazy L2; see oneIteration): everything an iteration reads
	// and writes of its sample then sits in one cache line.
	one []sampleOne
	// binfo is each block's extent in rows and duals and the steps of an
	// iteration whose largest norm is that block's, in one record: drawing
	// a batch then costs one cache miss per block and no division.
	binfo      []blockInfo
	importance bool // importance sampling: binfo's w weighs Eq. 11's estimate

	// The lazy segment (lazy.go, elastic net): for the iterations t since
	// the segment began, the step sizes and the running product P and sum
	// S that replay the untouched coordinates' affine recurrences in O(1).
	segP   []float64 // P[t] = Π_{s<t} 1/(1+τₛλ)
	segS   []float64 // S[t] = Σ_{s<t} bₛ / P[s+1], bₛ = −τₛ/(1+τₛλ)
	segTau []float64
	segTh  []float64
	segT   int // iterations run in this segment

	// The workers (workers.go). The iterations run on workers, the first
	// len(workers) of allWorkers, one or all of them
	// (driver.CalibrateWorkers), and worker w owns the coordinates
	// owners.Range(w). Certificates run on every pool thread, with
	// certOwners.
	pool       *sched.Pool
	bar        *sched.Barrier // one party per pool thread
	owners     sched.Owners
	workers    []workerState
	allWorkers []workerState
	certOwners sched.Owners
	eval       *objective.Evaluator // the certificate
	calibrate  bool                 // the first runEpochs times one worker against all
	// oneIter is the time of an iteration on one worker as calibration
	// measured it, when it kept all workers: RunEpochs falls back to one
	// worker if all of them later run slower than that (0: no watch).
	oneIter time.Duration

	// The batch state that the read phase hands to the update phase
	// (iteration.go), and the loop that runs the phases.
	dy []float64 // Δyₖ per batch slot, written in the read phase
	u  []float64 // Σ Δyₖ aₖⱼ, written by the owner of j
	// loop runs the iterations: batch slots, barriers, block claims (on
	// a cache line of their own inside it) and the context.
	loop *sched.BatchLoop
	_    [64]byte
	// Below: fields that worker 0 writes every iteration, kept off the
	// cache lines above, which every worker reads every iteration: a line
	// that one core writes and every other core reads moves between the
	// cores' caches on each write (false sharing).
	clearCorr bool      // the next update phase clears every correction (after a rebase)
	seg       l2Segment // the drawer's (worker 0's) P and S

	sampled int64 // samples updated so far, for the passes count

	// Sampling (sampling.go). The batches are double-buffered: iteration
	// it runs batches[it&1] while worker 0 draws batches[(it+1)&1] at the
	// start of its read phase (the dynamic block claims let the other
	// workers take up the slack), so sampling is neither serial nor
	// repeated on every worker.
	sampler blocks.Sampler
	ahead   ahead    // the batches drawn beyond the next
	batches [2]batch // slot loop.Slot() runs while the other is drawn
}

// The driver's view of an AdaSPDC run (driver.Method).

func (s *solver) Certify() (driver.TracePoint, error) { return s.certificate() }
func (s *solver) Point() []float64                    { return s.xv }
func (s *solver) Passes() float64                     { return float64(s.sampled) / float64(s.n) }
func (s *solver) Threads() int                        { return len(s.workers) }
func (s *solver) DivergenceHint() string {
	return "scale the features (e.g. to [-1, 1]), or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), lower CoordinateSettings.M, or raise λ (ElasticNet.Lambda)"
}

// DualPoint returns AdaSPDC's dual iterate (up to date between epochs).
func (s *solver) DualPoint() []float64 { return s.y }

// WarmDuals sets AdaSPDC's duals to y, projected into dom φ*, before its
// first epoch; its certificate then recomputes r = (1/n)Σ yₖaₖ (less the
// centre's shift) from them and hands it to the lazy records, as between
// any two epochs. The primal point stays the warm start.
func (s *solver) WarmDuals(y []float64) error {
	if len(y) != s.n {
		return fmt.Errorf("engine: %d warm duals for %d samples", len(y), s.n)
	}
	loss := s.prob.Loss
	for k, yk := range y {
		s.y[k] = loss.DualFeasible(yk, s.prob.B[k])
	}
	for r, k := range s.part.Order {
		if s.one != nil {
			s.one[r].y, s.one[r].aux = s.y[k], dualLogit(s.y[k], s.prob.B[k])
		} else {
			s.duals[r] = sampleDual{y: s.y[k], aux: dualLogit(s.y[k], s.prob.B[k])}
		}
	}
	_, err := s.certificate()
	return err
}

// Finish hands the driver's result what only the solver knows and stops
// its workers.
func (s *solver) Finish(res *driver.Result) error {
	res.Lazy, res.Blocks = s.lazy, s.nb
	res.Duals = s.y
	return s.pool.Close()
}

// proxExps returns the exponentials the logistic dual prox has taken so
// far, which with Passes tells how fast it converges.
func (s *solver) proxExps() int64 {
	var e int64
	for w := range s.allWorkers {
		e += s.allWorkers[w].exps
	}
	return e
}
