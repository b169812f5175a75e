package wx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// The randomised primal-dual methods of Wang & Xiao 2017, "Exploiting Strong
// Convexity from Data with Primal-Dual First-Order Algorithms": Ada-SPDC
// (Algorithm 5, solver "wx-adaspdc") here, and the dual-free DF-SPDC and
// ADF-SPDC (Algorithm 7, solvers "dfspdc" and "adfspdc") in wx_dfspdc.go.
// They share the primal step, the sampling and the certificate; they differ
// in the dual step and in the step sizes.
//
// Unlike the engine's AdaSPDC/SPDC ("adaspdc", "spdc"), which use λ alone,
// these steps use λ + Δ, where Δ = δμ²/n is the strong convexity that the
// data lend P (wx_adapt.go), adapted every T = 10 passes by the robust rule
// of Algorithm 4. They draw one sample per iteration, uniformly with
// replacement, and run serially with a dense primal update: an iteration
// costs O(d) besides its row, which suits data with up to a few thousand
// features (a9a, ijcnn1, w8a), not news20.

// Solvers are the family's solvers: Wang & Xiao's batch primal-dual
// method and its adaptive form, their stochastic SPDC with adaptive steps,
// and the dual-free SPDC with and without them.
var Solvers = []driver.Solver{SolverBPD, SolverAdaBPD, SolverWXAdaSPDC, SolverDFSPDC, SolverADFSPDC}

// The family's solver names.
const (
	SolverBPD       driver.Solver = "bpd"
	SolverAdaBPD    driver.Solver = "adabpd"
	SolverWXAdaSPDC driver.Solver = "wx-adaspdc"
	SolverDFSPDC    driver.Solver = "dfspdc"
	SolverADFSPDC   driver.Solver = "adfspdc"
)

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         "wx-adaspdc",
			Reads:        []string{driver.CoordinateFamily},
			Takes:        driver.Takes{L1: true},
			Summary:      "Ada-SPDC: SPDC with steps from λ + Δ, Δ (strong convexity from data) adapted every 10 passes (Wang & Xiao 2017, Alg. 5 + 4); serial, O(d) per iteration",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0",
			Certified:    true,
		},
		Rank:    32,
		Accepts: acceptsWX,
		Start:   startWXSPDC,
	})
}

// acceptsWX reports why a method of Wang & Xiao cannot solve prob: it
// needs a separable regularizer with λ > 0 (its steps use λ + Δ and its
// certificate g*), a smooth loss (γ > 0), and samples one row per
// iteration.
func acceptsWX(prob objective.Problem, opt driver.Options) error {
	if _, ok := prob.Reg.(objective.Separable); !ok {
		return fmt.Errorf("engine: %s takes a separable regularizer (the elastic net), not %s", opt.Solver, prob.Reg.Name())
	}
	if err := objective.NeedStrongConvexity(prob.Reg, string(opt.Solver)); err != nil {
		return err
	}
	if g := prob.Loss.Gamma(); !(g > 0) {
		return fmt.Errorf("engine: the %s loss has γ = %g: %s needs a smooth loss (φ* strongly convex, γ > 0)", prob.Loss.Name(), g, opt.Solver)
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s updates one sample per iteration: it takes neither m = %d nor block size %d (use adaspdc for minibatches)", opt.Solver, opt.Coordinate().M, opt.Coordinate().BlockSize)
	}
	if opt.Coordinate().Sampling == driver.SamplingImportance {
		return fmt.Errorf("engine: %s samples uniformly; importance sampling is spdc's", opt.Solver)
	}
	return nil
}

// wxSPDC is the state of an Ada-SPDC, DF-SPDC or ADF-SPDC run.
type wxSPDC struct {
	prob     objective.Problem
	opt      driver.Options
	x        *sparse.CSR
	n, d     int
	lam      float64 // λ, the strong convexity of g
	gamma    float64 // γ of φ*
	reg      objective.Separable
	en       objective.ElasticNet // the regularizer when plain (fast path)
	plain    bool
	dualFree bool
	rmax     float64    // R = maxₖ ‖aₖ‖
	adapt    *wxAdapter // nil: fixed steps with Δ = 0

	delta             float64 // Δ the steps use
	sigma, tau, theta float64
	y                 []float64 // duals yₖ
	v                 []float64 // dual-free: vₖ = (φₖ*)'(yₖ), the prox centre in margin space
	xv, xt, u, w      []float64 // x, x̃, u = (1/n)Σ yₖaₖ, scratch Δy·aₖ
	rng               *rand.Rand
	sampled           int64

	cert      driver.TracePoint // the certificate of the current state, when certValid
	eval      *objective.Evaluator
	certValid bool
}

func startWXSPDC(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	return newWXSPDC(prob, opt, false, true)
}

