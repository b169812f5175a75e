package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"unsafe"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverSDCA is proximal stochastic dual coordinate ascent (Prox-SDCA),
// with the mini-batch form of Takáč et al. when CoordinateSettings.M > 1.
const SolverSDCA driver.Solver = "sdca"

// Settings are the SDCA family's own settings, which Options.Settings
// carries to sdca, sdca-async, sdca-async-wild and cocoa; the other
// solvers refuse them. Options.WarmDuals is the same start for every
// solver that takes warm duals (SolverInfo.Takes.WarmDuals); over the
// ranks, cocoa takes each rank's from these settings.
type Settings struct {
	// WarmDuals, when non-nil, are the initial duals yₖ (length X.Rows),
	// each finite and in the domain of the loss's conjugate (unchanged by
	// Loss.DualFeasible); v = (1/n)Σₖ yₖaₖ is recomputed from them. They
	// override the duals a WarmStart would give (whose primal point SDCA
	// reads from the duals, x = ∇g*(−v)).
	WarmDuals []float64
}

// Family is the SDCA family's name, as SolverInfo.Reads lists it.
const Family = "sdca"

// Family returns the SDCA family's name.
func (Settings) Family() string { return Family }

// IsDefault reports whether no warm duals are given.
func (s Settings) IsDefault() bool { return s.WarmDuals == nil }

// NeedsSolver reports whether warm duals are given: the automatic choice
// does not run with them, so the solver that reads them must be named.
func (s Settings) NeedsSolver() bool { return s.WarmDuals != nil }

// Validate accepts any settings: the duals' checks need the data.
func (Settings) Validate() error { return nil }

// ValidateFor refuses warm duals that are not one finite value per sample.
func (s Settings) ValidateFor(n int) error {
	if s.WarmDuals == nil {
		return nil
	}
	if len(s.WarmDuals) != n {
		return fmt.Errorf("engine: %d warm duals for %d samples", len(s.WarmDuals), n)
	}
	for k, y := range s.WarmDuals {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return fmt.Errorf("engine: warm dual %d is %v", k, y)
		}
	}
	return nil
}

// warmDuals reports whether opt carries warm duals.
func warmDuals(opt driver.Options) bool {
	s, _ := driver.SettingsOf[Settings](opt)
	return s.WarmDuals != nil
}

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverSDCA,
			Reads:          []string{driver.CoordinateFamily, Family},
			Takes:          driver.Takes{L1: true, WarmDuals: true},
			Summary:        "proximal stochastic dual coordinate ascent, exact dual steps, mini-batches with CoordinateSettings.M (Shalev-Shwartz & Zhang 2014; Takáč et al. 2013)",
			Losses:         "any (squared, logistic, sqhinge, smoothhinge, hinge)",
			Regularizers:   "elastic net with λ > 0 on every coordinate, optional centre and weights",
			Parallel:       true,
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    20,
		Accepts: acceptsSDCA,
		Start:   startSDCA,
	})
}

// acceptsSDCA reports why the SDCA family cannot solve prob: it reads its
// primal point from the duals through ∇g*, which needs an elastic net that
// is strongly convex on every coordinate, and it steps one sample at a time
// (mini-batches are samples, not blocks).
func acceptsSDCA(prob objective.Problem, opt driver.Options) error {
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the elastic net, not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if err := objective.NeedStrongConvexity(en, string(opt.Solver)); err != nil {
		return fmt.Errorf("%w (%s reads its primal point x = ∇g*(−v) from the duals, which needs λ > 0)", err, opt.Solver)
	}
	if opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s updates single samples: block size %d is AdaSPDC's (use CoordinateSettings.M for mini-batches)", opt.Solver, opt.Coordinate().BlockSize)
	}
	return nil
}

