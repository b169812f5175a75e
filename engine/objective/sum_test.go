package objective

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestAddProduct checks AddProduct against Neumaier's branching form, bit
// for bit, and the carried sum against the exact sum of the products, on
// terms that cancel by up to twelve orders of magnitude: within the
// compensated sum's bound 2ε|S| + 2nε²Σ|terms| (Higham, Accuracy and
// Stability of Numerical Algorithms, §4.3), where a plain sum's error
// grows as nεΣ|terms|.
func TestAddProduct(t *testing.T) {
	neumaier := func(s, c, y, a float64) (float64, float64) {
		p := float64(y * a) // rounded, as AddProduct's; not fused into s + p
		e := math.FMA(y, a, -p)
		u := s + p
		if math.Abs(s) >= math.Abs(p) {
			c += ((s - u) + p) + e
		} else {
			c += ((p - u) + s) + e
		}
		return u, c
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		var s, c, s2, c2, abs float64
		exact := new(big.Float).SetPrec(2048)
		for k := range 500 {
			y := (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(13)-6))
			a := rng.NormFloat64()
			if k%2 == 1 && trial%2 == 0 {
				// Undo most of the sum so far: heavy cancellation.
				a = -s / y * (1 - 1e-9*rng.Float64())
			}
			s, c = AddProduct(s, c, y, a)
			s2, c2 = neumaier(s2, c2, y, a)
			if s != s2 || c != c2 {
				t.Fatalf("trial %d, term %d: AddProduct gives (%v, %v), Neumaier (%v, %v)", trial, k, s, c, s2, c2)
			}
			abs += math.Abs(y * a)
			exact.Add(exact, new(big.Float).SetPrec(2048).Mul(big.NewFloat(y), big.NewFloat(a)))
		}
		want, _ := exact.Float64()
		got := s + c
		const eps = 0x1p-53
		if math.Abs(got-want) > 2*eps*math.Abs(want)+2*500*eps*eps*abs {
			t.Fatalf("trial %d: compensated sum %v, exact %v (plain %v)", trial, got, want, s)
		}
	}
}
