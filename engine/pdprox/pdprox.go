package pdprox

import (
	"context"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

// Pdprox is the primal dual prox method of Yang, Mahdavi, Jin and Zhu, "An
// Efficient Primal Dual Prox Method for Non-Smooth Optimization" (Machine
// Learning 2015, arXiv 1201.5283), for a loss with a bilinear dual (hinge,
// absolute, ε-insensitive, quantile) and a regularizer with a cheap prox
// (L1, L2, elastic net, group lasso). It is a deterministic, full-batch
// method: every iteration reads all the data twice, and the averaged
// iterates converge at the rate O(1/T) in the duality gap (Theorem 6),
// without smoothness or strong convexity.
//
// Three solvers share this file:
//
//   - "pdprox-dual": Algorithm 1, with an extra dual variable β updated by a
//     second prox mapping.
//   - "pdprox-noproj": Algorithm 3, Algorithm 1 with β's prox mapping
//     replaced by a simple update (Section 4.4); it is Chambolle–Pock with
//     θ = 1 (Appendix C, Eq. 22).
//   - "pdprox-primal": Algorithm 2, with an extra primal variable u.
const (
	SolverPdproxDual   driver.Solver = "pdprox-dual"
	SolverPdproxPrimal driver.Solver = "pdprox-primal"
	SolverPdproxNoProj driver.Solver = "pdprox-noproj"
)

// pdproxNormTol is the relative accuracy of ‖A‖ from blocks.SpectralNorms;
// the norm is inflated by it (pdproxNormSlack) because Lanczos gives a
// lower bound, and the step must not exceed 1/√(2c).
const (
	pdproxNormTol   = 1e-6
	pdproxNormSlack = 1e-5
)

func init() {
	for _, s := range []struct {
		name    driver.Solver
		summary string
		rank    int
	}{
		{SolverPdproxDual, "primal dual prox method, extra dual prox step (Yang et al. 2015, Alg. 1)", 30},
		{SolverPdproxNoProj, "primal dual prox method, extra dual update without projection = Chambolle–Pock θ = 1 (Yang et al. 2015, Alg. 3)", 31},
		{SolverPdproxPrimal, "primal dual prox method, extra primal variable (Yang et al. 2015, Alg. 2)", 32},
	} {
		driver.Register(&driver.Entry{
			SolverInfo: driver.SolverInfo{
				Name:         s.name,
				Summary:      s.summary,
				Losses:       "non-smooth with a bilinear dual (hinge, absolute, epsinsensitive, quantile)",
				Regularizers: "elastic net incl. pure L1 (λ = 0), group lasso",
				Certified:    true,
				Reads:        []string{driver.CoordinateFamily},
				Takes:        driver.Takes{L1: true, Groups: true},
			},
			Rank:    s.rank,
			Accepts: acceptsPdprox,
			Start:   startPdprox,
		})
	}
}

// acceptsPdprox takes the losses with a bilinear dual and any regularizer
// (Pdprox only needs its prox), one block of one sample per iteration
// (the options of the coordinate methods mean nothing to a full-batch
// method).
func acceptsPdprox(prob objective.Problem, opt driver.Options) error {
	switch prob.Loss.(type) {
	case objective.Hinge, objective.Absolute, objective.EpsInsensitive, objective.Quantile:
	default:
		return fmt.Errorf("engine: %s takes the losses with a bilinear dual (hinge, absolute, epsinsensitive, quantile), not %s; for a smooth loss use adaspdc", opt.Solver, prob.Loss.Name())
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s is a full-batch method: it takes no CoordinateSettings.M (%d) or CoordinateSettings.BlockSize (%d)", opt.Solver, opt.Coordinate().M, opt.Coordinate().BlockSize)
	}
	return nil
}

// pdprox is the state of one run. The saddle-point problem is
//
//	min_x max_α L(x, α) = (1/n) Σₖ (αₖ·aₖᵀx − φ*(αₖ, bₖ)) + g(x),
//
// whose coupling K = A/n has ‖K‖² = c = ‖A‖²/n² (Lemma 3). With one step γ
// for both variables, the dual prox mapping
// α⁺ = argmax_α −(1/n)φ*(α) + (1/n)α·z − (α − α₀)²/(2γ) is
// Loss.DualProx(α₀, z, γ/n, b) coordinate by coordinate, and the primal one
// is x⁺ = prox_{γg}(x₀ − γ·(1/n)Aᵀα).
type pdprox struct {
	prob    objective.Problem
	variant driver.Solver
	n, d    int
	gamma   float64 // the step γ of both variables
	sigma   float64 // γ/n, the step of Loss.DualProx

	w     []float64 // x_t (w_t in the paper)
	u     []float64 // the extra primal variable (pdprox-primal)
	alpha []float64 // α_t
	beta  []float64 // the extra dual variable (pdprox-dual, -noproj)
	z     []float64 // A·w_t
	zPrev []float64 // A·w_{t−1} (pdprox-noproj)
	v     []float64 // (1/n)·Aᵀα_t
	vPrev []float64 // (1/n)·Aᵀα_{t−1} (pdprox-primal)
	tmp   []float64 // scratch, length d
	eval  *objective.Evaluator

	// Running sums of the iterates for the averages of Theorem 6, and of
	// their images A·w_t and (1/n)·Aᵀα_t so that a certificate reads no
	// data. With iters = 0 the average is the starting point.
	iters                      int
	sumW, sumAlpha, sumZ, sumV []float64
	dualScale                  float64 // the last certificate's s (see certify)
}

func startPdprox(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	x := prob.X
	n, d := x.Rows, x.Cols
	part, err := blocks.Contiguous(n, n)
	if err != nil {
		return nil, err
	}
	norms, err := blocks.SpectralNormsContext(ctx, x, part, pdproxNormTol, opt.Threads)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: the spectral norm of the data: %w", opt.Solver, err)
	}
	norm := norms[0] * (1 + pdproxNormSlack)
	if !(norm > 0) {
		norm = 1 // no coupling: any step is stable
	}
	// Theorem 6: γ = 1/√(2c) with c ≥ ‖A‖²/n², the Lipschitz constant of
	// the coupling's partial gradients (Lemma 3).
	gamma := opt.Coordinate().StepScale * float64(n) / (math.Sqrt2 * norm)
	m := &pdprox{
		prob: prob, variant: opt.Solver, n: n, d: d,
		gamma: gamma, sigma: gamma / float64(n),
		w: make([]float64, d), alpha: make([]float64, n), z: make([]float64, n),
		v: make([]float64, d), tmp: make([]float64, d),
		eval: driver.NewEvaluator(prob, opt.Threads),
		sumW: make([]float64, d), sumAlpha: make([]float64, n), sumZ: make([]float64, n), sumV: make([]float64, d),
		dualScale: 1,
	}
	if opt.WarmStart != nil {
		copy(m.w, opt.WarmStart)
	}
	m.mulA(m.z, m.w)
	for k, b := range prob.B {
		if opt.WarmStart != nil {
			m.alpha[k] = prob.Loss.DualFeasible(prob.Loss.Deriv(m.z[k], b), b)
		} else {
			m.alpha[k] = prob.Loss.DualStart(b)
		}
	}
	m.mulAT(m.v, m.alpha)
	switch m.variant {
	case SolverPdproxPrimal:
		m.u = append([]float64(nil), m.w...)
		m.vPrev = make([]float64, d)
	case SolverPdproxNoProj:
		m.beta = append([]float64(nil), m.alpha...)
		m.zPrev = make([]float64, n)
	default:
		m.beta = append([]float64(nil), m.alpha...)
	}
	return m, nil
}

