package objective

import (
	"fmt"
	"math"
)

// Regularizer is the g of P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x): a closed
// convex function of the whole weight vector, with the few operations the
// methods and the certificates need. Implementations must be safe for
// concurrent use and must not allocate.
//
// The dual of P is D(y) = −(1/n) Σₖ φ*(yₖ) − g*(−v) with v = (1/n) Σₖ yₖaₖ,
// so every method's certificate goes through ConjNeg; the primal-dual
// methods step through Prox, and the dual methods (SDCA) read their primal
// point from PrimalFromDual, which needs StrongConvexity > 0.
type Regularizer interface {
	// Name is a short name for messages and the solver list.
	Name() string
	// Validate reports whether g is well defined on d coordinates.
	Validate(d int) error
	// Value returns g(x).
	Value(x []float64) float64
	// ConjNeg returns g*(−v), which may be +Inf (outside dom g*).
	ConjNeg(v []float64) float64
	// Prox sets dst = argmin_x g(x) + ‖x − v‖²/(2τ) for τ > 0; dst may be v.
	Prox(dst, v []float64, tau float64)
	// StrongConvexity returns the largest μ with g − (μ/2)‖·‖² convex.
	StrongConvexity() float64
	// PrimalFromDual sets dst = ∇g*(−v), the x that maximises
	// −vᵀx − g(x); defined when StrongConvexity() > 0. dst may be v.
	PrimalFromDual(dst, v []float64)
	// Strengths returns the weights of g's ridge and L1 terms, λ and l1,
	// as a model records them: (Lambda, L1) for the elastic net, and the
	// group lasso's ridge weight with no L1 term.
	Strengths() (lambda, l1 float64)
	// AsElasticNet returns g as an elastic net, and whether it is one:
	// the methods built on the elastic net's one-coordinate operations
	// (its Coord, ProxPlain and the lazy updates) read its terms through
	// it, and refuse the problem where it reports false.
	AsElasticNet() (ElasticNet, bool)
}

// Separable is a Regularizer that is a sum of one-coordinate terms,
// g(x) = Σⱼ gⱼ(xⱼ). Coordinate methods, lazy updates and per-coordinate
// (preconditioned) steps use its one-coordinate operations.
type Separable interface {
	Regularizer
	// ProxCoord returns argmin_x gⱼ(x) + (x − v)²/(2τ).
	ProxCoord(j int, v, tau float64) float64
	// PrimalCoord returns (∇g*(−v))ⱼ for the j-th coordinate of −v.
	PrimalCoord(j int, v float64) float64
}

// ElasticNet is the penalty
//
//	g(x) = Σⱼ wⱼ·( L1·|xⱼ| + (Lambda/2)·(xⱼ − cⱼ)² )
//
// with centre c = Center (nil: 0) and per-coordinate weights w = Weights
// (nil: all 1). With neither it is the plain elastic net
// L1‖x‖₁ + (Lambda/2)‖x‖², ridge when L1 = 0 and the lasso when Lambda = 0.
// The centre is what the AdaptReg reduction adds, (σ/2)‖x − x₀‖²; the
// weights exempt a coordinate (wⱼ = 0, an unpenalised bias) or scale it.
//
// Per coordinate, with lⱼ = wⱼ·L1 and λⱼ = wⱼ·Lambda, and writing
// gⱼ(x) = hⱼ(x) − λⱼcⱼx + λⱼcⱼ²/2 with hⱼ = lⱼ|x| + (λⱼ/2)x²:
//
//	gⱼ*(s)          = (|s + λⱼcⱼ| − lⱼ)₊² / (2λⱼ) − λⱼcⱼ²/2
//	prox_{τgⱼ}(v)   = soft(v + τλⱼcⱼ, τlⱼ) / (1 + τλⱼ)
//	∇gⱼ*(s)         = soft(s + λⱼcⱼ, lⱼ) / λⱼ
//
// so a centre only shifts the argument by λⱼcⱼ. With λⱼ = 0, gⱼ* is the
// indicator of |s| ≤ lⱼ.
type ElasticNet struct {
	Lambda  float64   // weight of the L2 term, ≥ 0
	L1      float64   // weight of the L1 term, ≥ 0
	Center  []float64 // the centre c of the L2 term; nil: 0
	Weights []float64 // per-coordinate weights, ≥ 0; nil: all 1
}

