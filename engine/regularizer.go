package engine

import (
	"fmt"
	"math"
)

// Regularizer is the elastic-net penalty g(x) = L1·‖x‖₁ + (Lambda/2)·‖x‖²;
// L1 = 0 is plain L2 (ridge) regularization.
//
// g is separable and Lambda-strongly convex, and its conjugate is
// g*(w) = Σ_j (|w_j| − L1)₊²/(2·Lambda): it is finite and differentiable
// everywhere, which is what gives the primal-dual method its duality gap and
// its primal point x = ∇g*(−v). All methods are allocation-free and safe for
// concurrent use.
type Regularizer struct {
	Lambda float64 // weight of the L2 term, ≥ 0 (AdaSPDC needs > 0)
	L1     float64 // weight of the L1 term, ≥ 0
}

// Validate reports whether the regularizer is well defined: Lambda and L1
// finite and non-negative. Lambda = 0 (pure L1, or no regularizer) is a
// valid problem, which Certify evaluates; the methods that need strong
// convexity check StronglyConvex as well.
func (r Regularizer) Validate() error {
	if math.IsNaN(r.Lambda) || math.IsInf(r.Lambda, 0) {
		return fmt.Errorf("engine: regularizer Lambda = %g is not finite", r.Lambda)
	}
	if r.Lambda < 0 {
		return fmt.Errorf("engine: regularizer Lambda = %g must be ≥ 0 (and > 0 for AdaSPDC, which needs a strongly convex regularizer)", r.Lambda)
	}
	if math.IsNaN(r.L1) || math.IsInf(r.L1, 0) {
		return fmt.Errorf("engine: regularizer L1 = %g is not finite", r.L1)
	}
	if r.L1 < 0 {
		return fmt.Errorf("engine: regularizer L1 = %g must be >= 0", r.L1)
	}
	return nil
}

// StronglyConvex reports why g is not strongly convex (Lambda = 0), which
// AdaSPDC and SPDC need, or nil.
func (r Regularizer) StronglyConvex() error {
	if !(r.Lambda > 0) {
		return fmt.Errorf("engine: regularizer Lambda = %g must be > 0: AdaSPDC needs a strongly convex regularizer; "+
			"pure L1 (the lasso) is not supported by this solver yet", r.Lambda)
	}
	return nil
}

// Value returns g(x) = L1·‖x‖₁ + (Lambda/2)·‖x‖².
func (r Regularizer) Value(x []float64) float64 {
	var abs, sq float64
	for _, v := range x {
		abs += math.Abs(v)
		sq += v * v
	}
	return r.L1*abs + 0.5*r.Lambda*sq
}

// ConjNeg returns g*(−v) = Σ_j (|v_j| − L1)₊²/(2·Lambda). The solver calls it
// with v = (1/n)·Σ_k y_k·a_k to evaluate the dual objective; g is symmetric,
// so g*(−v) = g*(v).
func (r Regularizer) ConjNeg(v []float64) float64 {
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

// Prox returns the proximal point of one coordinate,
// argmin_x L1·|x| + (Lambda/2)·x² + (x − v)²/(2τ), for a finite step τ > 0:
// the soft-thresholding of v at τ·L1, shrunk by 1/(1 + τ·Lambda).
func (r Regularizer) Prox(v, tau float64) float64 {
	a := math.Abs(v) - tau*r.L1
	if a <= 0 {
		return 0
	}
	return math.Copysign(a, v) / (1 + tau*r.Lambda)
}

// PrimalFromDual returns the coordinate x = ∇g*(−v) =
// −sign(v)·(|v| − L1)₊/Lambda, the primal point that matches the dual
// vector v = (1/n)·Σ_k y_k·a_k (it maximises −v·x − g(x)).
func (r Regularizer) PrimalFromDual(v float64) float64 {
	a := math.Abs(v) - r.L1
	if a <= 0 {
		return 0
	}
	return -math.Copysign(a, v) / r.Lambda
}
