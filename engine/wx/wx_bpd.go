package wx

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// The batch primal-dual methods of Wang & Xiao 2017 (§2): BPD, Chambolle and
// Pock's algorithm (Algorithm 1) with the steps of Theorem 1 for Δ = 0,
// solver "bpd", and Ada-BPD (Algorithm 2 with the robust rule of
// Algorithm 4, wx_adapt.go), solver "adabpd".
//
// The paper writes the batch problem as min f(Ax) + g(x). Ours is
// f(z) = (1/n)Σₖ φ(zₖ, bₖ), whose conjugate in the paper's dual variable
// ŷ = y/n is f*(ŷ) = (1/n)Σₖ φ*(nŷₖ): f* is nγ-strongly convex, f is
// δ/n-strongly convex, and the paper's δμ² (of f) is our Δ = δμ²/n (of P).
// In our duals yₖ, the dual prox of σ_f·f* is the loss's own dual prox
// with the step σ = n·σ_f, and the primal step sees Aᵀŷ = (1/n)Aᵀy.

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         "bpd",
			Reads:        []string{driver.CoordinateFamily},
			Takes:        driver.Takes{L1: true},
			Summary:      "BPD: batch primal-dual (Chambolle–Pock) with steps from ‖A‖₂ and λ (Wang & Xiao 2017, Alg. 1, Thm 1 with Δ = 0)",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0",
			Certified:    true,
		},
		Rank:    30,
		Accepts: acceptsBPD,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newWXBPD(ctx, prob, opt, false)
		},
	})
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         "adabpd",
			Reads:        []string{driver.CoordinateFamily},
			Takes:        driver.Takes{L1: true},
			Summary:      "Ada-BPD: batch primal-dual with Δ (strong convexity from data) adapted every 10 iterations (Wang & Xiao 2017, Alg. 2 + 4)",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0",
			Certified:    true,
		},
		Rank:    31,
		Accepts: acceptsBPD,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newWXBPD(ctx, prob, opt, true)
		},
	})
}

// acceptsBPD is acceptsWX (the batch method has no m either) with the step
// scale at most 1: Theorem 1's steps already meet the Chambolle–Pock bound
// σ_f·τ·‖A‖² = 1.
func acceptsBPD(prob objective.Problem, opt driver.Options) error {
	if err := acceptsWX(prob, opt); err != nil {
		return err
	}
	if opt.Coordinate().StepScale > 1 {
		return fmt.Errorf("engine: %s's steps are at the Chambolle–Pock bound στ‖A‖² = 1 already: step scale %g would leave it (use ≤ 1)", opt.Solver, opt.Coordinate().StepScale)
	}
	return nil
}

// wxBPD is the state of a BPD or Ada-BPD run. Besides x and y it keeps
// z = Ax and the previous zPrev = Ax⁻, so that Ax̃ = z + θ(z − zPrev) needs
// no product of its own and P(x) comes with every iteration.
type wxBPD struct {
	prob      objective.Problem
	opt       driver.Options
	x         *sparse.CSR
	n, d      int
	lam       float64
	gamma     float64
	reg       objective.Separable
	norm      float64 // L = ‖A‖₂
	adapt     *wxAdapter
	delta     float64
	sigma     float64 // σ = n·σ_f, the step of the loss's dual prox
	tau       float64
	theta     float64
	xv, u     []float64
	y         []float64
	z, zPrev  []float64
	zValid    bool // z = Ax for the current x
	first     bool // no previous x yet: x̃ = x
	iters     int64
	cert      driver.TracePoint
	certValid bool
	eval      *objective.Evaluator
}

