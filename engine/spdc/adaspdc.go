package spdc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// solver holds the state of one AdaSPDC run. Field groups:
//   - data and steps, fixed for the run;
//   - the iterate: duals y (one per sample), and per coordinate the primal x,
//     the extrapolated x̄ and r = (1/n) Σₖ yₖ aₖ, valid at iteration last[j];
//   - the lazy segment: for iterations t since the segment began, the step
//     sizes and the running product P and sum S that replay the untouched
//     coordinates' affine recurrences in O(1);
//   - the batch scratch shared between the read and the update phase.
type solver struct {
	prob  objective.Problem
	opt   driver.Options
	x     *sparse.CSR
	n, d  int
	lossG float64 // γ of φ*
	lam   float64
	// reg is the problem's elastic net without its centre c; a centre
	// enters through shift = λc, subtracted from r everywhere the iteration
	// keeps it (see centredR), and the certificate adds it back.
	reg    objective.ElasticNet
	shift  []float64
	centre []float64

	part   *blocks.Partition
	nb     int
	norms  []float64 // Rᵢ = ‖Aᵢ‖₂ per block (SolverSPDC: all max Rᵢ)
	sigma  []float64 // per-sample dual step of block i: σᵢ·s (see stepSizes)
	scale  float64   // s/m: batch sum Σ Δyₖaₖ → (1/m) Σ ÃⱼΔyⱼ in Eq. 11
	rScale float64   // 1/n:  batch sum → Δr in Eq. 13
	tauC   float64   // τᵗ = tauC / Rᵗ_max
	thA    float64   // θᵗ = 1 − 1/(thA + thB·Rᵗ_max)
	thB    float64
	maxQ   int // largest block size

	y    []float64
	xv   []float64
	xbar []float64
	r    []float64
	// Lazy runs keep a coordinate's state in one record, so that a row's
	// read of a cold coordinate costs one cache miss rather than four; the
	// arrays above are brought up to date from it at every synchronisation.
	lz []lazyCoord
	// Lazy runs with L1 = 0 keep the scaled form of lazyl2.go instead:
	// one record per coordinate, O(1) work per iteration besides the rows.
	cs     []coordL2
	fastL2 bool

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
	importance bool

	lazy   bool
	fused  bool      // dense update with the reduction fused into the read phase
	segP   []float64 // P[t] = Π_{s<t} 1/(1+τₛλ)
	segS   []float64 // S[t] = Σ_{s<t} bₛ / P[s+1], bₛ = −τₛ/(1+τₛλ)
	segTau []float64
	segTh  []float64
	segT   int // iterations run in this segment

	pool *sched.Pool
	bar  *sched.Barrier // one party per pool thread
	// The iterations run on workers, the first len(workers) of allWorkers,
	// one or all of them (driver.CalibrateWorkers), and worker w owns the
	// coordinates owners.Range(w). Certificates run on every pool thread,
	// with certOwners.
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
	dy      []float64 // Δyₖ per batch slot, written in the read phase
	u       []float64 // Σ Δyₖ aₖⱼ, written by the owner of j
	// loop runs the iterations: batch slots, barriers, block claims (on
	// a cache line of their own inside it) and the context.
	loop *sched.BatchLoop
	_    [64]byte
	// Below: fields that worker 0 writes every iteration, kept off the
	// cache lines above, which every worker reads every iteration (a flag
	// written there made two workers 1.8× slower than one).
	clearCorr bool      // the next update phase clears every correction (after a rebase)
	seg       l2Segment // the drawer's (worker 0's) P and S

	sampled int64 // samples updated so far, for the passes count

	// The batches are double-buffered: iteration it runs batches[it&1]
	// while worker 0 draws batches[(it+1)&1] at the start of its read phase
	// (the dynamic block claims let the other workers take up the slack),
	// so sampling is neither serial nor repeated on every worker.
	sampler blocks.Sampler
	ahead   ahead    // the batches drawn beyond the next
	batches [2]batch // slot loop.Slot() runs while the other is drawn
}

// batch is one iteration's sample of blocks and the steps it implies.
type batch struct {
	blocks     []int32 // the m sampled blocks
	offset     []int   // slot of the first sample of blocks[i]; len m+1
	tau, theta float64 // τᵗ and θᵗ (Eq. 12, 15)
	// scale turns the batch sum Σ Δyₖaₖ into Eq. 11's estimate: s/m, times
	// 1/(n_b·pᵢ) under importance sampling, where it keeps it unbiased.
	scale float64
	l2    l2Scalars
}

// blockInfo is what drawing block b needs: its samples are rows[lo:hi]
// and duals[lo:hi]; norm is Rᵢ as the steps use it; tau, theta and a are
// τ, θ (Eq. 12, 15) and 1/(1+τλ) for an iteration whose largest norm is
// norm; w is 1/(n_b·pᵢ) under importance sampling and 1 otherwise. It fills
// a cache line, so that one prefetch brings all of it.
type blockInfo struct {
	norm, tau, theta, a, w float64
	lo, hi                 uint32 // up to 2³¹ samples (blocks.Partition's limit)
	_                      [16]byte
}

// sampleRow is what the loop reads of one sample: its label bₖ, the dual
// step σ of its block and its row's extent in the CSR arrays.
type sampleRow struct {
	b, sigma float64
	lo, hi   int64
}

// oneSampleLoop lets batches of one sample run as oneIteration; tests turn
// it off to compare with the general loop.
var oneSampleLoop = true

// sampleOne is a sample's whole record when a batch is that one sample
// (solver.one): its row's extent, τ and θ of an iteration that draws it
// (Eq. 12, 15), its label bₖ, dual step σ, dual yₖ and the prox's aux. It
// fills a cache line.
type sampleOne struct {
	lo, hi                  int64
	tau, theta, b, sigma, y float64
	aux                     float64
}

// sampleDual is what the loop writes of one sample: its dual yₖ and aux,
// what a loss's prox carries from one visit to the next (for the logistic
// loss the logit of −b·y; NaN: none yet).
type sampleDual struct {
	y, aux float64
}

