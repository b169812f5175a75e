package newton

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/sched"
)

// TestCholFactor checks the blocked factor against its definition,
// L·Lᵀ = S(Hd + Λ)S with S the Jacobi scaling, at widths that leave 0 to 3
// rows outside the blocks of four, and that cholSolve then solves
// (Hd + Λ)x = b. A Hessian singular to rounding (a repeated column,
// Λ = 0) must be refused.
func TestCholFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 24, 31, 64, 66, 150} {
		hd, lam := randomHessian(rng, d, d+5)
		l, scale := make([]float64, d*d), make([]float64, d)
		if !cholFactor(hd, lam, l, scale, d) {
			t.Fatalf("d=%d: the factor of a positive definite matrix failed", d)
		}
		for i := range d {
			for j := 0; j <= i; j++ {
				var s, mag float64
				for k := 0; k <= j; k++ {
					s += l[i*d+k] * l[j*d+k]
					mag += math.Abs(l[i*d+k] * l[j*d+k])
				}
				want := scale[i] * hd[i*d+j] * scale[j]
				if i == j {
					want = scale[i] * (hd[i*d+i] + lam[i]) * scale[i]
				}
				if math.Abs(s-want) > 1e-13*(mag+1) {
					t.Fatalf("d=%d: (L·Lᵀ)[%d][%d] = %v, want %v", d, i, j, s, want)
				}
			}
		}
		// Only the upper triangle is read: with NaN below the diagonal,
		// the same factor, bit for bit.
		upper := slices.Clone(hd)
		for i := range d {
			for j := range i {
				upper[i*d+j] = math.NaN()
			}
		}
		if lu, su := make([]float64, d*d), make([]float64, d); !cholFactor(upper, lam, lu, su, d) || !slices.Equal(lu, l) || !slices.Equal(su, scale) {
			t.Fatalf("d=%d: the factor read the lower triangle", d)
		}
		// The same factor, bit for bit, with the blocks shared among two
		// and three workers.
		for _, threads := range []int{2, 3} {
			pool := sched.NewPool(threads)
			lp, sp := make([]float64, d*d), make([]float64, d)
			if !cholFactorOn(pool, hd, lam, lp, sp, d) || !slices.Equal(lp, l) || !slices.Equal(sp, scale) {
				t.Fatalf("d=%d: the factor on %d workers differs from one worker's", d, threads)
			}
			pool.Close()
		}
		b, x := make([]float64, d), make([]float64, d)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		cholSolve(l, scale, b, x, d)
		for i := range d {
			r, mag := -b[i], math.Abs(b[i])
			for j := range d {
				h := hd[i*d+j]
				if i == j {
					h += lam[i]
				}
				r += h * x[j]
				mag += math.Abs(h * x[j])
			}
			if math.Abs(r) > 1e-9*mag {
				t.Fatalf("d=%d: residual %v of row %d, against %v", d, r, i, mag)
			}
		}

		if d < 2 {
			continue
		}
		// Column rep repeats column 0 and Λ = 0: singular, and where
		// rep = 6 the pivot fails in the second block, while the workers
		// of the later blocks wait for it.
		rep := min(6, d-1)
		for i := range d {
			hd[i*d+rep] = hd[i*d]
			hd[rep*d+i] = hd[i]
		}
		hd[rep*d+rep] = hd[0]
		clear(lam)
		if cholFactor(hd, lam, l, scale, d) {
			t.Fatalf("d=%d: the factor of a singular matrix succeeded", d)
		}
		pool := sched.NewPool(2)
		if cholFactorOn(pool, hd, lam, l, scale, d) {
			t.Fatalf("d=%d: the factor of a singular matrix on two workers succeeded", d)
		}
		pool.Close()
	}
}

// randomHessian returns Aᵀ diag(c) A for a random m×d matrix A with some
// zero entries and weights c > 0, row-major with both triangles set, and
// a small positive Λ.
func randomHessian(rng *rand.Rand, d, m int) (hd, lam []float64) {
	a := make([]float64, m*d)
	for i := range a {
		if rng.IntN(3) > 0 {
			a[i] = rng.NormFloat64() * float64(1+i%5)
		}
	}
	hd = make([]float64, d*d)
	for k := range m {
		c := 0.1 + rng.Float64()
		row := a[k*d : k*d+d]
		for i, ai := range row {
			for j, aj := range row {
				hd[i*d+j] += c * ai * aj
			}
		}
	}
	lam = make([]float64, d)
	for i := range lam {
		lam[i] = 1e-3 * (1 + rng.Float64())
	}
	return hd, lam
}

// BenchmarkCholFactor factors a Hessian of w8a's width, d = 300, on one
// worker and with the blocks shared among two.
func BenchmarkCholFactor(b *testing.B) {
	const d = 300
	hd, lam := randomHessian(rand.New(rand.NewPCG(1, 2)), d, 2*d)
	l, scale := make([]float64, d*d), make([]float64, d)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			pool := sched.NewPool(threads)
			defer pool.Close()
			for b.Loop() {
				if !cholFactorOn(pool, hd, lam, l, scale, d) {
					b.Fatal("the factor failed")
				}
			}
		})
	}
}
