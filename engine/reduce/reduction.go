package reduce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// The reductions of Allen-Zhu & Hazan, "Optimal Black-Box Reductions
// Between Optimization Objectives" (2016), as wrappers around any
// registered solver (ReductionSettings.Inner, AdaSPDC by default). Each runs the
// inner solver on a sequence of strongly convex, smooth stage problems whose
// added regularization and smoothing halve from stage to stage, each stage
// warm-started from the last one's point:
//
//   - AdaptReg (Algorithm 1), for a smooth loss with a g that is not
//     strongly convex (the lasso) or only weakly: stage t solves
//
//     F⁽σₜ⁾(x) = F(x) + (σₜ/2)‖x − x̂ₜ‖²,   σₜ₊₁ = σₜ/2,
//
//     For the elastic net (λ/2)‖x − c‖² + L1‖x‖₁ the stage regularizer is
//     again an elastic net: (λ/2)‖x − c‖² + (σ/2)‖x − x̂‖² =
//     ((λ+σ)/2)‖x − c′‖² + const with c′ = (λc + σx̂)/(λ + σ), so the stage
//     is ElasticNet{λ+σₜ, L1, c′}.
//
//     The centre. Algorithm 1 centres every stage at the starting point
//     x̂ₜ = x₀, which leaves stage t a bias of (σₜ/2)‖x₀ − x*‖² (Claim 3.3).
//     Here x̂ₜ is the previous stage's last point (x₀ for the first), an
//     inexact proximal-point step, whose bias vanishes as the iterates
//     converge. Over AdaSPDC on the lasso (housing_scale, abalone_scale,
//     L1 = 0.1·‖Aᵀb‖∞/n, relative gap 1e-7, Settings.Scale 1, 0.1, 0.01)
//     the paper's centre took 391–1380 epochs, the moving one 84–223
//     (BenchmarkReductionVariants; reductionRecentre switches it).
//
//   - AdaptSmooth (Algorithm 2, Definition 4.1), for the hinge loss with a
//     strongly convex g: stage t replaces φ by its smoothing
//     φ⁽λ⁾(z) = max_β βz − φ*(β) − (λ/2)β², which for the hinge is
//     SmoothHinge{S: λₜ}, with λₜ₊₁ = λₜ/2. By Lemma A.1,
//     φ − λG²/2 ≤ φ⁽λ⁾ ≤ φ with G = 1 for the hinge (|β| ≤ 1).
//
//   - JointAdaptRegSmooth (Algorithm 3, Definition B.1), for the hinge
//     with a g that is not strongly convex (L1-SVM): both at once,
//     F⁽λₜ,σₜ⁾(x) = (1/n)Σ φ⁽λₜ⁾(aₖᵀx) + g(x) + (σₜ/2)‖x − x̂ₜ‖².
//
// Initial parameters. Theorems 3.1, 4.2 and B.2 take σ₀ = Δ/Θ and λ₀ = Δ/G²,
// with Δ ≥ F(x₀) − F* and Θ ≥ ‖x₀ − x*‖². Δ is known here: every loss and
// regularizer of the engine is non-negative, so F* ≥ max(0, D) for the dual
// bound D of the original problem at x₀ (see certify), and
// Δ = P(x₀) − max(0, D(x₀)). So λ₀ = Δ (G = 1 for the hinge; at x₀ = 0,
// λ₀ ≤ 1). Θ is not known, and the bounds one can derive (‖x*‖₁ ≤ P(0)/L1
// for the lasso) are loose by orders of magnitude and would start far too
// weakly regularized, so σ₀ is set on the scale of the data's smoothness
// instead, where the first stage is well conditioned:
// σ₀ = L̄ = (1/n)Σₖ‖aₖ‖²/γ, with γ the strong convexity of the stage-0
// loss's conjugate (1 for the squared loss, λ₀ for the smoothed hinge).
// The paper's experiments pick σ₀ and λ₀ from a grid; Settings.Scale
// multiplies both defaults. Over scales 1, 0.1 and 0.01, 1 was best or near
// it on the hinge problems (heart_scale, a1a) and within 2× of the best on
// the lasso.
//
// Stage end (Section 6, "A practical implementation"). The paper checks the
// inner duality gap every n/3 samples and ends a stage once it is at most ¼
// of the previous stage's last gap (for the primal method SVRG, once the
// gradient norm is at most ⅓ of the previous one). Here the inner method's
// own certificate (which every registered method has: those with no dual
// iterate certify with Certify, so the gradient-norm rule is not needed)
// is taken between whole inner epochs, at the intervals the driver itself
// uses (checkInterval, aimed at the stage's target: every epoch near it, at
// most 8 apart far from it), so a stage may overrun its target by part of
// such an interval. The first stage's reference is the inner gap at its
// starting point. Two additions, both measured:
//
//   - A stage also ends once its gap is at most ¼ of the original
//     problem's gap at the same point (stageBiasShare): the rest of the
//     original gap is then the stage's bias, which more work on the stage
//     cannot remove. Without it, a cheap early stage that overshoots its
//     target by 10³ (one epoch at a large σ) drags every later target
//     down, and late, ill-conditioned stages were solved to 1e-10 while the
//     original gap stood at 0.13 (a1a, L1-SVM: stalled at 0.13 without the
//     rule, 1.6e-5 in 261 epochs with it; heart_scale SVM to 1e-6: 811 →
//     467 epochs; housing and abalone lasso at scale 1: 187 → 100 and
//     245 → 129).
//   - A stage starts from the last stage's duals as well as its point, for
//     inner methods that take them (dualWarmStarter; AdaSPDC and the SDCA
//     solvers do): from φ'(aₖᵀx) instead, the new stage's gap at a
//     smoothing of 1e-3 was 10⁴ times the last stage's final gap, against
//     10–40 times, and every hinge run of BenchmarkReductionVariants
//     stalled without it (the lasso ran up to 2× faster without it:
//     58–106 epochs against 84–223). Over sdca (relative gap 1e-7, scales
//     1, 0.1, 0.01, seeds 0–2): AdaptSmooth on heart_scale (to 3e-7)
//     converged in 1377–1423 epochs with them and not in 3000 without;
//     on the lasso they took 24–48 epochs against 60–95 on abalone_scale,
//     89–231 against 28–210 on housing_scale. SDCA's primal point is
//     ∇g*(−v) of the new stage, not the last stage's point: the duals carry
//     the last point's subgradient, which the halved σ turns into a step
//     beyond it.
//
// A stage target never goes below 1e-13·max(1, |P|), the rounding of the
// gap, so that stages keep advancing once the gap cannot fall further.
//
// Floors. Halving stops once the stage problem's condition number
// R²/((λ+σ)·γ) would pass 1e14 (R² bounded by the block size times the
// largest ‖aₖ‖²), 100 times below the point where AdaSPDC refuses; later
// stages then keep the last parameters, and the run converges to within
// their bias (Lemma A.1: λG²/2).
//
// The certificate is the original problem's. The outer driver sees P(x) of
// the original objective at the inner point x and the better of two dual
// bounds of the original problem: the inner method's own duals (feasible
// for the original loss, whose conjugate has the same domain: the smoothed
// hinge's duals are hinge duals) and the duals Certify pairs with x,
// yₖ = φ'(aₖᵀx). Where g*(−v) is +Inf (a pure L1 regularizer, whose
// conjugate is the indicator of the box |vⱼ| ≤ L1), the dual point is
// scaled by s = min(1, minⱼ L1/|vⱼ|) into the domain, as in the lasso's gap
// safe rules: s·y stays feasible for φ* (every loss's conjugate domain is
// an interval holding 0 and y), so D(s·y) is a finite lower bound on P*
// that goes to P* as x does (at the optimum ‖v‖∞ ≤ L1 and s = 1). So every
// certificate is a true duality gap of the original problem, Options.Tol
// applies to it, and the driver owns stopping, the trace and the time limit
// as for any method. One outer epoch is one inner epoch; Passes count
// every inner pass of every stage. Result.Note gives the stages, the last
// parameters and where the final dual point came from.