// sdcaCore is what the SDCA solvers (sdca, sdca-async) share: the duals y,
// the vector v = (1/n) Σₖ yₖaₖ, the per-sample steps, the primal read of x
// = ∇g*(−v) and the certificate at the solver's own duals.
type sdcaCore struct {
	prob objective.Problem
	x    *sparse.CSR
	n, d int
	en   objective.ElasticNet
	invN float64
	// plainL2 holds when g = (λ/2)‖x‖² (no L1, centre or weights): then
	// x = −v/λ and a margin is one sparse dot product with v. plainEN holds
	// when g is the plain elastic net: x = soft(−v, L1)/λ, inline.
	plainL2, plainEN bool
	invLam           float64

	y     []float64 // the duals, one per sample
	v     []float64 // (1/n) Σₖ yₖaₖ, kept by the iteration, exact after recomputeV
	w     []float64 // the primal point ∇g*(−v), set by a certificate and by point
	sigma []float64 // the dual step σₖ of each sample (see the step's comment)
	// logit is, for the logistic loss, the logit at which sample k's last
	// prox ended (NaN: none yet), which warm-starts the next one.
	logit []float64

	sampled int64 // samples stepped so far, for passes

	// runningExact holds when every update of v is applied (all modes but
	// the wild one), so that v differs from (1/n)Σₖ yₖaₖ by rounding only
	// and a certificate that is not deciding the stop may use it as it is;
	// see certificate. tol is the run's tolerance, sinceExact counts the
	// certificates since v was last recomputed.
	runningExact bool
	tol          float64
	sinceExact   int
	// driftKnown holds where the mode bounds the rounding of its updates
	// of v: drift then bounds ‖v − (1/n)Σₖ yₖaₖ‖₁ since v was last
	// recomputed, and the certificate uses the running v with that bound
	// (certificateWithin) instead of recomputing it.
	driftKnown bool
	drift      float64
	// gaps holds the samples stepped and the relative gap at the last two
	// certificates, older first (predictGap).
	gaps [2][2]float64

	// cert holds the workers that set w from v (setPrimal) and that
	// cocoa's epochs run on (nil: one). The evaluator recomputes v on its
	// own workers (recomputeV).
	cert *driver.RowSweep
	eval *objective.Evaluator // the certificate
	// wFresh holds while w = ∇g*(−v) for the current v: evaluate sets it,
	// and whatever moves v (an epoch, recomputeV, warm duals) clears it.
	wFresh bool
}

// exactEvery bounds the certificates in a row that use the running v.
const exactEvery = 8

// allocCore returns the core's state for prob's rows, in a problem of
// nGlobal rows (the rows of every rank in a distributed run): duals, v, w
// and v's compensation at zero, the logistic's last logits unknown.
func allocCore(prob objective.Problem, opt driver.Options, nGlobal int) *sdcaCore {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet()
	c := &sdcaCore{prob: prob, x: x, n: x.Rows, d: x.Cols, en: en, invN: 1 / float64(nGlobal),
		runningExact: true, tol: opt.Tol}
	c.plainL2 = en.Plain() && en.L1 == 0
	c.plainEN = en.Plain()
	c.invLam = 1 / en.Lambda
	c.eval = driver.NewEvaluator(prob, opt.Threads)
	c.y = hugepage.Make[float64](c.n)
	c.v = hugepage.Make[float64](c.d)
	c.w = hugepage.Make[float64](c.d)
	if _, ok := prob.Loss.(objective.Logistic); ok {
		c.logit = hugepage.Make[float64](c.n)
		for k := range c.logit {
			c.logit[k] = math.NaN()
		}
	}
	return c
}