func newWXBPD(ctx context.Context, prob objective.Problem, opt driver.Options, adaptive bool) (*wxBPD, error) {
	x := prob.X
	s := &wxBPD{prob: prob, opt: opt, x: x, n: x.Rows, d: x.Cols, first: true}
	s.reg = prob.Reg.(objective.Separable) // acceptsWX checked
	s.eval = driver.NewEvaluator(prob, opt.Threads)
	s.lam = prob.Reg.StrongConvexity()
	s.gamma = prob.Loss.Gamma()
	// ‖A‖₂ by Lanczos over one block holding every row (blocks.SpectralNorms).
	part, err := blocks.Contiguous(s.n, s.n)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	norms, err := blocks.SpectralNormsContext(ctx, x, part, blocks.DefaultTolerance, opt.Threads)
	if err != nil {
		return nil, fmt.Errorf("engine: spectral norm: %w", err)
	}
	s.norm = norms[0]
	if !(s.norm > 0) || math.IsInf(s.norm, 1) {
		return nil, errors.New("engine: every row of the data is zero")
	}
	n := float64(s.n)
	if kappa := s.norm * s.norm / (n * s.lam * s.gamma); !(kappa <= driver.MaxConditionNumber) {
		return nil, fmt.Errorf("engine: λ = %g is too small for this data: ‖A‖²/(nλγ) = %.3g is above %g, where the steps break down in float64", s.lam, kappa, driver.MaxConditionNumber)
	}
	if adaptive {
		cap := s.norm * s.norm / (n * s.gamma)
		s.adapt = newWXAdapter(wxInitialDelta(s.lam, cap), cap, false)
		s.delta = s.adapt.delta
	}
	s.stepSizes()
	s.xv = make([]float64, s.d)
	s.u = make([]float64, s.d)
	s.y = make([]float64, s.n)
	s.z = make([]float64, s.n)
	s.zPrev = make([]float64, s.n)
	if opt.WarmStart != nil {
		copy(s.xv, opt.WarmStart)
	}
	// y⁰ₖ = φ'(aₖᵀx⁰), u⁰ = (1/n)Aᵀy⁰.
	s.product()
	loss := prob.Loss
	for k := range s.n {
		b := prob.B[k]
		s.y[k] = loss.DualFeasible(loss.Deriv(s.z[k], b), b)
		val, idx := x.Row(k)
		kernels.SparseAxpy(s.y[k]/n, val, idx, s.u)
	}
	return s, nil
}

// stepSizes sets σ, τ and θ of Theorem 1 from λ + Δ. In the paper's
// variables (Eq. 7–8), with L = ‖A‖₂, γ_f = nγ and δ_f = δ/n,
//
//	σ_f = (1/L)·√((λ + δ_fμ²)/γ_f),   τ = (1/L)·√(γ_f/(λ + δ_fμ²)),
//	θx = (1 − δ_f/(δ_f + 2σ_f)·μ²/L²)/(1 + τλ),   θy = 1/(1 + σ_fγ_f/2),
//
// so with Δ = δ_fμ² and σ = nσ_f:
//
//	σ = (1/L)·√(n(λ + Δ)/γ),   τ = (1/L)·√(nγ/(λ + Δ)),
//	θx = (1 − nΔ/((δ + 2σ)L²))/(1 + τλ),   θy = 1/(1 + σγ/2).
//
// θx needs δ apart from Δ; we take its largest value δ = 1/γ (γδ ≤ 1),
// which gives the largest θx. θ = max(θx, θy). CoordinateSettings.StepScale (≤ 1)
// multiplies σ and τ.
func (s *wxBPD) stepSizes() {
	n, c, l := float64(s.n), s.opt.Coordinate().StepScale, s.norm
	str := s.lam + s.delta
	s.sigma = c / l * math.Sqrt(n*str/s.gamma)
	s.tau = c / l * math.Sqrt(n*s.gamma/str)
	delta := 1 / s.gamma
	thx := (1 - n*s.delta/((delta+2*s.sigma)*l*l)) / (1 + s.tau*s.lam)
	thy := 1 / (1 + s.sigma*s.gamma/2)
	s.theta = math.Max(thx, thy)
}

