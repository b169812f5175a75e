package objective

import "math"

// Hinge is the hinge loss φ(z, b) = max(0, 1 − b·z) of the linear SVM
// (LIBLINEAR's -s 3 dual solver), with labels b = ±1. Its conjugate is
// φ*(y, b) = b·y for b·y ∈ [−1, 0] and +Inf elsewhere: linear on its
// domain, so γ = 0, and only the methods that need no smoothness (SDCA,
// Pdprox, the AdaptSmooth reduction) take it. It is SmoothHinge's limit as
// S → 0.
type Hinge struct{}

// Name returns "hinge".
func (Hinge) Name() string { return "hinge" }

// Value returns max(0, 1 − b·z).
func (Hinge) Value(z, b float64) float64 { return max(0, 1-b*z) }

// Deriv returns a subgradient: −b where b·z < 1, and 0 from the kink on.
func (Hinge) Deriv(z, b float64) float64 {
	if b*z < 1 {
		return -b
	}
	return 0
}

// Conj returns b·y if b·y ∈ [−1, 0] and +Inf otherwise.
func (Hinge) Conj(y, b float64) float64 {
	by := b * y
	if !(by >= -1 && by <= 0) {
		return math.Inf(1)
	}
	return by
}

// Gamma returns 0: φ* is linear on its domain.
func (Hinge) Gamma() float64 { return 0 }

// DualProx returns y0 + σ(z − b) with b·y clipped to [−1, 0]: the
// objective is a one-dimensional quadratic on an interval. With σ = +Inf
// it is the subgradient Deriv picks.
func (h Hinge) DualProx(y0, z, sigma, b float64) float64 {
	if math.IsInf(sigma, 1) {
		if math.IsNaN(y0) || math.IsNaN(z) {
			return math.NaN()
		}
		return h.Deriv(z, b)
	}
	y := quadraticDualProx(y0, z-b, sigma, 0)
	return b * min(max(b*y, -1), 0)
}

// Classification returns true.
func (Hinge) Classification() bool { return true }

// DualFeasible projects b·y onto [−1, 0].
func (Hinge) DualFeasible(y, b float64) float64 { return b * min(max(b*y, -1), 0) }

// DualStart returns 0.
func (Hinge) DualStart(b float64) float64 { return 0 }
