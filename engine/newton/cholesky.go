package newton

import (
	"math"
	"runtime"
	"sync/atomic"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
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
// where hd is the data part Hd, d×d, row-major and symmetric, of which
// only the upper triangle is read (formHessian forms no other), and
// returns scale = the diagonal of S. The symmetric
// (Jacobi) scaling gives the matrix a unit diagonal, which makes the
// factor, and so the step S(SHS)⁻¹S·(−∇P), the same for a rescaled
// feature up to the rounding of the entries (Aⱼ ← cAⱼ scales row and
// column j of H by c and Sⱼⱼ by 1/c), and is the scaling that nearly
// minimises the condition number among diagonal ones (van der Sluis,
// "Condition numbers and equilibration of matrices", Numer. Math. 1969).
//
// The factor is formed by rows in blocks of four, in the dot-product
// ("Cholesky–Banachiewicz") order: with L row-major,
// Lᵢⱼ = (aᵢⱼ − Lᵢ,:ⱼ·Lⱼ,:ⱼ)/Lⱼⱼ and Lᵢᵢ = √(aᵢᵢ − ‖Lᵢ,:ᵢ‖²). For the rows
// I = i₀…i₀+3 and the columns J = j₀…j₀+3 (j₀ < i₀, or J = I on the
// diagonal), the products over the columns before j₀ come from one
// kernels.DotTile4, which reads the eight row prefixes once for the
// sixteen sums; the few columns from j₀ up to each j are added one by
// one. A row-at-a-time factor called Dot d²/2 times on prefixes of
// average length d/3, each call reading its two rows and reducing its
// vector lanes alone (bench/RESULTS.md, "Narrow data: the factor by
// tiles, and the rows of tiny curvature left out"). The last d mod 4
// rows take the row-at-a-time order. d³/6 multiply-adds either way. It
// reports false where a pivot falls below cholMinPivot.
func cholFactor(hd, lam, l, scale []float64, d int) bool {
	return cholFactorOn(nil, hd, lam, l, scale, d)
}

// cholFactorOn is cholFactor with the blocks of four rows shared among
// the workers of pool (nil: the caller alone), block b going to worker
// b mod t. A block's tile with an earlier block waits until that block
// is done, so the workers go down the matrix a block apart, each block
// taking one more tile than the last; every entry is computed as on one
// worker, so the factor is the same bits whatever the workers. The last
// d mod 4 rows follow on the caller.
func cholFactorOn(pool *sched.Pool, hd, lam, l, scale []float64, d int) bool {
	for i := range d {
		scale[i] = 1 / math.Sqrt(hd[i*d+i]+lam[i])
	}
	f := cholFactorization{hd: hd, lam: lam, l: l, scale: scale, d: d, inv: make([]float64, d)}
	blocks, t := d/4, 1
	if pool != nil {
		t = pool.Threads()
	}
	if t > 1 && blocks >= 2*t {
		// done[b] is set once block b is factored; failed once a pivot
		// fails or a worker leaves early, which releases every wait.
		done := make([]atomic.Bool, blocks)
		var failed atomic.Bool
		wait := func(jb int) bool {
			for i := 0; !done[jb].Load(); i++ {
				if failed.Load() {
					return false
				}
				if i&63 == 63 {
					runtime.Gosched()
				}
			}
			return true
		}
		err := pool.Run(func(w int) {
			finished := false
			defer func() {
				if !finished {
					failed.Store(true) // a panic: release the others
				}
			}()
			for b := w; b < blocks; b += t {
				if !f.block(b, wait) {
					failed.Store(true)
					break
				}
				done[b].Store(true)
			}
			finished = true
		})
		if err != nil {
			panic(err) // a bug: the blocks lie in the matrix
		}
		if failed.Load() {
			return false
		}
	} else {
		for b := range blocks {
			if !f.block(b, nil) {
				return false
			}
		}
	}
	return f.rowsFrom(4 * blocks)
}

// cholFactorization is the state of one factor: its inputs, the factor
// being formed in l, and inv, 1/Lⱼⱼ of the rows done, a product being
// cheaper than a division in the blocks' inner loops.
type cholFactorization struct {
	hd, lam, l, scale, inv []float64
	d                      int
}

// block factors the rows 4b…4b+3, given the rows before them, and
// reports false where a pivot fails (or, with wait, where waiting for an
// earlier block failed). wait(jb), where not nil, returns once block jb
// is done.
func (f *cholFactorization) block(b int, wait func(jb int) bool) bool {
	hd, lam, l, scale, inv, d := f.hd, f.lam, f.l, f.scale, f.inv, f.d
	var t [16]float64
	i0 := 4 * b
	// The block's rows start as the scaled matrix's, from its columns
	// i₀…i₀+3 in the upper triangle: four adjacent entries of each row j
	// above; each entry then becomes L's in place.
	s0, s1, s2, s3 := scale[i0], scale[i0+1], scale[i0+2], scale[i0+3]
	l0, l1, l2, l3 := l[i0*d:i0*d+i0+3], l[(i0+1)*d:(i0+1)*d+i0+3], l[(i0+2)*d:(i0+2)*d+i0+3], l[(i0+3)*d:(i0+3)*d+i0+3]
	for j := range i0 {
		h, sj := hd[j*d+i0:j*d+i0+4], scale[j]
		l0[j], l1[j], l2[j], l3[j] = s0*h[0]*sj, s1*h[1]*sj, s2*h[2]*sj, s3*h[3]*sj
	}
	for r := 1; r < 4; r++ {
		i := i0 + r
		for j := i0; j < i; j++ {
			l[i*d+j] = scale[i] * hd[j*d+i] * scale[j]
		}
	}
	for j0 := 0; j0 < i0; j0 += 4 {
		if wait != nil && !wait(j0/4) {
			return false
		}
		kernels.DotTile4(&t, l[i0*d:], d, l[j0*d:], d, j0)
		// The columns j₀…j₀+3 of the four rows, by forward substitution
		// with the 4×4 lower block of rows J, unrolled so that its ten
		// entries stay in registers.
		j1, j2, j3 := l[(j0+1)*d+j0:], l[(j0+2)*d+j0:], l[(j0+3)*d+j0:]
		l10, l20, l21, l30, l31, l32 := j1[0], j2[0], j2[1], j3[0], j3[1], j3[2]
		v0, v1, v2, v3 := inv[j0], inv[j0+1], inv[j0+2], inv[j0+3]
		for r := range 4 {
			li := l[(i0+r)*d+j0 : (i0+r)*d+j0+4]
			x0 := (li[0] - t[4*r]) * v0
			x1 := (li[1] - t[4*r+1] - x0*l10) * v1
			x2 := (li[2] - t[4*r+2] - x0*l20 - x1*l21) * v2
			x3 := (li[3] - t[4*r+3] - x0*l30 - x1*l31 - x2*l32) * v3
			li[0], li[1], li[2], li[3] = x0, x1, x2, x3
		}
	}
	kernels.DotTile4(&t, l[i0*d:], d, l[i0*d:], d, i0)
	for r := range 4 {
		i := i0 + r
		li := l[i*d+i0 : i*d+i+1]
		for c := range r {
			j := i0 + c
			lj := l[j*d+i0 : j*d+j]
			s := t[4*r+c]
			for k, v := range lj {
				s += li[k] * v
			}
			li[c] = (li[c] - s) * inv[j]
		}
		s := t[5*r]
		for _, v := range li[:r] {
			s += v * v
		}
		if !cholPivot(li, scale[i]*(hd[i*d+i]+lam[i])*scale[i]-s) {
			return false
		}
		inv[i] = 1 / li[r]
	}
	return true
}

// rowsFrom factors the rows from i on, one at a time, in the dot-product
// order, given the rows before them.
func (f *cholFactorization) rowsFrom(i int) bool {
	hd, lam, l, scale, d := f.hd, f.lam, f.l, f.scale, f.d
	for ; i < d; i++ {
		li := l[i*d : i*d+i+1]
		for j := range i {
			lj := l[j*d : j*d+j+1]
			li[j] = (scale[i]*hd[j*d+i]*scale[j] - kernels.Dot(li[:j], lj[:j])) / lj[j]
		}
		if !cholPivot(li, scale[i]*(hd[i*d+i]+lam[i])*scale[i]-kernels.Dot(li[:i], li[:i])) {
			return false
		}
	}
	return true
}

// cholPivot sets the last element of the factor's row li to √piv and
// reports true, or reports false where piv is below cholMinPivot.
func cholPivot(li []float64, piv float64) bool {
	if !(piv > cholMinPivot) {
		return false
	}
	li[len(li)-1] = math.Sqrt(piv)
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