// dualLogit returns the logit of u = −b·y, the logistic prox's warm start
// for a dual y (NaN at an end of the domain, where it has none): computed
// once here, it spares the first prox of every sample its logarithm and its
// cold start.
func dualLogit(y, b float64) float64 {
	u := -b * y
	if !(u > 0 && u < 1) {
		return math.NaN()
	}
	return math.Log(u / (1 - u))
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

// Finish hands the driver's result what only the solver knows and stops
// its workers.
func (s *solver) Finish(res *driver.Result) error {
	res.Lazy, res.Blocks = s.lazy, s.nb
	res.Duals = s.y
	return s.pool.Close()
}

func newSolver(ctx context.Context, prob objective.Problem, opt driver.Options) (*solver, error) {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet() // Accepts checked that it is one
	s := &solver{prob: prob, opt: opt, x: x, n: x.Rows, d: x.Cols, lam: en.Lambda}
	s.reg = objective.ElasticNet{Lambda: en.Lambda, L1: en.L1}
	if en.Center != nil {
		s.centre = en.Center
		s.shift = make([]float64, s.d)
		for j, c := range en.Center {
			s.shift[j] = en.Lambda * c
		}
	}
	s.lossG = prob.Loss.Gamma()

	var err error
	switch opt.Coordinate().Partition {
	case driver.PartitionContiguous:
		s.part, err = blocks.Contiguous(s.n, opt.Coordinate().BlockSize)
	case driver.PartitionShuffle:
		s.part, err = blocks.Shuffled(s.n, opt.Coordinate().BlockSize, opt.Seed)
	case driver.PartitionNorm:
		s.part, err = blocks.ByNorm(x.RowSquaredNorms(), opt.Coordinate().BlockSize, opt.Seed)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: partition: %w", err)
	}
	s.nb = s.part.NumBlocks()
	if opt.Coordinate().M > s.nb {
		return nil, fmt.Errorf("engine: m = %d blocks per iteration, but the data has only %d blocks of %d samples: lower CoordinateSettings.M or CoordinateSettings.BlockSize", opt.Coordinate().M, s.nb, opt.Coordinate().BlockSize)
	}
	threads := driver.ThreadBudget(opt.Threads)
	// Each iteration pays two barrier rounds and moves the touched
	// coordinates between cores; below about a thousand nonzeros per worker
	// and iteration that costs more than the work it shares: two workers
	// made the epochs of short-row data slower at small m.
	// So the thread count, asked for or not, is an upper bound, and a worker
	// is added per driver.MinBatchWork nonzeros of a batch; above one, the
	// first epoch then times one worker against all (calibrateThreads).
	batchNNZ := float64(x.NNZ()) / float64(s.nb) * float64(opt.Coordinate().M)
	workers := driver.WorkersFor(threads, batchNNZ, float64(driver.MinBatchWork), driver.NoLimit)
	// More workers than blocks per iteration would only wait at barriers.
	s.pool = sched.NewPool(min(workers, opt.Coordinate().M))
	s.norms, err = blocks.SpectralNormsContext(ctx, x, s.part, blocks.DefaultTolerance, threads)
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("engine: spectral norms: %w", err)
	}
	rmax := 0.0
	for b, rb := range s.norms {
		if math.IsNaN(rb) || math.IsInf(rb, 0) {
			s.pool.Close()
			return nil, fmt.Errorf("engine: block %d has spectral norm %v: the data holds non-finite values", b, rb)
		}
		rmax = math.Max(rmax, rb)
		s.maxQ = max(s.maxQ, len(s.part.Block(b)))
	}
	if rmax == 0 {
		s.pool.Close()
		return nil, errors.New("engine: every row of the data is zero")
	}
	if kappa := rmax * rmax / (s.lam * s.lossG); !(kappa <= driver.MaxConditionNumber) {
		s.pool.Close()
		return nil, fmt.Errorf("engine: λ = %g is too small for this data: the condition number R²/(λγ) = %.3g (R = %.4g, the largest block norm; γ = %g for the %s loss) is above %g, where the steps break down in float64; use λ ≥ %.3g, or scale the data down",
			s.lam, kappa, rmax, s.lossG, prob.Loss.Name(), driver.MaxConditionNumber, rmax*rmax/(s.lossG*driver.MaxConditionNumber))
	}
	s.importance = opt.Coordinate().Sampling == driver.SamplingImportance
	var rawNorms []float64 // the sampler's weights: the blocks' own norms
	if s.importance {
		rawNorms = append(rawNorms, s.norms...)
	}
	if opt.Coordinate().Steps == driver.StepsESO && opt.Coordinate().M > 1 {
		// From here on s.norms holds the couplings ρᵢ (stepSizes).
		if err := s.esoCouplings(ctx, threads); err != nil {
			s.pool.Close()
			return nil, fmt.Errorf("engine: step sizes: %w", err)
		}
	}
	// An all-zero block (empty rows) does not couple to x: any step is exact
	// for it. Giving it the smallest positive norm keeps τᵗ = tauC/Rᵗ_max
	// finite when a batch holds nothing else.
	rmin, rtop := math.Inf(1), 0.0
	for _, rb := range s.norms {
		if rb > 0 {
			rmin = math.Min(rmin, rb)
		}
		rtop = math.Max(rtop, rb)
	}
	for b, rb := range s.norms {
		if rb == 0 {
			s.norms[b] = rmin
		}
	}
	if opt.Solver == SolverSPDC {
		// One R for every block: the largest norm (or coupling), or under
		// importance sampling the largest weighted norm (importanceSampler).
		r := rtop
		if s.importance {
			r = importanceR(s.norms)
		}
		for b := range s.norms {
			s.norms[b] = r
		}
	}
	s.stepSizes()

	// Lazy pays once the O(d) dense update outweighs the batch's nonzeros:
	// the break-even is driver.LazyBreakEven (d = batch nnz), where the
	// lazy record's extra reads per nonzero cost about what the dense
	// sweep of d coordinates does.
	switch opt.Coordinate().Lazy {
	case driver.LazyOn:
		s.lazy = true
	case driver.LazyOff:
		s.lazy = false
	default:
		s.lazy = float64(s.d) > driver.LazyBreakEven*batchNNZ
	}
	s.fastL2 = s.lazy && s.reg.L1 == 0

	threads = s.pool.Threads()
	s.eval = driver.NewEvaluator(prob, threads)
	s.bar = sched.NewBarrier(threads, 0)
	s.loop = sched.NewBatchLoop(s.pool, s.bar)
	s.pool.BreakOnPanic(s.bar)
	s.fused = !s.lazy && !opt.Deterministic
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
	var impW []float64
	if s.importance {
		s.sampler, impW, err = importanceSampler(rawNorms, opt)
	} else {
		s.sampler, err = blocks.NewUniform(s.nb, opt.Coordinate().M, opt.Seed^0x9e3779b97f4a7c15)
	}
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("engine: sampler: %w", err)
	}
	for i := range s.batches {
		s.batches[i] = batch{blocks: make([]int32, opt.Coordinate().M), offset: make([]int, opt.Coordinate().M+1)}
	}
	s.dy = make([]float64, opt.Coordinate().M*s.maxQ)
	s.u = make([]float64, s.d)
	if s.lazy && !s.fastL2 {
		s.lz = make([]lazyCoord, s.d)
	}
	iters := s.itersPerEpoch()
	s.segP = make([]float64, iters+1)
	s.segS = make([]float64, iters+1)
	s.segTau = make([]float64, iters)
	s.segTh = make([]float64, iters)
	s.resetSegment()

	s.initIterate()
	for j := range s.lz {
		s.lz[j] = lazyCoord{x: s.xv[j], xbar: s.xbar[j], r: s.r[j]}
	}
	if s.fastL2 {
		s.cs = make([]coordL2, s.d)
		s.rebaseL2(0, int32(s.d))
		s.seg.reset()
	}
	_, s.logistic = prob.Loss.(objective.Logistic)
	if oneSampleLoop && s.fastL2 && opt.Coordinate().M == 1 && s.maxQ == 1 && !s.importance {
		// One sample per block: block b is sample Order[b].
		s.one = make([]sampleOne, s.n)
		for b, k := range s.part.Order {
			tau := s.tauC / s.norms[b]
			s.one[b] = sampleOne{lo: x.Indptr[k], hi: x.Indptr[k+1], tau: tau, theta: 1 - 1/(s.thA+s.thB*s.norms[b]),
				b: s.prob.B[k], sigma: s.sigma[b], y: s.y[k], aux: dualLogit(s.y[k], s.prob.B[k])}
		}
		s.newAhead()
		s.drawOne(&s.batches[0])
		return s, nil
	}
	s.rows = make([]sampleRow, s.n)
	s.duals = make([]sampleDual, s.n)
	for b := 0; b < s.nb; b++ {
		for r := s.part.Start[b]; r < s.part.Start[b+1]; r++ {
			k := s.part.Order[r]
			s.rows[r] = sampleRow{b: s.prob.B[k], sigma: s.sigma[b], lo: x.Indptr[k], hi: x.Indptr[k+1]}
			s.duals[r] = sampleDual{y: s.y[k], aux: dualLogit(s.y[k], s.prob.B[k])}
		}
	}
	s.binfo = make([]blockInfo, s.nb)
	for b, rb := range s.norms {
		tau := s.tauC / rb
		s.binfo[b] = blockInfo{norm: rb, tau: tau, theta: 1 - 1/(s.thA+s.thB*rb), a: 1 / (1 + tau*s.lam), w: 1,
			lo: uint32(s.part.Start[b]), hi: uint32(s.part.Start[b+1])}
		if s.importance {
			s.binfo[b].w = impW[b]
		}
	}
	s.newAhead()
	s.drawBatch(&s.batches[0])
	return s, nil
}

