package objective

import (
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// Loss is a convex loss φ(z, b) of a margin z = aᵀx and a label or target b.
//
// Besides φ itself, a primal-dual coordinate method needs the Fenchel
// conjugate φ*(y, b) = sup_z (y·z − φ(z, b)), the modulus γ of strong
// convexity of φ* (γ = 1/L where L is the smoothness of φ), and the dual
// proximal step. All methods are allocation-free and safe for concurrent use.
//
// For the classification losses (Classification reports true) the label b
// must be −1 or +1; the methods do not check it because they sit in the inner
// loop, so callers validate labels once, when the data are loaded. For the
// squared loss b is any real target.
type Loss interface {
	// Name returns the loss's name as LossByName accepts it.
	Name() string
	// Value returns φ(z, b).
	Value(z, b float64) float64
	// Deriv returns the derivative ∂φ(z, b)/∂z.
	Deriv(z, b float64) float64
	// Conj returns the conjugate φ*(y, b), which is +Inf outside its domain.
	Conj(y, b float64) float64
	// Gamma returns the modulus of strong convexity of φ*(·, b).
	Gamma() float64
	// DualProx returns argmin_y φ*(y, b) − y·z + (y − y0)²/(2σ) for a step
	// σ in (0, +Inf]; σ = +Inf gives the maximiser of y·z − φ*(y, b), which
	// is φ'(z, b). For finite inputs below about 1e300 in magnitude the
	// result is finite and lies in the domain of φ*(·, b), whatever y0 is
	// (the logistic prox has no such limit); NaN inputs give NaN.
	DualProx(y0, z, sigma, b float64) float64
	// Classification reports whether b is a ±1 class label rather than a
	// real target.
	Classification() bool
	// DualFeasible projects y onto the domain of φ*(·, b), for
	// initialisation and warm starts. It returns NaN for a NaN y.
	DualFeasible(y, b float64) float64
	// DualStart returns a good feasible initial dual value for label b.
	DualStart(b float64) float64
}

// LossByName returns the loss called name: "squared", "logistic",
// "smoothhinge", "sqhinge", "hinge", "absolute", "epsinsensitive" or
// "quantile". The smoothing is the smoothed hinge's parameter s; 0 selects
// the default s = 1. The other losses ignore smoothing (the ε-insensitive
// loss gets ε = 0.1 and the quantile loss q = ½, their defaults in
// LossByNameParams), but a negative or non-finite smoothing is an error for
// every loss.
func LossByName(name string, smoothing float64) (Loss, error) {
	return LossByNameParams(name, LossParams{Smoothing: smoothing, Epsilon: DefaultEpsilon})
}

// DefaultEpsilon is the width of the ε-insensitive loss's tube that the
// command line and LossByName use, LIBLINEAR's default for -p.
const DefaultEpsilon = 0.1

// LossParams holds the parameters of the losses that have one. Each loss
// reads only its own; the others must still be valid numbers.
type LossParams struct {
	// Smoothing is the smoothed hinge's s > 0; 0 selects 1.
	Smoothing float64
	// Epsilon is the ε-insensitive loss's ε ≥ 0, taken literally (0 makes
	// it the absolute loss).
	Epsilon float64
	// Quantile is the quantile loss's level q in (0, 1); 0 selects ½.
	Quantile float64
}

// LossByNameParams is LossByName with every loss's parameter: it returns
// the loss called name with its parameter from p. A negative or non-finite
// Smoothing or ε, or a quantile level outside [0, 1), is an error whatever
// the loss.
func LossByNameParams(name string, p LossParams) (Loss, error) {
	if math.IsNaN(p.Smoothing) || math.IsInf(p.Smoothing, 0) || p.Smoothing < 0 {
		return nil, fmt.Errorf("engine: smoothing %g must be a finite number > 0 (or 0 for the default 1)", p.Smoothing)
	}
	if !(p.Epsilon >= 0) || math.IsInf(p.Epsilon, 0) {
		return nil, fmt.Errorf("engine: ε-insensitive width %g must be a finite number ≥ 0", p.Epsilon)
	}
	if !(p.Quantile >= 0 && p.Quantile < 1) {
		return nil, fmt.Errorf("engine: quantile level %g must lie in (0, 1) (or be 0 for the default ½)", p.Quantile)
	}
	switch name {
	case "squared":
		return Squared{}, nil
	case "logistic":
		return Logistic{}, nil
	case "smoothhinge":
		s := p.Smoothing
		if s == 0 {
			s = 1
		}
		return SmoothHinge{S: s}, nil
	case "sqhinge":
		return SquaredHinge{}, nil
	case "hinge":
		return Hinge{}, nil
	case "absolute":
		return Absolute{}, nil
	case "epsinsensitive":
		return EpsInsensitive{Epsilon: p.Epsilon}, nil
	case "quantile":
		q := p.Quantile
		if q == 0 {
			q = 0.5
		}
		return Quantile{Q: q}, nil
	}
	return nil, fmt.Errorf("engine: unknown loss %q (valid: squared, logistic, smoothhinge, sqhinge, hinge, absolute, epsinsensitive, quantile)", name)
}

// Squared is the squared loss φ(z, b) = ½(z − b)² of ridge regression, for
// any real target b. Its conjugate is φ*(y, b) = ½y² + b·y on all of ℝ, so
// γ = 1. LIBLINEAR's L2-loss regression (-s 11 with ε = 0) has no ½, so its
// C corresponds to 1/(2nλ) rather than 1/(nλ).
type Squared struct{}

// Name returns "squared".
func (Squared) Name() string { return "squared" }

// Value returns ½(z − b)².
func (Squared) Value(z, b float64) float64 {
	d := z - b
	return 0.5 * d * d
}

// Deriv returns z − b.
func (Squared) Deriv(z, b float64) float64 { return z - b }

// Conj returns ½y² + b·y.
func (Squared) Conj(y, b float64) float64 { return y * (0.5*y + b) }

// Gamma returns 1.
func (Squared) Gamma() float64 { return 1 }

// DualProx returns (y0 + σ(z − b))/(1 + σ), the stationary point of the
// unconstrained quadratic.
func (Squared) DualProx(y0, z, sigma, b float64) float64 {
	return quadraticDualProx(y0, z-b, sigma, 1)
}

// quadraticDualProx returns (y0 + σd)/(1 + kσ), the minimiser of
// k·y²/2 − d·y + (y − y0)²/(2σ), which is the dual prox of the quadratic
// conjugates before any projection (d = z − b). For σ > 1 it divides through
// by σ, so that σd cannot overflow and σ = +Inf gives the limit d/k.
func quadraticDualProx(y0, d, sigma, k float64) float64 {
	if sigma <= 1 {
		return (y0 + sigma*d) / (1 + k*sigma)
	}
	r := 1 / sigma
	return (r*y0 + d) / (r + k)
}

// Classification returns false.
func (Squared) Classification() bool { return false }

// DualFeasible returns y: the conjugate is finite everywhere.
func (Squared) DualFeasible(y, b float64) float64 { return y }

// DualStart returns 0.
func (Squared) DualStart(b float64) float64 { return 0 }

// SmoothHinge is the smoothed hinge loss with smoothing parameter S > 0
// (Shalev-Shwartz and Zhang): with m = b·z,
//
//	φ(z, b) = 0                 if m ≥ 1,
//	          1 − m − S/2       if m ≤ 1 − S,
//	          (1 − m)²/(2S)     otherwise.
//
// Its conjugate is φ*(y, b) = b·y + (S/2)y² for b·y ∈ [−1, 0] and +Inf
// elsewhere, so γ = S. As S → 0 it tends to the hinge loss. The zero value
// SmoothHinge{} means S = 1; a negative or non-finite S is invalid (LossByName
// rejects it).
type SmoothHinge struct{ S float64 }

// Smoothing returns S, with 0 meaning the default 1.
func (h SmoothHinge) Smoothing() float64 {
	if h.S == 0 {
		return 1
	}
	return h.S
}

// Name returns "smoothhinge".
func (SmoothHinge) Name() string { return "smoothhinge" }

// Value returns φ(z, b).
func (h SmoothHinge) Value(z, b float64) float64 {
	s := h.Smoothing()
	m := b * z
	switch {
	case m >= 1:
		return 0
	case m <= 1-s:
		return 1 - m - 0.5*s
	}
	d := 1 - m
	return d * d / (2 * s)
}

// Deriv returns φ'(z, b): 0, −b, or −b(1 − b·z)/S on the three pieces.
func (h SmoothHinge) Deriv(z, b float64) float64 {
	s := h.Smoothing()
	m := b * z
	switch {
	case m >= 1:
		return 0
	case m <= 1-s:
		return -b
	}
	return -b * (1 - m) / s
}

// Conj returns b·y + (S/2)y² if b·y ∈ [−1, 0] and +Inf otherwise.
func (h SmoothHinge) Conj(y, b float64) float64 {
	by := b * y
	if !(by >= -1 && by <= 0) {
		return math.Inf(1)
	}
	return by + 0.5*h.Smoothing()*y*y
}

// Gamma returns S.
func (h SmoothHinge) Gamma() float64 { return h.Smoothing() }

// DualProx returns the stationary point (y0 + σ(z − b))/(1 + Sσ) of the
// quadratic with b·y projected onto [−1, 0]. Projection is exact here because
// the objective is a one-dimensional convex quadratic on an interval.
func (h SmoothHinge) DualProx(y0, z, sigma, b float64) float64 {
	y := quadraticDualProx(y0, z-b, sigma, h.Smoothing())
	return b * min(max(b*y, -1), 0)
}

// Classification returns true.
func (SmoothHinge) Classification() bool { return true }

// DualFeasible projects b·y onto [−1, 0].
func (SmoothHinge) DualFeasible(y, b float64) float64 { return b * min(max(b*y, -1), 0) }

// DualStart returns 0.
func (SmoothHinge) DualStart(b float64) float64 { return 0 }

// SquaredHinge is the squared hinge loss φ(z, b) = max(0, 1 − b·z)² of
// LIBLINEAR's L2-loss SVM (-s 1 and -s 2), with labels b = ±1. Its conjugate
// is φ*(y, b) = b·y + y²/4 for b·y ≤ 0 and +Inf elsewhere, so γ = 1/2.
type SquaredHinge struct{}

// Name returns "sqhinge".
func (SquaredHinge) Name() string { return "sqhinge" }

// Value returns max(0, 1 − b·z)².
func (SquaredHinge) Value(z, b float64) float64 {
	d := 1 - b*z
	if d <= 0 {
		return 0
	}
	return d * d
}

// Deriv returns −2b·max(0, 1 − b·z).
func (SquaredHinge) Deriv(z, b float64) float64 {
	d := 1 - b*z
	if d <= 0 {
		return 0
	}
	return -2 * b * d
}

// Conj returns b·y + y²/4 if b·y ≤ 0 and +Inf otherwise.
func (SquaredHinge) Conj(y, b float64) float64 {
	by := float64(b * y)
	if !(by <= 0) {
		return math.Inf(1)
	}
	return by + float64(0.25*y*y) // rounded on its own: the same wherever inlined
}

// Gamma returns 1/2.
func (SquaredHinge) Gamma() float64 { return 0.5 }

// DualProx returns the stationary point (y0 + σ(z − b))/(1 + σ/2) of the
// quadratic with b·y projected onto (−∞, 0].
func (SquaredHinge) DualProx(y0, z, sigma, b float64) float64 {
	y := quadraticDualProx(y0, z-b, sigma, 0.5)
	return b * min(b*y, 0)
}

// Classification returns true.
func (SquaredHinge) Classification() bool { return true }

// DualFeasible projects b·y onto (−∞, 0].
func (SquaredHinge) DualFeasible(y, b float64) float64 { return b * min(b*y, 0) }

// DualStart returns 0.
func (SquaredHinge) DualStart(b float64) float64 { return 0 }

// Logistic is the logistic loss φ(z, b) = log(1 + exp(−b·z)) of LIBLINEAR's
// logistic regression (-s 0 and -s 7), with labels b = ±1. With u = −b·y its
// conjugate is the negative binary entropy φ*(y, b) = u·log u + (1 − u)·log(1 − u)
// for u ∈ [0, 1] (0·log 0 = 0) and +Inf elsewhere; its second derivative
// 1/(u(1 − u)) is at least 4, so γ = 4.
type Logistic struct{}

// Name returns "logistic".
func (Logistic) Name() string { return "logistic" }

// Value returns log(1 + exp(−b·z)), written so that exp never overflows and
// no precision is lost for large |z|.
func (Logistic) Value(z, b float64) float64 {
	t := float64(-b * z) // rounded: not fused into t + log1p, as logisticFinish's
	if t > 0 {
		return t + math.Log1p(math.Exp(-t))
	}
	return math.Log1p(math.Exp(t))
}

// Deriv returns −b/(1 + exp(b·z)).
func (Logistic) Deriv(z, b float64) float64 { return -b * logisticSigmoid(-b*z) }

// Conj returns the negative binary entropy of u = −b·y, or +Inf when u is
// outside [0, 1].
func (Logistic) Conj(y, b float64) float64 {
	u := -b * y
	if !(u >= 0 && u <= 1) {
		return math.Inf(1)
	}
	var v float64
	if u > 0 {
		v = u * logisticLog(u)
	}
	if u < 1 {
		// log1p keeps full precision when u is tiny, where log(1 − u) would
		// round 1 − u first.
		v += (1 - u) * math.Log1p(-u)
	}
	return v
}

// Gamma returns 4.
func (Logistic) Gamma() float64 { return 4 }

// Classification returns true.
func (Logistic) Classification() bool { return true }

// DualFeasible projects b·y onto [−1, 0].
func (Logistic) DualFeasible(y, b float64) float64 { return b * min(max(b*y, -1), 0) }

// DualStart returns −b/2, the centre of the domain, where the entropy's
// curvature is smallest and the first prox steps are best conditioned.
func (Logistic) DualStart(b float64) float64 { return -0.5 * b }

// Constants of the logistic dual prox.
const (
	// logisticLogitBound bounds the search in the logit t: exp(−750)
	// underflows to 0 and 1/(1 + exp(−750)) rounds to 1, so a root beyond
	// ±logisticLogitBound rounds to an end of the domain.
	logisticLogitBound = 750
	// logisticProxMaxIter caps the safeguarded iteration. Bisection alone
	// would shrink the widest bracket, 2·logisticLogitBound, to the
	// resolution of float64 in about 60 steps, so the cap is never reached
	// for finite inputs.
	logisticProxMaxIter = 100
	// logisticStepTol ends the iteration once a step is this small: the
	// error left after a step δ is below about 1.1·|δ|⁴ (see DualProx),
	// about 1e-16 here, and the third-order update of u adds at most
	// δ⁴/24, so the returned u is accurate to rounding.
	logisticStepTol = 1e-4
)

// DualProx returns argmin_y φ*(y, b) − y·z + (y − y0)²/(2σ).
//
// With u = −b·y, u0 = −b·y0 and c = b·z this is the minimiser over u ∈ [0, 1]
// of u·log u + (1 − u)·log(1 − u) + c·u + (u − u0)²/(2σ), which has no closed
// form. Its derivative is logit(u) + c + (u − u0)/σ, and the minimiser lies
// strictly inside (0, 1), but it can be as close as exp(−1000) to an end. So
// the root is sought in the logit t = log(u/(1 − u)) instead, where u is the
// sigmoid of t and the stationarity condition reads, multiplied by σ,
//
//	G(t) = σ(t + c) + sigmoid(t) − u0 = 0.
//
// G is increasing with G′(t) = σ + u(1 − u), never flatter than its own σ·t
// term, so Newton's method never meets a flat derivative, the root is resolved
// with full relative precision near either end of the domain, and no log of 0
// is ever taken. Since
// 0 < sigmoid < 1, the root lies in the bracket [−c − (1 − u0)/σ, −c + u0/σ],
// of width 1/σ.
//
// The iteration is a safeguarded Newton method. The derivatives
// G″ = u(1 − u)(1 − 2u) and G‴ = u(1 − u)(1 − 6u(1 − u)) cost nothing extra,
// so close to the root the Newton step n = G/G′ gets the next two terms of
// the series of the root, δ = n + a₂n² + (2a₂² − a₃)n³ with a₂ = G″/(2G′)
// and a₃ = G‴/(6G′), which converges quartically: warm starts usually
// finish after one exponential. The bracket is updated from the sign of G at
// every iterate, and a bisection step replaces the step whenever it would
// leave the bracket or fails to halve the step before last. The ratios of
// G″, G‴ and G⁗ to G′ are at most 1, so the error left after a step δ is
// about |δ|⁴; the iteration stops when |δ| ≤ logisticStepTol and applies
// that last step to u to third order.
//
// The starting point is logit(u0), which is close to the root when σ is small
// or y0 is a warm start, and where sigmoid is u0 itself; it is clamped into
// the bracket. For σ = +Inf the bracket collapses to the single point −c,
// which is the root.
func (Logistic) DualProx(y0, z, sigma, b float64) float64 {
	u, _ := logisticProxSolve(-b*y0, b*z, sigma)
	return -b * u
}

// logisticProxSolve solves G(t) = σ(t + c) + sigmoid(t) − u0 = 0 and returns
// u = sigmoid(t) ∈ [0, 1] and the number of exponentials it took, which tests
// use to check the speed of convergence; see Logistic.DualProx.
func logisticProxSolve(u0, c, sigma float64) (u float64, exps int) {
	u, _, exps = logisticProxFrom(u0, math.NaN(), c, sigma)
	return u, exps
}

// LogisticProxWarm is Logistic.DualProx for a solver that keeps, beside
// each dual y0, the logit t0 at which the previous prox ended (NaN when it
// has none). Starting there saves the logarithm of logit(u0): t0 is that
// logit to within the last step's O(|δ|³), and the iteration only takes
// sigmoid(t0) = u0 for its first step, so the root it returns is the same.
// It returns the new dual and its logit.
func LogisticProxWarm(y0, t0, z, sigma, b float64) (y, t float64) {
	u, t, _ := logisticProxFrom(-b*y0, t0, b*z, sigma)
	return -b * u, t
}

// logisticProxFrom is logisticProxSolve started from the logit t0 of u0
// when t0 is a number, and from logit(u0) otherwise. It also returns the
// logit of its answer (±logisticLogitBound at the ends).
func logisticProxFrom(u0, t0, c, sigma float64) (u, tEnd float64, exps int) {
	lo := -c - (1-u0)/sigma
	hi := -c + u0/sigma
	// Roots beyond ±logisticLogitBound round to u = 0 or u = 1, and
	// sigmoid(±logisticLogitBound) is exactly 0 or 1, so the clamped bracket
	// keeps G(lo) ≤ 0 ≤ G(hi). If the root is beyond a bound, the clamped
	// bracket is empty and the bound is the answer.
	lo = max(lo, -logisticLogitBound)
	hi = min(hi, logisticLogitBound)
	if !(hi > lo) {
		// Either that, or the bracket is narrower than the resolution of
		// t because σ is huge (or infinite) and the root is −c to rounding.
		return logisticSigmoid(lo), lo, 1
	}

	v0 := 1 - u0
	// Start from logit(u0), where sigmoid is u0 itself. If y0 is at or
	// beyond an end of the domain, start at an end of the bracket instead:
	// G(t) = σ(t − hi) + sigmoid(t) = σ(t − lo) − (1 − sigmoid(t)) with the
	// unclamped ends, so the root is within sigmoid(hi)/σ below hi, which
	// is close when u0 ≤ 0, and within (1 − sigmoid(lo))/σ above lo.
	var t float64
	switch {
	case u0 <= 0:
		t = hi
	case u0 >= 1:
		t = lo
	case t0 == t0: // not NaN: the logit the previous prox ended at
		t = t0
	default:
		// The ratio is accurate to rounding (1 − u0 is exact for u0 ≥ 1/2
		// and accurate relative to u0 below), and so is its log.
		t = logisticLog(u0 / v0)
	}
	var s, comp, diff float64 // sigmoid(t), 1 − sigmoid(t), sigmoid(t) − u0
	if u0 > 0 && u0 < 1 && t >= lo && t <= hi {
		s, comp = u0, v0
	} else {
		t = min(max(t, lo), hi)
		s, comp, diff = logisticSigmoidGap(t, u0, v0)
		exps++
	}

	stepOld := hi - lo
	step := stepOld
	for range logisticProxMaxIter {
		g := sigma*(t+c) + diff
		if g == 0 {
			return s, t, exps
		}
		if g < 0 {
			lo = t
		} else {
			hi = t
		}
		sd := s * comp
		gp := sigma + sd
		gpp := sd * (comp - s)
		gppp := sd * (1 - 6*sd)
		// The ratios to G′ are formed from one reciprocal when that is a
		// normal number, and by division otherwise, so that nothing
		// underflows or overflows when σ and u are both tiny.
		var delta, a2, a3 float64
		if gp > 0x1p-1000 {
			igp := 1 / gp
			delta, a2, a3 = g*igp, 0.5*gpp*igp, gppp*igp*(1.0/6)
		} else {
			delta, a2, a3 = g/gp, 0.5*(gpp/gp), gppp/(6*gp)
		}
		// delta is the Newton step; near the root, add the series' next
		// two terms.
		if math.Abs(delta) <= 0.5 {
			delta += delta * delta * (a2 + delta*(2*a2*a2-a3))
		}
		if math.Abs(delta) <= logisticStepTol {
			// t is within about |delta| of the root whichever side of the
			// bracket the step points to, so take the step on
			// u = sigmoid(t) to third order. This test comes before the
			// bracket test because a step below the resolution of t lands
			// on t itself, which is an end of the bracket.
			u := s - delta*(sd-delta*(0.5*gpp-delta*gppp/6))
			return min(max(u, 0), 1), t - delta, exps
		}
		// The step may land on an end of the bracket, where the root often
		// is to rounding when y0 was at an end of the domain.
		next := t - delta
		if next >= lo && next <= hi && math.Abs(2*delta) <= math.Abs(stepOld) {
			stepOld = step
			step = delta
		} else {
			stepOld = step
			step = 0.5 * (hi - lo)
			next = lo + step
			// A bisection step ends the search only once the bracket is at
			// the resolution of float64.
			if step <= 0x1p-52*max(1, math.Abs(next)) {
				return logisticSigmoid(next), next, exps + 1
			}
		}
		t = next
		s, comp, diff = logisticSigmoidGap(t, u0, v0)
		exps++
	}
	return s, t, exps
}

// logisticSigmoid returns 1/(1 + exp(−t)) without overflow, by expNeg:
// the logistic loss's derivative, which a Newton line search takes at
// every row in each of its trials (bench/RESULTS.md, "Narrow data: the
// factor by tiles, and the rows of tiny curvature left out").
func logisticSigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + expNeg(-t))
	}
	e := expNeg(t)
	return e / (1 + e)
}

