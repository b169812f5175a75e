package newton

import (
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// curvaturePairs is the memory of L-BFGS (Nocedal & Wright, §7.2) that the
// multinomial model's L-BFGS and OWL-QN share: the last lbfgsMemory pairs
// sᵢ = xᵢ₊₁ − xᵢ, yᵢ = gᵢ₊₁ − gᵢ, oldest first, with ρᵢ = 1/yᵢᵀsᵢ, which
// define the inverse-Hessian estimate H that the two-loop recursion
// (Alg. 7.4) applies.
type curvaturePairs struct {
	s, y  [][]float64 // the pairs, oldest first
	rho   []float64   // 1/yᵢᵀsᵢ
	alpha []float64   // the two-loop recursion's coefficients
}

func newCurvaturePairs() curvaturePairs {
	return curvaturePairs{alpha: make([]float64, lbfgsMemory)}
}

// twoLoop sets dir = H·g by the two-loop recursion, from H₀ = γI with
// γ = sᵀy/yᵀy of the newest pair (Eq. 7.20), or, with no pair yet,
// γ = 1/max(1, ‖g‖), so that the first step moves at most a unit; gNormSq
// is ‖g‖², which the caller has.
func (p *curvaturePairs) twoLoop(dir, g []float64, gNormSq float64) {
	copy(dir, g)
	for i := len(p.s) - 1; i >= 0; i-- {
		p.alpha[i] = p.rho[i] * kernels.Dot(p.s[i], dir)
		kernels.Axpy(-p.alpha[i], p.y[i], dir)
	}
	gamma := 1 / math.Max(1, math.Sqrt(gNormSq))
	if m := len(p.s); m > 0 {
		gamma = 1 / (p.rho[m-1] * kernels.Dot(p.y[m-1], p.y[m-1]))
	}
	for j := range dir {
		dir[j] *= gamma
	}
	for i := range p.s {
		b := p.rho[i] * kernels.Dot(p.y[i], dir)
		kernels.Axpy(p.alpha[i]-b, p.s[i], dir)
	}
}

// next returns two vectors of length n for the next pair: the oldest
// pair's, dropped from the memory, once it is full, else new ones.
func (p *curvaturePairs) next(n int) (sv, yv []float64) {
	if len(p.s) == lbfgsMemory {
		sv, yv = p.s[0], p.y[0]
		p.s, p.y, p.rho = p.s[1:], p.y[1:], p.rho[1:]
		return sv, yv
	}
	return make([]float64, n), make([]float64, n)
}

// push stores the pair (sv, yv) where sᵀy is positive beyond rounding, so
// that H stays positive definite; a pair of no curvature is skipped.
func (p *curvaturePairs) push(sv, yv []float64) {
	if sy := kernels.Dot(sv, yv); sy > 1e-12*math.Sqrt(kernels.Dot(sv, sv)*kernels.Dot(yv, yv)) {
		p.s, p.y, p.rho = append(p.s, sv), append(p.y, yv), append(p.rho, 1/sy)
	}
}

// reset forgets every pair: H is γI again.
func (p *curvaturePairs) reset() {
	p.s, p.y, p.rho = p.s[:0], p.y[:0], p.rho[:0]
}