// stepSizes turns Eq. 10, 12 and 15 into per-sample numbers, from the
// block couplings in s.norms: the norms Rᵢ for CoordinateSettings.Steps "paper", the
// couplings ρᵢ of esoCouplings for "eso" (which are the Rᵢ at m = 1).
//
// The paper's problem (2) has n blocks with the saddle function
// g(x) + (1/n_b) Σᵢ (⟨x, Ãᵢyᵢ⟩ − ψᵢ*(yᵢ)). Ours, (1/n) Σₖ over samples, is
// that with n_b blocks, Ãᵢ = s·Aᵢ and ψᵢ*(yᵢ) = s·Σₖ∈ᵢ φₖ*(yₖ), where
// s = n_b/n; so R̃ᵢ = s·Rᵢ and γ̃ = s·γ. Eq. 9 then separates over the samples
// of a block with the per-sample step s·σᵢ, and Eq. 11 and 13 see the batch
// sum u = Σₖ Δyₖaₖ as (s/m)·u and u/n. With one sample per block, s = 1 and
// every formula is the paper's as printed.
//
// CoordinateSettings.StepScale multiplies σᵢ and τ alike (θ is unchanged). The
// paper's steps have στRᵢR_max = 1/4; a scale of 2 reaches the
// Chambolle–Pock bound στ‖K‖² ≤ 1, outside the paper's proof, and in our
// measurements cut the epochs to a given suboptimality by 1.3–1.8×.
func (s *solver) stepSizes() {
	n, nb, m := float64(s.n), float64(s.nb), float64(s.opt.Coordinate().M)
	sc := nb / n
	lam, gam := s.lam, s.lossG*sc
	c := s.opt.Coordinate().StepScale // 1: the paper's steps
	s.sigma = make([]float64, s.nb)
	for b, rb := range s.norms {
		rt := sc * rb
		s.sigma[b] = c * sc * (1 / (2 * rt)) * math.Sqrt(nb*lam/(m*gam)) // Eq. 10
	}
	s.tauC = c * (1 / (2 * sc)) * math.Sqrt(m*gam/(nb*lam)) // Eq. 12, τ = tauC / R_max
	s.thA = nb / m                                          // Eq. 15
	s.thB = sc * math.Sqrt((nb/m)/(lam*gam))
	s.scale = sc / m
	s.rScale = 1 / n
}

