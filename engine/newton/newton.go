package newton

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverNewton is a Newton method on the primal, by the shape of the
// data: exact steps by the Cholesky factor of the formed Hessian where d
// is small (denseHessianPays, choleskyPays), or by conjugate gradients
// preconditioned with the factor of its part without the rows of tiny
// curvature where those cost most of forming it (dropShare); otherwise
// truncated steps by
// conjugate gradients preconditioned by the Hessian's diagonal (on the
// formed Hessian, or by products with A; mixed with the regularizer's on
// data wider than tall, precondMix); a line search on the derivative. Its
// iterates do not depend on how the features are scaled, which is what raw
// data need (issue 9, §1).
const SolverNewton driver.Solver = "newton"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverNewton,
			Takes:        driver.Takes{SampleWeights: true},
			Reads:        []string{Family},
			Summary:      "truncated Newton on the primal (diagonally preconditioned CG, line search on the derivative): steps invariant to feature scale, parallel sweeps over rows",
			Losses:       "with a (generalised) second derivative: squared, logistic, sqhinge, smoothhinge",
			Regularizers: "L2 with λ > 0 (centre and weights allowed), no L1",
			Parallel:     true,
			Certified:    true,
		},
		Rank:    15,
		Accepts: acceptsNewton,
		Start:   startNewton,
	})
}