// newSDCACore sets the starting duals: yₖ = φ'(aₖᵀx₀) projected into dom φ*
// for a warm start x₀, and yₖ = 0 otherwise (feasible for every loss here,
// and x = ∇g*(0) is 0 or the centre). beta, when non-nil, scales the
// curvature of coordinate j in the steps (the mini-batch factor βⱼ).
// colNNZ, when non-nil, holds the column counts (CSR.ColumnCounts), which the
// certificate's workers need: a caller that has them saves a pass.
func newSDCACore(prob objective.Problem, opt driver.Options, beta []float64, colNNZ []int64) (*sdcaCore, error) {
	x := prob.X
	c := allocCore(prob, opt, x.Rows) // accepts checked the regularizer
	threads := driver.ThreadBudget(opt.Threads)
	if err := c.stepSizes(beta, threads); err != nil {
		return nil, err
	}
	warm, _ := driver.SettingsOf[Settings](opt)
	switch {
	case warm.WarmDuals != nil:
		if err := c.checkDuals(warm.WarmDuals); err != nil {
			return nil, err
		}
		if err := c.WarmDuals(warm.WarmDuals); err != nil {
			return nil, err
		}
	case opt.WarmDuals != nil:
		// driver.Solve sets them (WarmDuals) once the method is built.
	case opt.WarmStart != nil:
		loss := prob.Loss
		for k := 0; k < c.n; k++ {
			val, idx := x.Row(k)
			z := kernels.SparseDot(val, idx, opt.WarmStart)
			c.y[k] = loss.DualFeasible(loss.Deriv(z, prob.B[k]), prob.B[k])
		}
		c.recomputeV()
	}
	// Last, so that no error return leaves the workers running.
	if threads = min(threads, int(x.NNZ()/driver.SweepMinNNZ)); threads > 1 {
		c.cert = driver.NewRowSweep(x, threads, false)
	}
	if colNNZ != nil {
		c.eval.UseColumnCounts(colNNZ)
	}
	return c, nil
}

// checkDuals reports the first of y that is not a finite value in the
// domain of the loss's conjugate (changed by Loss.DualFeasible).
func (c *sdcaCore) checkDuals(y []float64) error {
	if len(y) != c.n {
		return fmt.Errorf("engine: %d warm duals for %d samples", len(y), c.n)
	}
	loss := c.prob.Loss
	for k, yk := range y {
		if math.IsNaN(yk) || math.IsInf(yk, 0) {
			return fmt.Errorf("engine: warm dual %d is %v", k, yk)
		}
		if f := loss.DualFeasible(yk, c.prob.B[k]); f != yk {
			return fmt.Errorf("engine: warm dual %d is %v, outside the domain of the %s loss's conjugate at label %v (nearest feasible: %v)", k, yk, loss.Name(), c.prob.B[k], f)
		}
	}
	return nil
}

// WarmDuals sets the duals to y projected into the domain of φ* and
// recomputes v = (1/n)Σₖ yₖaₖ; the primal point is then ∇g*(−v). It serves
// SDCASettings.WarmDuals (checked by checkDuals first) and the reductions
// (dualWarmStarter), whose stages change g (its strong convexity and
// centre) or smooth the hinge but keep the domain of φ*, so the last
// stage's duals stay feasible for the next stage.
func (c *sdcaCore) WarmDuals(y []float64) error {
	if len(y) != c.n {
		return fmt.Errorf("engine: %d warm duals for %d samples", len(y), c.n)
	}
	loss := c.prob.Loss
	for k, yk := range y {
		if math.IsNaN(yk) || math.IsInf(yk, 0) {
			return fmt.Errorf("engine: warm dual %d is %v", k, yk)
		}
		c.y[k] = loss.DualFeasible(yk, c.prob.B[k])
	}
	if c.logit != nil {
		for k := range c.logit {
			c.logit[k] = math.NaN()
		}
	}
	c.recomputeV()
	return nil
}

// DualPoint returns the duals (dualIterate), for the reductions'
// certificate and the next stage's warm duals.
func (c *sdcaCore) DualPoint() []float64 { return c.y }

// stepSizes sets σₖ = n / Σⱼ βⱼ·aₖⱼ²/λⱼ for every sample (βⱼ = 1 without
// mini-batches); σₖ = +Inf for an empty row, whose dual does not move v.
// The rows are shared among up to threads goroutines.
func (c *sdcaCore) stepSizes(beta []float64, threads int) error {
	c.sigma = hugepage.Make[float64](c.n)
	threads = max(1, min(threads, int(c.x.NNZ()/driver.SweepMinNNZ)))
	bad := make([]int, threads) // the first bad row of each range, or −1
	nonzero := make([]bool, threads)
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bad[t] = -1
			for k := c.n * t / threads; k < c.n*(t+1)/threads; k++ {
				q := c.rowCurvature(k, beta)
				if math.IsNaN(q) || math.IsInf(q, 0) {
					bad[t] = k
					return
				}
				c.sigma[k] = float64(c.n) / q // +Inf for q = 0
				nonzero[t] = nonzero[t] || q > 0
			}
		}()
	}
	wg.Wait()
	for _, k := range bad {
		if k >= 0 {
			return fmt.Errorf("engine: row %d has non-finite values or a squared norm beyond float64", k)
		}
	}
	for _, nz := range nonzero {
		if nz {
			return nil
		}
	}
	return errors.New("engine: every row of the data is zero")
}

