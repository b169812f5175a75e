package objective

import (
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// CurvedLoss is implemented by the losses with a second derivative, or for
// the squared and smoothed hinges the generalised one (the derivative of the
// piecewise-linear φ′, taken as its right-hand value at the kinks). The
// Newton method needs it; a loss without it is refused by that method.
type CurvedLoss interface {
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
	s := h.Smoothing()
	if m := b * z; m < 1 && m > 1-s {
		return 1 / s
	}
	return 0
}

// CurvedTerms returns φ(z, b), φ′(z, b), φ″(z, b) and φ*(φ′(z, b), b): what
// one row of newton's sweep needs. For the logistic loss with b = ±1 they
// share one exponential (expNeg) and one logarithm, where the four methods
// take three of each: with t = −bz, e = exp(−|t|) and l = log(1 + e), the
// predicted probability is u = σ(t) and
//
//	φ = max(t, 0) + l,  log u = min(t, 0) − l,  log(1 − u) = −max(t, 0) − l,
//
// and φ* is u·log u + (1 − u)·log(1 − u) (loss.go); at z = 0 (a row at
// w = 0, or an empty one) they come from a table of the same bits. The
// squared hinge's four methods are called on the concrete type, where the
// compiler inlines them; the other losses' through the interface.
func CurvedTerms(loss CurvedLoss, z, b float64) (val, d1, d2, conj float64) {
	if h, ok := loss.(SquaredHinge); ok {
		d1 = h.Deriv(z, b)
		return h.Value(z, b), d1, h.Deriv2(z, b), h.Conj(d1, b)
	}
	if _, ok := loss.(Logistic); ok && (b == 1 || b == -1) {
		if z == 0 {
			t := &logisticAtZero[(int(b)+1)/2]
			return t[0], t[1], t[2], t[3]
		}
		return logisticTerms(z, b)
	}
	d1 = loss.Deriv(z, b)
	return loss.Value(z, b), d1, loss.Deriv2(z, b), loss.Conj(d1, b)
}

// logisticTerms is CurvedTerms of the logistic loss for b = ±1.
func logisticTerms(z, b float64) (val, d1, d2, conj float64) {
	t := -b * z
	e := expNeg(-math.Abs(t))
	return logisticFinish(t, e, kernels.Log1pUnitOf(e), b)
}

// logisticFinish returns logisticTerms' four values from t = −bz,
// e = exp(−|t|) and l = log(1 + e): the arithmetic after the exponential
// and the logarithm, which CurvedTermsBlock shares.
//
// Each product is rounded on its own (the conversions), so that a compiler
// that fuses multiply-adds (GOAMD64=v3) cannot fuse them differently where
// this is inlined, and the row-at-a-time and block paths keep one result.
func logisticFinish(t, e, l, b float64) (val, d1, d2, conj float64) {
	r := 1 / (1 + e)
	var u, comp float64 // u and 1 − u, each with full relative precision
	if t >= 0 {
		u, comp = r, e*r
		val = t + l
		conj = float64(u*(-l)) + float64(comp*(-t-l))
	} else {
		u, comp = e*r, r
		val = l
		conj = float64(u*(t-l)) + float64(comp*(-l))
	}
	return val, -b * u, u * comp, conj
}

// logisticAtZero holds CurvedTerms of the logistic loss at z = 0 for
// b = −1 and b = +1, as its exponential and logarithm give them.
var logisticAtZero = func() (t [2][4]float64) {
	for i, b := range []float64{-1, 1} {
		t[i][0], t[i][1], t[i][2], t[i][3] = logisticTerms(0, b)
	}
	return t
}()

// curvedBlock is the number of rows whose logistic terms CurvedTermsBlock
// and SlopeSum take in one call of the exponential and logarithm kernels,
// on the stack: enough for eight lanes to pay, small enough for the first
// cache level.
const curvedBlock = 128

// CurvedTermsBlock sets val[k], d1[k], d2[k] and conj[k] to CurvedTerms(loss,
// z[k], b[k]) for every k < len(z), the same bits. For the logistic loss
// the block's exponentials and logarithms are taken by kernels.ExpNeg and
// kernels.Log1pUnit, eight at a time where the CPU has AVX-512, which
// share the bits of the row-at-a-time expNeg and kernels.Log1pUnitOf. The
// four outputs need len(z) elements each and must not overlap.
func CurvedTermsBlock(loss CurvedLoss, z, b, val, d1, d2, conj []float64) {
	n := len(z)
	b, val, d1, d2, conj = b[:n], val[:n], d1[:n], d2[:n], conj[:n]
	switch loss.(type) {
	case Logistic:
	case SquaredHinge:
		// CurvedTerms' terms without a branch on whether the row is
		// active (b·z < 1), which on a sweep's rows is a coin toss: the
		// inactive rows' zeros come from max(d, 0) = +0, and the sum with
		// +0 turns Deriv's −0 into its +0. Conj's domain test holds at
		// every g = Deriv(z, b), since b·g = −2b²·max(d, 0) ≤ 0, except
		// where g is NaN, for which Conj gives +Inf.
		for k, zk := range z {
			bk := b[k]
			d := 1 - bk*zk
			dp := max(d, 0)
			g := -2*bk*dp + 0
			c := float64(bk*g) + float64(0.25*g*g) // as Conj's, each product rounded
			if g != g {
				c = math.Inf(1)
			}
			active := 0 // a conditional move, not a branch
			if d > 0 {
				active = 2
			}
			val[k], d1[k], d2[k], conj[k] = dp*dp, g, float64(active), c
		}
		return
	default:
		for k, zk := range z {
			val[k], d1[k], d2[k], conj[k] = CurvedTerms(loss, zk, b[k])
		}
		return
	}
	// −|t| into d2, e^(−|t|) into d1, log(1 + e) into val, then each row.
	for k, zk := range z {
		d2[k] = -math.Abs(-b[k] * zk)
	}
	kernels.ExpNeg(d1, d2)
	kernels.Log1pUnit(val, d1)
	for k, zk := range z {
		bk := b[k]
		if bk != 1 && bk != -1 {
			val[k], d1[k], d2[k], conj[k] = CurvedTerms(loss, zk, bk)
			continue
		}
		if zk == 0 {
			t := &logisticAtZero[(int(bk)+1)/2]
			val[k], d1[k], d2[k], conj[k] = t[0], t[1], t[2], t[3]
			continue
		}
		val[k], d1[k], d2[k], conj[k] = logisticFinish(-bk*zk, d1[k], val[k], bk)
	}
}

// ValuesAlong sets out[k] = φ(z[k] + β·dz[k], b[k]) for every k < len(z):
// a line search's loss terms at the step length β. The logistic loss's
// values are those of CurvedTerms (the same bits), their exponentials and
// logarithms taken a block at a time by kernels.ExpNeg and
// kernels.Log1pUnit; the other losses' are Value's.
func ValuesAlong(loss Loss, z, dz, b []float64, beta float64, out []float64) {
	n := len(z)
	dz, b, out = dz[:n], b[:n], out[:n]
	if _, ok := loss.(Logistic); !ok {
		for k, zk := range z {
			out[k] = loss.Value(zk+beta*dz[k], b[k])
		}
		return
	}
	var tb, ab, eb [curvedBlock]float64
	for lo := 0; lo < n; lo += curvedBlock {
		hi := min(lo+curvedBlock, n)
		t, a, e := tb[:hi-lo], ab[:hi-lo], eb[:hi-lo]
		logisticAlong(t, a, z[lo:hi], dz[lo:hi], b[lo:hi], beta)
		kernels.ExpNeg(e, a)
		kernels.Log1pUnit(a, e) // log(1 + e), over −|t|, which is read no more
		for i, ti := range t {
			k := lo + i
			switch bk := b[k]; {
			case bk != 1 && bk != -1:
				out[k] = loss.Value(z[k]+beta*dz[k], bk)
			case ti == 0:
				out[k] = logisticAtZero[(int(bk)+1)/2][0]
			case ti > 0:
				out[k] = ti + a[i]
			default:
				out[k] = a[i]
			}
		}
	}
}

// Projects reports whether DualFeasible moves some y[k] for the label
// b[k], k < len(y): whether the paired dual point φ′(zₖ) of a sweep needs
// projecting (rounding at a kink) before its conjugate is finite. The
// logistic and squared-hinge losses are matched once for the block.
func Projects(loss Loss, y, b []float64) bool {
	b = b[:len(y)]
	switch l := loss.(type) {
	case Logistic:
		for k, yk := range y {
			if l.DualFeasible(yk, b[k]) != yk {
				return true
			}
		}
	case SquaredHinge:
		for k, yk := range y {
			if l.DualFeasible(yk, b[k]) != yk {
				return true
			}
		}
	default:
		for k, yk := range y {
			if loss.DualFeasible(yk, b[k]) != yk {
				return true
			}
		}
	}
	return false
}

// logisticAlong sets t[i] = −b[i]·(z[i] + α·dz[i]), the logistic's
// argument at step length α along dz, and a[i] = −|t[i]|, the argument of
// its exponential (kernels.ExpNeg), for a block of rows: ValuesAlong's and
// SlopeSum's, the same bits in both.
func logisticAlong(t, a, z, dz, b []float64, alpha float64) {
	z, dz, b, a = z[:len(t)], dz[:len(t)], b[:len(t)], a[:len(t)]
	for i := range t {
		t[i] = -b[i] * (z[i] + alpha*dz[i])
		a[i] = -math.Abs(t[i])
	}
}

// SlopeSum returns Σₖ wₖ·φ′(zₖ + α·dzₖ, bₖ)·dzₖ over the k with dzₖ ≠ 0,
// in order (wₖ = 1 where w is nil): n times the derivative along a step
// of the primal's loss part, at the step length α, which a line search
// takes once per trial. The logistic and squared-hinge losses are matched
// once for the whole sum, so that the squared hinge's derivative is taken
// inline, without Deriv's branch, instead of through the interface at
// every row, and the logistic's exponentials are taken a block at a time
// by kernels.ExpNeg; the sum is the same bits either way.
func SlopeSum(loss Loss, z, dz, b, w []float64, alpha float64) float64 {
	var s float64
	switch loss.(type) {
	case Logistic:
		// Deriv = −b·σ(t), t = −b(z + α·dz), its exponentials a block at
		// a time (kernels.ExpNeg), the same bits as logisticSigmoid's.
		var tb, ab, eb [curvedBlock]float64
		for lo := 0; lo < len(dz); lo += curvedBlock {
			hi := min(lo+curvedBlock, len(dz))
			t, a, e := tb[:hi-lo], ab[:hi-lo], eb[:hi-lo]
			logisticAlong(t, a, z[lo:hi], dz[lo:hi], b[lo:hi], alpha)
			kernels.ExpNeg(e, a)
			for i, ti := range t {
				k := lo + i
				dk := dz[k]
				if dk == 0 {
					continue
				}
				var sg float64
				if ti >= 0 {
					sg = 1 / (1 + e[i])
				} else {
					sg = e[i] / (1 + e[i])
				}
				s += weightAt(w, k) * (-b[k] * sg) * dk
			}
		}
	case SquaredHinge:
		// Deriv without its branch on whether the row is active, a coin
		// toss on a line search's rows: an inactive row's term is ±0,
		// which leaves s as it is (s is never −0).
		for k, dk := range dz {
			if dk != 0 {
				bk := b[k]
				g := -2 * bk * max(1-bk*(z[k]+alpha*dk), 0)
				s += weightAt(w, k) * g * dk
			}
		}
	default:
		for k, dk := range dz {
			if dk != 0 {
				s += weightAt(w, k) * loss.Deriv(z[k]+alpha*dk, b[k]) * dk
			}
		}
	}
	return s
}

// weightAt returns w[k], or 1 where w is nil.
func weightAt(w []float64, k int) float64 {
	if w == nil {
		return 1
	}
	return w[k]
}
