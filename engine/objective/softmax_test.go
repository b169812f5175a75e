package objective

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// The softmax terms are the definitions, and at y = ∇φ(z) the conjugate
// closes the Fenchel–Young equality φ(z) + φ*(y) = yᵀz.
func TestSoftmaxTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		K := 2 + rng.IntN(6)
		z := make([]float64, K)
		for j := range z {
			z[j] = 30 * rng.NormFloat64()
		}
		c := rng.IntN(K)
		y := make([]float64, K)
		val, conj := SoftmaxTerms(z, c, y)
		m := math.Inf(-1)
		for _, v := range z {
			m = math.Max(m, v)
		}
		var s float64
		for _, v := range z {
			s += math.Exp(v - m)
		}
		if want := m + math.Log(s) - z[c]; math.Abs(val-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Fatalf("φ = %v, want %v", val, want)
		}
		var sum, yz float64
		for j := range y {
			sum += y[j]
			yz += y[j] * z[j]
		}
		if math.Abs(sum) > 1e-12 {
			t.Fatalf("Σ ∇φ = %v, want 0", sum)
		}
		if d := val + conj - yz; math.Abs(d) > 1e-9*math.Max(1, math.Abs(yz)) {
			t.Fatalf("φ(z) + φ*(y) − yᵀz = %v, want 0", d)
		}
		if g := SoftmaxConj(y, c); math.Abs(g-conj) > 1e-12*math.Max(1, math.Abs(conj)) {
			t.Fatalf("SoftmaxConj = %v, SoftmaxTerms %v", g, conj)
		}
	}
	if g := SoftmaxConj([]float64{0.5, 0.5, 0}, 0); !math.IsInf(g, 1) {
		t.Errorf("SoftmaxConj outside the simplex = %v, want +Inf", g)
	}
}

func multinomialData(n, d, K int, seed uint64) Multinomial {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	class := make([]int, n)
	for k := range n {
		class[k] = rng.IntN(K)
		for j := range d {
			if rng.Float64() < 0.4 || j == class[k] {
				x.Indices = append(x.Indices, int32(j))
				v := rng.NormFloat64()
				if j == class[k] {
					v += 2
				}
				x.Values = append(x.Values, v)
			}
		}
		x.Indptr[k+1] = int64(len(x.Indices))
	}
	return Multinomial{X: x, Class: class, K: K, Reg: ElasticNet{Lambda: 0.05}}
}

// The multinomial certificate is the definition, summed plainly, and does
// not depend on the number of workers.
func TestMultinomialEvaluator(t *testing.T) {
	p := multinomialData(500, 12, 4, 2)
	rng := rand.New(rand.NewPCG(3, 3))
	w := make([]float64, p.Dim())
	for i := range w {
		w[i] = 0.3 * rng.NormFloat64()
	}
	// The definition.
	n, K := p.X.Rows, p.K
	v := make([]float64, p.Dim())
	var ls, cs float64
	z, y := make([]float64, K), make([]float64, K)
	for k := range n {
		val, idx := p.X.Row(k)
		p.Margins(val, idx, w, z)
		m := math.Inf(-1)
		for _, zz := range z {
			m = math.Max(m, zz)
		}
		var s float64
		for _, zz := range z {
			s += math.Exp(zz - m)
		}
		ls += m + math.Log(s) - z[p.Class[k]]
		for c := range K {
			pc := math.Exp(z[c]-m) / s
			cs += pc * math.Log(pc)
			y[c] = pc
		}
		y[p.Class[k]]--
		for q, j := range idx {
			for c := range K {
				v[int(j)*K+c] += val[q] * y[c] / float64(n)
			}
		}
	}
	wantP := ls/float64(n) + p.Reg.Value(w)
	wantD := -cs/float64(n) - p.Reg.ConjNeg(v)
	var first Certificate
	for workers := 1; workers <= 4; workers++ {
		c, err := NewMultinomialEvaluator(p, workers).At(w)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.Primal-wantP) > 1e-12*math.Abs(wantP) || math.Abs(c.Dual-wantD) > 1e-11*math.Max(1, math.Abs(wantD)) {
			t.Fatalf("%d workers: P = %.17g, D = %.17g; the definition gives %.17g, %.17g", workers, c.Primal, c.Dual, wantP, wantD)
		}
		if workers == 1 {
			first = c
		} else if c != first {
			t.Errorf("%d workers: %+v, one worker %+v", workers, c, first)
		}
	}
	if _, err := NewMultinomialEvaluator(p, 1).At(w[:5]); err == nil {
		t.Error("5 weights: no error")
	}
	bad := p
	bad.Class = append([]int(nil), p.Class...)
	bad.Class[3] = 9
	if err := bad.Validate(); err == nil {
		t.Error("class 9 of 4: no error")
	}
}

// With an L1 term and no ridge term the dual point is scaled into the
// domain of g*, and the gap stays a bound.
func TestMultinomialEvaluatorL1(t *testing.T) {
	p := multinomialData(300, 8, 3, 4)
	p.Reg = ElasticNet{L1: 1e-3}
	e := NewMultinomialEvaluator(p, 2)
	c, err := e.At(make([]float64, p.Dim()))
	if err != nil {
		t.Fatal(err)
	}
	if !(e.Scale() < 1) || math.IsInf(c.Dual, 0) || !(c.Gap >= 0) {
		t.Errorf("scale %g, certificate %+v: want a scaled, finite dual and a gap ≥ 0", e.Scale(), c)
	}
}