// newWXSPDC builds a run at x⁰ (the warm start or 0) with the duals the
// optimality relation pairs with it: yₖ = φₖ'(aₖᵀx⁰), and for the dual-free
// method vₖ = aₖᵀx⁰, so that vₖ = (φₖ*)'(yₖ) as Algorithm 7 requires (for
// x⁰ = 0 this is the paper's logistic start y⁰ = −b/2, v⁰ = 0, and for
// the squared loss y⁰ = −b, v⁰ = y⁰ + b = 0). u⁰ = (1/n)Σₖ yₖ⁰aₖ, which
// the paper leaves implicit.
func newWXSPDC(prob objective.Problem, opt driver.Options, dualFree, adaptive bool) (*wxSPDC, error) {
	x := prob.X
	s := &wxSPDC{prob: prob, opt: opt, x: x, n: x.Rows, d: x.Cols, dualFree: dualFree}
	s.reg = prob.Reg.(objective.Separable) // acceptsWX checked
	if en, ok := prob.Reg.AsElasticNet(); ok && en.Plain() {
		s.en, s.plain = en, true
	}
	s.lam = prob.Reg.StrongConvexity()
	s.gamma = prob.Loss.Gamma()
	var r2 float64
	for _, q := range x.RowSquaredNorms() {
		if math.IsNaN(q) || math.IsInf(q, 0) {
			return nil, errors.New("engine: the data hold non-finite values")
		}
		r2 = math.Max(r2, q)
	}
	if r2 == 0 {
		return nil, errors.New("engine: every row of the data is zero")
	}
	s.rmax = math.Sqrt(r2)
	if kappa := r2 / (s.lam * s.gamma); !(kappa <= driver.MaxConditionNumber) {
		return nil, fmt.Errorf("engine: λ = %g is too small for this data: R²/(λγ) = %.3g is above %g, where the steps break down in float64", s.lam, kappa, driver.MaxConditionNumber)
	}
	if adaptive {
		cap := r2 / s.gamma
		s.adapt = newWXAdapter(wxInitialDelta(s.lam, cap), cap, true)
		s.delta = s.adapt.delta
	}
	s.stepSizes()

	s.y = make([]float64, s.n)
	s.xv = make([]float64, s.d)
	s.xt = make([]float64, s.d)
	s.u = make([]float64, s.d)
	s.w = make([]float64, s.d)
	s.eval = driver.NewEvaluator(prob, opt.Threads)
	if dualFree {
		s.v = make([]float64, s.n)
	}
	if opt.WarmStart != nil {
		copy(s.xv, opt.WarmStart)
	}
	copy(s.xt, s.xv)
	loss := prob.Loss
	for k := 0; k < s.n; k++ {
		val, idx := x.Row(k)
		z := kernels.SparseDot(val, idx, s.xv)
		b := prob.B[k]
		s.y[k] = loss.DualFeasible(loss.Deriv(z, b), b)
		if dualFree {
			s.v[k] = z
		}
		kernels.SparseAxpy(s.y[k]/float64(s.n), val, idx, s.u)
	}
	s.rng = rand.New(rand.NewPCG(opt.Seed, 0x5bd1e995))
	return s, nil
}

// stepSizes sets σ, τ and θ from λ + Δ: Eq. 9–10 (Theorem 2) for Ada-SPDC,
// Eq. 15–16 (Theorem 4) for the dual-free methods. The paper's
// conditions have δμ² where we have nΔ. CoordinateSettings.StepScale multiplies σ and τ
// (1: the paper's, with στR² = 1/16 for Ada-SPDC; 2 gives Zhang & Xiao's
// SPDC product στR² = 1/4).
func (s *wxSPDC) stepSizes() {
	if s.dualFree {
		s.dualFreeSteps()
		return
	}
	// Eq. 9: τ = (1/4R)·√(γ/(nλ + δμ²)), σ = (1/4R)·√((nλ + δμ²)/γ).
	// Eq. 10: θx = (1 − τσδμ²/(2n(σ + 4δ)))/(1 + τλ),
	//         θy = (1 + ((n−1)/n)σγ/2)/(1 + σγ/2), θ = max(θx, θy).
	// θx needs δ apart from δμ²; we take its largest value, δ = 1/γ
	// (Assumption 1: γδ ≤ 1), which gives the largest, safest θx.
	n, c := float64(s.n), s.opt.Coordinate().StepScale
	str := n * (s.lam + s.delta) // nλ + δμ²
	s.tau = c / (4 * s.rmax) * math.Sqrt(s.gamma/str)
	s.sigma = c / (4 * s.rmax) * math.Sqrt(str/s.gamma)
	delta := 1 / s.gamma
	thx := (1 - s.tau*s.sigma*s.delta/(2*(s.sigma+4*delta))) / (1 + s.tau*s.lam)
	sg := s.sigma * s.gamma / 2
	thy := (1 + (n-1)/n*sg) / (1 + sg)
	s.theta = math.Max(thx, thy)
}