// The reductions' registered names.
const (
	SolverAdaptReg    driver.Solver = "adaptreg"
	SolverAdaptSmooth driver.Solver = "adaptsmooth"
	SolverJointAdapt  driver.Solver = "jointadapt"
)

// reductionRank places the reductions after every direct method: they run
// one, and take only what the direct methods refuse when no solver is named.
const reductionRank = 30

// Stage parameters stop halving where the stage condition number would pass
// maxStageCondition; stage targets stay above stageGapFloor·max(1, |P|).
const (
	maxStageCondition = 1e14
	stageGapFloor     = 1e-13
)

// The choices of the practical implementation (see the comment above),
// variables so that tests and benchmarks can measure the alternatives.
var (
	// reductionRecentre centres each AdaptReg stage at the previous
	// stage's point; false: at x₀, as Algorithm 1.
	reductionRecentre = true
	// reductionWarmDuals starts a stage from the last stage's duals.
	reductionWarmDuals = true
	// stageShrink: a stage ends at this fraction of the previous stage's
	// last gap (the paper's ¼).
	stageShrink = 0.25
	// stageBiasShare: a stage also ends once its gap is at most this
	// fraction of the original problem's gap; 0: never.
	stageBiasShare = 0.25
)

// reductionKind says which of the three reductions runs.
type reductionKind struct {
	reg, smooth bool
}