// Name returns "l2", "l1" or "elasticnet", with "+centre" and "+weights"
// when those are set.
func (r ElasticNet) Name() string {
	name := "elasticnet"
	switch {
	case r.L1 == 0:
		name = "l2"
	case r.Lambda == 0:
		name = "l1"
	}
	if r.Center != nil {
		name += "+centre"
	}
	if r.Weights != nil {
		name += "+weights"
	}
	return name
}

// Validate reports whether the regularizer is well defined on d
// coordinates: Lambda and L1 finite and non-negative, Center and Weights
// nil or of length d, finite, and the weights non-negative. Lambda = 0
// (pure L1, or no regularizer) is valid; the methods that need strong
// convexity check StrongConvexity as well.
func (r ElasticNet) Validate(d int) error {
	if math.IsNaN(r.Lambda) || math.IsInf(r.Lambda, 0) {
		return fmt.Errorf("engine: regularizer Lambda = %g is not finite", r.Lambda)
	}
	if r.Lambda < 0 {
		return fmt.Errorf("engine: regularizer Lambda = %g must be ≥ 0", r.Lambda)
	}
	if math.IsNaN(r.L1) || math.IsInf(r.L1, 0) {
		return fmt.Errorf("engine: regularizer L1 = %g is not finite", r.L1)
	}
	if r.L1 < 0 {
		return fmt.Errorf("engine: regularizer L1 = %g must be ≥ 0", r.L1)
	}
	if r.Center != nil {
		if len(r.Center) != d {
			return fmt.Errorf("engine: regularizer centre has %d coordinates, the data %d", len(r.Center), d)
		}
		for j, c := range r.Center {
			if math.IsNaN(c) || math.IsInf(c, 0) {
				return fmt.Errorf("engine: regularizer centre coordinate %d is %g", j, c)
			}
		}
	}
	if r.Weights != nil {
		if len(r.Weights) != d {
			return fmt.Errorf("engine: regularizer has %d weights, the data %d coordinates", len(r.Weights), d)
		}
		for j, w := range r.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				return fmt.Errorf("engine: regularizer weight of coordinate %d is %g: weights must be finite and ≥ 0", j, w)
			}
		}
	}
	return nil
}

// Plain reports whether r has neither centre nor weights.
func (r ElasticNet) Plain() bool { return r.Center == nil && r.Weights == nil }

// Coord returns lⱼ, λⱼ and λⱼcⱼ.
func (r ElasticNet) Coord(j int) (l1, lam, shift float64) {
	l1, lam = r.L1, r.Lambda
	if r.Weights != nil {
		l1 *= r.Weights[j]
		lam *= r.Weights[j]
	}
	if r.Center != nil {
		shift = lam * r.Center[j]
	}
	return l1, lam, shift
}

// Strengths returns Lambda and L1.
func (r ElasticNet) Strengths() (lambda, l1 float64) { return r.Lambda, r.L1 }

// AsElasticNet returns r itself.
func (r ElasticNet) AsElasticNet() (ElasticNet, bool) { return r, true }

// StrongConvexity returns Lambda·minⱼ wⱼ.
func (r ElasticNet) StrongConvexity() float64 {
	mu := r.Lambda
	for _, w := range r.Weights {
		mu = math.Min(mu, r.Lambda*w)
	}
	return mu
}

// Value returns g(x). Each product is rounded on its own (the
// conversions): a compiler that fuses multiply-adds (GOAMD64=v3) would
// otherwise fuse them differently where this is inlined, and the
// certificates of one process and of one rank would differ in their last
// bits.
func (r ElasticNet) Value(x []float64) float64 {
	if r.Plain() {
		var abs, sq float64
		for _, v := range x {
			abs += math.Abs(v)
			sq += float64(v * v)
		}
		return float64(r.L1*abs) + float64(0.5*r.Lambda*sq)
	}
	var sum float64
	for j, v := range x {
		w := 1.0
		if r.Weights != nil {
			w = r.Weights[j]
		}
		c := 0.0
		if r.Center != nil {
			c = r.Center[j]
		}
		sum += float64(w * (float64(r.L1*math.Abs(v)) + float64(0.5*r.Lambda*(v-c)*(v-c))))
	}
	return sum
}