// iterate runs one pass: n iterations of Algorithm 5 (Ada-SPDC) or
// Algorithm 7 (DF-SPDC, ADF-SPDC). Iteration t draws k uniformly and
// takes the dual step of its method (spdcDualStep or dualFreeStep) to
// y⁺ₖ, then the primal step shared by both algorithms:
//
//	x⁺ = prox_{τg}(x − τ(u + (y⁺ₖ − yₖ)aₖ))
//	u⁺ = u + (1/n)(y⁺ₖ − yₖ)aₖ
//	x̃⁺ = x⁺ + θ(x⁺ − x)
//
// where u = (1/n)Σᵢ yᵢaᵢ. The primal step sees the change of the sampled
// dual at full weight, an unbiased estimate of the change of n·u, while u
// itself changes by 1/n of it. It touches every coordinate: O(d).
func (s *wxSPDC) iterate() {
	loss, bs := s.prob.Loss, s.prob.B
	tau, theta := s.tau, s.theta
	a := 1 / (1 + tau*s.en.Lambda)
	l1 := tau * s.en.L1
	invN := 1 / float64(s.n)
	for range s.n {
		k := s.rng.IntN(s.n)
		val, idx := s.x.Row(k)
		zt := kernels.SparseDot(val, idx, s.xt)
		var yk float64
		if s.dualFree {
			yk = s.dualFreeStep(k, zt)
		} else {
			yk = spdcDualStep(loss, s.y[k], zt, s.sigma, bs[k])
		}
		dy := yk - s.y[k]
		s.y[k] = yk
		if dy != 0 {
			for i, j := range idx {
				s.w[j] = dy * val[i]
			}
		}
		if s.plain {
			for j, xj := range s.xv {
				v := xj - tau*(s.u[j]+s.w[j])
				var xn float64
				if l1 == 0 {
					xn = v * a
				} else if m := math.Abs(v) - l1; m > 0 {
					xn = math.Copysign(m, v) * a
				}
				s.xt[j] = xn + theta*(xn-xj)
				s.xv[j] = xn
			}
		} else {
			for j, xj := range s.xv {
				xn := s.reg.ProxCoord(j, xj-tau*(s.u[j]+s.w[j]), tau)
				s.xt[j] = xn + theta*(xn-xj)
				s.xv[j] = xn
			}
		}
		if dy != 0 {
			kernels.SparseAxpy(dy*invN, val, idx, s.u)
			for _, j := range idx {
				s.w[j] = 0
			}
		}
	}
	s.sampled += int64(s.n)
}

// spdcDualStep is the dual step of Ada-SPDC (Algorithm 5):
//
//	y⁺ₖ = prox_{σφₖ*}(yₖ + σaₖᵀx̃) = argmin_y φₖ*(y) − y·aₖᵀx̃ + (y − yₖ)²/(2σ),
//
// the loss's DualProx.
func spdcDualStep(loss objective.Loss, yk, zt, sigma, b float64) float64 {
	return loss.DualProx(yk, zt, sigma, b)
}

// RunEpochs runs k passes; the adaptive methods certify after each pass
// and adapt every T passes (wx_adapt.go).
func (s *wxSPDC) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := range k {
		if ctx.Err() != nil {
			return e, nil
		}
		s.certValid = false
		if s.adapt != nil && len(s.adapt.gaps) == 0 {
			tp := s.certificate()
			s.adapt.observe(tp)
		}
		s.iterate()
		if s.adapt != nil {
			tp := s.certificate()
			if s.adapt.observe(tp) {
				s.delta = s.adapt.delta
				s.stepSizes()
			}
		}
	}
	return k, nil
}

// certificate returns P(x) and the better of two dual values: D at the
// method's own duals y (Ada-SPDC's prox iterates, or DF-SPDC's
// yₖ = φₖ'(vₖ), both in dom φ*), and D at yₖ = φₖ'(aₖᵀx), the dual point
// of Certify. Weak duality holds for each, so P − max(D) bounds P(x) − P*.
// It also recomputes u = (1/n)Σₖ yₖaₖ from y, which the iteration keeps by
// increments that drift by rounding.
func (s *wxSPDC) certificate() driver.TracePoint {
	if s.certValid {
		return s.cert
	}
	n := float64(s.n)
	clear(s.u)
	for k := 0; k < s.n; k++ {
		val, idx := s.x.Row(k)
		kernels.SparseAxpy(s.y[k]/n, val, idx, s.u)
	}
	c, err := s.eval.At(s.xv, s.y, objective.BetterDuals)
	if err != nil {
		panic(err) // a bug: the lengths are the method's own
	}
	s.cert, s.certValid = driver.TracePointOf(c), true
	return s.cert
}

// The driver's view of a run (driver.go).

func (s *wxSPDC) Certify() (driver.TracePoint, error) { return s.certificate(), nil }
func (s *wxSPDC) Point() []float64                    { return s.xv }
func (s *wxSPDC) Passes() float64                     { return float64(s.sampled) / float64(s.n) }
func (s *wxSPDC) Threads() int                        { return 1 }
func (s *wxSPDC) DivergenceHint() string {
	return "normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), lower CoordinateSettings.StepScale, or raise λ (ElasticNet.Lambda)"
}