// rowCurvature returns qₖ = Σⱼ βⱼ·aₖⱼ²/λⱼ (βⱼ = 1 for a nil beta).
func (c *sdcaCore) rowCurvature(k int, beta []float64) float64 {
	val, idx := c.x.Row(k)
	var q float64
	if c.en.Plain() {
		if beta == nil {
			for _, a := range val {
				q += a * a
			}
		} else {
			for p, j := range idx {
				q += val[p] * val[p] * beta[j]
			}
		}
		return q * c.invLam
	}
	for p, j := range idx {
		_, lam, _ := c.en.Coord(int(j))
		a2 := val[p] * val[p]
		if beta != nil {
			a2 *= beta[j]
		}
		q += a2 / lam
	}
	return q
}

// margin returns aₖᵀx at x = ∇g*(−v), reading only the row's coordinates of
// v: with L1 > 0 the primal is a soft-thresholding of v, formed lazily here
// rather than stored, so that a step costs O(nnz of the row), not O(d).
func (c *sdcaCore) margin(val []float64, idx []int32, v []float64) float64 {
	if c.plainL2 {
		return -kernels.SparseDot(val, idx, v) * c.invLam
	}
	var z float64
	if c.plainEN {
		l1 := c.en.L1
		for p, j := range idx {
			vj := v[j]
			if a := math.Abs(vj) - l1; a > 0 {
				z -= val[p] * math.Copysign(a, vj)
			}
		}
		return z * c.invLam
	}
	for p, j := range idx {
		z += val[p] * c.en.PrimalCoord(int(j), v[j])
	}
	return z
}

// dualStep returns the new dual of sample k given its margin z (see
// sdcaSolver.step for the mathematics), keeping the logistic prox's logit.
func (c *sdcaCore) dualStep(k int, z, sigma float64) float64 {
	b := c.prob.B[k]
	if c.logit != nil {
		yn, t := objective.LogisticProxWarm(c.y[k], c.logit[k], z, sigma, b)
		c.logit[k] = t
		return yn
	}
	return c.prob.Loss.DualProx(c.y[k], z, sigma, b)
}

// recomputeV sets v = (1/n) Σₖ yₖaₖ from the duals, each coordinate's
// sum formed over the rows in order with every product's and addition's
// rounding error carried (the evaluator's DualSum, each of its workers
// owning a range of columns, so that v does not depend on the workers):
// the iteration's running v drifts by rounding (and by lost updates in the
// wild asynchronous mode), and a dual value must belong to an actual y for
// the gap to bound anything. The duals are in dom φ* already, so DualSum's
// projection leaves them as they are.
func (c *sdcaCore) recomputeV() {
	c.wFresh = false
	c.drift = 0
	if err := c.eval.DualSum(c.y, c.v); err != nil {
		panic(err) // a bug: the lengths are the core's own
	}
	for j := range c.v {
		c.v[j] *= c.invN
	}
}

// certificate sets w = ∇g*(−v) and returns
//
//	P(w) = (1/n) Σₖ φ(aₖᵀw) + g(w),  D(y) = −(1/n) Σₖ φ*(yₖ) − g*(−v),
//
// with compensated sums. D is a lower bound on the optimum only for
// v = (1/n)Σₖ yₖaₖ exactly, which recomputeV restores; but that costs more
// than an epoch on wide data (each worker reads every row for its columns),
// and where every update of v is applied the running v differs from it by
// rounding alone. So the running v serves the certificates that only
// report progress, and v is recomputed (and the iteration continues from
// it) in the wild mode, at least every exactEvery certificates, and
// whenever the gap is within twice the tolerance: a run never stops on a
// gap that the exact v has not confirmed.
//
// Where the last two certificates' gaps, extrapolated at their rate per
// pass, predict a gap within twice the tolerance, v is recomputed before
// the first evaluation, which saves the evaluation with the running v that
// would only lead to the recomputation.
func (c *sdcaCore) certificate() (driver.TracePoint, error) {
	if c.driftKnown {
		return c.certificateWithin(), nil
	}
	exact := !c.runningExact || c.sinceExact+1 >= exactEvery || c.predictGap() <= 2*c.tol
	if exact {
		c.recomputeV()
	}
	tp := c.evaluate()
	if !exact && tp.RelGap <= 2*c.tol {
		c.recomputeV()
		tp, exact = c.evaluate(), true
	}
	c.sinceExact++
	if exact {
		c.sinceExact = 0
	}
	c.gaps[0], c.gaps[1] = c.gaps[1], [2]float64{float64(c.sampled), tp.RelGap}
	return tp, nil
}