// esoCouplings replaces the block norms Rᵢ in s.norms by the couplings
// ρᵢ = √(vᵢ/m) of the expected separable over-approximation (ESO) of
// Richtárik & Takáč for τ-nice sampling, as Quartz (Qu, Richtárik & Zhang
// 2015) uses it; vᵢ is esoParameters'. The steps are then Eq. 10, 12 and 15
// with Rᵢ → ρᵢ.
//
// Why they are safe. The paper's proof (Zhu & Storkey, Thm. 1) needs the
// matrix (17), [m/(2τᵗ)·I, −A_S; −A_Sᵀ, diag(1/(2σ))], to be positive
// semidefinite, that is, for every u and dual change h,
//
//	2⟨u, Σ_{i∈S} Aᵢᵀhᵢ⟩ ≤ (m/(2τᵗ))‖u‖² + Σ_{i∈S} ‖hᵢ‖²/(2σᵢ),
//
// which by Young's inequality follows from
//
//	(2τᵗ/m)‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ Σ_{i∈S} ‖hᵢ‖²/(2σᵢ).                  (*)
//
// The paper bounds the left side in the worst case, ‖Σ Aᵢᵀhᵢ‖² ≤
// (Σ Rᵢ‖hᵢ‖)², which every pair of overlapping rows can attain; hence
// τᵗσᵢ = 1/(4RᵢRᵗ_max) with σᵢ ∝ 1/(Rᵢ√m), τᵗ ∝ √m/Rᵗ_max. We keep (*) in
// expectation over the batch instead. The dual change h the proof uses is
// the prox step every block would take (Eq. 9 with the fixed σᵢ), known
// before S is drawn. Cauchy–Schwarz per coordinate gives
// ‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ Σⱼ ωⱼ(S) Σ_{i∈S} (Aᵢᵀhᵢ)ⱼ², with ωⱼ(S) the sampled
// blocks that use feature j; and τᵗ ≤ τ(ρᵢ) for every i ∈ S, since τ falls
// with the batch's largest ρ. Given i ∈ S, the other m−1 blocks are a
// uniform draw from n_b−1, so E[ωⱼ(S) | i ∈ S] = βⱼ = 1 + (m−1)(ωⱼ−1)/(n_b−1)
// and
//
//	E[(2τᵗ/m)‖Σ_{i∈S} Aᵢᵀhᵢ‖²] ≤ (2/m)(m/n_b) Σᵢ τ(ρᵢ) vᵢ‖hᵢ‖²,
//
// while the right side of (*) has expectation (m/n_b) Σᵢ ‖hᵢ‖²/(2σᵢ). So
// (*) holds in expectation when 4τ(ρᵢ)σᵢvᵢ ≤ m for every block: with the
// paper's product τ(ρᵢ)σᵢ = 1/(4ρᵢ²), when ρᵢ² ≥ vᵢ/m. The extrapolation
// θᵗ = 1 − 1/(n_b/m + ρᵗ_max√((n_b/m)/(λγ))) is Eq. 15 with the same
// substitution, which keeps the paper's identities between σ, τ and θ:
// 1/(2τᵗλ) = ρᵗ_max√((n_b/m)/(λγ)) and (n_b/m)/(2σᵢγ) = 1/(2τ(ρᵢ)λ).
// The expectation is the one gap to the paper's argument, which uses (17)
// for every batch (its full version's proof is not in our copy); a step
// that breaks it still meets the driver's divergence guard.
//
// What it buys. vᵢ lies between Rᵢ² (no feature of block i in another
// block: βⱼ = 1) and m·Rᵢ² (every feature in every block), so ρᵢ lies
// between Rᵢ/√m and Rᵢ: the steps are never smaller than the paper's, equal
// at m = 1 (β = 1, ρᵢ = Rᵢ exactly) and on dense data, and for a batch of
// disjoint rows σᵢ is its m = 1 value and τ is m times its m = 1 value,
// which with the 1/m of Eq. 11 makes a batch worth m single steps.
func (s *solver) esoCouplings(ctx context.Context, threads int) error {
	v, err := esoParameters(ctx, s.x, s.part, s.opt.Coordinate().M, threads)
	if err != nil {
		return err
	}
	m := float64(s.opt.Coordinate().M)
	for b, rb := range s.norms {
		if rb == 0 {
			continue // an empty block: see the fix-up of zero norms
		}
		// q = vᵢ/Rᵢ² lies in [1, m]; clamping keeps rounding (and the
		// spectral norms' tolerance) from leaving that range.
		q := min(max(v[b]/(rb*rb), 1), m)
		s.norms[b] = rb * math.Sqrt(q/m)
	}
	return nil
}

func (s *solver) itersPerEpoch() int { return (s.nb + s.opt.Coordinate().M - 1) / s.opt.Coordinate().M }

// initIterate sets the starting point: x⁰ from the warm start or 0, and
// yₖ = φ'(aₖᵀx⁰) projected into dom φ*, the optimality relation, with
// r = (1/n) Σ yₖaₖ computed to match (the paper leaves r⁰ implicit).
// A cold start keeps x⁰ = 0 rather than ∇g*(−r⁰), the primal point of those
// duals: with a small λ that point is far out (‖r⁰‖/λ) and costs tens of
// epochs to come back from.
func (s *solver) initIterate() {
	s.y = make([]float64, s.n)
	s.xv = make([]float64, s.d)
	s.xbar = make([]float64, s.d)
	s.r = make([]float64, s.d)
	if s.opt.WarmStart != nil {
		copy(s.xv, s.opt.WarmStart)
	}
	loss := s.prob.Loss
	for k := 0; k < s.n; k++ {
		val, idx := s.x.Row(k)
		z := kernels.SparseDot(val, idx, s.xv)
		yk := loss.DualFeasible(loss.Deriv(z, s.prob.B[k]), s.prob.B[k])
		s.y[k] = yk
		kernels.SparseAxpy(yk/float64(s.n), val, idx, s.r)
	}
	for j, sh := range s.shift {
		s.r[j] -= sh
	}
	copy(s.xbar, s.xv)
}

func (s *solver) resetSegment() {
	s.segT = 0
	s.segP[0] = 1
	s.segS[0] = 0
}

// calibrationRounds is how many rounds of iterations calibrateThreads runs
// at most in the first epoch, each a calibrationRounds-th of it: one on all
// workers to warm the caches and the workers, then one worker and all
// workers alternately. Shorter rounds (a sixteenth of the epoch each) picked
// the wrong side on a9a at m = 256, where a round lasted 0.3 ms. After the
// first pair, a ratio beyond calibrationClear decides.
const (
	calibrationRounds = 5
	calibrationClear  = 1.25
)

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

// RunEpochs runs k epochs of ⌈n_b/m⌉ iterations inside one pool phase and
// returns how many it started (fewer when the context ends the run). The
// first call of a run with more than one pool thread first calibrates the
// number of workers (calibrateThreads).
func (s *solver) RunEpochs(ctx context.Context, k int) (int, error) {
	iters := s.itersPerEpoch()
	if s.calibrate {
		s.calibrate = false
		if c := iters / calibrationRounds; c > 0 {
			rounds, err := s.calibrateThreads(ctx, c)
			if err != nil {
				return 0, err
			}
			// The rest of the first epoch.
			if _, err := s.iterate(ctx, 1, iters-rounds*c); err != nil {
				return 0, err
			}
			if k == 1 || ctx.Err() != nil {
				return 1, nil
			}
			n, err := s.iterate(ctx, k-1, iters)
			return 1 + n, err
		}
	}
	if s.oneIter == 0 {
		return s.iterate(ctx, k, iters)
	}
	t0 := time.Now()
	n, err := s.iterate(ctx, k, iters)
	if per := time.Since(t0) / time.Duration(max(1, n*iters)); float64(per) > calibrationClear*float64(s.oneIter) {
		// The host changed since calibration (another job took a core):
		// a barrier per phase then waits for a descheduled worker, and
		// one worker is faster. The iterates do not depend on the count.
		s.setWorkers(1)
		s.oneIter = 0
	}
	return n, err
}