func init() {
	for _, r := range []struct {
		name    driver.Solver
		kind    reductionKind
		summary string
		losses  string
		regs    string
	}{
		{SolverAdaptReg, reductionKind{reg: true},
			"AdaptReg: the inner solver on F + (σₜ/2)‖x − x̂ₜ‖², x̂ₜ the last stage's point, σₜ halving per stage (Allen-Zhu & Hazan 2016, Alg. 1)",
			"those of the inner solver", "elastic net, λ ≥ 0 (lasso)"},
		{SolverAdaptSmooth, reductionKind{smooth: true},
			"AdaptSmooth: the inner solver on the hinge smoothed by λₜ, halving per stage (Allen-Zhu & Hazan 2016, Alg. 2)",
			"hinge", "those of the inner solver (λ > 0 for AdaSPDC)"},
		{SolverJointAdapt, reductionKind{reg: true, smooth: true},
			"JointAdaptRegSmooth: AdaptReg and AdaptSmooth at once (Allen-Zhu & Hazan 2016, Alg. 3)",
			"hinge", "elastic net, λ ≥ 0 (L1-SVM)"},
	} {
		kind := r.kind
		driver.Register(&driver.Entry{
			SolverInfo: driver.SolverInfo{
				Name:         r.name,
				Summary:      r.summary,
				Losses:       r.losses,
				Regularizers: r.regs,
				Parallel:     true,
				Certified:    true,
				// The coordinate settings go to the inner solver.
				Reads: []string{Family, driver.CoordinateFamily},
				Takes: driver.Takes{L1: true},
			},
			Rank:       reductionRank,
			Accepts:    func(prob objective.Problem, opt driver.Options) error { return acceptsReduction(kind, prob, opt) },
			CheckInner: func(opt driver.Options) error { return checkInner(kind, opt) },
			Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
				return startReduction(ctx, kind, prob, opt)
			},
		})
	}
}

// IsReduction reports whether name is one of the reductions (adaptreg,
// adaptsmooth, jointadapt): the solvers that run another on each stage
// (ReductionSettings.Inner).
func IsReduction(name driver.Solver) bool { return isReduction(name) }

// isReduction reports whether name is one of the reductions.
func isReduction(name driver.Solver) bool {
	return name == SolverAdaptReg || name == SolverAdaptSmooth || name == SolverJointAdapt
}

// Settings are the reductions' own settings, which Options.Settings
// carries to them.
type Settings struct {
	// Inner names the solver that the reductions (adaptreg, adaptsmooth,
	// jointadapt) run on each stage's strongly convex, smooth problem;
	// zero: adaspdc.
	Inner driver.Solver
	// Scale multiplies the reductions' initial added regularization σ₀
	// and smoothing λ₀ (the package doc says how they are chosen); zero: 1.
	Scale float64
}

// Family is the reductions' family name, as their SolverInfo.Reads lists it.
const Family = "reduce"

// Family returns the reductions' family name.
func (Settings) Family() string { return Family }

// IsDefault reports whether no inner solver is named and the scale is 1.
func (s Settings) IsDefault() bool { return s.Inner == "" && (s.Scale == 0 || s.Scale == 1) }

