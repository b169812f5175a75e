package objective

import "math"

// The regression losses of this file are piecewise linear, like the hinge:
// their conjugates are linear (or, for the ε-insensitive loss, piecewise
// linear) on a bounded interval, so γ = 0 and only the methods that need no
// smoothness (Pdprox, SDCA, the AdaptSmooth reduction) take them. Yang et
// al. (Pdprox, Section 4.1) call this a bilinear dual form:
// φ(z, b) = max over y in the interval of y·(z − b) − (the ε term).
// Their dual proxes are one-dimensional quadratics on an interval, solved
// exactly by a clip (and, for ε, a soft-threshold first).

// Absolute is the absolute loss φ(z, b) = |z − b| of least absolute
// deviations (median) regression, for any real target b. Its conjugate is
// φ*(y, b) = b·y for |y| ≤ 1 and +Inf elsewhere.
type Absolute struct{}

// Name returns "absolute".
func (Absolute) Name() string { return "absolute" }

// Value returns |z − b|.
func (Absolute) Value(z, b float64) float64 { return math.Abs(z - b) }

// Deriv returns a subgradient: the sign of z − b, and 0 at z = b.
func (Absolute) Deriv(z, b float64) float64 {
	switch {
	case z > b:
		return 1
	case z < b:
		return -1
	}
	return 0
}

// Conj returns b·y if |y| ≤ 1 and +Inf otherwise.
func (Absolute) Conj(y, b float64) float64 {
	if !(y >= -1 && y <= 1) {
		return math.Inf(1)
	}
	return b * y
}

// Gamma returns 0: φ* is linear on its domain.
func (Absolute) Gamma() float64 { return 0 }

// DualProx returns y0 + σ(z − b) clipped to [−1, 1]. With σ = +Inf it is
// the subgradient Deriv picks.
func (a Absolute) DualProx(y0, z, sigma, b float64) float64 {
	if math.IsInf(sigma, 1) {
		return linearProxLimit(a, y0, z, b)
	}
	return min(max(quadraticDualProx(y0, z-b, sigma, 0), -1), 1)
}

// Classification returns false.
func (Absolute) Classification() bool { return false }

// DualFeasible clips y to [−1, 1].
func (Absolute) DualFeasible(y, b float64) float64 { return min(max(y, -1), 1) }

// DualStart returns 0.
func (Absolute) DualStart(b float64) float64 { return 0 }

// EpsInsensitive is the ε-insensitive loss φ(z, b) = max(0, |z − b| − ε) of
// support vector regression (LIBLINEAR's -s 13 with -p ε), for any real
// target b and ε = Epsilon ≥ 0 (ε = 0 is the absolute loss). Its conjugate
// is φ*(y, b) = b·y + ε|y| for |y| ≤ 1 and +Inf elsewhere: Yang et al.
// split y into α₁ − α₂ with α ≥ 0, α₁ + α₂ ≤ 1 to make it bilinear; the
// one variable y with the ε|y| term is the same problem, and its prox is a
// soft-threshold.
type EpsInsensitive struct{ Epsilon float64 }

// Name returns "epsinsensitive".
func (EpsInsensitive) Name() string { return "epsinsensitive" }

// Value returns max(0, |z − b| − ε).
func (l EpsInsensitive) Value(z, b float64) float64 { return max(0, math.Abs(z-b)-l.Epsilon) }

// Deriv returns a subgradient: the sign of z − b outside the tube
// |z − b| ≤ ε, and 0 inside it and on its edges.
func (l EpsInsensitive) Deriv(z, b float64) float64 {
	d := z - b
	switch {
	case d > l.Epsilon:
		return 1
	case d < -l.Epsilon:
		return -1
	}
	return 0
}

// Conj returns b·y + ε|y| if |y| ≤ 1 and +Inf otherwise.
func (l EpsInsensitive) Conj(y, b float64) float64 {
	if !(y >= -1 && y <= 1) {
		return math.Inf(1)
	}
	return b*y + l.Epsilon*math.Abs(y)
}

// Gamma returns 0: φ* is piecewise linear.
func (EpsInsensitive) Gamma() float64 { return 0 }