// iterate runs k rounds of iters iterations on the batch loop (package
// sched: the slots, the barriers, the claims and the context) and returns
// how many rounds it started. At the end x, x̄, r and y are brought up to
// date for the certificate.
func (s *solver) iterate(ctx context.Context, k, iters int) (int, error) {
	started, err := s.loop.Run(ctx, (*spdcIteration)(s), k, iters, func(w int) {
		lo, hi := s.owners.Range(w)
		if s.lazy && !s.fastL2 {
			s.syncRange(lo, hi)
		}
		if s.fastL2 {
			s.syncL2(lo, hi, &s.batches[s.loop.Slot()])
		}
	})
	if s.lazy && !s.fastL2 {
		s.resetSegment()
	}
	if s.one != nil {
		for b, k := range s.part.Order {
			s.y[k] = s.one[b].y
		}
	} else {
		for r, k := range s.part.Order {
			s.y[k] = s.duals[r].y
		}
	}
	if err != nil {
		return started, fmt.Errorf("engine: %w", err)
	}
	return started, nil
}

// spdcIteration is the solver seen as a sched.Iteration: the phases of one
// AdaSPDC iteration.
type spdcIteration solver

// Read: the renormalisation a lazy segment may need, worker 0's draw of
// the next batch (Eq. 12, 15 for its steps), and the dual steps (Eq. 9).
// The segment position t is read here, before the barrier: worker 0
// advances it in its update phase.
func (p *spdcIteration) Read(w, slot int, claims *sched.Claims, sync func()) {
	s := (*solver)(p)
	ws := &s.workers[w]
	ws.t = int32(s.segT)
	bt := &s.batches[slot]
	if s.fastL2 && bt.l2.renorm {
		lo, hi := s.owners.Range(w)
		s.renormL2(lo, hi, &bt.l2)
		sync()
	}
	if s.one != nil {
		s.oneIteration(ws, bt, &s.batches[slot^1])
		return
	}
	if w == 0 {
		s.drawBatch(&s.batches[slot^1])
	}
	s.readPhase(ws, bt, ws.t, claims)
}

// Update: the reduction and the primal step on this worker's coordinates
// (Eq. 11, 13, 14); worker 0 also asks for the next batch's rows and
// advances the lazy segment.
func (p *spdcIteration) Update(w, slot int) {
	s := (*solver)(p)
	ws := &s.workers[w]
	bt := &s.batches[slot]
	if w == 0 && !s.ahead.rows {
		nb := &s.batches[slot^1]
		s.prefetchRows(nb.blocks, 0, min(prefetchAhead, len(nb.blocks)))
	}
	lo, hi := s.owners.Range(w)
	s.updatePhase(ws, bt, lo, hi, ws.t)
	if w == 0 {
		if s.lazy && !s.fastL2 {
			s.advanceSegment(bt.tau, bt.theta)
		}
		s.sampled += int64(bt.offset[len(bt.blocks)])
	}
}

// Settle: after every worker's update phase the rebase flag can go, and a
// lazy (L1) segment that ends, at the epoch's end or before its running
// product underflows, brings every coordinate up to date.
func (p *spdcIteration) Settle(w int, last bool, sync func()) {
	s := (*solver)(p)
	if w == 0 && s.clearCorr {
		s.clearCorr = false
	}
	if s.lazy && !s.fastL2 && (s.segP[s.segT] < driver.UnderflowFloor || last) {
		lo, hi := s.owners.Range(w)
		s.syncRange(lo, hi)
		sync()
		if w == 0 {
			s.resetSegment()
		}
		sync()
	}
}

// oneIteration is the whole of an iteration whose batch is one sample k
// (m = 1, blocks of one sample) on one worker, in a scaled lazy run: it
// draws the batch after next (drawOne), and then
//
//	z = aₖᵀx̄ = A·Σ vₚξⱼ + B·Σ vₚrⱼ + Σ vₚcⱼ           (margin at x̄, dotL2)
//	yₖ′ = prox_{σφₖ*}(yₖ + σz),  Δy = yₖ′ − yₖ         (Eq. 9)
//	ξⱼ −= κ·Δy·vₚ,  rⱼ += Δy·vₚ/n,  cⱼ = μ·Δy·vₚ        (Eq. 11, 13, 14; stepRowL2)
//
// while the row is in L1: the steps the general loop takes in a read and
// an update phase, in the same order and with the same arithmetic, so the
// iterates are those of the general loop. Its sample's label, step, dual
// and row extent are one record (sampleOne), one cache line where the
// general loop reads three (blockInfo, sampleRow, sampleDual).
func (s *solver) oneIteration(ws *workerState, bt, next *batch) {
	s.drawOne(next)
	rec := &s.one[bt.blocks[0]]
	val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
	z := dotL2(s.cs, val, idx, bt.l2.a, bt.l2.b)
	var yn float64
	if s.logistic {
		var e int
		yn, rec.aux, e = objective.LogisticProxWarmExps(rec.y, rec.aux, z, rec.sigma, rec.b)
		ws.exps += int64(e)
	} else {
		yn = s.prob.Loss.DualProx(rec.y, z, rec.sigma, rec.b)
	}
	dy := yn - rec.y
	s.dy[0] = dy
	rec.y = yn
	s.stepRowL2(ws, &bt.l2, dy, val, idx)
}

