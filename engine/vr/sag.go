package vr

import (
	"context"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// SAG, the stochastic average gradient (Schmidt, Le Roux & Bach,
// "Minimizing Finite Sums with the Stochastic Average Gradient",
// Math. Programming 2017, Algorithm 1).
//
// SAG keeps the same table as SAGA (saga.go), gₖ = φ'(aₖᵀφₖ) per sample and
// ḡ = (1/n) Σₖ gₖaₖ, but steps along the new average itself, a biased
// estimate of lower variance:
//
//	g′ = φ'(aₖᵀx, bₖ),   ḡ ← ḡ + (g′ − gₖ)·aₖ/n,   gₖ ← g′,
//	x  ← prox_{ηg}(x − η·ḡ).
//
// Off row k, xⱼ ← prox_{ηg}(xⱼ − η·ḡⱼ) as in SAGA; on it the step already
// sees the new ḡⱼ, which in the coordinate store's terms is
// step(aₖ, u = dc = (g′ − gₖ)/n), then next.
//
// The step is η = 1/(16L), L = maxₖ‖aₖ‖²/γ, for which the paper's
// Theorem 1 proves linear convergence (it reports 1/L as often faster in
// practice: CoordinateSettings.StepScale multiplies the step, up to 2). The paper
// treats smooth objectives; the proximal step for the L1 part is the usual
// extension, without the paper's proof. The table starts at the starting
// point's gradients (one pass, not counted in Passes), rather than the
// paper's zeros with the average over the samples seen so far.

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverSAG,
			Reads:          []string{driver.CoordinateFamily},
			Takes:          driver.Takes{L1: true},
			Summary:        "SAG, stochastic average gradient with a proximal step, lazy on sparse data (Schmidt, Le Roux & Bach 2017)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "elastic net with λ ≥ 0 (the lasso too, not λ = L1 = 0), optional centre",
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    42,
		Accepts: acceptsVR,
		Start:   startSAG,
	})
}

func startSAG(_ context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	t, err := newTableMethod(prob, opt, 16, "1/(16L)")
	if err != nil {
		return nil, err
	}
	t.epoch = t.epochSAG
	return t, nil
}

// epochSAG runs n iterations of SAG (see above).
func (t *tableMethod) epochSAG() {
	st, loss, b := t.store, t.loss, t.prob.B
	invN := 1 / float64(t.n)
	for range t.n {
		k := t.rng.IntN(t.n)
		val, idx := t.row(k)
		g := loss.Deriv(st.dot(val, idx), b[k])
		if delta := g - t.table[k]; delta != 0 {
			t.table[k] = g
			st.step(val, idx, delta*invN, delta*invN)
		}
		st.next()
	}
	t.rows += int64(t.n)
}
