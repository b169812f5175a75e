package newton

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAddOuterUpper checks the blocked outer product against the plain
// double loop, on rows of every length up to 13 (each remainder of the
// blocking by four), scattered and consecutive, and that it writes the
// upper triangle only.
func TestAddOuterUpper(t *testing.T) {
	const d = 40
	rng := rand.New(rand.NewPCG(1, 2))
	for m := 0; m <= 13; m++ {
		for _, consecutive := range []bool{false, true} {
			idx := make([]int32, 0, m)
			if consecutive {
				j0 := rng.IntN(d - m + 1)
				for p := range m {
					idx = append(idx, int32(j0+p))
				}
			} else {
				for _, j := range rng.Perm(d)[:m] {
					idx = append(idx, int32(j))
				}
				slices.Sort(idx)
			}
			val := make([]float64, m)
			for p := range val {
				val[p] = rng.NormFloat64()
			}
			h, want := make([]float64, d*d), make([]float64, d*d)
			for i := range h {
				h[i] = rng.NormFloat64()
				want[i] = h[i]
			}
			c := 0.75
			addOuterUpper(h, d, c, val, idx)
			for p, i := range idx {
				for q := p; q < m; q++ {
					want[int(i)*d+int(idx[q])] += c * val[p] * val[q]
				}
			}
			for i := range h {
				if diff := h[i] - want[i]; diff > 1e-14 || diff < -1e-14 {
					t.Fatalf("m = %d, consecutive %v: entry (%d, %d) = %g, want %g", m, consecutive, i/d, i%d, h[i], want[i])
				}
			}
		}
	}
}
