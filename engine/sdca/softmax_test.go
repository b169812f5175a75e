package sdca

import (
	"math"
	"math/rand/v2"
	"testing"
)

// softmaxProx meets its optimality conditions: p in the simplex and
// log pⱼ + s·pⱼ − tⱼ the same (−μ) for every j.
func TestSoftmaxProxKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		K := 2 + rng.IntN(20)
		tv := make([]float64, K)
		for j := range tv {
			tv[j] = 20 * rng.NormFloat64()
		}
		s := math.Pow(10, 6*rng.Float64()-4)
		p := make([]float64, K)
		softmaxProx(tv, s, p)
		var sum float64
		mu := math.NaN()
		for j, v := range p {
			if !(v >= 0) {
				t.Fatalf("p[%d] = %v", j, v)
			}
			sum += v
			if v < 1e-200 {
				continue // log pⱼ underflows: the condition holds in the limit
			}
			m := tv[j] - math.Log(v) - s*v
			if math.IsNaN(mu) {
				mu = m
			} else if math.Abs(m-mu) > 1e-9*math.Max(1, math.Abs(mu)) {
				t.Fatalf("K = %d, s = %g: μ = %v at %d, %v before", K, s, m, j, mu)
			}
		}
		if math.Abs(sum-1) > 1e-14 {
			t.Fatalf("Σp = %.17g", sum)
		}
	}
}
