package newton

import (
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// cholMinPivot is the smallest pivot cholFactor accepts, relative to the
// scaled matrix's unit diagonal. A smaller one means the Hessian is
// singular to rounding (λ tiny against the data's curvature, or columns
// that repeat others): its solve would amplify rounding by 1/pivot, so
// newton falls back to conjugate gradients on the formed matrix for that
// step (no jitter: CG's truncated solve needs no factor, and a jitter
// large enough to matter would change the step).
const cholMinPivot = 1e-13

// cholFactor sets l to the lower Cholesky factor of
//
//	S (Hd + Λ) S,   S = diag(Hⱼⱼ)^(-1/2),  H = Hd + Λ,
//
// where hd is the data part Hd, d×d, row-major and symmetric (both
// triangles set), and returns scale = the diagonal of S. The symmetric
// (Jacobi) scaling gives the matrix a unit diagonal, which makes the
// factor, and so the step S(SHS)⁻¹S·(−∇P), the same for a rescaled
// feature up to the rounding of the entries (Aⱼ ← cAⱼ scales row and
// column j of H by c and Sⱼⱼ by 1/c), and is the scaling that nearly
// minimises the condition number among diagonal ones (van der Sluis,
// "Condition numbers and equilibration of matrices", Numer. Math. 1969).
//
// The factor is formed row by row, the dot-product ("Cholesky–
// Banachiewicz") order: with L row-major, Lᵢⱼ = (aᵢⱼ − Lᵢ,:ⱼ·Lⱼ,:ⱼ)/Lⱼⱼ
// and Lᵢᵢ = √(aᵢᵢ − ‖Lᵢ,:ᵢ‖²), so every inner loop is a dot product of
// two contiguous row prefixes; d³/6 multiply-adds. It reports false where
// a pivot falls below cholMinPivot.
func cholFactor(hd, lam, l, scale []float64, d int) bool {
	for i := range d {
		scale[i] = 1 / math.Sqrt(hd[i*d+i]+lam[i])
	}
	for i := range d {
		li, si := l[i*d:i*d+i+1], scale[i]
		hi := hd[i*d : i*d+i+1]
		for j := range i {
			lj := l[j*d : j*d+j+1]
			li[j] = (si*hi[j]*scale[j] - kernels.Dot(li[:j], lj[:j])) / lj[j]
		}
		piv := si*(hi[i]+lam[i])*si - kernels.Dot(li[:i], li[:i])
		if !(piv > cholMinPivot) {
			return false
		}
		li[i] = math.Sqrt(piv)
	}
	return true
}

// cholSolve sets x to the solution of H x = b from cholFactor's l and
// scale: x = S L⁻ᵀ L⁻¹ S b, by a forward substitution (dot products of
// L's rows) and a backward one (axpys of L's rows, so that L is read by
// rows again); b is not changed. 2d² multiply-adds.
func cholSolve(l, scale, b, x []float64, d int) {
	y := x
	for i := range d {
		li := l[i*d : i*d+i+1]
		y[i] = (scale[i]*b[i] - kernels.Dot(li[:i], y[:i])) / li[i]
	}
	for i := d - 1; i >= 0; i-- {
		li := l[i*d : i*d+i+1]
		y[i] /= li[i]
		kernels.Axpy(-y[i], li[:i], y[:i])
	}
	for i := range d {
		x[i] *= scale[i]
	}
}