// driftShare is the largest share of the gap that the drift's bound may
// take before the certificate recomputes v instead (certificateWithin).
const driftShare = 0.01

// certificateWithin is the certificate of a mode that bounds the drift of
// its running v (driftKnown): the evaluator lowers D by the most that a v
// within the drift could lower it (Evaluator.AtDualVectorWithin), so D is
// a lower bound on P* at the duals, and a run may stop on it. Where the
// bound is more than driftShare of the gap it would be, v is recomputed
// first, and the drift starts again from zero. The bound is a worst case
// and still far below the gaps on the wide data measured (bench/RESULTS.md,
// "The second core on raw wide data"), where no certificate recomputes v
// any more, a pass that costs more than an epoch there.
func (c *sdcaCore) certificateWithin() driver.TracePoint {
	var tp driver.TracePoint
	bound := math.Inf(1)
	if c.drift < math.Inf(1) { // not where the steps overflowed (+Inf, NaN)
		c.setPrimal()
		cert, b, err := c.eval.AtDualVectorWithin(c.w, c.y, c.v, c.drift)
		if err != nil {
			panic(err) // a bug: accepts checked the strong convexity
		}
		tp, bound = driver.TracePointOf(cert), b
	}
	if !(bound <= driftShare*tp.Gap) {
		c.recomputeV()
		tp = c.evaluate()
	}
	c.gaps[0], c.gaps[1] = c.gaps[1], [2]float64{float64(c.sampled), tp.RelGap}
	return tp
}

// predictGap extrapolates the relative gaps of the last two certificates,
// at their rate per sample stepped, to the samples stepped now; +Inf where
// there is no falling pair of gaps to extrapolate.
func (c *sdcaCore) predictGap() float64 {
	s0, g0 := c.gaps[0][0], c.gaps[0][1]
	s1, g1 := c.gaps[1][0], c.gaps[1][1]
	if !(g1 > 0 && g1 < g0 && s1 > s0) {
		return math.Inf(1)
	}
	return g1 * math.Pow(g1/g0, (float64(c.sampled)-s1)/(s1-s0))
}

// evaluate sets w = ∇g*(−v) and returns the certificate at w and the
// duals y, with the v at hand (see certificate).
func (c *sdcaCore) evaluate() driver.TracePoint {
	c.setPrimal()
	tp, err := c.eval.AtDualVector(c.w, c.y, c.v)
	if err != nil {
		panic(err) // a bug: the lengths are the method's own
	}
	return driver.TracePointOf(tp)
}

// setPrimal sets w = ∇g*(−v). Coordinate j of the plain elastic net's
// ∇g* depends on vⱼ alone, so the certificate's workers each set an even
// range of the coordinates.
func (c *sdcaCore) setPrimal() {
	if c.cert != nil && c.en.Plain() {
		t := c.cert.Threads()
		if err := c.cert.Pool().Run(func(w int) {
			lo, hi := c.d*w/t, c.d*(w+1)/t
			c.en.PrimalFromDual(c.w[lo:hi], c.v[lo:hi])
		}); err != nil {
			panic(err) // a bug: the ranges lie in [0, d)
		}
	} else {
		c.en.PrimalFromDual(c.w, c.v)
	}
	c.wFresh = true
}

