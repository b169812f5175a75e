package spdc

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

// settings are the options AdaSPDC and SPDC read, copied from
// driver.Options in one place (settingsFrom); nothing else in the package
// reads the options.
type settings struct {
	solver        driver.Solver    // SolverSPDC: one R for every block
	m             int              // blocks per iteration
	blockSize     int              // samples per dual block
	partition     driver.Partition // how samples are grouped into blocks
	sampling      driver.Sampling  // uniform τ-nice, or importance (m = 1)
	steps         driver.Steps     // batch steps: the paper's or ESO
	stepScale     float64          // multiplies σᵢ and τ (stepSizes)
	lazy          driver.Lazy      // lazy primal updates: on, off or by size
	deterministic bool             // no fused reduction: sums in batch order
	threads       int              // upper bound on the workers
	seed          uint64           // the partition's and the sampler's
	warmStart     []float64        // x⁰, or nil for 0
}

// settingsFrom reads the options the method uses: the run's and its own
// family's (Settings, carried in Options.Settings), defaults filled in.
func settingsFrom(opt driver.Options) settings {
	c := opt.Coordinate()
	return settings{
		solver:        opt.Solver,
		m:             c.M,
		blockSize:     c.BlockSize,
		partition:     c.Partition,
		sampling:      c.Sampling,
		steps:         c.Steps,
		stepScale:     c.StepScale,
		lazy:          c.Lazy,
		deterministic: opt.Deterministic,
		threads:       opt.Threads,
		seed:          opt.Seed,
		warmStart:     opt.WarmStart,
	}
}

// newSolver builds a run in named steps, each of which needs the ones
// before it:
//
//  1. the problem and the settings (newProblemState);
//  2. the n_b dual blocks, and the check that a batch of m fits (partition);
//  3. the worker pool, sized by a batch's nonzeros (startPool);
//  4. the block norms Rᵢ = ‖Aᵢ‖₂ and the checks that the steps are finite
//     (blockNorms);
//  5. the couplings the steps see: ρᵢ for ESO steps, one R for SPDC
//     (couplings);
//  6. the steps σᵢ, τᵗ and θᵗ of Eq. 10, 12 and 15 (stepSizes);
//  7. the per-coordinate storage layout (chooseLayout);
//  8. the barrier, the coordinate owners and the workers' state
//     (startWorkers);
//  9. the block sampler (newSampler);
//  10. the starting iterate and the batch scratch (initState);
//  11. the per-sample records and the first batch (buildRecords).
//
// The pool runs from step 3 on; the one deferred clean-up stops it when a
// later step fails.
func newSolver(ctx context.Context, prob objective.Problem, opt driver.Options) (_ *solver, err error) {
	s := newProblemState(prob, settingsFrom(opt))
	if err = s.partition(); err != nil {
		return nil, err
	}
	threads, batchNNZ := s.startPool()
	defer func() {
		if err != nil {
			s.pool.Close()
		}
	}()
	if err = s.blockNorms(ctx, threads); err != nil {
		return nil, err
	}
	rawNorms, err := s.couplings(ctx, threads)
	if err != nil {
		return nil, err
	}
	s.stepSizes()
	s.chooseLayout(batchNNZ)
	s.startWorkers()
	impW, err := s.newSampler(rawNorms)
	if err != nil {
		return nil, err
	}
	s.initState()
	s.buildRecords(impW)
	return s, nil
}

// newProblemState returns a solver that holds the problem: the data, λ and
// γ, and the elastic net without its centre c, which enters through the
// shift λc of r.
func newProblemState(prob objective.Problem, set settings) *solver {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet() // Accepts checked that it is one
	s := &solver{prob: prob, set: set, x: x, n: x.Rows, d: x.Cols, lam: en.Lambda}
	s.reg = objective.ElasticNet{Lambda: en.Lambda, L1: en.L1}
	if en.Center != nil {
		s.centre = en.Center
		s.shift = make([]float64, s.d)
		for j, c := range en.Center {
			s.shift[j] = en.Lambda * c
		}
	}
	s.lossG = prob.Loss.Gamma()
	return s
}