// drawOne is drawBatch for batches of one sample (solver.one): it takes the
// next block from the queue, draws the one depth iterations later and asks
// for its record, asks for the row of the block rowsAhead+2 iterations on,
// and sets the batch's steps (Eq. 12, 15) and scaled-lazy scalars.
func (s *solver) drawOne(bt *batch) {
	q := &s.ahead
	b := q.blocks[q.head]
	s.sampler.Sample(q.blocks[q.head : q.head+1])
	kernels.Prefetch(unsafe.Pointer(&s.one[q.blocks[q.head]]))
	q.head++
	if q.head == q.depth {
		q.head = 0
	}
	h := q.head + q.rowsAhead
	if h >= q.depth {
		h -= q.depth
	}
	if r := &s.one[q.blocks[h]]; r.hi > r.lo {
		n := int(min(r.hi-r.lo, driver.MaxPrefetchNNZ))
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Values[r.lo]), 8*n)
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Indices[r.lo]), 4*n)
	}
	rec := &s.one[b]
	bt.blocks[0] = b
	bt.offset[0], bt.offset[1] = 0, 1
	bt.tau, bt.theta, bt.scale = rec.tau, rec.theta, s.scale
	s.seg.next(&bt.l2, rec.tau, rec.theta, 1/(1+rec.tau*s.lam), s.scale, s.rScale)
}

// drawBatch takes the next iteration's blocks from the queue of drawn
// batches (see ahead) and sets τᵗ and θᵗ (Eq. 12, 15) from their largest
// spectral norm. It refills the queue with a new draw and moves the
// queue's batches one stage of prefetching closer: a sampled block's
// records and rows are random accesses, cache misses on any data larger
// than the cache, and an iteration of one short row is too short to hide
// even one of them.
func (s *solver) drawBatch(bt *batch) {
	m := len(bt.blocks)
	q := &s.ahead
	cur := q.blocks[q.head*m : (q.head+1)*m]
	copy(bt.blocks, cur)
	s.sampler.Sample(cur) // the batch q.depth iterations later
	// With more than one worker, whoever claims a block fetches its duals:
	// pulling them to this core would cost the other a second transfer.
	one := len(s.workers) == 1
	for _, b := range cur {
		kernels.Prefetch(unsafe.Pointer(&s.binfo[b]))
		if s.maxQ == 1 && (q.rows || !one) {
			// One sample per block: block b's sample records are the b-th,
			// so they need not wait for its blockInfo.
			if one {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[b]), unsafe.Pointer(&s.duals[b]))
			} else {
				kernels.Prefetch(unsafe.Pointer(&s.rows[b]))
			}
		}
	}
	q.head++
	if q.head == q.depth {
		q.head = 0
	}
	// Half-way: the samples' records of larger blocks. (One worker with a
	// larger batch asks for them as it reads the batch before, a block at
	// a time: a burst of prefetches would fill the core's miss buffers and
	// stall it.)
	if s.maxQ > 1 && (q.rows || !one) {
		for _, b := range q.batch(q.depth/2, m) {
			bi := &s.binfo[b]
			if one {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[bi.lo]), unsafe.Pointer(&s.duals[bi.lo]))
			} else {
				kernels.Prefetch(unsafe.Pointer(&s.rows[bi.lo]))
			}
		}
	}
	// Small batches: the rows of the batch q.rowsAhead after this one
	// (larger ones prefetch their rows as the read phase goes,
	// prefetchAhead blocks ahead, and the update phase the first blocks of
	// the next batch).
	if q.rows && one {
		s.prefetchRows(q.batch(q.rowsAhead, m), 0, m)
	}
	bmax := &s.binfo[bt.blocks[0]]
	off := 0
	for i, b := range bt.blocks {
		bt.offset[i] = off
		bi := &s.binfo[b]
		off += int(bi.hi - bi.lo)
		if bi.norm > bmax.norm {
			bmax = bi
		}
	}
	bt.offset[len(bt.blocks)] = off
	// τ and θ are decreasing in the largest norm (Eq. 12, 15).
	bt.tau, bt.theta = bmax.tau, bmax.theta
	// Importance sampling draws one block, so bmax is that block.
	bt.scale = s.scale * bmax.w
	if s.fastL2 {
		s.seg.next(&bt.l2, bt.tau, bt.theta, bmax.a, bt.scale, s.rScale)
	}
}

// ahead is the queue of drawn batches, in the order of the one sampler:
// drawBatch takes the batch of the next iteration from it and draws the
// batch depth iterations later, so the sequence of batches is the
// sampler's whatever the number of workers. The queue's batches are at
// stages of prefetching: the newest's block records, the middle one's
// sample records, and with rows, the next one's rows.
type ahead struct {
	blocks    []int32 // depth batches of m blocks, the next at head
	head      int
	depth     int
	rows      bool // small batches: drawBatch prefetches rows …
	rowsAhead int  // … of the batch rowsAhead+2 iterations on
}

// batch returns the batch i+1 iterations after the next one.
func (q *ahead) batch(i, m int) []int32 {
	j := (q.head + i) % q.depth
	return q.blocks[j*m : (j+1)*m]
}

// newAhead fills the queue: depth batches, enough for about
// aheadSamples samples, and at least two.
func (s *solver) newAhead() {
	m := s.opt.Coordinate().M
	q := &s.ahead
	q.depth = max(2, (aheadSamples+m*s.maxQ-1)/(m*s.maxQ))
	q.rows = m*s.maxQ <= aheadRowSamples
	q.rowsAhead = min(aheadRows, q.depth/2-1)
	q.blocks = make([]int32, q.depth*m)
	for i := range q.depth {
		s.sampler.Sample(q.blocks[i*m : (i+1)*m])
	}
}

// aheadSamples is how many samples ahead of the one it runs the iteration
// asks for block records; half-way, for the samples' records; batches of
// at most aheadRowSamples samples ask for the rows of the batch after the
// next.
const (
	aheadSamples    = 16
	aheadRowSamples = 4
	aheadRows       = 2
)

// prefetchAhead is how many blocks ahead of the one it reads the read
// phase asks for rows: a sampled row is a random access (a DRAM miss on
// url-shaped data), and two blocks' work covers its latency. The update
// phase asks for the first blocks of the next batch.
const prefetchAhead = 2

// prefetchRows asks for the rows and duals of the blocks [from, to) of
// blocks, whose sampleRow records drawBatch prefetched earlier.
func (s *solver) prefetchRows(blocks []int32, from, to int) {
	for _, b := range blocks[from:to] {
		bi := &s.binfo[b]
		for r := bi.lo; r < bi.hi; r++ {
			rec := &s.rows[r]
			kernels.Prefetch(unsafe.Pointer(&s.duals[r]))
			if n := int(min(rec.hi-rec.lo, driver.MaxPrefetchNNZ)); n > 0 {
				kernels.PrefetchRange(unsafe.Pointer(&s.x.Values[rec.lo]), 8*n)
				kernels.PrefetchRange(unsafe.Pointer(&s.x.Indices[rec.lo]), 4*n)
			}
		}
	}
}