// Point returns ∇g*(−v), which the last certificate computed unless v has
// moved since.
func (c *sdcaCore) Point() []float64 {
	if !c.wFresh {
		c.en.PrimalFromDual(c.w, c.v)
		c.wFresh = true
	}
	return c.w
}

func (c *sdcaCore) Passes() float64 { return float64(c.sampled) * c.invN }

func (c *sdcaCore) DivergenceHint() string {
	return "SDCA's steps cannot diverge on finite data: check the data for huge values, or scale the features (e.g. to [-1, 1])"
}

// sdcaSolver is the synchronous SDCA of one run: sample by sample for
// M = 1, in mini-batches of M samples otherwise, on a pool of workers when
// a batch is large enough to share.
type sdcaSolver struct {
	*sdcaCore
	m    int
	perm []int32 // this epoch's order of the samples
	rng  *rand.Rand

	pool   *sched.Pool // nil: one worker
	bar    *sched.Barrier
	owners sched.Owners
	dy     []float64 // Δyₖ of each batch slot
	stop   bool      // set by worker 0 before the update barrier
}

// startSDCA builds the synchronous solver. With M > 1 it computes each
// coordinate's mini-batch factor βⱼ (see step) from the column counts.
func startSDCA(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	n := prob.X.Rows
	if opt.Coordinate().M > n {
		return nil, fmt.Errorf("engine: m = %d samples per mini-batch, but the data has only %d", opt.Coordinate().M, n)
	}
	var beta []float64
	var colNNZ []int64
	if opt.Coordinate().M > 1 {
		colNNZ = prob.X.ColumnCounts()
		beta = blocks.MiniBatchBeta(colNNZ, n, opt.Coordinate().M)
	}
	core, err := newSDCACore(prob, opt, beta, colNNZ)
	if err != nil {
		return nil, err
	}
	s := &sdcaSolver{sdcaCore: core, m: opt.Coordinate().M}
	s.perm = hugepage.Make[int32](n)
	for k := range s.perm {
		s.perm[k] = int32(k)
	}
	s.rng = rand.New(rand.NewPCG(opt.Seed, 0x5dca))
	s.dy = make([]float64, s.m)
	// As for AdaSPDC: a worker per driver.MinBatchWork nonzeros of a batch, and
	// never more workers than samples in a batch.
	batchNNZ := float64(prob.X.NNZ()) / float64(n) * float64(s.m)
	workers := driver.WorkersFor(opt.Threads, batchNNZ, float64(driver.MinBatchWork), s.m)
	if workers > 1 {
		s.pool = sched.NewPool(workers)
		s.bar = sched.NewBarrier(workers, 0)
		s.pool.BreakOnPanic(s.bar)
		s.owners = sched.NewOwners(colNNZ, workers)
	}
	return s, nil
}

func (s *sdcaSolver) Certify() (driver.TracePoint, error) { return s.certificate() }

func (s *sdcaSolver) Threads() int {
	if s.pool == nil {
		return s.certThreads()
	}
	return max(s.pool.Threads(), s.certThreads())
}

func (s *sdcaSolver) Finish(res *driver.Result) error {
	res.Duals = s.y
	err := s.closeCert()
	if s.pool != nil {
		err = errors.Join(err, s.pool.Close())
	}
	return err
}

// certThreads returns the workers of the certificate.
func (c *sdcaCore) certThreads() int {
	if c.cert == nil {
		return 1
	}
	return c.cert.Threads()
}

// closeCert stops the certificate's workers.
func (c *sdcaCore) closeCert() error {
	if c.cert == nil {
		return nil
	}
	return c.cert.Close()
}

// RunEpochs runs k epochs, each a fresh random permutation of the samples
// (seeded by Options.Seed) cut into ⌈n/M⌉ batches.
func (s *sdcaSolver) RunEpochs(ctx context.Context, k int) (int, error) {
	s.wFresh = false
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		var err error
		switch {
		case s.m == 1:
			s.epochSequential(ctx)
		case s.pool == nil:
			s.epochBatches(ctx)
		default:
			err = s.epochParallel(ctx)
		}
		if err != nil {
			return e + 1, fmt.Errorf("engine: sdca: %w", err)
		}
	}
	return k, nil
}