// mulA sets z = A·w.
func (m *pdprox) mulA(z, w []float64) {
	x := m.prob.X
	for k := range m.n {
		val, idx := x.Row(k)
		z[k] = kernels.SparseDot(val, idx, w)
	}
}

// mulAT sets v = (1/n)·Aᵀα.
func (m *pdprox) mulAT(v, alpha []float64) {
	clear(v)
	x := m.prob.X
	inv := 1 / float64(m.n)
	for k, a := range alpha {
		if a != 0 {
			val, idx := x.Row(k)
			kernels.SparseAxpy(a*inv, val, idx, v)
		}
	}
}

// dualStep sets dst_k = DualProx(from_k, z_k, γ/n, b_k): the prox mapping
// α⁺ = Π[from + γ·∇_α L(w)] of the paper, with the projection onto the
// domain of φ* generalised to the prox of φ* (for the ε-insensitive loss
// φ* is piecewise linear rather than linear; for the other three it is
// the projection onto the box).
func (m *pdprox) dualStep(dst, from, z []float64) {
	loss, b, sigma := m.prob.Loss, m.prob.B, m.sigma
	for k := range dst {
		dst[k] = loss.DualProx(from[k], z[k], sigma, b[k])
	}
}

// step runs one iteration of the variant; writing G_α(w) = (1/n)(Aw − ∂φ*)
// and G_x(α) = (1/n)Aᵀα for the partial gradients of L (Section 4.2):
//
// pdprox-dual (Algorithm 1):
//
//	α_t = Π[β_{t−1} + γ·G_α(w_{t−1})]
//	w_t = prox_{γg}(w_{t−1} − γ·G_x(α_t))
//	β_t = Π[β_{t−1} + γ·G_α(w_t)]
//
// pdprox-noproj (Algorithm 3, Section 4.4): the same α_t and w_t, and
//
//	β_t = α_t + γ·(G_α(w_t) − G_α(w_{t−1})) = α_t + (γ/n)·A(w_t − w_{t−1}),
//
// so that α_{t+1} = Π[α_t + γ·G_α(2w_t − w_{t−1})]: Chambolle–Pock with
// θ = 1 (Appendix C, Eq. 22).
//
// pdprox-primal (Algorithm 2):
//
//	w_t = prox_{γg}(u_{t−1} − γ·G_x(α_{t−1}))
//	α_t = Π[α_{t−1} + γ·G_α(w_t)]
//	u_t = w_t − γ·(G_x(α_t) − G_x(α_{t−1}))
//
// where the last line is the "simple calculation" of Lemma 11: u_t is the
// gradient mapping from u_{t−1} with the same subgradient of g as w_t.
// Each iteration multiplies by A and by Aᵀ once.
func (m *pdprox) step() {
	reg, gamma := m.prob.Reg, m.gamma
	switch m.variant {
	case SolverPdproxPrimal:
		for j := range m.d {
			m.tmp[j] = m.u[j] - gamma*m.v[j]
		}
		reg.Prox(m.w, m.tmp, gamma)
		m.mulA(m.z, m.w)
		m.dualStep(m.alpha, m.alpha, m.z)
		m.v, m.vPrev = m.vPrev, m.v
		m.mulAT(m.v, m.alpha)
		for j := range m.d {
			m.u[j] = m.w[j] - gamma*(m.v[j]-m.vPrev[j])
		}
	default:
		// m.z holds A·w_{t−1}.
		m.dualStep(m.alpha, m.beta, m.z)
		m.mulAT(m.v, m.alpha)
		for j := range m.d {
			m.tmp[j] = m.w[j] - gamma*m.v[j]
		}
		reg.Prox(m.w, m.tmp, gamma)
		if m.variant == SolverPdproxNoProj {
			m.z, m.zPrev = m.zPrev, m.z
			m.mulA(m.z, m.w)
			for k := range m.n {
				m.beta[k] = m.alpha[k] + m.sigma*(m.z[k]-m.zPrev[k])
			}
		} else {
			m.mulA(m.z, m.w)
			m.dualStep(m.beta, m.beta, m.z)
		}
	}
	m.iters++
	kernels.Axpy(1, m.w, m.sumW)
	kernels.Axpy(1, m.alpha, m.sumAlpha)
	kernels.Axpy(1, m.z, m.sumZ)
	kernels.Axpy(1, m.v, m.sumV)
}