// DualProx returns argmin over |y| ≤ 1 of b·y + ε|y| − y·z + (y − y0)²/(2σ):
// the unconstrained minimiser is the soft-thresholding of y0 + σ(z − b) at
// σε, and the objective is convex in one variable, so clipping it to
// [−1, 1] is exact. For σ > 1 the threshold is applied to y0/σ + (z − b)
// at ε and the result scaled by σ, so nothing overflows. With σ = +Inf it is
// the subgradient Deriv picks.
func (l EpsInsensitive) DualProx(y0, z, sigma, b float64) float64 {
	if math.IsInf(sigma, 1) {
		return linearProxLimit(l, y0, z, b)
	}
	var y float64
	if sigma <= 1 {
		y = softThreshold(y0+sigma*(z-b), sigma*l.Epsilon)
	} else {
		r := 1 / sigma
		y = softThreshold(r*y0+(z-b), l.Epsilon) / r
	}
	return min(max(y, -1), 1)
}

// Classification returns false.
func (EpsInsensitive) Classification() bool { return false }

// DualFeasible clips y to [−1, 1].
func (EpsInsensitive) DualFeasible(y, b float64) float64 { return min(max(y, -1), 1) }

// DualStart returns 0.
func (EpsInsensitive) DualStart(b float64) float64 { return 0 }

// Quantile is the pinball loss of quantile regression at level q = Q in
// (0, 1): with r = b − z,
//
//	φ(z, b) = max(q·r, (q − 1)·r),
//
// which weighs under-predictions by q and over-predictions by 1 − q; q = ½
// is half the absolute loss. Its conjugate is φ*(y, b) = b·y for
// y ∈ [−q, 1 − q] and +Inf elsewhere. The zero value Quantile{} means
// q = ½; LossByNameParams rejects q outside (0, 1).
type Quantile struct{ Q float64 }

// level returns q, with 0 meaning the default ½.
func (l Quantile) level() float64 {
	if l.Q == 0 {
		return 0.5
	}
	return l.Q
}

// Name returns "quantile".
func (Quantile) Name() string { return "quantile" }

// Value returns max(q(b − z), (q − 1)(b − z)).
func (l Quantile) Value(z, b float64) float64 {
	q, r := l.level(), b-z
	return max(q*r, (q-1)*r)
}

// Deriv returns a subgradient: −q below the target, 1 − q above it, and 0
// at z = b.
func (l Quantile) Deriv(z, b float64) float64 {
	q := l.level()
	switch {
	case z > b:
		return 1 - q
	case z < b:
		return -q
	}
	return 0
}

// Conj returns b·y if y ∈ [−q, 1 − q] and +Inf otherwise.
func (l Quantile) Conj(y, b float64) float64 {
	q := l.level()
	if !(y >= -q && y <= 1-q) {
		return math.Inf(1)
	}
	return b * y
}

// Gamma returns 0: φ* is linear on its domain.
func (Quantile) Gamma() float64 { return 0 }

// DualProx returns y0 + σ(z − b) clipped to [−q, 1 − q]. With σ = +Inf it
// is the subgradient Deriv picks.
func (l Quantile) DualProx(y0, z, sigma, b float64) float64 {
	if math.IsInf(sigma, 1) {
		return linearProxLimit(l, y0, z, b)
	}
	q := l.level()
	return min(max(quadraticDualProx(y0, z-b, sigma, 0), -q), 1-q)
}

// Classification returns false.
func (Quantile) Classification() bool { return false }

// DualFeasible clips y to [−q, 1 − q].
func (l Quantile) DualFeasible(y, b float64) float64 {
	q := l.level()
	return min(max(y, -q), 1-q)
}

// DualStart returns 0.
func (Quantile) DualStart(b float64) float64 { return 0 }

// linearProxLimit is the σ = +Inf dual prox of a piecewise-linear loss: a
// maximiser of y·z − φ*(y, b), the subgradient l.Deriv picks, or NaN when
// an input is NaN.
func linearProxLimit(l Loss, y0, z, b float64) float64 {
	if math.IsNaN(y0) || math.IsNaN(z) || math.IsNaN(b) {
		return math.NaN()
	}
	return l.Deriv(z, b)
}

// softThreshold returns sign(v)·max(|v| − t, 0) for t ≥ 0, and NaN for a
// NaN v or t.
func softThreshold(v, t float64) float64 {
	a := math.Abs(v) - t
	if a > 0 {
		return math.Copysign(a, v)
	}
	if a != a {
		return math.NaN()
	}
	return 0
}