// logisticSigmoidGap returns s = sigmoid(t), comp = 1 − s and diff = s − u0
// from one exponential, given v0 = 1 − u0. s and comp have full relative
// precision, and for t ≥ 0 diff is evaluated as v0 − comp: near u = 1 that
// avoids the cancellation of two numbers close to 1. (v0 is exact for
// u0 ≥ 1/2; below, its rounding error is no larger than that of s − u0.) One
// branch serves all three, which matters because its direction is
// unpredictable.
func logisticSigmoidGap(t, u0, v0 float64) (s, comp, diff float64) {
	e := math.Exp(-math.Abs(t))
	r := 1 / (1 + e)
	if t >= 0 {
		comp = e * r
		return r, comp, v0 - comp
	}
	s = e * r
	return s, r, s - u0
}

// logisticLog returns log x for x > 0. On amd64 math.Log is wrong for
// subnormal x (golang/go#56600), and the logistic conjugate and prox meet
// such x within 1e-308 of the ends of their domain, so a subnormal x is
// scaled into the normal range first.
func logisticLog(x float64) float64 {
	if x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// LogisticProxWarmExps is LogisticProxWarm by the lean iteration of
// logisticProxWarm, which finds the same root to a few ulp with fewer
// branches and divisions and a cheaper exponential, and it also returns
// the number of exponentials it took.
func LogisticProxWarmExps(y0, t0, z, sigma, b float64) (y, t float64, exps int) {
	u, t, exps := logisticProxWarm(-b*y0, t0, b*z, sigma)
	return -b * u, t, exps
}

// logisticProxWarm is logisticProxFrom's iteration for a warm start, lean
// and with few branches. The first step starts from t0, where sigmoid is
// u0, so it costs no exponential, and each further step costs one
// (expNeg's). Instead of the bracket's bisection it asks every step to stay
// in the bracket, tested without a division as σ(t + c) ∈ [−(1 − u0), u0],
// and every step after the first to be at most half the one before: the
// steps then shrink geometrically, and since G′ ≤ σ + 1/4, G → 0 with them.
// (From a far-off warm start, where u0 is at an end of the domain to within
// exp(−|t0|), the first step goes to the other end of the bracket, −c,
// which is the root to within u(−c)/σ.) A step that breaks either rule,
// and any start without a warm logit or at an end of the domain, goes to
// logisticProxFrom.
func logisticProxWarm(u0, t0, c, sigma float64) (u, t float64, exps int) {
	v0 := 1 - u0
	if !(u0 > 0 && u0 < 1 && t0 == t0 && sigma >= 0x1p-500 && sigma <= 0x1p500) {
		return logisticProxFrom(u0, t0, c, sigma)
	}
	t = t0
	s, comp, diff := u0, v0, 0.0
	limit := math.Inf(1)
	for range logisticWarmSteps {
		g := sigma*(t+c) + diff
		sd := s * comp
		igp := 1 / (sigma + sd)
		gpp := sd * (comp - s)
		gppp := sd * (1 - 6*sd)
		delta := g * igp
		a2, a3 := 0.5*gpp*igp, gppp*igp*(1.0/6)
		if series := delta + delta*delta*(a2+delta*(2*a2*a2-a3)); math.Abs(delta) <= 0.5 {
			delta = series
		}
		if math.Abs(delta) <= logisticStepTol {
			u = s - delta*(sd-delta*(0.5*gpp-delta*gppp/6))
			return min(max(u, 0), 1), t - delta, exps
		}
		next := t - delta
		gs := sigma * (next + c)
		if !(gs >= -v0 && gs <= u0 && math.Abs(delta) <= limit) {
			break
		}
		limit = 0.5 * math.Abs(delta)
		t = next
		s, comp, diff = logisticSigmoidGapFast(t, u0, v0)
		exps++
	}
	u, t, e := logisticProxFrom(u0, t0, c, sigma)
	return u, t, exps + e
}

// logisticWarmSteps caps logisticProxWarm's steps before it hands over to
// the bracketed iteration: from a warm start one or two suffice.
const logisticWarmSteps = 6

// logisticSigmoidGapFast is logisticSigmoidGap with expNeg for math.Exp.
// The sign of t, unpredictable, selects with a mask instead of a branch.
func logisticSigmoidGapFast(t, u0, v0 float64) (s, comp, diff float64) {
	e := expNeg(-math.Abs(t))
	r := 1 / (1 + e)
	er := e * r
	neg := uint64(int64(math.Float64bits(t)) >> 63) // all ones when t < 0
	rb, eb := math.Float64bits(r), math.Float64bits(er)
	s = math.Float64frombits(rb&^neg | eb&neg)
	comp = math.Float64frombits(eb&^neg | rb&neg)
	d0, d1 := math.Float64bits(v0-er), math.Float64bits(er-u0)
	return s, comp, math.Float64frombits(d0&^neg | d1&neg)
}

// expNeg returns exp(x) for x ≤ 0 within 2 ulp: kernels.ExpNegOf, whose
// bits the block kernel kernels.ExpNeg shares, so that the logistic
// loss's terms are the same taken one row at a time or a block at a time
// (CurvedTermsBlock, SlopeSum).
func expNeg(x float64) float64 { return kernels.ExpNegOf(x) }