// readPhase is Eq. 9 for the blocks this worker claims: yₖ ← prox of φₖ* at
// the margin aₖᵀx̄. It writes only yₖ and Δyₖ of its own blocks.
func (s *solver) readPhase(ws *workerState, bt *batch, t int32, claims *sched.Claims) {
	m := int64(len(bt.blocks))
	if len(s.workers) == 1 {
		s.readBlocks(ws, bt, 0, m, t)
		return
	}
	// Guided self-scheduling (sched.Claims): claims shrink as the batch
	// runs out, so that the workers finish together when rows differ in
	// length, and the last claims do not leave one worker alone at the end.
	for {
		first, end, ok := claims.Next(m, len(s.workers))
		if !ok {
			return
		}
		s.readBlocks(ws, bt, first, end, t)
	}
}

// readBlocks runs the read phase for the batch's blocks [first, end).
func (s *solver) readBlocks(ws *workerState, bt *batch, first, end int64, t int32) {
	loss := s.prob.Loss
	// With one worker in a scaled lazy run of more than one row, the
	// batch sum u is formed here, while the row is in L1, rather than in a
	// second pass over the rows in the update phase: u is not read in this
	// phase, and one worker adds the rows in batch order, as the owners do.
	fuseU := s.fastL2 && len(s.workers) == 1 && bt.offset[len(bt.blocks)] > 1
	// With one worker and one row, the row is the batch: its primal step
	// (stepRowL2) follows its dual step here, and the update phase has
	// nothing left to do.
	oneRow := s.fastL2 && len(s.workers) == 1 && bt.offset[len(bt.blocks)] == 1
	touched := ws.touched[:0]
	// One worker reading a larger batch asks for the sample records of the
	// next batch, drawn at the start of this read phase, block by block.
	var next []int32
	if len(s.workers) == 1 && !s.ahead.rows {
		next = s.batches[s.loop.Slot()^1].blocks
	}
	// Several workers: drawBatch brought the batch's records to worker 0's
	// cache, so each worker asks for the records of the blocks it claimed
	// a stage before it asks for their rows (prefetchRows reads them).
	many := len(s.workers) > 1
	for i := first; i < end; i++ {
		if a := int(i) + 2*prefetchAhead; many && a < int(end) {
			b := bt.blocks[a]
			kernels.Prefetch(unsafe.Pointer(&s.binfo[b]))
			if s.maxQ == 1 {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[b]), unsafe.Pointer(&s.duals[b]))
			}
		}
		if a := int(i) + prefetchAhead; a < int(end) {
			s.prefetchRows(bt.blocks, a, a+1)
		}
		if int(i) < len(next) {
			lo := s.binfo[next[i]].lo
			kernels.Prefetch2(unsafe.Pointer(&s.rows[lo]), unsafe.Pointer(&s.duals[lo]))
		}
		b := bt.blocks[i]
		slot := bt.offset[i]
		bi := &s.binfo[b]
		recs := s.rows[bi.lo:bi.hi]
		duals := s.duals[bi.lo:bi.hi]
		for r := range recs {
			rec, dual := &recs[r], &duals[r]
			val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
			var z float64
			switch {
			case s.fastL2:
				z = dotL2(s.cs, val, idx, bt.l2.a, bt.l2.b)
			case s.lazy:
				z = s.lazyDot(val, idx, t)
			default:
				z = kernels.SparseDot(val, idx, s.xbar)
			}
			var yn float64
			if s.logistic {
				var e int
				yn, dual.aux, e = objective.LogisticProxWarmExps(dual.y, dual.aux, z, rec.sigma, rec.b)
				ws.exps += int64(e)
			} else {
				yn = loss.DualProx(dual.y, z, rec.sigma, rec.b)
			}
			dy := yn - dual.y
			s.dy[slot+r] = dy
			dual.y = yn
			if s.fused && dy != 0 {
				kernels.SparseAxpy(dy, val, idx, ws.buf)
			}
			if fuseU && dy != 0 {
				touched = s.accumulateL2(touched, dy, val, idx)
			}
			if oneRow {
				s.stepRowL2(ws, &bt.l2, dy, val, idx)
			}
		}
	}
	ws.touched = touched
}

// updatePhase merges the batch into the coordinates worker w owns (the
// lock-free reducer: each coordinate has one writer, and its sum is formed
// in batch order, so the result does not depend on the thread count) and
// then applies Eq. 11, 14 and 13 to them.
func (s *solver) updatePhase(ws *workerState, bt *batch, lo, hi, t int32) {
	tau, theta := bt.tau, bt.theta
	if s.fastL2 {
		s.updateL2(ws, bt, lo, hi)
		return
	}
	if s.lazy {
		ws.stamp++
		if ws.stamp == 0 { // wrapped after 2³² iterations: forget old stamps
			for j := lo; j < hi; j++ {
				s.lz[j].stamp = 0
			}
			ws.stamp = 1
		}
		stamp := ws.stamp
		ws.touched = ws.touched[:0]
		s.ownedBatchRows(bt, lo, hi, func(dy float64, val []float64, idx []int32) {
			for p, j := range idx {
				if c := &s.lz[j]; c.stamp != stamp {
					c.stamp = stamp
					ws.touched = append(ws.touched, j)
				}
				s.u[j] += dy * val[p]
			}
		})
		for _, j := range ws.touched {
			c := &s.lz[j]
			xt := s.catchUp(c.x, c.last, t, c.r)
			uj := s.u[j]
			s.u[j] = 0
			xn := s.reg.ProxPlain(xt-tau*(c.r+bt.scale*uj), tau) // Eq. 11
			c.xbar = xn + theta*(xn-xt)                          // Eq. 14
			c.x = xn
			c.r += s.rScale * uj // Eq. 13
			c.last = t + 1
		}
		return
	}
	if s.fused {
		for w := range s.workers {
			buf := s.workers[w].buf[lo:hi]
			kernels.Axpy(1, buf, s.u[lo:hi])
			clear(buf)
		}
	} else {
		s.ownedBatchRows(bt, lo, hi, func(dy float64, val []float64, idx []int32) {
			kernels.SparseAxpy(dy, val, idx, s.u)
		})
	}
	if s.reg.L1 == 0 {
		s.denseL2Update(lo, hi, tau, theta, bt.scale)
		return
	}
	for j := lo; j < hi; j++ {
		s.primalStep(j, s.xv[j], tau, theta, bt.scale)
	}
}