// Prox-SDCA (Shalev-Shwartz & Zhang, "Accelerated proximal stochastic dual
// coordinate ascent", Math. Prog. 2016, Procedure Prox-SDCA with the exact
// coordinate maximisation of its Option I, relaxed to a quadratic model of
// g* where g* is not quadratic).
//
// The dual is D(y) = −(1/n) Σₖ φ*(yₖ) − g*(−v) with v = (1/n) Σₖ yₖaₖ, and
// the primal point that goes with it is x = ∇g*(−v) (Separable.PrimalCoord).
// Moving yₖ by δ moves v by δaₖ/n. Coordinate j of g is λⱼ-strongly convex
// (λⱼ = wⱼ·λ), so gⱼ* has a (1/λⱼ)-Lipschitz derivative and
//
//	g*(−v − δaₖ/n) ≤ g*(−v) − (δ/n)·aₖᵀ∇g*(−v) + (δ²/2n²)·Σⱼ aₖⱼ²/λⱼ
//	               = g*(−v) − (δ/n)·zₖ + δ²qₖ/(2n²),   zₖ = aₖᵀx, qₖ = Σⱼ aₖⱼ²/λⱼ.
//
// Hence, with u = yₖ + δ,
//
//	D(y + δeₖ) ≥ D(y) + (1/n)·[φ*(yₖ) − φ*(u) + (u − yₖ)·zₖ − (u − yₖ)²·qₖ/(2n)],
//
// and the step maximises that lower model:
//
//	yₖ ← argmin_u φ*(u) − u·zₖ + (u − yₖ)²/(2σₖ),   σₖ = n/qₖ  (= λn/‖aₖ‖² for one λ),
//
// which is exactly the loss's DualProx(yₖ, zₖ, σₖ). For a pure L2 g (with a
// centre and weights too) g* is quadratic, the model is D itself and the
// step is the exact coordinate maximisation of Option I; with L1 > 0 it is a
// safe lower bound, so D never decreases either way. For the hinge loss the
// prox is a clipped Newton step, yₖ ← b·clip(b·(yₖ + σₖ(zₖ − b)), −1, 0),
// which is LIBLINEAR's dual coordinate descent for the L1-loss SVM (-s 3;
// Hsieh et al. 2008, Algorithm 1) in other variables (αₖ = −b·yₖ ∈ [0, 1]
// scaled by C = 1/(nλ)); for the squared hinge it is -s 1.
//
// Mini-batches (Takáč, Bijral, Richtárik & Srebro 2013, "Mini-batch primal
// and dual methods for SVMs"): the M samples of a batch all read the same v,
// step at once, and v then takes the sum of their changes. The lower model
// above then involves ‖Σₖ∈S δₖaₖ‖²; for a batch S drawn uniformly among the
// M-subsets of the n samples its expectation is bounded by the expected
// separable overapproximation (Richtárik & Takáč 2016 for τ-nice sampling,
// per coordinate as in Qu & Richtárik 2016)
//
//	E ‖Σₖ∈S δₖaₖ‖²_Λ⁻¹ ≤ (M/n) Σₖ δₖ² Σⱼ βⱼ·aₖⱼ²/λⱼ,  βⱼ = 1 + (M−1)(ωⱼ−1)/(n−1),
//
// where ωⱼ is the number of samples with aₖⱼ ≠ 0. The coupling between the
// duals of a batch runs through the columns, so ω counts a column's
// nonzeros (for dense data every βⱼ = M, the simple safe choice; for sparse
// columns it is near 1). So the batch step is the same prox with
// qₖ = Σⱼ βⱼ·aₖⱼ²/λⱼ. (The batches are consecutive pieces of a random
// permutation, as the epochs of the sequential form are.)
func (s *sdcaSolver) step(k int) {
	lo, hi := s.x.Indptr[k], s.x.Indptr[k+1]
	val, idx := s.x.Values[lo:hi], s.x.Indices[lo:hi]
	z := s.margin(val, idx, s.v)
	yk := s.y[k]
	yn := s.dualStep(k, z, s.sigma[k])
	if d := yn - yk; d != 0 {
		s.y[k] = yn
		kernels.SparseAxpy(d*s.invN, val, idx, s.v)
	}
}

