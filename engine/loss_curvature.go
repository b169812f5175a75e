package engine

// curvedLoss is implemented by the losses with a second derivative, or for
// the squared and smoothed hinges the generalised one (the derivative of the
// piecewise-linear φ′, taken as its right-hand value at the kinks). The
// Newton method needs it; a loss without it is refused by that method.
type curvedLoss interface {
	Loss
	// Deriv2 returns ∂²φ(z, b)/∂z², or a generalised second derivative
	// where φ′ has kinks. It is ≥ 0 and finite for finite z.
	Deriv2(z, b float64) float64
}

// Deriv2 returns 1.
func (Squared) Deriv2(z, b float64) float64 { return 1 }

// Deriv2 returns s(1 − s) with s = 1/(1 + e^{−bz}), the variance of the
// Bernoulli label the model predicts.
func (Logistic) Deriv2(z, b float64) float64 {
	s := logisticSigmoid(-b * z)
	return s * (1 - s)
}

// Deriv2 returns 2 where the margin bz is below 1 and 0 elsewhere: the
// generalised Hessian of Mangasarian (2002) that LIBLINEAR's -s 2 uses.
func (SquaredHinge) Deriv2(z, b float64) float64 {
	if b*z < 1 {
		return 2
	}
	return 0
}

// Deriv2 returns 1/S on the quadratic piece 1 − S < bz < 1 and 0 elsewhere.
func (h SmoothHinge) Deriv2(z, b float64) float64 {
	s := h.smoothing()
	if m := b * z; m < 1 && m > 1-s {
		return 1 / s
	}
	return 0
}
