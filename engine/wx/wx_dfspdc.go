package wx

import (
	"context"
	"math"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// The dual-free SPDC of Wang & Xiao 2017 (§4.2): DF-SPDC, Algorithm 7 with
// fixed steps (the paper's "Algorithm 5" in §5 is a typo for it), solver
// "dfspdc", and ADF-SPDC, Algorithm 7 with the robust adaptation rule of
// Algorithm 4 (wx_adapt.go), solver "adfspdc". They replace the Euclidean
// distance of SPDC's dual prox by the Bregman divergence of φₖ* itself
// (Lan & Zhou 2015), so that the dual step needs only φₖ', never a prox
// of φₖ*: this suits the logistic loss, whose dual prox has no closed form.
// The primal step, the sampling and the certificate are Ada-SPDC's
// (wx_spdc.go).

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         "dfspdc",
			Reads:        []string{driver.CoordinateFamily},
			Takes:        driver.Takes{L1: true},
			Summary:      "DF-SPDC: dual-free SPDC, Bregman dual step with φ' only (Wang & Xiao 2017, Alg. 7, Δ = 0); serial, O(d) per iteration",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0",
			Certified:    true,
		},
		Rank:    33,
		Accepts: acceptsWX,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newWXSPDC(prob, opt, true, false)
		},
	})
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         "adfspdc",
			Reads:        []string{driver.CoordinateFamily},
			Takes:        driver.Takes{L1: true},
			Summary:      "ADF-SPDC: dual-free SPDC with Δ (strong convexity from data) adapted every 10 passes (Wang & Xiao 2017, Alg. 7 + 4); serial, O(d) per iteration",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0",
			Certified:    true,
		},
		Rank:    34,
		Accepts: acceptsWX,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newWXSPDC(prob, opt, true, true)
		},
	})
}

// dualFreeSteps sets σ, τ and θ of Theorem 4 from λ + Δ, with nΔ for the
// paper's δμ²:
//
//	σ  = (1/4R)·√(γ(nλ + δμ²)),   τ = (1/4R)·√(γ/(nλ + δμ²))      (Eq. 15)
//	θx = (1 − τσδμ²/(n(4 + 2σ)))/(1 + τλ)                           (Eq. 16,
//	θy = (1 + ((n−1)/n)σ/2)/(1 + σ/2),   θ = max(θx, θy)            with the
//
// erratum's n(4 + 2σ)). σ here is the weight of the Bregman step, not a
// Euclidean step, so it carries γ in the numerator. CoordinateSettings.StepScale
// multiplies σ and τ.
func (s *wxSPDC) dualFreeSteps() {
	n, c := float64(s.n), s.opt.Coordinate().StepScale
	str := n * (s.lam + s.delta)
	s.sigma = c / (4 * s.rmax) * math.Sqrt(s.gamma*str)
	s.tau = c / (4 * s.rmax) * math.Sqrt(s.gamma/str)
	thx := (1 - s.tau*s.sigma*s.delta/(4+2*s.sigma)) / (1 + s.tau*s.lam) // δμ²/n = Δ
	thy := (1 + (n-1)/n*s.sigma/2) / (1 + s.sigma/2)
	s.theta = math.Max(thx, thy)
}

// dualFreeStep is the dual step of Algorithm 7 for the sampled k: with the
// kernel h = φₖ* in the Bregman divergence D_h(y, yₖ), the step
//
//	y⁺ₖ = argmin_y φₖ*(y) − y·aₖᵀx̃ + D_h(y, yₖ)/σ
//
// is, by Lemma 1, y⁺ₖ = φₖ'(v⁺ₖ) with
//
//	v⁺ₖ = (vₖ + σ·aₖᵀx̃)/(1 + σ),
//
// where vₖ = (φₖ*)'(yₖ) is kept instead of being recomputed: a running
// average of the margins aₖᵀx̃ at which k was drawn. No prox of φₖ* is
// needed, only φₖ'.
func (s *wxSPDC) dualFreeStep(k int, zt float64) float64 {
	v := (s.v[k] + s.sigma*zt) / (1 + s.sigma)
	s.v[k] = v
	b := s.prob.B[k]
	return s.prob.Loss.DualFeasible(s.prob.Loss.Deriv(v, b), b)
}