// Validate refuses an unknown inner solver and a scale that is negative
// or not finite.
func (s Settings) Validate() error {
	if s.Inner != "" && driver.Lookup(s.Inner) == nil {
		return fmt.Errorf("engine: unknown inner solver %q (want one of %s)", s.Inner, driver.Names())
	}
	if !(s.Scale >= 0) || math.IsInf(s.Scale, 0) {
		return fmt.Errorf("engine: reduction scale %v: must be a finite value ≥ 0 (0: 1)", s.Scale)
	}
	return nil
}

// innerEntry returns the inner solver that opt names.
func innerEntry(opt driver.Options) (*driver.Entry, error) {
	st, _ := driver.SettingsOf[Settings](opt)
	name := st.Inner
	if name == "" {
		name = defaultInner
	}
	if isReduction(name) {
		return nil, fmt.Errorf("engine: %s cannot run the reduction %s as its inner solver: name a direct solver (jointadapt does both reductions at once)", opt.Solver, name)
	}
	e := driver.Lookup(name)
	if e == nil {
		return nil, fmt.Errorf("engine: unknown inner solver %q (want one of %s)", name, driver.Names())
	}
	if !e.StageWarmStart {
		var takers []string
		for _, o := range driver.Entries() {
			if o.StageWarmStart {
				takers = append(takers, string(o.Name))
			}
		}
		return nil, fmt.Errorf("engine: %s cannot run on %s yet: a stage must start from the last stage's duals or from its point alone (%s do), and %s takes neither; measured over sdca from cold duals on the lasso, the stages stalled or diverged. Use ReductionSettings.Inner \"adaspdc\", the default", opt.Solver, name, strings.Join(takers, ", "), name)
	}
	return e, nil
}