// partition groups the samples into the n_b dual blocks of the paper's
// problem (2), as CoordinateSettings.Partition says, and checks that a batch of m
// distinct blocks can be drawn.
func (s *solver) partition() error {
	var err error
	switch s.set.partition {
	case driver.PartitionContiguous:
		s.part, err = blocks.Contiguous(s.n, s.set.blockSize)
	case driver.PartitionShuffle:
		s.part, err = blocks.Shuffled(s.n, s.set.blockSize, s.set.seed)
	case driver.PartitionNorm:
		s.part, err = blocks.ByNorm(s.x.RowSquaredNorms(), s.set.blockSize, s.set.seed)
	}
	if err != nil {
		return fmt.Errorf("engine: partition: %w", err)
	}
	s.nb = s.part.NumBlocks()
	if s.set.m > s.nb {
		return fmt.Errorf("engine: m = %d blocks per iteration, but the data has only %d blocks of %d samples: lower CoordinateSettings.M or CoordinateSettings.BlockSize", s.set.m, s.nb, s.set.blockSize)
	}
	return nil
}

// blockNorms computes each block's spectral norm Rᵢ = ‖Aᵢ‖₂, the coupling
// of block i to x in Eq. 10 and 12, and the largest block size. It refuses
// data on which those steps are not finite numbers: non-finite values,
// rows that are all zero, or a condition number R²/(λγ) beyond what
// float64 resolves.
func (s *solver) blockNorms(ctx context.Context, threads int) error {
	var err error
	s.norms, err = blocks.SpectralNormsContext(ctx, s.x, s.part, blocks.DefaultTolerance, threads)
	if err != nil {
		return fmt.Errorf("engine: spectral norms: %w", err)
	}
	rmax := 0.0
	for b, rb := range s.norms {
		if math.IsNaN(rb) || math.IsInf(rb, 0) {
			return fmt.Errorf("engine: block %d has spectral norm %v: the data holds non-finite values", b, rb)
		}
		rmax = math.Max(rmax, rb)
		s.maxQ = max(s.maxQ, len(s.part.Block(b)))
	}
	if rmax == 0 {
		return errors.New("engine: every row of the data is zero")
	}
	if kappa := rmax * rmax / (s.lam * s.lossG); !(kappa <= driver.MaxConditionNumber) {
		return fmt.Errorf("engine: λ = %g is too small for this data: the condition number R²/(λγ) = %.3g (R = %.4g, the largest block norm; γ = %g for the %s loss) is above %g, where the steps break down in float64; use λ ≥ %.3g, or scale the data down",
			s.lam, kappa, rmax, s.lossG, s.prob.Loss.Name(), driver.MaxConditionNumber, rmax*rmax/(s.lossG*driver.MaxConditionNumber))
	}
	return nil
}

// couplings turns the block norms in s.norms into the Rᵢ the steps see:
// the couplings ρᵢ of esoCouplings for ESO steps with m > 1, the smallest
// positive value for an all-zero block, and for SolverSPDC one R for every
// block (Zhang & Xiao's R = maxᵢ Rᵢ, or maxᵢ wᵢRᵢ under importance
// sampling). Under importance sampling it returns the blocks' own norms,
// the sampler's weights.
func (s *solver) couplings(ctx context.Context, threads int) ([]float64, error) {
	s.importance = s.set.sampling == driver.SamplingImportance
	var rawNorms []float64 // the sampler's weights: the blocks' own norms
	if s.importance {
		rawNorms = append(rawNorms, s.norms...)
	}
	if s.set.steps == driver.StepsESO && s.set.m > 1 {
		// From here on s.norms holds the couplings ρᵢ (stepSizes).
		if err := s.esoCouplings(ctx, threads); err != nil {
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
	if s.set.solver == SolverSPDC {
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
	return rawNorms, nil
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
// Chambolle–Pock bound στ‖K‖² ≤ 1, outside the paper's proof, where it
// often takes fewer epochs to a given suboptimality (epochs= of `adaspdc
// train -data ../shared/data/w8a -solver adaspdc -step-scale 2` against the
// same at 1); a run that diverges stops with an error.
func (s *solver) stepSizes() {
	n, nb, m := float64(s.n), float64(s.nb), float64(s.set.m)
	sc := nb / n
	lam, gam := s.lam, s.lossG*sc
	c := s.set.stepScale // 1: the paper's steps
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

// initState allocates the batch slots and the scratch the read phase hands
// to the update phase, and the lazy segment, and sets the starting iterate
// (initIterate) in the per-coordinate records of the layout.
func (s *solver) initState() {
	for i := range s.batches {
		s.batches[i] = batch{blocks: make([]int32, s.set.m), offset: make([]int, s.set.m+1)}
	}
	s.dy = make([]float64, s.set.m*s.maxQ)
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
	_, s.logistic = s.prob.Loss.(objective.Logistic)
}

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
	if s.set.warmStart != nil {
		copy(s.xv, s.set.warmStart)
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
