package kernels

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestDotTile4 compares every implementation's DotTile4 with the sixteen
// plain sums, for every k up to 70 and some longer, at strides equal to k
// and wider, with the panels ending where their memory does: a read past
// the last row's k elements faults.
func TestDotTile4(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(5, 6))
		ks := []int{}
		for k := 0; k <= 70; k++ {
			ks = append(ks, k)
		}
		ks = append(ks, 100, 255, 256, 257, 301)
		for _, k := range ks {
			for _, pad := range []int{0, 3, 8} {
				lda, ldb := k+pad, k+2*pad+1
				a := guardedFloat64s(t, 3*lda+k)
				b := guardedFloat64s(t, 3*ldb+k)
				randFloats(rng, a)
				randFloats(rng, b)
				var got, twin [16]float64
				im.dotTile4(&got, a, lda, b, ldb, k)
				genericImpl.dotTile4(&twin, a, lda, b, ldb, k)
				for r := range 4 {
					for c := range 4 {
						want, mag := dotNaive(a[r*lda:r*lda+k], b[c*ldb:c*ldb+k])
						if g := got[4*r+c]; !near(g, want, mag) || !near(g, twin[4*r+c], mag) || math.IsNaN(g) {
							t.Fatalf("k=%d lda=%d ldb=%d: [%d][%d] = %v, want %v (pure-Go twin %v)", k, lda, ldb, r, c, g, want, twin[4*r+c])
						}
					}
				}
			}
		}
	})
}

// TestDotTile4Panics checks that every implementation refuses panels too
// short for four rows, a stride below k and a negative k.
func TestDotTile4Panics(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		var dst [16]float64
		a := make([]float64, 3*10+10)
		mustPanic(t, errTile, func() { DotTile4(&dst, a[:39], 10, a, 10, 10) })
		mustPanic(t, errTile, func() { DotTile4(&dst, a, 10, a[:39], 10, 10) })
		mustPanic(t, errTile, func() { DotTile4(&dst, a, 9, a, 10, 10) })
		mustPanic(t, errTile, func() { DotTile4(&dst, a, 10, a, 10, -1) })
		DotTile4(&dst, a, 10, a, 10, 10)
	})
}