// RunEpochs runs k iterations: an epoch of Pdprox is one iteration, which
// reads the data twice.
func (m *pdprox) RunEpochs(ctx context.Context, k int) (int, error) {
	for i := range k {
		if ctx.Err() != nil {
			return i, nil
		}
		m.step()
	}
	return k, nil
}

// averages returns the averaged iterates x̄, ᾱ, A·x̄ and (1/n)·Aᵀᾱ (the
// starting point before the first iteration), in freshly allocated slices
// except for the starting point's.
func (m *pdprox) averages() (x, alpha, z, v []float64) {
	if m.iters == 0 {
		return m.w, m.alpha, m.z, m.v
	}
	inv := 1 / float64(m.iters)
	scale := func(s []float64) []float64 {
		out := make([]float64, len(s))
		for i, e := range s {
			out[i] = e * inv
		}
		return out
	}
	return scale(m.sumW), scale(m.sumAlpha), scale(m.sumZ), scale(m.sumV)
}

// Certify returns P at the averaged primal point x̄ and D at the averaged
// dual point ᾱ, the pair Theorem 6 bounds. The average of feasible duals is
// feasible; a coordinate that rounding put outside the domain is projected
// back by the certificate, which computes v̄ from the projected ᾱ, so that
// D is the dual objective of an actual dual point.
//
// When g* is an indicator (the lasso or the group lasso with λ = 0), D(ᾱ)
// is −Inf unless v̄ lies in its domain. Every domain of φ* here contains
// 0, so s·ᾱ is a dual point for s ∈ [0, 1], and the certificate takes the
// largest s for which g*(−s·v̄) is finite (objective.DualScale). As
// ᾱ → α*, s → 1. With unpenalised coordinates (a zero weight, or group
// −1) and λ = 0, the domain pins those coordinates of v̄ to 0 and s = 0 is
// the only choice unless they are: D is then 0 and the gap P.
func (m *pdprox) Certify() (driver.TracePoint, error) {
	x, alpha, _, _ := m.averages()
	c, err := m.eval.At(x, alpha, objective.OwnDuals)
	m.dualScale = m.eval.Scale()
	return driver.TracePointOf(c), err
}

// Point returns the averaged primal iterate x̄, the model Theorem 6
// certifies.
func (m *pdprox) Point() []float64 {
	if m.iters == 0 {
		return m.w
	}
	x := make([]float64, m.d)
	inv := 1 / float64(m.iters)
	for j, s := range m.sumW {
		x[j] = s * inv
	}
	return x
}

// Passes counts two reads of the data per iteration (A·w and Aᵀα).
func (m *pdprox) Passes() float64 { return 2 * float64(m.iters) }

func (m *pdprox) Threads() int { return 1 }

func (m *pdprox) DivergenceHint() string {
	return "Pdprox's step is γ = 1/√(2c) with c = ‖A‖²/n² (Theorem 6); an CoordinateSettings.StepScale above 1 leaves the paper's proof"
}

// Finish returns the averaged dual point of the final certificate, scaled
// as it was certified.
func (m *pdprox) Finish(res *driver.Result) error {
	_, alpha, _, _ := m.averages()
	duals := make([]float64, len(alpha))
	for k, a := range alpha {
		duals[k] = m.dualScale * m.prob.Loss.DualFeasible(a, m.prob.B[k])
	}
	res.Duals = duals
	return nil
}