// acceptsNewton reports why the Newton method cannot solve prob: it needs a
// twice differentiable objective (or a generalised Hessian), so no L1 and
// no hinge, and a positive definite Hessian, so λ > 0.
func acceptsNewton(prob objective.Problem, opt driver.Options) error {
	if _, ok := prob.Loss.(objective.CurvedLoss); !ok {
		return fmt.Errorf("engine: the %s loss has no second derivative: %s takes squared, logistic, sqhinge and smoothhinge; use sdca or adaptsmooth", prob.Loss.Name(), opt.Solver)
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the L2 regularizer, not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if en.L1 > 0 {
		return fmt.Errorf("engine: %s needs a twice differentiable regularizer; for L1 = %g use adaspdc or sdca", opt.Solver, en.L1)
	}
	if err := objective.NeedStrongConvexity(prob.Reg, string(opt.Solver)); err != nil {
		return err
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s uses every sample in each step: CoordinateSettings.M %d and CoordinateSettings.BlockSize %d are the coordinate methods' (drop them, or use Options.Solver \"adaspdc\")", opt.Solver, opt.Coordinate().M, opt.Coordinate().BlockSize)
	}
	return nil
}

func startNewton(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	return newNewton(prob, opt)
}

// newton is the state of one truncated Newton run. An epoch is one Newton
// step; passes counts the nonzeros it read, two per nonzero being one
// pass (a dot and an axpy), as for the coordinate methods.
type newton struct {
	prob objective.Problem
	loss objective.CurvedLoss
	reg  objective.ElasticNet
	x    *sparse.CSR
	n, d int
	invN float64

	w       []float64 // the iterate
	lam     []float64 // λⱼ = λ·weightⱼ
	shift   []float64 // λⱼcⱼ: the gradient of g is λⱼwⱼ − λⱼcⱼ
	z       []float64 // zₖ = aₖᵀw
	dz      []float64 // aₖᵀs for the Newton step s
	curv    []float64 // φ″(zₖ)/n
	rowCoef []float64 // per-row coefficients of a product Aᵀc: the sweep's φ′(zₖ)/n
	grad    []float64 // ∇P(w)
	diag    []float64 // the preconditioner M: the Hessian's diagonal, or its mix with Λ (mix)
	mix     bool      // M = Λ + precondMix·(diag(H) − Λ): data wider than tall, Hessian not formed
	step    []float64 // s, the approximate Newton step
	r, p    []float64 // CG's residual and direction
	q, mr   []float64 // Hp and M⁻¹r
	part    []float64 // per worker: a partial sum of coords or hessianTimes
	// hess is the data part of the Hessian, (1/n) Aᵀ diag(φ″) A, as a
	// dense row-major d×d matrix, when forming it is cheaper than reading A
	// twice per CG step (denseHessianPays); nil otherwise.
	//
	// It is kept from one sweep to the next, with the curvatures cₖ it was
	// built from in curvHess. A sweep either forms it afresh, from the
	// rows with cₖ ≠ 0, or adds Σₖ (cₖ − c′ₖ) aₖaₖᵀ over the rows whose
	// curvature moved from c′ₖ, summed in hessDelta: the second where it
	// cost fewer multiply-adds in the sweep before (hessDeltaNext), since
	// the sweep learns both costs only as it goes. For the squared hinge,
	// whose φ″ is 0 or 2/n, only the rows that crossed the hinge cost
	// anything (a9a, λ = 1e-5: 34 passes to 23 in all); for the logistic
	// loss every curvature moves, and the matrix is formed afresh.
	hess, hessDelta []float64
	curvHess        []float64
	hessDeltaNext   bool
	hessChangeLast  int64 // the multiply-adds of the last form's change
	hessMirrored    bool  // hess's lower triangle is set (hessianFull)
	formsInPlace    int   // forms whose change was added in place (addChangeInPlace)
	// chol is the lower Cholesky factor of the scaled Hessian S H S and
	// cholScale S's diagonal (cholFactor), where the Hessian is formed.
	chol, cholScale []float64
	exact           bool // the steps are solved by Cholesky (choleskyPays), not CG
	cholSteps       int  // Newton steps solved by Cholesky
	cholFailed      int  // factors that failed (cholMinPivot): CG took the step
	// The rows whose curvature is below dropCurv (times the row's sample
	// weight) are left out of the formed matrix where that saves at least
	// dropMinShare of forming it (split: some row is); CG on the whole
	// Hessian, with the factor of the formed part as its preconditioner,
	// then takes the step (see dropShare). dropCurv is 0 where no row is
	// ever left out (the steps are not by Cholesky, or the loss is not the
	// logistic); dropOff stops leaving rows out once one solve with that
	// preconditioner has needed splitMaxCG CG steps.
	dropCurv       float64
	split, dropOff bool
	dropNNZ        int64 // the nonzeros of the rows left out, for the products' count
	splitSteps     int   // Newton steps solved by CG preconditioned with the factor
	// The multiply-adds of the run, by kind, for the note: the sweeps'
	// and CG's products with A (one per nonzero read), forming the
	// Hessian, factoring and solving with it, and CG's products with it.
	sweepFlops, formFlops, factorFlops, denseFlops float64
	hessStale                                      bool // the last sweep's curvatures are not yet in hess
	// hessFresh and hessChange are, per chunk of rows, the multiply-adds
	// of forming the Hessian afresh and of its change, in the last sweep.
	hessFresh, hessChange []int64
	hessDropped           []int64 // per chunk: the nonzeros of the rows left out of the last form
	// formAll and formBelow are, per chunk, the cost of forming the
	// Hessian from the last sweep's curved rows, Σ nnzₖ(nnzₖ + 1)/2, and
	// that of the rows below dropBelow, which the sweep counts where rows
	// may be left out (dropCurv > 0), for dropPays.
	formAll, formBelow []int64

	sweep *driver.WorldSweep
	// products, when not nil, takes the Hessian products with A in sweeps
	// shared with other runs (Settings.Products).
	products *Products
	visits   float64 // nonzeros read; passes = visits/(2·nnz)
	// world is the ranks the rows are spread over (nil: one process), N
	// their rows and nnz their nonzeros, the same on every rank.
	world    *driver.World
	nGlobal  int64
	nnz      int64
	dual     []float64 // over the ranks: the projected duals, where some φ′(zₖ) lies outside dom φ*
	gradM0   float64   // ‖∇P(w₀)‖ in the M⁻¹ norm, for the forcing term
	radius   float64   // the trust radius of CG's step in the M norm (0: none yet)
	trust    bool      // the loss is logistic: CG's steps keep to radius (updateRadius)
	onRadius int       // CG solves that ended on the trust radius, for the note
	maxCG    int
	tol      float64 // Options.Tol: the relative gap the run stops at (≤ 0: none)
	cgSteps  int     // CG steps of the whole run, for the note
	// activeNNZ is the nonzeros of the rows with φ″ ≠ 0 at this step's
	// point: what one Hessian product reads.
	activeNNZ int64

	// zSteps counts the steps over which z has been carried as z + α·dz
	// since a sweep last computed it as A·w (0: the next sweep computes
	// it; see advanceMargins). zAlpha is the α of a step whose z + α·dz
	// the next sweep is still to apply (0: none).
	zSteps int
	zAlpha float64

	// The sweep at w also yields the certificate, so certify and the next
	// step share one pass over the data (fresh says it is current).
	fresh    bool
	cert     driver.TracePoint // eval's certificate at the sweep's point, for the forcing term (Gap NaN: none)
	eval     *objective.Evaluator
	lossGrad []float64 // the loss's gradient at the sweep's point
	rowSums  objective.RowSums
	lossSum  []float64 // per chunk of rows (rowSweep): Σφ(zₖ) over its rows
	conjSum  []float64 // per chunk: Σφ*(yₖ) with yₖ = φ′(zₖ)
	clipped  []bool    // per chunk: some φ′(zₖ) lay outside dom φ*
	gradNNZ  []int64   // per chunk: the nonzeros of the rows with φ′(zₖ) ≠ 0, which the gradient reads
	curvNNZ  []int64   // per chunk: the nonzeros of the rows with φ″(zₖ) ≠ 0, which a Hessian product reads
	// lossMean is (1/n) Σₖ φ(zₖ) at w, the loss part of P that the line
	// search starts from. The line search reuses lossSum and conjSum for
	// its per-chunk sums.
	lossMean float64
}

func newNewton(prob objective.Problem, opt driver.Options) (*newton, error) {
	return newNewtonOn(prob, opt, nil)
}

// newNewtonOn is newNewton on the rank's rows of a problem whose rows are
// spread over the ranks of world (nil: one process, all rows). Over the
// ranks, one sum agrees on the nonzeros and on the cost of forming the
// Hessian, so that every rank makes the same choices.
func newNewtonOn(prob objective.Problem, opt driver.Options, world *driver.World) (*newton, error) {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet() // Accepts checked that it is one
	nGlobal := int64(x.Rows)
	if world != nil {
		nGlobal = world.Rows()
	}
	s := &newton{prob: prob, loss: prob.Loss.(objective.CurvedLoss), reg: en, x: x,
		n: x.Rows, d: x.Cols, invN: 1 / float64(nGlobal), world: world, nGlobal: nGlobal}
	n, d := s.n, s.d
	nnz, build := x.NNZ(), hessianBuildCost(x)
	if world != nil {
		sums := []float64{float64(nnz), float64(build)}
		if err := world.Sum(sums); err != nil {
			return nil, err
		}
		nnz, build = int64(sums[0]), int64(sums[1])
	}
	s.nnz = nnz
	s.w = hugepage.Make[float64](d)
	if opt.WarmStart != nil {
		copy(s.w, opt.WarmStart)
	}
	// The other vectors are cut from one allocation, which the kernel may
	// back with huge pages where separate ones of d < 2¹⁹ would not be:
	// on news20 (d = 62k) their first touches were ~1100 page faults of
	// the run's ~3400. w is the model's, so it stays apart.
	// Each starts on a 64-byte line (the allocation does, being large, and
	// the lengths are rounded up to 8), so that coordRange's ranges share
	// no line.
	slab := hugepage.Make[float64](9*driver.Pad8(d) + 5*driver.Pad8(n))
	cut := func(k int) []float64 {
		v := slab[:k:k]
		slab = slab[driver.Pad8(k):]
		return v
	}
	s.lam, s.shift = cut(d), cut(d)
	for j := range d {
		_, s.lam[j], s.shift[j] = s.reg.Coord(j)
	}
	s.z, s.dz, s.curv, s.rowCoef = cut(n), cut(n), cut(n), cut(n)
	if !slices.ContainsFunc(s.w, func(v float64) bool { return v != 0 }) {
		// At w = 0 the margins are A·w = 0 exactly, as z starts: the
		// first sweep need not compute them (advanceMargins' zSteps).
		s.zSteps = 1
	}
	for _, v := range []*[]float64{&s.grad, &s.diag, &s.step, &s.r, &s.p, &s.q, &s.mr} {
		*v = cut(d)
	}
	threads := driver.SweepWorkers(x, opt.Threads)
	s.sweep = driver.NewWorldSweep(x, threads, !opt.Deterministic, world)
	s.eval = driver.NewEvaluator(prob, opt.Threads)
	s.lossGrad = make([]float64, d)
	chunks := s.sweep.Chunks()
	if denseHessianPaysAt(int64(d), nnz, build) {
		s.hess, s.curvHess = hugepage.Make[float64](d*d), cut(n)
		s.hessFresh, s.hessChange = make([]int64, chunks), make([]int64, chunks)
		s.hessDropped = make([]int64, chunks)
		s.formAll, s.formBelow = make([]int64, chunks), make([]int64, chunks)
		s.exact = choleskyPays(int64(d), nnz, build)
		if _, logistic := prob.Loss.(objective.Logistic); s.exact && logistic {
			// The one curved loss whose φ″ takes every value in between
			// (the squared loss's is constant, the hinges' 0 or their
			// largest), so the only one with rows to leave out.
			s.dropCurv = dropShare * s.invN / prob.Loss.Gamma()
		}
	}
	s.lossSum, s.conjSum, s.part = make([]float64, chunks), make([]float64, chunks), make([]float64, max(threads, s.sweep.Ranges()))
	s.clipped, s.gradNNZ, s.curvNNZ = make([]bool, chunks), make([]int64, chunks), make([]int64, chunks)
	s.mix = s.hess == nil && int64(d) > nGlobal
	// CG solves a d-dimensional system: d steps suffice in exact
	// arithmetic; the cap bounds the cost of one Newton step on wide data.
	s.maxCG = min(d+10, 500)
	s.tol = opt.Tol
	_, s.trust = prob.Loss.(objective.Logistic)
	// Last, so that Finish, which leaves, follows every join.
	if st, _ := driver.SettingsOf[Settings](opt); st.Products != nil && s.hess == nil && world == nil && st.Products.join(x) {
		s.products = st.Products
	}
	return s, nil
}

// newtonLastStepSafety is the fraction of the tolerance that the gap
// predicted after the last Newton step must reach for CG to stop there.
const newtonLastStepSafety = 0.1

// precondMix is α in the preconditioner M = Λ + α·(diag(H) − Λ) that CG
// uses on data wider than tall (d > n) where the Hessian is not formed:
// the data part of the diagonal shrunk towards the regularizer's. It is
// the mix of Hsia, Chiang & Lin ("Preconditioned conjugate gradient
// methods in truncated Newton frameworks for large-scale linear
// classification", ACML 2018), (1 − α)I + α·diag(H) for H = I + C·XᵀDX,
// with their α = 0.01, written for our scaling. λⱼ and Hⱼⱼ scale alike
// when a feature is rescaled (Aⱼ ← cAⱼ, λⱼ ← c²λⱼ), so the steps stay
// invariant to feature scale (TestNewtonScaleInvariant). In passes to a
// 1e-7 gap (`adaspdc train -data news20.binary -normalize unit -solver
// newton -lambda 1e-5 -tol 1e-7 -threads 2 -deterministic`, news20.binary
// as bench/README.md makes it; passes= in the summary, against the same
// run with precondMix = 1): news20 binarised, unit rows (d = 3.9n),
// logistic 55.5 → 40.5 (λ = 1e-5) and 98.5 → 78.5 (1e-6), squared hinge
// 58.9 → 43.3 and 161 → 116; url-shaped (d = 16n) 55.5 → 44.5 and 194 →
// 154; news20 without row scaling 1180 → 678. On taller data it costs
// passes (rcv1-shaped, d = 0.24n: 25.5 → 53.5), so there M stays diag(H).
// Which Newton step first crosses a target can move either way: on
// url-shaped data with 1M rows (d = 3.2n) the mix took 46.5 passes
// against 64.5 to a 1e-7 gap, but 46.5 against 29.5 to a 1e-6 relative
// suboptimality (AutoSolver gives those data to cocoa).
const precondMix = 0.01

// newtonDenseMaxD bounds the width at which newton forms the Hessian: it
// holds d² doubles per worker (8 MiB at d = 1024).
const newtonDenseMaxD = 1024

// denseHessianFactor is the number of products with A that forming the
// Hessian may cost. CG took 5–12 steps per Newton step on a9a, w8a and
// ijcnn1, where forming it costs 3.7, 5.9 and 3.5 products, and forming it
// cut the whole process on all three.
const denseHessianFactor = 6.0

// denseHessianPays reports whether newton should form the Hessian's data
// part (1/n) Aᵀ diag(φ″) A once per step and multiply by it in CG, instead
// of reading A twice per CG step. Forming it costs Σₖ nnzₖ(nnzₖ + 1)/2
// multiply-adds (the upper triangle), a product with A 2·nnz, and a
// product with the dense matrix d²: so it pays where d is small and the
// rows are short.
func denseHessianPays(x *sparse.CSR) bool {
	return denseHessianPaysAt(int64(x.Cols), x.NNZ(), hessianBuildCost(x))
}

// denseHessianPaysAt is denseHessianPays for data of d columns, nnz
// nonzeros and a Hessian that costs build multiply-adds to form: over the
// ranks, the sums of all ranks.
func denseHessianPaysAt(d, nnz, build int64) bool {
	if d > newtonDenseMaxD || 10*d*d > 2*nnz {
		return false
	}
	return float64(build) <= denseHessianFactor*float64(2*nnz)
}

// denseCGSteps is the CG steps a Newton step takes on the formed Hessian
// at the forcing term η ≤ 0.05 (about 14 on w8a, 25 on a9a, logistic
// and squared hinge, λ = 1e-5 and 1e-6); exactSaving is the share of a
// run's Newton steps that exact steps save (one of 5–7 on a9a and
// ijcnn1; on w8a 0–5 of 7–14, 8 of 40 in all); denseSpeedup is how many
// multiply-adds of the dense kernels (contiguous dot products, in the
// factor and in CG on the formed matrix) cost as much time as one of the
// sweeps over A (gathers, scatters, exponentials, line searches and the
// workers' hand-offs): on w8a a Newton step took about six times the
// factor's time for one to two times its multiply-adds.
const (
	denseCGSteps = 15.0
	exactSaving  = 1.0 / 8
	denseSpeedup = 4.0
)

// choleskyPays reports whether newton, having formed the Hessian
// (denseHessianPaysAt), should take exact Newton steps by its Cholesky
// factor rather than truncated CG steps on it, from their predicted
// costs per Newton step in multiply-adds of the sweeps: the factor's
// d³/6 against denseCGSteps products of d², both at 1/denseSpeedup,
// where the exact steps save the share exactSaving of a Newton step's
// other work (the sweep and dz = A·s, 4·nnz, and forming the matrix,
// build):
//
//	(d³/6 − denseCGSteps·d²)/denseSpeedup ≤ exactSaving·(4·nnz + build).
//
// a9a (d = 123) and ijcnn1 (d = 22) factor on the left side's sign
// alone; w8a (d = 300) at 0.79M against 1.15M; the widest that
// denseHessianPays forms, d = 1024, factors where nnz + build/4 ≥ 8.2e7.
// Where the Hessian is not formed, CG's products with A are
// denseHessianPaysAt's choice.
func choleskyPays(d, nnz, build int64) bool {
	fd := float64(d)
	return (fd*fd*fd/6-denseCGSteps*fd*fd)/denseSpeedup <= exactSaving*float64(4*nnz+build)
}

// hessianBuildCost returns Σₖ nnzₖ(nnzₖ + 1)/2 over x's rows, the
// multiply-adds of forming the upper triangle of Aᵀ diag(c) A.
func hessianBuildCost(x *sparse.CSR) int64 {
	var build int64
	for k := range x.Rows {
		m := x.Indptr[k+1] - x.Indptr[k]
		build += m * (m + 1) / 2
	}
	return build
}

func (s *newton) Finish(res *driver.Result) error {
	res.Note = fmt.Sprintf("%d conjugate-gradient steps, %d Cholesky steps", s.cgSteps, s.cholSteps)
	if s.onRadius > 0 {
		res.Note += fmt.Sprintf(" (%d ended on the trust radius)", s.onRadius)
	}
	if s.splitSteps > 0 {
		res.Note += fmt.Sprintf(" (%d by CG on H, preconditioned by the factor of its part formed without the rows of curvature below %g of the largest)", s.splitSteps, dropShare)
	}
	if s.cholFailed > 0 {
		res.Note += fmt.Sprintf(" (%d factors failed: CG took the step)", s.cholFailed)
	}
	res.AddNote(fmt.Sprintf("multiply-adds: %.4g with A, %.4g forming H, %.4g factoring and solving, %.4g CG on H", s.sweepFlops, s.formFlops, s.factorFlops, s.denseFlops))
	if s.products != nil {
		res.AddNote("Hessian products and margins in sweeps shared with other runs")
		s.products.leave()
		s.products = nil
	}
	return s.sweep.Close()
}

func (s *newton) Point() []float64 { return s.w }
func (s *newton) Passes() float64  { return s.visits / (2 * float64(max(1, s.nnz))) }
func (s *newton) Threads() int     { return s.sweep.Threads() }
func (s *newton) DivergenceHint() string {
	return "the Newton steps decrease the objective by construction, so this is a bug or non-finite data; report it with the data"
}

// RunEpochs takes one Newton step, whatever k is: a step costs several
// passes, so the driver certifies after each.
func (s *newton) RunEpochs(ctx context.Context, k int) (int, error) {
	if k < 1 || ctx.Err() != nil {
		return 0, nil
	}
	moved, err := s.newtonStep()
	if err != nil {
		return 0, err
	}
	if !moved {
		return 0, errNewtonFloor
	}
	return 1, nil
}

// errNewtonFloor ends a run whose Newton step no longer changes the point:
// the gradient or the slope along the step is zero in double precision, so
// more steps would repeat the same one. The driver keeps the best model.
var errNewtonFloor = fmt.Errorf("engine: newton: the objective cannot decrease further in double precision (the gradient or the slope along the step rounds to zero) while the gap is still above the rounding of the objective; the data may hold values too large for float64 sums (%w)", driver.ErrCannotMove)

// newtonStep takes one step of truncated Newton on
//
//	P(w) = (1/n) Σₖ φ(aₖᵀw, bₖ) + Σⱼ (λⱼ/2)(wⱼ − cⱼ)²,
//	∇P = (1/n) Aᵀφ′(Aw) + Λ(w − c),   H = (1/n) Aᵀ diag(φ″(Aw)) A + Λ.
//
// Where the Hessian is formed and choleskyPays, s = −H⁻¹∇P exactly, by
// the Cholesky factor of the Jacobi-scaled H (factorHessian, exactStep).
// Otherwise it solves H s = −∇P by conjugate gradients preconditioned with
// M = diag(H) (Λ + precondMix·(diag(H) − Λ) on wide data) until
// ‖r‖_{M⁻¹} ≤ η ‖∇P‖_{M⁻¹}, with the forcing term η = min(½,
// (‖∇P‖/‖∇P₀‖)^½) of Eisenstat & Walker, which gives
// superlinear convergence (Nocedal & Wright, Thm 7.2). The M⁻¹ norm and
// the preconditioned iteration make every step invariant to rescaling a
// feature (Aⱼ ← cAⱼ, wⱼ ← wⱼ/c, λⱼ ← c²λⱼ: the same problem in new
// units): only λ fixes a scale. For the logistic loss CG also stops on a
// trust radius in the M norm once a line search has cut a step short
// (updateRadius). The step length α minimises P along s; P is convex
// there, so the search keeps the largest α with dP/dα ≤ 0 found by
// bisection, which needs derivatives only and so stays exact where P's
// values round (LIBLINEAR uses a trust region instead; this search is
// cheaper, O(n) per trial, since A·s is computed once).
func (s *newton) newtonStep() (moved bool, err error) {
	if !s.fresh {
		if err := s.sweepAt(); err != nil {
			return false, err
		}
	}
	if s.hessStale {
		if err := s.formHessian(); err != nil {
			return false, err
		}
	}
	s.fresh = false
	w := s.w

	// Preconditioned conjugate gradients from s = 0. The vector updates
	// run by coordinate ranges on the sweep's workers (coords), and the
	// product's regularizer term and pᵀHp in the product's own second
	// phase: serial, they were a measurable share of a wide problem's
	// solve, the more so on two threads, where each range of Hp sat in the
	// other core's cache. Within a range the
	// loops divide by Mⱼⱼ and sum in coordinate order: on raw australian's
	// squared hinge, a SIMD dot product for rz, or a product with 1/Mⱼⱼ,
	// moved TestNewtonScaleInvariant's rescaled iterates by 2e-7, past its
	// 1e-7, although each changes only the rounding.
	step, r, mr, p, q, diag := s.step, s.r, s.mr, s.p, s.q, s.diag
	rz, err := s.coords(func(lo, hi int) float64 {
		g := s.grad[lo:hi]
		clear(step[lo:hi])
		r, mr, p, dg := r[lo:hi], mr[lo:hi], p[lo:hi], diag[lo:hi]
		var rz float64
		for j, gj := range g {
			r[j] = -gj
			mr[j] = -gj / dg[j]
			p[j] = mr[j]
			rz += r[j] * mr[j]
		}
		return rz
	})
	if err != nil {
		return false, err
	}
	gradM := math.Sqrt(rz)
	if s.gradM0 == 0 {
		s.gradM0 = gradM
	}
	if !(gradM > 0) {
		if math.IsNaN(gradM) {
			return false, errors.New("engine: newton: the gradient is not finite (non-finite data, or a loss that overflowed)")
		}
		return false, nil // at the optimum, to rounding
	}
	cg, cholM := true, false
	if s.exact && s.factorHessian() {
		if s.split {
			// CG on the whole Hessian from s = 0 again, preconditioned by
			// the factor of its formed part and Λ: M = H − ΔH.
			cholM = true
			cholSolve(s.chol, s.cholScale, r, mr, s.d)
			copy(p, mr)
			rz = kernels.Dot(r, mr)
			s.splitSteps++
		} else {
			s.exactStep()
			cg = false
		}
	}
	gradNorm := math.Sqrt(rz) // ‖∇P‖ in CG's M⁻¹ norm
	eta := math.Min(0.5, math.Sqrt(gradM/s.gradM0))
	maxCG := s.maxCG
	if cholM {
		eta, maxCG = math.Min(splitEta, eta), splitMaxCG
	} else if s.hess != nil {
		// CG steps on the dense Hessian cost d², next to nothing: solve
		// more exactly, for fewer Newton steps (w8a, logistic, λ = 1e-6:
		// 11 steps against 12). Tighter than 0.05, rounding grows: on raw
		// australian the iterates of rescaled features then differ by 3e-7.
		eta = math.Min(0.05, eta)
	} else if g := s.cert.RelGap; s.tol > 0 && g > 0 && !math.IsNaN(s.cert.Gap) {
		// The last step need not solve further than the tolerance asks.
		// Near w* the gap is quadratic in the gradient, and after a full
		// step the gradient is about CG's residual, so the gap after the
		// step is about g·(‖r‖/‖∇P‖)² in the M⁻¹ norm; CG stops once that
		// is a tenth of the tolerance, if the forcing term asks for more.
		// Each CG step is a pass here: to the default 1e-6, news20's
		// (unit rows, two threads) logistic at λ = 1e-6 took 64.5 passes
		// instead of 78.5 and its squared hinge 93 instead of 106 (passes=
		// of `adaspdc train -data news20.binary -normalize unit -solver
		// newton -lambda 1e-6 -threads 2 -deterministic`, against the same
		// run with this rule removed). The certificate still decides the
		// stop; a short guess costs one more step.
		eta = math.Max(eta, math.Min(0.5, math.Sqrt(newtonLastStepSafety*s.tol/g)))
	}
	// The step's length in the M norm, and its parts for the next CG
	// step: sMs = ‖s‖²_M, sMp = sᵀMp, pMp = ‖p‖²_M (p = M⁻¹r at s = 0).
	sMs, sMp, pMp := 0.0, 0.0, rz
	truncated := false
	cg0 := s.cgSteps
	for it := 0; cg && it < maxCG; it++ {
		pq, err := s.hessianTimes(p, q)
		if err != nil {
			return false, err
		}
		s.cgSteps++
		if !(pq > 0) {
			break // rounding: H is positive definite
		}
		alpha := rz / pq
		if r := s.radius; r > 0 && sMs+alpha*(2*sMp+alpha*pMp) > r*r {
			// Steihaug's rule: end the step on the trust region's
			// boundary, at the τ ≥ 0 with ‖s + τp‖_M = r.
			tau := (math.Sqrt(sMp*sMp+pMp*(r*r-sMs)) - sMp) / pMp
			kernels.Axpy(tau, p, step)
			sMs, truncated = r*r, true
			s.onRadius++
			break
		}
		sMs += alpha * (2*sMp + alpha*pMp)
		rzNew, err := s.coords(func(lo, hi int) float64 {
			r, mr, dg := r[lo:hi], mr[lo:hi], diag[lo:hi]
			step, p, q := step[lo:hi], p[lo:hi], q[lo:hi]
			var rz float64
			for j := range r {
				step[j] += alpha * p[j]
				r[j] -= alpha * q[j]
				if !cholM {
					mr[j] = r[j] / dg[j]
					rz += r[j] * mr[j]
				}
			}
			return rz
		})
		if err != nil {
			return false, err
		}
		if cholM {
			cholSolve(s.chol, s.cholScale, r, mr, s.d)
			rzNew = kernels.Dot(r, mr)
		}
		// The residual rule. Galli & Lin ("A study on truncated Newton
		// methods for linear classification", IEEE TNNLS 2022) propose
		// the quadratic rule of Nash & Sofer, LIBLINEAR's since 2.40:
		// stop at step i once i·(Q(sᵢ₋₁) − Q(sᵢ)) ≤ η·|Q(sᵢ)| for the
		// model Q(s) = ∇Pᵀs + ½sᵀHs, whose decrease per step is
		// ½αᵢ·rᵢ₋₁ᵀM⁻¹rᵢ₋₁, so it costs nothing here. Measured in passes
		// to the default 1e-6 gap (two threads, deterministic), against
		// this rule: news20 binarised, unit rows, λ = 1e-5 / 1e-6,
		// logistic 40.5 / 64.5 → 55.5 / 96.5 (η = 0.1) and 46.5 / 69.5
		// (η = 0.25), squared hinge 40.2 / 87.0 → 55.1 / 124 and 49.6 /
		// 112; raw counts, logistic 569 / 1060 → 542 / 985 and 479 /
		// 1012, squared hinge at 1e-5 2353 → not within 1000 Newton
		// steps (5690 passes); rcv1-shaped, 200k rows, λ = 1e-5:
		// logistic 23.5 → 25.5, squared hinge 25.0 → 24.2 (η = 0.1). It
		// won only on raw counts' logistic loss, and failed on their
		// squared hinge, so the residual rule stays.
		if math.Sqrt(rzNew) <= eta*gradNorm {
			break
		}
		beta := rzNew / rz
		rz = rzNew
		if _, err := s.coords(func(lo, hi int) float64 {
			p, mr := p[lo:hi], mr[lo:hi]
			for j, m := range mr {
				p[j] = m + beta*p[j]
			}
			return 0
		}); err != nil {
			return false, err
		}
		if s.radius > 0 {
			sMp, pMp = s.mNorms()
		}
	}

	if cholM && s.cgSteps-cg0 >= splitMaxCG {
		// The formed part no longer preconditions well: the rows left
		// out carry too much of the curvature. Form them from now on.
		s.dropOff = true
	}
	// dz = A s, then the line search along s. On its own rows, the pass
	// that computes dz also sums the slope at α = 1, the line search's
	// first trial.
	slope1 := math.NaN()
	if s.products != nil {
		err = s.products.Margins(s.step, s.dz)
	} else {
		slope1, err = s.stepMargins()
	}
	if err != nil {
		return false, err
	}
	s.visits += float64(s.nnz)
	s.sweepFlops += float64(s.nnz)
	alpha, err := s.lineSearch(slope1)
	if err != nil || alpha == 0 {
		return false, err
	}
	if cg && !cholM && s.trust {
		s.updateRadius(alpha, math.Sqrt(sMs), truncated)
	}
	kernels.Axpy(alpha, s.step, w)
	s.advanceMargins(alpha)
	return true, nil
}

// dropShare is the curvature, as a share of the loss's largest (1/γ,
// γ = Loss.Gamma()), below which a row is left out of the formed Hessian
// where such rows cost at least dropMinShare of forming it
// (Σ nnzₖ(nnzₖ + 1)/2). A logistic row's curvature φ″ = σ(1 − σ) falls
// like e^{−|z|} with its margin, and the rows that the model already fits
// well may be the long ones, which cost most of forming the matrix and
// add little to it (on w8a, most of the multiply-adds and a few
// thousandths of the trace; bench/RESULTS.md, "Narrow data: the factor by
// tiles, and the rows of tiny curvature left out"). Left out, their part ΔH = Σ cₖaₖaₖᵀ is
// applied by products over those rows, 2·nnz each, inside conjugate
// gradients on the whole Hessian H = M + ΔH, preconditioned by the factor
// of the formed part M (with Λ): M⁻¹H has its eigenvalues in [1, 1 + δ],
// δ = λ_max(M^{-1/2} ΔH M^{-1/2}), so CG reaches splitEta in a step or
// two where the rows left out carry little curvature, and the step is
// Newton's to that tolerance. A Newton step on M alone would be cheaper
// still, but it gives up the quadratic convergence, and took more Newton
// steps on other data (measured and dropped in the same section). Where the
// rows left out carry much of the curvature (δ large, as on separable
// data), CG needs more steps; once one solve needs splitMaxCG, the rest
// of the run forms the whole matrix again.
const (
	dropShare    = 1e-3
	dropMinShare = 0.25
	splitEta     = 0.05
	splitMaxCG   = 5
)

// dropBelow returns the curvature below which row k is left out of the
// formed Hessian: dropCurv, times the row's weight where sw holds them.
func (s *newton) dropBelow(sw []float64, k int) float64 {
	if sw != nil {
		return s.dropCurv * sw[k]
	}
	return s.dropCurv
}

// dropPays reports whether the rows of this rank below their dropBelow
// cost at least dropMinShare of forming the Hessian afresh from the
// curvatures of the last sweep, Σ nnzₖ(nnzₖ + 1)/2 over the rows with
// φ″ ≠ 0, from the sweep's counts per chunk (formAll, formBelow).
func (s *newton) dropPays() bool {
	var all, below int64
	for c := range s.formAll {
		all += s.formAll[c]
		below += s.formBelow[c]
	}
	return float64(below) >= dropMinShare*float64(all)
}

// termsBlock is the number of rows whose loss terms the sweep takes in one
// call of objective.CurvedTermsBlock, into buffers on the stack.
const termsBlock = 128

// zMaxSteps bounds the steps over which the margins are carried as
// z + α·dz before sweepAt computes them afresh as A·w.
const zMaxSteps = 8

// advanceMargins has the next sweep set z to z + α·dz, the margins at the
// new point w + αs up to rounding, so that it need not compute A·w: a
// Newton step then reads A twice (the sweep's gradient, dz = A·s) instead
// of three times. The sweep adds α·dz row by row before the row's terms,
// on its workers, rather than a serial pass here. Each carried step adds
// rounding of the order of dz's own, u·|A|·(|w| + α|s|) per row, where
// A·w's dot product has u·|A|·|w|; after zMaxSteps steps the sweep
// computes A·w afresh, so that the error does not accumulate. Where the
// margins come from the shared products sweep, it computes them anyway.
func (s *newton) advanceMargins(alpha float64) {
	if s.products != nil || s.zSteps >= zMaxSteps {
		s.zSteps = 0
		return
	}
	s.zAlpha = alpha
	s.zSteps++
}

// mNorms returns sᵀMp and pᵀMp for CG's step s and direction p, in the
// M norm of the preconditioner, summed by coordinate ranges in order.
func (s *newton) mNorms() (sMp, pMp float64) {
	sMp, _ = s.coords(func(lo, hi int) float64 {
		var t float64
		for j, dj := range s.diag[lo:hi] {
			t += s.step[lo+j] * dj * s.p[lo+j]
		}
		return t
	})
	pMp, _ = s.coords(func(lo, hi int) float64 {
		var t float64
		for j, dj := range s.diag[lo:hi] {
			pj := s.p[lo+j]
			t += pj * dj * pj
		}
		return t
	})
	return sMp, pMp
}

// updateRadius sets the trust radius of the next CG solve from the line
// search's step length alpha along a step whose M-norm length was length,
// and from whether CG stopped on the radius. The logistic loss's
// curvature φ″ decays like e^{−|z|}, so on rows whose margins the step
// grows the local model expects far more decrease than the loss gives:
// on raw counts (news20) CG's full solves asked for steps that the line
// search then cut to α = 0.01–0.1, the CG steps spent beyond that length
// wasted. A step cut below trustCut sets the radius to the length kept,
// so that the next solves stop on it (Steihaug's rule, as LIBLINEAR's
// trust-region Newton stops); a full step that stopped on it doubles it.
// A step cut less leaves the radius as it is.
func (s *newton) updateRadius(alpha, length float64, truncated bool) {
	switch {
	case alpha < trustCut:
		s.radius = alpha * length
	case alpha == 1 && truncated:
		s.radius *= 2
	}
}

// trustCut is the step length below which the line search's cut sets the
// trust radius.
const trustCut = 0.25

// factorHessian sets s.chol to the Cholesky factor of the formed Hessian,
// H = Hd + Λ (cholFactorOn), and reports false where the factor fails
// (cholMinPivot): CG on the formed matrix then takes the step. The exact
// step costs d³/6 + 2d² multiply-adds against CG's d² a step, which took
// 10–25 steps per Newton step at the forcing term's η ≤ 0.05 and left a
// step more to the run (w8a, squared hinge, λ = 1e-6: 14 Newton steps
// truncated, 9 exact).
func (s *newton) factorHessian() bool {
	d := s.d
	if s.chol == nil {
		s.chol, s.cholScale = hugepage.Make[float64](d*d), make([]float64, d)
	}
	f := float64(d) * float64(d) * float64(d+3) / 6
	s.visits += f
	s.factorFlops += f
	if !cholFactorOn(s.sweep.Pool(), s.hess, s.lam, s.chol, s.cholScale, d) {
		s.cholFailed++
		return false
	}
	return true
}

// exactStep sets s.step to the exact Newton step −H⁻¹∇P from
// factorHessian's factor (cholSolve).
func (s *newton) exactStep() {
	d := s.d
	cholSolve(s.chol, s.cholScale, s.grad, s.step, d)
	for j := range s.step {
		s.step[j] = -s.step[j]
	}
	s.visits += 2 * float64(d) * float64(d)
	s.factorFlops += 2 * float64(d) * float64(d)
	s.cholSteps++
}

// sweepAt reads the data once at the current w and sets what both the
// next Newton step and the certificate need: zₖ = aₖᵀw, the curvatures
// φ″(zₖ)/n, the gradient ∇P(w), the Hessian's diagonal, and the row sums
// Σₖ φ(zₖ) and Σₖ φ*(yₖ) at yₖ = φ′(zₖ), the dual point Certify takes.
// The data part of the gradient, (1/n) Σₖ φ′(zₖ) aₖ, is the v of D(y) =
// −(1/n) Σₖ φ*(yₖ) − g*(−v), so objective.Evaluator.AtGradient forms P(w),
// D(y) and the gap from these in O(d), and the certificate costs no pass
// of its own. Where some φ′(zₖ) lies outside dom φ* (rounding at a kink),
// Certify's projection changes y, and AtGradient falls back to a pass.
func (s *newton) sweepAt() error {
	loss, b, w := s.loss, s.prob.B, s.w
	// The workers sum the gradient and, where newton does not form the
	// Hessian, its diagonal (the preconditioner). Where it does, the
	// Hessian is formed from the curvatures this sweep stores, but only
	// when a step needs it (formHessian): a run that ends at this
	// certificate, as warm-started runs along a λ path mostly do after a
	// step or two, never pays for it.
	outs := [][]float64{s.grad, s.diag}
	if s.hess != nil {
		outs = outs[:1]
	}
	// The row sums that close the sweep: the loss, the conjugates, whether
	// some dual was clipped, and the nonzeros of the rows with φ″ ≠ 0;
	// over the ranks they travel in the allreduce of the gradient.
	var tail [5]float64
	shared := s.products != nil
	carried := s.zSteps > 0 // z = A·w, carried from the last step
	if shared {
		// The margins in a sweep shared with the other runs, the rest on
		// this run's own, for which the others need not wait.
		if err := s.products.Margins(w, s.z); err != nil {
			return err
		}
		s.products.away()
		defer s.products.back()
	}
	// The last step's α·dz, which the workers add to the carried margins.
	alpha := s.zAlpha
	s.zAlpha = 0
	err := s.sweep.RunSum(func(c, lo, hi int, acc [][]float64) {
		g := acc[0]
		var ls, cs objective.Sum
		var gradNNZ, curvNNZ, formAll, formBelow int64
		clipped := false
		if !shared && !carried {
			s.x.MulVecRows(lo, hi, w, s.z[lo:hi])
		} else if carried && alpha != 0 {
			z, dz := s.z[lo:hi], s.dz[lo:hi]
			for k, dk := range dz {
				z[k] += alpha * dk
			}
		}
		slope := s.rowCoef[lo:hi]
		// The loss terms of a block of rows at a time: the logistic's
		// exponentials and logarithms eight at once.
		var tv, t1, t2, tc [termsBlock]float64
		for k := lo; k < hi; k++ {
			i := (k - lo) % termsBlock
			if i == 0 {
				end := min(k+termsBlock, hi)
				objective.CurvedTermsBlock(loss, s.z[k:end], b[k:end], tv[:], t1[:], t2[:], tc[:])
				clipped = clipped || objective.Projects(loss, t1[:end-k], b[k:end])
			}
			val0, d1, d2, conj := tv[i], t1[i], t2[i], tc[i]
			if sw := s.prob.SampleWeights; sw != nil {
				// wφ: its derivatives and its conjugate's term at the
				// paired dual point w·φ′(z) all scale by w.
				val0, d1, d2, conj = sw[k]*val0, sw[k]*d1, sw[k]*d2, sw[k]*conj
			}
			c := d2 * s.invN
			s.curv[k] = c
			ls.Add(val0)
			cs.Add(conj)
			// The squared hinge's inactive rows (bz ≥ 1), most of them
			// once the margins have grown, add nothing: their d1 and c
			// are 0, and the gradient's kernel skips a zero coefficient.
			// Whether a row is active is a coin toss on the sweep's rows,
			// so the counts take conditional moves, not branches.
			slope[k-lo] = d1 * s.invN
			m := s.x.Indptr[k+1] - s.x.Indptr[k]
			var gm, cm int64
			if d1 != 0 {
				gm = m
			}
			if c != 0 {
				cm = m
			}
			gradNNZ += gm
			curvNNZ += cm
			if s.dropCurv > 0 && c != 0 {
				formAll += m * (m + 1) / 2
				if c < s.dropBelow(s.prob.SampleWeights, k) {
					formBelow += m * (m + 1) / 2
				}
			}
			if s.hess == nil && c != 0 {
				h := acc[1]
				val, idx := s.x.Row(k)
				for p, j := range idx {
					h[j] += c * val[p] * val[p]
				}
			}
		}
		// The gradient's rows in one call, for short rows' sake.
		kernels.SparseAxpyRows(s.x.Indptr[lo:hi+1], slope, s.x.Values, s.x.Indices, g)
		s.lossSum[c], s.conjSum[c], s.clipped[c], s.gradNNZ[c], s.curvNNZ[c] = ls.Sum(), cs.Sum(), clipped, gradNNZ, curvNNZ
		if s.dropCurv > 0 {
			s.formAll[c], s.formBelow[c] = formAll, formBelow
		}
	}, func() []float64 {
		// The products of the next step read only the rows with φ″ ≠ 0.
		var active int64
		for _, m := range s.curvNNZ {
			active += m
		}
		var lsum, csum objective.Sum
		clipped := false
		for c := range s.lossSum {
			lsum.Add(s.lossSum[c])
			csum.Add(s.conjSum[c])
			clipped = clipped || s.clipped[c]
		}
		var gradNNZ int64
		for _, m := range s.gradNNZ {
			gradNNZ += m
		}
		tail = [5]float64{lsum.Sum(), csum.Sum(), b2f(clipped), float64(active), float64(gradNNZ)}
		return tail[:]
	}, nil, outs...)
	if err != nil {
		// Some chunks may have added α·dz and others not: the next sweep
		// computes the margins afresh.
		s.zSteps = 0
		return err
	}
	// The margins' products (unless carried) read every row; the
	// gradient's, two per nonzero, only the rows with φ′(zₖ) ≠ 0.
	reads := 2 * tail[4]
	if !carried {
		reads += float64(s.nnz)
	}
	s.visits += reads
	s.sweepFlops += reads
	s.activeNNZ = int64(tail[3])
	s.hessStale = s.hess != nil
	clipped := tail[2] != 0
	// s.grad holds v = (1/n) Aᵀy before the regularizer's part is added.
	s.rowSums = objective.RowSums{Loss: tail[0], Conj: tail[1], Projected: clipped}
	s.lossMean = tail[0] * s.invN
	// The gap the forcing term reads is objective's certificate from the
	// sweep's sums, O(d), the one Certify reports. Where the paired duals
	// need projecting it would cost a pass: no estimate then, and the
	// forcing term falls back.
	s.cert = driver.TracePoint{Gap: math.NaN()}
	if !clipped {
		c, err := s.pairedCertificate(s.grad)
		if err != nil {
			return err
		}
		s.cert = driver.TracePointOf(c)
	}
	// M = Λ + a·diag(data part of H): a = 1 gives diag(H), a = precondMix
	// the mix. Where the Hessian is formed, formHessian sets M.
	a := 1.0
	if s.mix {
		a = precondMix
	}
	copy(s.lossGrad, s.grad) // (1/n) Aᵀy, the certificate's v
	for j := range s.grad {
		s.grad[j] += s.lam[j]*w[j] - s.shift[j]
		if s.hess == nil {
			s.diag[j] = s.lam[j] + a*s.diag[j]
		}
	}
	s.fresh = true
	return nil
}

// formHessian forms the upper triangle of the data part of the Hessian,
// (1/n) Aᵀ diag(φ″) A, at the point of the last sweep, from the curvatures
// it stored: afresh, or by adding the change since the matrix was last
// formed where fewer rows' curvatures changed than are nonzero
// (hessDeltaNext); then it sets the preconditioner M = diag(H). The lower
// triangle is left stale (hessianFull mirrors it for the products that
// read whole rows): the factor reads the upper one.
func (s *newton) formHessian() error {
	d := s.d
	delta := s.hessDeltaNext
	s.hessMirrored = false
	out := s.hess
	if delta {
		if s.hessDelta == nil {
			s.hessDelta = hugepage.Make[float64](s.d * s.d)
		}
		out = s.hessDelta
	}
	// The rank's sweep alone: over the ranks the matrix is summed below,
	// its upper triangle only.
	sw := s.prob.SampleWeights
	drop := s.dropCurv > 0 && !s.dropOff && s.dropPays()
	if delta && !drop && s.world == nil && s.hessChangeLast < int64(d)*int64(d) {
		s.addChangeInPlace()
		return nil
	}
	err := s.sweep.RowSweep.RunChunks(func(c, lo, hi int, acc [][]float64) {
		h := acc[0]
		var fresh, change, dropped int64
		for k := lo; k < hi; k++ {
			val, idx := s.x.Row(k)
			c := s.curv[k]
			m := int64(len(idx))
			cost := m * (m + 1) / 2
			if drop && c != 0 && c < s.dropBelow(sw, k) {
				c = 0 // left to CG's products (hessianTimes)
				dropped += m
			}
			add := c
			fresh += cost & curvedMask(c)
			if old := s.curvHess[k]; c != old {
				change += cost
				if delta {
					add = c - old
				}
				s.curvHess[k] = c
			} else if delta {
				continue
			}
			if add == 0 {
				continue
			}
			addOuterUpper(h, d, add, val, idx)
		}
		s.hessFresh[c], s.hessChange[c] = fresh, change
		s.hessDropped[c] = dropped
	}, out)

	if err != nil {
		return err
	}
	{
		h := s.hess
		var fresh, change, dropped int64
		for c := range s.hessFresh {
			fresh += s.hessFresh[c]
			change += s.hessChange[c]
			dropped += s.hessDropped[c]
		}
		if s.world != nil {
			// Over the ranks: the upper triangle of the rank's matrix (or
			// of its change), the two costs and the nonzeros left out in
			// one allreduce of d(d+1)/2 + 3 values, so that every rank
			// holds the same matrix and takes the same choices of the next
			// sweep's form and of the products (each rank leaves out its
			// own rows, which the products then add back).
			costs := []float64{float64(fresh), float64(change), float64(dropped)}
			if err := s.world.SumUpper(out, d, costs); err != nil {
				return err
			}
			fresh, change, dropped = int64(costs[0]), int64(costs[1]), int64(costs[2])
		}
		s.split, s.dropNNZ = dropped > 0, dropped
		if delta {
			s.visits += float64(change)
			s.formFlops += float64(change)
		} else {
			s.visits += float64(fresh)
			s.formFlops += float64(fresh)
		}
		s.hessDeltaNext, s.hessChangeLast = change < fresh, change
		// Add the change to the upper triangle. The preconditioner is the
		// matrix's diagonal.
		for i := range d {
			if delta {
				kernels.Axpy(1, s.hessDelta[i*d+i:(i+1)*d], h[i*d+i:(i+1)*d])
			}
			s.diag[i] = s.lam[i] + h[i*d+i]
		}
	}
	s.hessStale = false
	return nil
}

// addChangeInPlace is formHessian's change, Σₖ (cₖ − c′ₖ) aₖaₖᵀ over the
// rows whose curvature moved, added to the upper triangle of the matrix
// itself on the caller's goroutine. The parallel form clears, fills and
// sums an accumulator of d² per worker, which costs more than a change of
// fewer than d² multiply-adds: the squared hinge's late steps, where a few
// rows cross the hinge and that floor was most of a form's time.
// formHessian takes this path where the last change was that small, in one
// process, with no rows left out.
func (s *newton) addChangeInPlace() {
	d, h, ptr := s.d, s.hess, s.x.Indptr
	curvHess := s.curvHess[:len(s.curv)]
	var fresh, change int64
	for k, c := range s.curv {
		// A moved curvature is rare where this path is taken.
		m := ptr[k+1] - ptr[k]
		fresh += (m * (m + 1) / 2) & curvedMask(c)
		if old := curvHess[k]; c != old {
			val, idx := s.x.Row(k)
			change += m * (m + 1) / 2
			curvHess[k] = c
			addOuterUpper(h, d, c-old, val, idx)
		}
	}
	s.split, s.dropNNZ = false, 0
	s.formsInPlace++
	s.visits += float64(change)
	s.formFlops += float64(change)
	s.hessDeltaNext, s.hessChangeLast = change < fresh, change
	for i := range d {
		s.diag[i] = s.lam[i] + h[i*d+i]
	}
	s.hessStale = false
}

// curvedMask returns all ones where the curvature c ≥ 0 is not +0, and 0
// where it is, by integer operations on its bits: whether a row is curved
// is a coin toss along the rows (the squared hinge's active rows), and a
// branch on it mispredicted about as often as it was taken, which doubled
// the time of a form's pass over the curvatures.
func curvedMask(c float64) int64 {
	b := int64(math.Float64bits(c))
	return (b | -b) >> 63
}

// hessianFull returns the formed matrix with its lower triangle set from
// the upper one, which formHessian leaves stale, for the products that read
// whole rows.
func (s *newton) hessianFull() []float64 {
	h, d := s.hess, s.d
	if !s.hessMirrored {
		for i := range d {
			for j := i + 1; j < d; j++ {
				h[j*d+i] = h[i*d+j]
			}
		}
		s.hessMirrored = true
	}
	return h
}

// Certify returns the certificate at the current point, from the margins
// and sums of the sweep there, which the next step reuses: the certificate
// whose gap the step's forcing term reads (s.cert), where no paired dual
// needed projecting.
func (s *newton) Certify() (driver.TracePoint, error) {
	if !s.fresh {
		if err := s.sweepAt(); err != nil {
			return driver.TracePoint{}, err
		}
	}
	if s.world.Size() > 1 && s.rowSums.Projected {
		c, err := s.projectedCertificate()
		return driver.TracePointOf(c), err
	}
	c, err := s.pairedCertificate(s.lossGrad)
	return driver.TracePointOf(c), err
}

// pairedCertificate is the certificate at w and the paired duals from the
// last sweep's sums and the loss's gradient g: eval.AtGradient in one
// process and on one rank (whose rows are all rows),
// objective.AssemblePaired (the same arithmetic) from the sums of all
// ranks over several, which costs no collective of its own.
func (s *newton) pairedCertificate(g []float64) (objective.Certificate, error) {
	if s.world.Size() == 1 {
		return s.eval.AtGradient(s.w, s.z, g, &s.rowSums)
	}
	return objective.AssemblePaired(s.prob.Reg, s.w, g, objective.Partial{Loss: s.rowSums.Loss, Conj: s.rowSums.Conj}, s.nGlobal)
}

// projectedCertificate is the certificate over the ranks where some
// rank's φ′(zₖ) lies outside dom φ* (rounding at a kink, which every
// rank learns from the sweep's sums): the paired duals, projected, at
// their own dual vector, from each rank's Partial and Σₖ yₖaₖ
// (World.DualSums: one allreduce), and Assemble.
func (s *newton) projectedCertificate() (objective.Certificate, error) {
	if s.dual == nil {
		s.dual = make([]float64, s.n)
	}
	sw := s.prob.SampleWeights
	for k, zk := range s.z {
		y := s.loss.Deriv(zk, s.prob.B[k])
		if sw != nil {
			y *= sw[k]
		}
		s.dual[k] = y
	}
	v, part, err := s.world.DualSums(s.eval, s.w, s.dual)
	if err != nil {
		return objective.Certificate{}, err
	}
	return objective.Assemble(s.prob.Reg, s.w, v, part, int(s.nGlobal))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// hessianTimes sets out = H v and returns vᵀHv: from the dense Hessian
// where newton formed it, otherwise from A, skipping the samples with φ″ =
// 0 (for the hinges, those beyond the margin). On A, the regularizer's
// term and the dot product are done by each worker on its range of out,
// as soon as the range is summed.
func (s *newton) hessianTimes(v, out []float64) (float64, error) {
	if s.hess != nil && s.split {
		h := s.hessianFull()
		// The formed part H̃ on each worker's coordinates, after the sweep
		// has summed the rows left out of it: ΔH v = Σₖ (cₖ − c̃ₖ) aₖ aₖᵀv
		// over the rows whose curvature differs from the one formed.
		d := s.d
		err := s.sweep.RunThen(func(_, lo, hi int, acc [][]float64) {
			o := acc[0]
			for k := lo; k < hi; k++ {
				dc := s.curv[k] - s.curvHess[k]
				if dc == 0 {
					continue
				}
				val, idx := s.x.Row(k)
				kernels.SparseAxpy(dc*kernels.SparseDot(val, idx, v), val, idx, o)
			}
		}, func(t, lo, hi int) {
			for i := lo; i < hi; i++ {
				out[i] += kernels.Dot(h[i*d:(i+1)*d], v) + s.lam[i]*v[i]
			}
			s.part[t] = kernels.Dot(v[lo:hi], out[lo:hi])
		}, out)
		if err != nil {
			return 0, err
		}
		s.visits += float64(d*d) + 2*float64(s.dropNNZ)
		s.denseFlops += float64(d * d)
		s.sweepFlops += 2 * float64(s.dropNNZ)
		var vhv float64
		for _, x := range s.part[:s.sweep.Ranges()] {
			vhv += x
		}
		return vhv, nil
	}
	if s.hess != nil {
		h, d := s.hessianFull(), s.d
		for i := range out {
			out[i] = kernels.Dot(h[i*d:(i+1)*d], v) + s.lam[i]*v[i]
		}
		s.visits += float64(d * d)
		s.denseFlops += float64(d * d)
		return kernels.Dot(v, out), nil
	}
	if s.products != nil {
		if err := s.products.Times(s.curv, v, out); err != nil {
			return 0, err
		}
		s.visits += 2 * float64(s.activeNNZ)
		s.sweepFlops += 2 * float64(s.activeNNZ)
		return s.coords(func(lo, hi int) float64 {
			o, lam, v := out[lo:hi], s.lam[lo:hi], v[lo:hi]
			for j, vj := range v {
				o[j] += lam[j] * vj
			}
			return kernels.Dot(v, o)
		})
	}
	err := s.sweep.RunThen(func(_, lo, hi int, acc [][]float64) {
		o := acc[0]
		for k := lo; k < hi; k++ {
			c := s.curv[k]
			if c == 0 {
				continue
			}
			val, idx := s.x.Row(k)
			kernels.SparseAxpy(c*kernels.SparseDot(val, idx, v), val, idx, o)
		}
	}, func(t, lo, hi int) {
		o, lam, v := out[lo:hi], s.lam[lo:hi], v[lo:hi]
		for j, vj := range v {
			o[j] += lam[j] * vj
		}
		s.part[t] = kernels.Dot(v, o)
	}, out)

	if err != nil {
		return 0, err
	}
	s.visits += 2 * float64(s.activeNNZ)
	s.sweepFlops += 2 * float64(s.activeNNZ)
	var vhv float64
	for _, x := range s.part[:s.sweep.Ranges()] {
		vhv += x
	}
	return vhv, nil
}

// coords runs fn over the coordinates 0..d−1, cut into one range per
// worker where d is large enough for the hand-off to pay (newtonCoordsMin),
// and returns the sum of what fn returned, added in range order, so that
// the result depends on the worker count only, not on the scheduling.
func (s *newton) coords(fn func(lo, hi int) float64) (float64, error) {
	t := s.sweep.Threads()
	if s.world.Size() > 1 && s.d >= newtonCoordsMin {
		// Over the ranks the ranges are the same on every rank, whatever
		// its workers, so that the sum is the same bits on every rank.
		k := s.sweep.Ranges()
		err := s.sweep.Pool().Run(func(w int) {
			for r := w; r < k; r += t {
				lo, hi := driver.CoordRange(s.d, r, k)
				s.part[r] = fn(lo, hi)
			}
		})
		var sum float64
		for _, x := range s.part[:k] {
			sum += x
		}
		return sum, err
	}
	if t == 1 || s.d < newtonCoordsMin {
		return fn(0, s.d), nil
	}
	err := s.sweep.Pool().Run(func(w int) {
		lo, hi := driver.CoordRange(s.d, w, t)
		s.part[w] = fn(lo, hi)
	})
	var sum float64
	for _, x := range s.part[:t] {
		sum += x
	}
	return sum, err
}

// newtonCoordsMin is the number of coordinates from which coords splits
// its work over the workers: a hand-off costs a few microseconds, about as
// long as a vector update of 10⁴ coordinates.
const newtonCoordsMin = 1 << 15

// along returns the slope dP/dα at w + αs,
//
//	(1/n) Σₖ φ′(zₖ + α·dzₖ)·dzₖ + Σⱼ sⱼ(λⱼ(wⱼ + αsⱼ) − λⱼcⱼ),
//
// and, when withLoss is set, the loss part of P there, (1/n) Σₖ φ(zₖ +
// α·dzₖ), from one pass over z and dz (no row of A) on the sweep's
// workers. The loss part is summed as sweepAt sums it (per chunk of rows,
// then over the chunks in order), so at α = 0 it equals s.lossMean to the
// last bit, and Armijo's test compares like with like. Without it a row
// costs one exponential instead of an exponential and a logarithm.
func (s *newton) along(alpha float64, withLoss bool) (slope, loss float64, err error) {
	var tail [2]float64
	err = s.sweep.RunSum(func(c, lo, hi int, _ [][]float64) {
		var ls objective.Sum
		var sl float64
		b, z, dz := s.prob.B, s.z[lo:hi], s.dz[lo:hi]
		sw := s.prob.SampleWeights
		weight := func(k int) float64 {
			if sw == nil {
				return 1
			}
			return sw[lo+k]
		}
		if withLoss {
			for k, dk := range dz {
				val, d1, _, _ := objective.CurvedTerms(s.loss, z[k]+alpha*dk, b[lo+k])
				wk := weight(k)
				ls.Add(wk * val)
				sl += wk * d1 * dk
			}
		} else {
			sl = objective.SlopeSum(s.loss, z, dz, b[lo:hi], weightsOf(sw, lo, hi), alpha)
		}
		s.lossSum[c], s.conjSum[c] = ls.Sum(), sl
	}, func() []float64 {
		var lsum objective.Sum
		var sl float64
		for c := range s.lossSum {
			lsum.Add(s.lossSum[c])
			sl += s.conjSum[c]
		}
		tail = [2]float64{lsum.Sum(), sl}
		return tail[:]
	}, nil)
	if err != nil {
		return 0, 0, err
	}
	return tail[1]*s.invN + s.regSlope(alpha), tail[0] * s.invN, nil
}

// weightsOf returns sw[lo:hi], or nil where sw is nil.
func weightsOf(sw []float64, lo, hi int) []float64 {
	if sw == nil {
		return nil
	}
	return sw[lo:hi]
}

// regSlope returns the derivative of the L2 part of P at w + αs along s.
func (s *newton) regSlope(alpha float64) float64 {
	var slope float64
	for j, sj := range s.step {
		slope += sj * (s.lam[j]*(s.w[j]+alpha*sj) - s.shift[j])
	}
	return slope
}

// stepMargins sets dz = A·s on the rows of this process and returns the
// slope of P along s at α = 1, the same sum as along(1, false), from the
// same pass over the rows: the line search's first trial then costs no
// pass of its own. Its per-chunk sums go through conjSum, as along's do.
func (s *newton) stepMargins() (float64, error) {
	var tail [1]float64
	err := s.sweep.RunSum(func(c, lo, hi int, _ [][]float64) {
		dz := s.dz[lo:hi]
		s.x.MulVecRows(lo, hi, s.step, dz)
		s.conjSum[c] = objective.SlopeSum(s.loss, s.z[lo:hi], dz, s.prob.B[lo:hi], weightsOf(s.prob.SampleWeights, lo, hi), 1)
	}, func() []float64 {
		var sl float64
		for _, v := range s.conjSum {
			sl += v
		}
		tail[0] = sl
		return tail[:]
	}, nil)
	if err != nil {
		return 0, err
	}
	return tail[0]*s.invN + s.regSlope(1), nil
}

// regAlong returns the L2 part of P at w + αs, up to a constant, for
// Armijo's test.
func (s *newton) regAlong(alpha float64) float64 {
	var f objective.Sum
	for j, sj := range s.step {
		wj := s.w[j] + alpha*sj
		f.Add(0.5*s.lam[j]*wj*wj - s.shift[j]*wj)
	}
	return f.Sum()
}

// newtonMaxStretch bounds the step length beyond the Newton step that the
// line search tries.
const newtonMaxStretch = 4.0

// lineSearch returns a step length α along s. P is convex along the line,
// so its slope d(α) rises with α, and the search keeps the largest α with
// d(α) ≤ 0 that it finds (so P has fallen), from d's values only, which
// stay exact where P's values round:
//
//   - d(1) ≤ 0 and |d(1)| ≤ |d(0)|/10: the Newton step, near the line's
//     minimum (the usual case close to the optimum, where Newton converges
//     superlinearly).
//   - d(1) < d(0)/10: the minimum lies beyond 1. Far from the optimum the
//     losses flatten as margins grow, so the Newton step, sized by the
//     curvature at w, falls short (w8a, logistic, λ = 1e-5: d(1)/d(0) ≈
//     0.3 in the first steps). Where newton forms the Hessian, at most
//     two secant steps on d from the last two points, up to α = 4,
//     stretch it: each costs one exponential a row, against a sweep that
//     forms the Hessian, and they saved 1–2 of 5–14 Newton steps on a9a,
//     w8a and ijcnn1 (epochs= of `adaspdc train -data ../shared/data/w8a
//     -solver newton -lambda 1e-5`, against the same run with at most no
//     secant step). Where it does not, a Newton step's cost is its CG
//     steps, and the longer steps left more of them to the next steps
//     (news20, logistic, λ = 1e-6: 52 → 70 CG steps), so α = 1.
//   - d(1) > 0: α = 1 if it meets Armijo's condition (which needs P's
//     values, one pass), otherwise bisection on [0, 1] until |d| is within
//     a tenth of |d(0)|.
//
// d(0) is ∇P·s (dz = A·s) and P's loss part at 0 is the sweep's, so no
// pass is spent on α = 0; slope1 is d(1) where the pass that computed dz
// summed it (stepMargins), NaN where the line search must take it.
func (s *newton) lineSearch(slope1 float64) (float64, error) {
	d0 := kernels.Dot(s.grad, s.step)
	if !(d0 < 0) {
		if d0 == 0 {
			return 0, nil // no descent left: the optimum, to rounding
		}
		return 0, fmt.Errorf("engine: newton: the step is not a descent direction (slope %g): non-finite data?", d0)
	}
	d1 := slope1
	if math.IsNaN(d1) {
		var err error
		if d1, _, err = s.along(1, false); err != nil {
			return 0, err
		}
	}
	if d1 <= 0 {
		if s.hess == nil {
			return 1, nil
		}
		// Stretch while the slope stays well below zero.
		lo, dlo, prev, dprev := 1.0, d1, 0.0, d0
		for range 2 {
			if dlo >= 0.1*d0 {
				break
			}
			if dlo <= dprev {
				break // the slope did not rise: no secant estimate
			}
			// The secant's root, rounded down to a sixteenth: a
			// continuous α would pass the rounding of the slopes on to
			// the iterate, and TestNewtonScaleInvariant's rescaled
			// iterates then part by 2e-7 within three steps.
			next := lo + math.Floor(16*dlo*(lo-prev)/(dprev-dlo))/16
			next = math.Min(newtonMaxStretch, next)
			if !(next > lo) {
				break
			}
			dn, _, err := s.along(next, false)
			if err != nil {
				return 0, err
			}
			if dn > 0 {
				break // the minimum lies in (lo, next); lo has d ≤ 0
			}
			prev, dprev, lo, dlo = lo, dlo, next, dn
		}
		return lo, nil
	}
	_, loss1, err := s.along(1, true)
	if err != nil {
		return 0, err
	}
	if (loss1+s.regAlong(1))-(s.lossMean+s.regAlong(0)) <= 1e-4*d0 {
		return 1, nil
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := 0.5 * (lo + hi)
		d, _, err := s.along(mid, false)
		if err != nil {
			return 0, err
		}
		if d <= 0 {
			lo = mid
			if d >= 0.1*d0 {
				break
			}
		} else {
			hi = mid
		}
	}
	return lo, nil
}