// prefetchAhead is how many samples ahead of its step an epoch asks for a
// sample's row and dual (prefetchSample).
const prefetchAhead = 2

// prefetchSample asks the memory system for sample k's row, dual and step
// without waiting for them. An epoch visits the rows in a random order, so
// the hardware prefetcher, which follows addresses that ascend, cannot
// foresee the next row; without the hint each row's first lines are a wait
// on memory (see the RESULTS section "Rows in a random order: prefetching
// the next").
func (c *sdcaCore) prefetchSample(k int) {
	lo, hi := c.x.Indptr[k], c.x.Indptr[k+1]
	kernels.Prefetch2(unsafe.Pointer(&c.y[k]), unsafe.Pointer(&c.sigma[k]))
	if n := int(min(hi-lo, driver.MaxPrefetchNNZ)); n > 0 {
		kernels.PrefetchRange(unsafe.Pointer(&c.x.Values[lo]), 8*n)
		kernels.PrefetchRange(unsafe.Pointer(&c.x.Indices[lo]), 4*n)
	}
}

// epochSequential runs one epoch of single-sample steps.
func (s *sdcaSolver) epochSequential(ctx context.Context) {
	for i, k := range s.perm {
		if next := i + prefetchAhead; next < len(s.perm) {
			s.prefetchSample(int(s.perm[next]))
		}
		s.step(int(k))
		s.sampled++
		if i&4095 == 4095 && ctx.Err() != nil {
			return
		}
	}
}

// batchDual computes the new dual of the sample in batch slot i from the v
// all the batch reads, records Δyₖ in dy[i] and stores the new dual.
func (s *sdcaSolver) batchDual(i, k int) {
	val, idx := s.x.Row(k)
	z := s.margin(val, idx, s.v)
	yk := s.y[k]
	yn := s.dualStep(k, z, s.sigma[k])
	s.dy[i] = yn - yk
	s.y[k] = yn
}

// epochBatches runs one epoch of mini-batches on one worker.
func (s *sdcaSolver) epochBatches(ctx context.Context) {
	for start := 0; start < s.n; start += s.m {
		batch := s.perm[start:min(start+s.m, s.n)]
		for i, k := range batch {
			s.batchDual(i, int(k))
		}
		for i, k := range batch {
			if d := s.dy[i]; d != 0 {
				val, idx := s.x.Row(int(k))
				kernels.SparseAxpy(d*s.invN, val, idx, s.v)
			}
		}
		s.sampled += int64(len(batch))
		if (start/s.m)&255 == 255 && ctx.Err() != nil {
			return
		}
	}
}

// epochParallel runs one epoch of mini-batches on the pool. Per batch,
// worker w computes the duals of its share of the slots from the v all
// read; after a barrier it adds the batch's Δv = (1/n) Σ Δyₖaₖ on the
// coordinates it owns, in batch order, so the result does not depend on the
// number of workers; a second barrier ends the batch.
func (s *sdcaSolver) epochParallel(ctx context.Context) error {
	nw := s.pool.Threads()
	s.stop = false
	return s.pool.Run(func(w int) {
		lo, hi := s.owners.Range(w)
		for start := 0; start < s.n; start += s.m {
			batch := s.perm[start:min(start+s.m, s.n)]
			a, e := len(batch)*w/nw, len(batch)*(w+1)/nw
			for i := a; i < e; i++ {
				s.batchDual(i, int(batch[i]))
			}
			s.bar.Wait()
			// Written after the first barrier and read after the second,
			// so that no worker still reads the previous batch's value.
			if w == 0 {
				s.sampled += int64(len(batch))
				if (start/s.m)&255 == 255 && ctx.Err() != nil {
					s.stop = true
				}
			}
			for i, k := range batch {
				d := s.dy[i]
				if d == 0 {
					continue
				}
				val, idx := s.x.Row(int(k))
				if p, q := sched.Clip(idx, lo, hi); p < q {
					kernels.SparseAxpy(d*s.invN, val[p:q], idx[p:q], s.v)
				}
			}
			s.bar.Wait()
			if s.stop {
				return
			}
		}
	})
}
