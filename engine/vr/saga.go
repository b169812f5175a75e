package vr

import (
	"context"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// SAGA (Defazio, Bach & Lacoste-Julien, "SAGA: A Fast Incremental Gradient
// Method With Support for Non-Strongly Convex Composite Objectives",
// NIPS 2014).
//
// The method keeps a table of the last gradient seen for each sample; for
// a linear model that is one scalar gₖ = φ'(aₖᵀφₖ) per sample, with the
// table average ḡ = (1/n) Σₖ gₖaₖ kept as a dense vector. An iteration
// draws k uniformly and takes (the paper's Section 2, steps 1–3)
//
//	g′   = φ'(aₖᵀx, bₖ)
//	x    ← prox_{ηg}( x − η·((g′ − gₖ)·aₖ + ḡ) )
//	ḡ    ← ḡ + (g′ − gₖ)·aₖ/n,   gₖ ← g′,
//
// an unbiased gradient estimate whose variance vanishes at the optimum.
// Off row k the update is xⱼ ← prox_{ηg}(xⱼ − η·ḡⱼ) with ḡⱼ constant
// until a row touches j, which the coordinate store applies lazily: in its
// terms step(aₖ, u = g′ − gₖ, dc = (g′ − gₖ)/n), then next.
//
// The step is η = 1/(3L) (Theorem 1 and the paper's recommendation for
// both the strongly and the non-strongly convex case), L = maxₖ‖aₖ‖²/γ;
// CoordinateSettings.StepScale multiplies it. The table starts at the gradients of
// the starting point (one pass, not counted in Passes), so that ḡ is the
// true gradient of f there.

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverSAGA,
			Reads:          []string{driver.CoordinateFamily},
			Takes:          driver.Takes{L1: true},
			Summary:        "SAGA, proximal incremental gradient with a gradient table, lazy on sparse data (Defazio, Bach & Lacoste-Julien 2014)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "elastic net with λ ≥ 0 (the lasso too, not λ = L1 = 0), optional centre",
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    40, // after adaptreg, which is parallel and measured faster on the lasso
		Accepts: acceptsVR,
		Start:   startSAGA,
	})
}

// tableMethod is SAG or SAGA: the shared state and the gradient table.
type tableMethod struct {
	*vrMethod
	table []float64 // gₖ, the last φ' seen for sample k
}

// newTableMethod builds the state of SAG or SAGA at the starting point,
// with the step StepScale/(div·L).
func newTableMethod(prob objective.Problem, opt driver.Options, div float64, rule string) (*tableMethod, error) {
	v, err := newVRMethod(prob, opt, div, rule)
	if err != nil {
		return nil, err
	}
	t := &tableMethod{vrMethod: v, table: make([]float64, v.n)}
	gbar := make([]float64, v.d)
	t.gradientTable(v.xcur, t.table, gbar)
	v.store.reset(v.xcur, gbar)
	return t, nil
}

func startSAGA(_ context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	t, err := newTableMethod(prob, opt, 3, "1/(3L)")
	if err != nil {
		return nil, err
	}
	t.epoch = t.epochSAGA
	return t, nil
}

// epochSAGA runs n iterations of SAGA (see above).
func (t *tableMethod) epochSAGA() {
	st, loss, b := t.store, t.loss, t.prob.B
	invN := 1 / float64(t.n)
	for range t.n {
		k := t.rng.IntN(t.n)
		val, idx := t.row(k)
		g := loss.Deriv(st.dot(val, idx), b[k])
		if delta := g - t.table[k]; delta != 0 {
			t.table[k] = g
			st.step(val, idx, delta, delta*invN)
		}
		st.next()
	}
	t.rows += int64(t.n)
}