// ConjNeg returns g*(−v) = Σⱼ gⱼ*(−vⱼ). The methods call it with
// v = (1/n)·Σₖ yₖaₖ to evaluate the dual objective.
func (r ElasticNet) ConjNeg(v []float64) float64 {
	if r.Plain() {
		if r.Lambda == 0 {
			// g = L1·‖x‖₁: g* is the indicator of the box |vⱼ| ≤ L1.
			for _, vj := range v {
				if math.Abs(vj) > r.L1 {
					return math.Inf(1)
				}
			}
			return 0
		}
		var sum float64
		for _, vj := range v {
			if a := math.Abs(vj) - r.L1; a > 0 {
				sum += a * a
			}
		}
		return sum / (2 * r.Lambda)
	}
	var sum float64
	for j, vj := range v {
		l1, lam, shift := r.Coord(j)
		a := math.Abs(shift-vj) - l1
		if lam == 0 {
			if a > 0 {
				return math.Inf(1)
			}
			continue
		}
		if a > 0 {
			sum += a * a / (2 * lam)
		}
		if shift != 0 {
			sum -= 0.5 * shift * r.Center[j]
		}
	}
	return sum
}

// Prox sets dst to the proximal point of τg at v, coordinate by coordinate.
func (r ElasticNet) Prox(dst, v []float64, tau float64) {
	if r.Plain() {
		for j, vj := range v {
			dst[j] = r.ProxPlain(vj, tau)
		}
		return
	}
	for j, vj := range v {
		dst[j] = r.ProxCoord(j, vj, tau)
	}
}

// ProxCoord returns argmin_x gⱼ(x) + (x − v)²/(2τ): the soft-thresholding
// of v + τλⱼcⱼ at τlⱼ, shrunk by 1/(1 + τλⱼ).
func (r ElasticNet) ProxCoord(j int, v, tau float64) float64 {
	l1, lam, shift := r.Coord(j)
	v += tau * shift
	a := math.Abs(v) - tau*l1
	if a <= 0 {
		return 0
	}
	return math.Copysign(a, v) / (1 + tau*lam)
}

// ProxPlain is ProxCoord without centre and weights, for the hot loops.
func (r ElasticNet) ProxPlain(v, tau float64) float64 {
	a := math.Abs(v) - tau*r.L1
	if a <= 0 {
		return 0
	}
	return math.Copysign(a, v) / (1 + tau*r.Lambda)
}

// PrimalFromDual sets dst = ∇g*(−v).
func (r ElasticNet) PrimalFromDual(dst, v []float64) {
	if r.Plain() && r.Lambda > 0 {
		// The common case without per-coordinate lookups: soft(−v, L1)/λ.
		inv := 1 / r.Lambda
		for j, vj := range v {
			if a := math.Abs(vj) - r.L1; a > 0 {
				dst[j] = -math.Copysign(a, vj) * inv
			} else {
				dst[j] = 0
			}
		}
		return
	}
	for j, vj := range v {
		dst[j] = r.PrimalCoord(j, vj)
	}
}

// PrimalCoord returns xⱼ = ∇gⱼ*(−v) = soft(λⱼcⱼ − v, lⱼ)/λⱼ, the primal
// coordinate that matches the dual vector's vⱼ (it maximises −v·x − gⱼ(x));
// 0 where λⱼ = 0 and |v| ≤ lⱼ (any point of the dead zone then maximises).
func (r ElasticNet) PrimalCoord(j int, v float64) float64 {
	l1, lam, shift := r.Coord(j)
	s := shift - v
	a := math.Abs(s) - l1
	if a <= 0 || lam == 0 {
		return 0
	}
	return math.Copysign(a, s) / lam
}

// NeedStrongConvexity returns the error a method that needs a strongly
// convex g gives when g is not.
func NeedStrongConvexity(reg Regularizer, method string) error {
	if mu := reg.StrongConvexity(); !(mu > 0) {
		return fmt.Errorf("engine: the %s regularizer has strong convexity %g: %s needs a strongly convex regularizer (λ > 0 on every coordinate); "+
			"for the lasso or λ = 0 use a solver that takes them (adaspdc solvers lists them)", reg.Name(), mu, method)
	}
	return nil
}