// product sets z = Ax.
func (s *wxBPD) product() {
	for k := range s.n {
		val, idx := s.x.Row(k)
		s.z[k] = kernels.SparseDot(val, idx, s.xv)
	}
	s.zValid = true
}

// iterate runs one iteration of Algorithm 1 (Chambolle–Pock), in our
// variables:
//
//	y⁺ₖ = prox_{σφₖ*}(yₖ + σaₖᵀx̃)   for every k (the loss's DualProx)
//	x⁺  = prox_{τg}(x − τ(1/n)Aᵀy⁺)
//	x̃⁺  = x⁺ + θ(x⁺ − x)
//
// Ax̃ is formed as z + θ(z − zPrev) from z = Ax and zPrev = Ax⁻, so an
// iteration reads the data twice (Ax and Aᵀy⁺), a pass as the paper counts
// it.
func (s *wxBPD) iterate() {
	if !s.zValid {
		s.product()
	}
	loss, bs := s.prob.Loss, s.prob.B
	n := float64(s.n)
	clear(s.u)
	theta := s.theta
	if s.first {
		theta = 0 // x̃⁰ = x⁰
	}
	for k := range s.n {
		zt := s.z[k] + theta*(s.z[k]-s.zPrev[k])
		s.y[k] = loss.DualProx(s.y[k], zt, s.sigma, bs[k])
		val, idx := s.x.Row(k)
		kernels.SparseAxpy(s.y[k]/n, val, idx, s.u)
	}
	for j, xj := range s.xv {
		s.xv[j] = s.reg.ProxCoord(j, xj-s.tau*s.u[j], s.tau)
	}
	s.z, s.zPrev = s.zPrev, s.z
	s.zValid, s.first = false, false
	s.iters++
}

// adaptGap returns the certificate Ada-BPD adapts by, at the point an
// iteration starts from, (x, y): objective's, from the margins z = Ax and
// the running u = (1/n)Aᵀy of the previous iteration, so that it reads no
// row of the data (AtMarginsDualVector). It is an estimate that steers Δ:
// u carries the rounding of its increments, and the certificate the
// driver sees takes v from y (Certify).
func (s *wxBPD) adaptGap() (driver.TracePoint, error) {
	if !s.zValid {
		s.product()
	}
	c, err := s.eval.AtMarginsDualVector(s.xv, s.z, s.y, s.u)
	return driver.TracePointOf(c), err
}

// RunEpochs runs k iterations (an epoch of a batch method is one
// iteration); Ada-BPD adapts every T of them, by the gaps at the points
// the iterations start from.
func (s *wxBPD) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := range k {
		if ctx.Err() != nil {
			return e, nil
		}
		s.certValid = false
		var tp driver.TracePoint
		if s.adapt != nil {
			var err error
			if tp, err = s.adaptGap(); err != nil {
				return e, err
			}
		}
		s.iterate()
		if s.adapt != nil && s.adapt.observe(tp) {
			s.delta = s.adapt.delta
			s.stepSizes()
		}
	}
	return k, nil
}

// The driver's view of a run (driver.go).

func (s *wxBPD) Certify() (driver.TracePoint, error) {
	if !s.certValid {
		if !s.zValid {
			s.product()
		}
		c, err := s.eval.AtMargins(s.xv, s.z, s.y, objective.OwnDuals)
		if err != nil {
			return driver.TracePoint{}, err
		}
		s.cert, s.certValid = driver.TracePointOf(c), true
	}
	return s.cert, nil
}
func (s *wxBPD) Point() []float64 { return s.xv }
func (s *wxBPD) Passes() float64  { return float64(s.iters) }
func (s *wxBPD) Threads() int     { return 1 }
func (s *wxBPD) DivergenceHint() string {
	return "normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), lower CoordinateSettings.StepScale, or raise λ (ElasticNet.Lambda)"
}