// checkInner reports why the reduction of the given kind cannot run the
// inner solver opt names on any data, so that Options.Validate refuses the
// combination before a command line reads the data, and not once the run
// has started: a reduction as the inner solver, a solver whose stages
// cannot start where the last ended (innerEntry), or one that refuses
// every stage problem the reduction could hand it with these options. The
// last is asked of the inner solver itself, on one-row stand-ins of the
// stage problems: each smooth loss the stages could have (the smoothed
// hinge for AdaptSmooth and JointAdapt) with an L2 term, with and without
// an L1 term, centred as AdaptReg's stages are. A solver that takes none
// of them takes no stage of any problem: spdc-async, which keeps the
// (λ/2)‖x‖² prox in closed form, takes no centre, so it cannot run under
// AdaptReg, whose every stage is centred; and a solver that refuses
// CoordinateSettings.M > 1 or CoordinateSettings.BlockSize > 1 refuses them on every stage.
func checkInner(kind reductionKind, opt driver.Options) error {
	e, err := innerEntry(opt)
	if err != nil {
		return err
	}
	losses := []objective.Loss{objective.SmoothHinge{S: 1}}
	if !kind.smooth {
		losses = []objective.Loss{objective.Squared{}, objective.Logistic{}, objective.SquaredHinge{}, objective.SmoothHinge{S: 1}}
	}
	x := &sparse.CSR{Rows: 1, Cols: 1, Indptr: []int64{0, 1}, Indices: []int32{0}, Values: []float64{1}}
	var x0 []float64
	if kind.reg {
		x0 = []float64{0}
	}
	o := innerOptions(opt.WithDefaults(), e, nil)
	var first error
	for _, loss := range losses {
		for _, l1 := range []float64{0, 1} {
			en := objective.ElasticNet{Lambda: 1, L1: l1}
			prob := objective.Problem{X: x, B: []float64{1}, Loss: loss, Reg: en}
			err := e.Accepts(reductionStage(kind, prob, en, x0, 1, 1), o)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
	}
	why := ""
	if kind.reg {
		why = " (each stage adds (σ/2)‖x − x̂‖², centred at the last stage's point)"
	}
	return fmt.Errorf("engine: %s cannot run %s on its stage problems%s, whatever the data: %w", opt.Solver, e.Name, why, first)
}

// defaultInner is the inner solver of a reduction with none named.
const defaultInner driver.Solver = "adaspdc"

// innerOptions returns the options the inner solver runs a stage with: the
// outer ones, less what the outer driver owns (stopping, callbacks and
// checkpoints, the time limit), with the warm start of the stage.
func innerOptions(opt driver.Options, e *driver.Entry, warm []float64) driver.Options {
	o := opt.Without(Family)
	o.Solver = e.Name
	o.Callback, o.StopRule, o.Checkpoint, o.WarmDuals = nil, nil, nil, nil
	o.TimeLimit, o.TargetPrimal = 0, 0
	o.WarmStart = warm
	return o
}

// acceptsReduction reports why the reduction of the given kind cannot solve
// prob: the loss it smooths must be the hinge, the regularizer an elastic
// net (AdaptReg adds to it), and the inner solver must take the stage
// problems.
func acceptsReduction(kind reductionKind, prob objective.Problem, opt driver.Options) error {
	e, err := innerEntry(opt)
	if err != nil {
		return err
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the elastic net, not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	_, hinge := prob.Loss.(objective.Hinge)
	switch {
	case kind.smooth && !hinge:
		return fmt.Errorf("engine: %s smooths the hinge loss, not the %s loss (for a smooth loss use adaptreg or a direct solver)", opt.Solver, prob.Loss.Name())
	case kind.reg && en.L1 == 0 && en.Lambda == 0:
		return fmt.Errorf("engine: %s needs a regularizer (L1 > 0 or λ > 0): with none, the dual is finite only where Σₖ yₖaₖ = 0, and no certificate can bound the run", opt.Solver)
	case kind.reg && en.Weights != nil:
		return fmt.Errorf("engine: %s does not take per-coordinate regularizer weights: the added (σ/2)‖x − x₀‖² has no weights, and the sum is no weighted elastic net", opt.Solver)
	}
	// Every stage after the first is centred at the last stage's point,
	// so the inner solver must take a centre: check with one, or a solver
	// that refuses centres would be refused only at the second stage.
	var x0 []float64
	if kind.reg {
		x0 = make([]float64, prob.X.Cols)
	}
	stage := reductionStage(kind, prob, en, x0, 1, 1)
	if err := e.Accepts(stage, innerOptions(opt, e, nil)); err != nil {
		hint := ""
		switch {
		case hinge && !kind.smooth:
			hint = " (for the hinge loss use adaptsmooth or jointadapt)"
		case kind.smooth && !kind.reg && !(en.StrongConvexity() > 0):
			hint = " (for a regularizer that is not strongly convex use jointadapt)"
		}
		return fmt.Errorf("engine: %s: the inner solver cannot solve the stage problems%s: %w", opt.Solver, hint, err)
	}
	return nil
}

// reductionStage returns the stage problem with added regularization sigma
// centred at x0 (nil: 0) and smoothing s, as far as kind uses them.
func reductionStage(kind reductionKind, prob objective.Problem, en objective.ElasticNet, x0 []float64, sigma, s float64) objective.Problem {
	p := prob
	if kind.smooth {
		p.Loss = objective.SmoothHinge{S: s}
	}
	if kind.reg {
		lam := en.Lambda + sigma
		var c []float64
		if en.Center != nil || x0 != nil {
			c = make([]float64, prob.X.Cols)
			for j := range c {
				var cj, xj float64
				if en.Center != nil {
					cj = en.Center[j]
				}
				if x0 != nil {
					xj = x0[j]
				}
				c[j] = (en.Lambda*cj + sigma*xj) / lam
			}
		}
		p.Reg = objective.ElasticNet{Lambda: lam, L1: en.L1, Center: c}
	}
	return p
}

// reduction is the state of one AdaptReg, AdaptSmooth or JointAdaptRegSmooth
// run: the original problem, the current stage's parameters and inner
// method, and the buffers of the original problem's certificate.
type reduction struct {
	kind  reductionKind
	prob  objective.Problem    // the original problem
	en    objective.ElasticNet // its regularizer
	opt   driver.Options       // the outer options
	inner *driver.Entry
	n, d  int

	x0        []float64 // the centre of the added regularization; nil: 0
	sigma     float64   // σₜ, the added regularization
	smoothing float64   // λₜ, the hinge's smoothing
	sigmaMin  float64   // below 1e-16·λ, σ no longer changes the stage
	rowNorm2  float64   // largest ‖aₖ‖² times the block size: bounds R²

	cur        driver.Method // the current stage's inner method
	stage      int           // stages started, less one
	stageEpoch int           // epochs of the current stage
	nextCheck  int           // stage epoch of the next inner certificate
	lastCheck  int           // stage epoch of the last inner certificate
	lastGap    float64       // its gap
	refGap     float64       // the previous stage's last gap
	donePasses float64       // passes of the finished stages
	lazy       bool
	blocks     int

	// The original problem's certificate.
	yBest     []float64 // the dual point of the last certificate
	eval      *objective.Evaluator
	dualNote  string // how the last dual bound was obtained
	cert      driver.TracePoint
	certValid bool // cert is at the current point
}

// startReduction builds the reduction at its starting point and starts the
// inner method on the first stage.
func startReduction(ctx context.Context, kind reductionKind, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	e, err := innerEntry(opt)
	if err != nil {
		return nil, err
	}
	en, _ := prob.Reg.AsElasticNet() // acceptsReduction checked that it is one
	r := &reduction{
		kind: kind, prob: prob, en: en, opt: opt, inner: e,
		n: prob.X.Rows, d: prob.X.Cols,
	}
	r.yBest = make([]float64, r.n)
	r.eval = driver.NewEvaluator(prob, opt.Threads)
	if opt.WarmStart != nil {
		r.x0 = slices.Clone(opt.WarmStart)
	}

	// Δ = P(x₀) − max(0, D(x₀)) from the original certificate at x₀ with the
	// duals φ'(aₖᵀx₀); L̄ = (1/n)Σ‖aₖ‖².
	x0 := r.x0
	if x0 == nil {
		x0 = make([]float64, r.d)
	}
	tp := r.originalCertificate(x0, nil)
	delta := tp.Primal - math.Max(0, tp.Dual)
	if !(delta >= 0) || math.IsInf(delta, 0) {
		return nil, fmt.Errorf("engine: %s: the objective at the starting point is %v (dual bound %v): the data or the warm start hold non-finite values", opt.Solver, tp.Primal, tp.Dual)
	}
	var sumNorm2, maxNorm2 float64
	for k := 0; k < r.n; k++ {
		val, _ := prob.X.Row(k)
		q := kernels.Dot(val, val)
		sumNorm2 += q
		maxNorm2 = math.Max(maxNorm2, q)
	}
	if maxNorm2 == 0 {
		return nil, errors.New("engine: every row of the data is zero")
	}
	r.rowNorm2 = maxNorm2 * float64(max(1, opt.Coordinate().BlockSize))
	st, _ := driver.SettingsOf[Settings](opt)
	scale := st.Scale
	if scale == 0 {
		scale = 1
	}
	gamma := prob.Loss.Gamma()
	if kind.smooth {
		// Δ = 0 (a warm start at the optimum) must still smooth.
		r.smoothing = math.Max(scale*delta, 1e-12*math.Max(1, tp.Primal))
		gamma = r.smoothing
	}
	if kind.reg {
		r.sigma = scale * sumNorm2 / float64(r.n) / gamma
		// Below 1e-16·λ, σ no longer changes the stage problem.
		r.sigmaMin = 1e-16 * r.en.Lambda
		r.sigma = math.Max(r.sigma, r.rowNorm2/(gamma*maxStageCondition)-r.en.Lambda)
	}
	if kind.smooth {
		// Δ = 0 (x₀ optimal) or a tiny Δ must still leave a stage problem
		// within the condition floor.
		if lam := r.en.Lambda + r.sigma; lam > 0 {
			r.smoothing = math.Max(r.smoothing, r.rowNorm2/(lam*maxStageCondition))
		}
	}
	if !(r.smoothing > 0) && kind.smooth {
		return nil, fmt.Errorf("engine: %s: no strongly convex term to smooth the hinge against (λ = %g)", opt.Solver, r.en.Lambda)
	}
	if err := r.startStage(ctx); err != nil {
		return nil, err
	}
	first, err := r.cur.Certify()
	if err != nil {
		r.release(r.cur)
		return nil, err
	}
	r.refGap, r.lastGap = first.Gap, first.Gap
	r.nextCheck = 1
	return r, nil
}

// startStage starts the inner method on the current stage, warm-started
// from the point of the last one (x₀ for the first), and makes it current
// once it runs; the previous one is released.
func (r *reduction) startStage(ctx context.Context) error {
	var warm []float64
	if r.cur != nil {
		warm = slices.Clone(r.cur.Point())
	} else if r.x0 != nil {
		warm = slices.Clone(r.x0)
	}
	centre := r.x0
	if reductionRecentre && warm != nil {
		centre = warm
	}
	stage := reductionStage(r.kind, r.prob, r.en, centre, r.sigma, r.smoothing)
	o := innerOptions(r.opt, r.inner, warm)
	if err := r.inner.Accepts(stage, o); err != nil {
		return fmt.Errorf("engine: %s stage %d: %w", r.opt.Solver, r.stage+1, err)
	}
	m, err := r.inner.Start(ctx, stage, o)
	if err != nil {
		return fmt.Errorf("engine: %s stage %d (%s): %w", r.opt.Solver, r.stage+1, r.params(), err)
	}
	if r.cur != nil && reductionWarmDuals {
		from, ok1 := r.cur.(driver.DualIterate)
		to, ok2 := m.(driver.DualWarmStarter)
		if ok1 && ok2 {
			if err := to.WarmDuals(from.DualPoint()); err != nil {
				r.release(m)
				return err
			}
		}
	}
	if r.cur != nil {
		r.donePasses += r.cur.Passes()
		if err := r.release(r.cur); err != nil {
			r.release(m)
			return err
		}
	}
	r.cur, r.x0 = m, centre
	r.certValid = false
	r.stageEpoch, r.lastCheck, r.nextCheck = 0, 0, 1
	return nil
}

// release lets a finished inner method stop its workers, and keeps what it
// tells the Result.
func (r *reduction) release(m driver.Method) error {
	f, ok := m.(driver.Finisher)
	if !ok {
		return nil
	}
	var res driver.Result
	err := f.Finish(&res)
	r.lazy, r.blocks = res.Lazy, res.Blocks
	return err
}

// params describes the current stage's parameters.
func (r *reduction) params() string {
	switch {
	case r.kind.reg && r.kind.smooth:
		return fmt.Sprintf("σ = %.3g, smoothing %.3g", r.sigma, r.smoothing)
	case r.kind.reg:
		return fmt.Sprintf("σ = %.3g", r.sigma)
	}
	return fmt.Sprintf("smoothing %.3g", r.smoothing)
}

// nextParams halves the stage parameters where the floors allow, and
// reports whether any changed: both when the halved stage's condition
// number R²/((λ+σ)·γ) stays within maxStageCondition, else the one that
// can be halved alone.
func (r *reduction) nextParams() bool {
	ok := func(sigma, s float64) bool {
		gamma := r.prob.Loss.Gamma()
		if r.kind.smooth {
			gamma = s
		}
		lam := r.en.Lambda
		if r.kind.reg {
			if sigma < r.sigmaMin {
				return false
			}
			lam += sigma
		}
		return r.rowNorm2/(lam*gamma) <= maxStageCondition
	}
	sigma, s := r.sigma, r.smoothing
	if r.kind.reg {
		sigma /= 2
	}
	if r.kind.smooth {
		s /= 2
	}
	switch {
	case ok(sigma, s):
		r.sigma, r.smoothing = sigma, s
	case r.kind.reg && r.kind.smooth && ok(r.sigma, s):
		r.smoothing = s
	case r.kind.reg && r.kind.smooth && ok(sigma, r.smoothing):
		r.sigma = sigma
	default:
		return false
	}
	return true
}

// RunEpochs runs k inner epochs, ending stages on the way: after the inner
// certificates that checkInterval schedules, a stage whose gap is at most ¼
// of the previous stage's last gap ends, and the next starts from its point.
func (r *reduction) RunEpochs(ctx context.Context, k int) (int, error) {
	done := 0
	for done < k && ctx.Err() == nil {
		step := min(k-done, max(1, r.nextCheck-r.stageEpoch))
		r.certValid = false
		got, err := r.cur.RunEpochs(ctx, step)
		done += got
		r.stageEpoch += got
		if err != nil {
			return done, err
		}
		if got < step || ctx.Err() != nil {
			break
		}
		if r.stageEpoch >= r.nextCheck {
			if err := r.checkStage(ctx); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

// checkStage certifies the inner method on its stage problem and ends the
// stage when the gap has reached the stage's target.
func (r *reduction) checkStage(ctx context.Context) error {
	tp, err := r.cur.Certify()
	if err != nil {
		return err
	}
	target := math.Max(stageShrink*r.refGap, stageGapFloor*math.Max(1, math.Abs(tp.Primal)))
	if stageBiasShare > 0 {
		orig := r.certifyCached()
		target = math.Max(target, stageBiasShare*orig.Gap)
	}
	if tp.Gap <= target {
		r.refGap = tp.Gap
		sigma, smoothing := r.sigma, r.smoothing
		if !r.nextParams() {
			// At the floors: the same problem goes on, with a new target.
			r.stage++
			r.lastCheck, r.lastGap = r.stageEpoch, tp.Gap
			r.nextCheck = r.stageEpoch + 1
			return nil
		}
		if err := r.startStage(ctx); err != nil {
			r.sigma, r.smoothing = sigma, smoothing
			if ctx.Err() != nil {
				// The run is ending: keep the finished stage's method
				// for the last certificate.
				return nil
			}
			return err
		}
		r.stage++
		r.lastGap = math.NaN() // no rate yet: check after one epoch
		return nil
	}
	interval := driver.CheckInterval(driver.Options{Tol: target / math.Max(1, math.Abs(tp.Primal))}, tp, r.stageEpoch-r.lastCheck, r.lastGap)
	r.lastCheck, r.lastGap = r.stageEpoch, tp.Gap
	r.nextCheck = r.stageEpoch + interval
	return nil
}

// Certify returns the original problem's certificate at the inner method's
// point: P(x) of the original objective and the better of the dual bounds
// at the inner duals and at φ'(aₖᵀx), each scaled into dom g* if need be.
func (r *reduction) Certify() (driver.TracePoint, error) {
	return r.certifyCached(), nil
}

// certifyCached returns the original problem's certificate at the current
// point, computed at most once between two runs of the inner method.
func (r *reduction) certifyCached() driver.TracePoint {
	if r.certValid {
		return r.cert
	}
	var inner []float64
	if di, ok := r.cur.(driver.DualIterate); ok {
		inner = di.DualPoint()
	}
	r.cert, r.certValid = r.originalCertificate(r.cur.Point(), inner), true
	return r.cert
}

// originalCertificate returns the original problem's certificate at x and
// the better of its dual bounds at φ'(aₖᵀx) and, when non-nil, at the
// duals inner (each projected into dom φ* and scaled into dom g*); it
// keeps the winning dual point in yBest.
func (r *reduction) originalCertificate(x, inner []float64) driver.TracePoint {
	which := objective.PairedDuals
	if inner != nil {
		which = objective.BetterDuals
	}
	c, err := r.eval.At(x, inner, which)
	if err != nil {
		panic(err) // a bug: the inner method solves a problem of this shape
	}
	copy(r.yBest, r.eval.Duals())
	from := "φ'(aᵀx)"
	if r.eval.From() == objective.OwnDuals {
		from = "the inner duals"
	}
	r.dualNote = "the dual point is " + from
	if s := r.eval.Scale(); s < 1 {
		r.dualNote += fmt.Sprintf(" scaled by %.6g into the domain of g*", s)
	}
	return driver.TracePointOf(c)
}

func (r *reduction) Point() []float64 { return r.cur.Point() }
func (r *reduction) Passes() float64  { return r.donePasses + r.cur.Passes() }
func (r *reduction) Threads() int     { return r.cur.Threads() }
func (r *reduction) DivergenceHint() string {
	return fmt.Sprintf("the inner solver %s diverged at %s stage %d (%s): %s", r.inner.Name, r.opt.Solver, r.stage+1, r.params(), r.cur.DivergenceHint())
}

// Finish releases the inner method and reports the stages, the last
// parameters and the dual point of the last certificate.
func (r *reduction) Finish(res *driver.Result) error {
	err := r.release(r.cur)
	res.Lazy, res.Blocks = r.lazy, r.blocks
	res.Duals = r.yBest
	res.Note = fmt.Sprintf("%s over %s: %d stages, last %s; the certificates are the original problem's, %s",
		r.opt.Solver, r.inner.Name, r.stage+1, r.params(), r.dualNote)
	return err
}