// ownedBatchRows calls f, in batch order, for every sampled row whose dual
// changed, with its Δy and just the entries in the owned columns [lo, hi).
func (s *solver) ownedBatchRows(bt *batch, lo, hi int32, f func(dy float64, val []float64, idx []int32)) {
	full := lo == 0 && int(hi) == s.d
	for i, b := range bt.blocks {
		slot := bt.offset[i]
		bi := &s.binfo[b]
		recs := s.rows[bi.lo:bi.hi]
		for r := range recs {
			dy := s.dy[slot+r]
			if dy == 0 {
				continue
			}
			rec := &recs[r]
			val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
			if full {
				f(dy, val, idx)
			} else if a, e := sched.Clip(idx, lo, hi); a < e {
				f(dy, val[a:e], idx[a:e])
			}
		}
	}
}

// primalStep applies Eq. 11, 14 and 13 to coordinate j of a dense run,
// whose value at this iteration is xt, and consumes its batch sum u[j].
func (s *solver) primalStep(j int32, xt, tau, theta, scale float64) {
	uj := s.u[j]
	s.u[j] = 0
	xn := s.reg.ProxPlain(xt-tau*(s.r[j]+scale*uj), tau) // Eq. 11
	s.xbar[j] = xn + theta*(xn-xt)                       // Eq. 14
	s.xv[j] = xn
	s.r[j] += s.rScale * uj // Eq. 13
}

// denseL2Update is the dense update's loop for g = (λ/2)‖x‖², where the
// prox is a multiplication: Eq. 11, 14 and 13 with the slices resliced to
// one length so that the compiler drops the bounds checks.
func (s *solver) denseL2Update(lo, hi int32, tau, theta, scale float64) {
	a := 1 / (1 + tau*s.lam)
	ta, sc, rs := tau*a, scale, s.rScale
	xv := s.xv[lo:hi]
	xbar := s.xbar[lo:hi:hi][:len(xv)]
	r := s.r[lo:hi:hi][:len(xv)]
	u := s.u[lo:hi:hi][:len(xv)]
	for j, xt := range xv {
		uj := u[j]
		u[j] = 0
		xn := a*xt - ta*(r[j]+sc*uj)
		xbar[j] = xn + theta*(xn-xt)
		xv[j] = xn
		r[j] += rs * uj
	}
}

// advanceSegment records iteration t's steps and extends the running
// product and sum by one factor. Only worker 0 calls it, between barriers.
func (s *solver) advanceSegment(tau, theta float64) {
	t := s.segT
	a := 1 / (1 + tau*s.lam)
	s.segTau[t] = tau
	s.segTh[t] = theta
	s.segP[t+1] = s.segP[t] * a
	s.segS[t+1] = s.segS[t] + (-tau*a)/s.segP[t+1]
	s.segT = t + 1
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

// The driver's view of an AdaSPDC run (driver.go).

func (s *solver) Certify() (driver.TracePoint, error) { return s.certificate() }
func (s *solver) Point() []float64                    { return s.xv }
func (s *solver) Passes() float64                     { return float64(s.sampled) / float64(s.n) }
func (s *solver) Threads() int                        { return len(s.workers) }
func (s *solver) DivergenceHint() string {
	return "scale the features (e.g. to [-1, 1]), or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), lower CoordinateSettings.M, or raise λ (ElasticNet.Lambda)"
}

// Importance sampling for SPDC (Zhang & Xiao's non-uniform variant, m = 1).
//
// Block i is drawn with probability pᵢ = ½·(1/n_b) + ½·Rᵢ/ΣⱼRⱼ: half
// proportional to its norm, half uniform, so that no block's probability
// falls below half its uniform share and every dual keeps being updated.
// Eq. 11 then weighs the drawn block by wᵢ = 1/(n_b·pᵢ), which keeps the
// primal estimate unbiased. The steps follow from the condition that makes
// the paper's matrix (17) positive definite, τ·σ·(wᵢRᵢ)² ≤ 1/4 for every
// i: SPDC's steps with R = maxᵢ wᵢRᵢ, which lies between the mean norm R̄
// and 2R̄ (wᵢRᵢ = 2RᵢR̄/(Rᵢ + R̄)), instead of the largest norm. On data
// whose norms spread widely that is a much larger step than uniform SPDC's.

// importanceProb returns pᵢ for block norms r.
func importanceProb(r []float64) []float64 {
	var sum float64
	for _, v := range r {
		sum += v
	}
	nb := float64(len(r))
	p := make([]float64, len(r))
	for i, v := range r {
		p[i] = 0.5/nb + 0.5*v/sum
	}
	return p
}

// importanceR returns maxᵢ wᵢRᵢ, the R of SPDC's steps under importance
// sampling.
func importanceR(r []float64) float64 {
	p := importanceProb(r)
	nb := float64(len(r))
	var out float64
	for i, v := range r {
		out = math.Max(out, v/(nb*p[i]))
	}
	return out
}

// importanceSampler builds the sampler and the weights wᵢ from the blocks'
// own norms (zero norms included: such a block is drawn at its uniform
// floor and changes nothing).
func importanceSampler(raw []float64, opt driver.Options) (blocks.Sampler, []float64, error) {
	p := importanceProb(raw)
	w := make([]float64, len(p))
	for i, pi := range p {
		w[i] = 1 / (float64(len(p)) * pi)
	}
	smp, err := blocks.NewImportance(p, opt.Coordinate().M, opt.Seed^0x9e3779b97f4a7c15)
	return smp, w, err
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

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverAdaSPDC,
			Reads:          []string{driver.CoordinateFamily},
			Takes:          driver.Takes{L1: true},
			Summary:        "adaptive stochastic primal-dual coordinate method, per-block steps (Zhu & Storkey 2015)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "elastic net with λ > 0, optional centre",
			Parallel:       true,
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    0,
		Accepts: acceptsAdaSPDC,
		Start:   startAdaSPDC,
	})
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:               SolverSPDC,
			Reads:              []string{driver.CoordinateFamily},
			Takes:              driver.Takes{L1: true},
			Summary:            "stochastic primal-dual coordinate method, one step for all blocks (Zhang & Xiao 2015)",
			Losses:             "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:       "elastic net with λ > 0, optional centre",
			Parallel:           true,
			Certified:          true,
			ImportanceSampling: true,
			StageWarmStart:     true,
		},
		Rank:    10,
		Accepts: acceptsAdaSPDC,
		Start:   startAdaSPDC,
	})
}
