package vr

import (
	"context"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// SVRG, stochastic variance-reduced gradient (Johnson & Zhang, "Accelerating
// Stochastic Gradient Descent using Predictive Variance Reduction",
// NIPS 2013), in its proximal form Prox-SVRG (Xiao & Zhang, SIAM J. Optim.
// 2014, Algorithm 1).
//
// Each outer loop takes a snapshot x̃ of the current point and the full
// gradient μ = ∇f(x̃) = (1/n) Σₖ sₖaₖ with sₖ = φ'(aₖᵀx̃), keeping the
// scalars sₖ; then m inner iterations draw k uniformly and take
//
//	x ← prox_{ηg}( x − η·((φ'(aₖᵀx) − sₖ)·aₖ + μ) ),
//
// so an inner iteration reads one row. Off row k the map is
// xⱼ ← prox_{ηg}(xⱼ − η·μⱼ) with μ constant for the whole loop, which the
// coordinate store applies lazily: reset(x̃, μ), then per iteration
// step(aₖ, u = φ'(aₖᵀx) − sₖ, dc = 0) and next. The next snapshot is the
// last inner iterate (Johnson & Zhang's option I; Prox-SVRG averages).
//
// One epoch is one outer loop: the full gradient and m = 2n inner
// iterations, the papers' choice for convex problems, so three passes
// over the data (Passes counts them). The step is η = 1/(10L) (both
// papers' η = 0.1/L), L = maxₖ‖aₖ‖²/γ; CoordinateSettings.StepScale multiplies it.

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverSVRG,
			Reads:          []string{driver.CoordinateFamily},
			Takes:          driver.Takes{L1: true},
			Summary:        "SVRG, proximal stochastic variance-reduced gradient, lazy on sparse data (Johnson & Zhang 2013; Xiao & Zhang 2014)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "elastic net with λ ≥ 0 (the lasso too, not λ = L1 = 0), optional centre",
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    41,
		Accepts: acceptsVR,
		Start:   startSVRG,
	})
}

// svrgInnerPerSample is m/n, the inner iterations per outer loop over the
// number of samples.
const svrgInnerPerSample = 2

// svrgMethod is SVRG's state: the snapshot's scalars and gradient.
type svrgMethod struct {
	*vrMethod
	snap  []float64 // sₖ = φ'(aₖᵀx̃)
	mu    []float64 // μ = ∇f(x̃)
	xsnap []float64 // x̃
}

func startSVRG(_ context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	v, err := newVRMethod(prob, opt, 10, "1/(10L)")
	if err != nil {
		return nil, err
	}
	s := &svrgMethod{vrMethod: v, snap: make([]float64, v.n), mu: make([]float64, v.d), xsnap: make([]float64, v.d)}
	v.store.reset(v.xcur, nil)
	v.epoch = s.outerLoop
	return s, nil
}

// outerLoop runs one outer loop of SVRG (see above).
func (s *svrgMethod) outerLoop() {
	st, loss, b := s.store, s.loss, s.prob.B
	st.read(s.xsnap)
	s.gradientTable(s.xsnap, s.snap, s.mu)
	st.reset(s.xsnap, s.mu)
	inner := svrgInnerPerSample * s.n
	for range inner {
		k := s.rng.IntN(s.n)
		val, idx := s.row(k)
		if delta := loss.Deriv(st.dot(val, idx), b[k]) - s.snap[k]; delta != 0 {
			st.step(val, idx, delta, 0)
		}
		st.next()
	}
	s.rows += int64(inner + s.n)
}
