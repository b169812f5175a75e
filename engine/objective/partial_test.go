package objective

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// rowsOf returns rows lo:hi of p as a problem of its own (the columns
// kept), as one rank of a distributed run holds them.
func rowsOf(p Problem, lo, hi int) Problem {
	x := p.X
	a, b := x.Indptr[lo], x.Indptr[hi]
	indptr := make([]int64, hi-lo+1)
	for k := range indptr {
		indptr[k] = x.Indptr[lo+k] - a
	}
	q := p
	q.X = &sparse.CSR{Rows: hi - lo, Cols: x.Cols, Indptr: indptr, Indices: x.Indices[a:b], Values: x.Values[a:b]}
	q.B = p.B[lo:hi]
	if p.SampleWeights != nil {
		q.SampleWeights = p.SampleWeights[lo:hi]
	}
	return q
}

// TestPartialIsAtOnOneRank checks that on one rank the assembled
// certificate is AtDualVector's and the dual sum times 1/n is At's dual
// vector, to the bit, on several workers, with sample weights and an L1
// term; and that over three ranks the summed partials give the whole
// problem's certificate to rounding.
func TestPartialIsAtOnOneRank(t *testing.T) {
	for _, c := range []struct {
		loss    Loss
		reg     Regularizer
		weights bool
	}{
		{Logistic{}, ElasticNet{Lambda: 1e-2}, false},
		{SquaredHinge{}, ElasticNet{Lambda: 1e-3, L1: 1e-2}, false},
		{Squared{}, ElasticNet{Lambda: 1e-2}, true},
		{Hinge{}, ElasticNet{Lambda: 1e-2}, false},
	} {
		p := randomProblem(9000, 60, c.loss, c.reg, 5) // three chunks of rows
		rng := rand.New(rand.NewPCG(7, 7))
		if c.weights {
			p.SampleWeights = make([]float64, p.X.Rows)
			for k := range p.SampleWeights {
				p.SampleWeights[k] = 0.5 + rng.Float64()
			}
		}
		x := make([]float64, p.X.Cols)
		for j := range x {
			x[j] = rng.NormFloat64() * 0.1
		}
		y := make([]float64, p.X.Rows)
		for k := range y {
			y[k] = c.loss.DualFeasible(-p.B[k]*rng.Float64(), p.B[k])
		}
		for _, workers := range []int{1, 3} {
			e := NewEvaluator(p, workers)
			want, err := e.At(x, y, OwnDuals)
			if err != nil {
				t.Fatal(err)
			}
			v := append([]float64(nil), e.DualVector()...)
			sum := make([]float64, p.X.Cols)
			if err := e.DualSum(y, sum); err != nil {
				t.Fatal(err)
			}
			inv := 1 / float64(p.X.Rows)
			for j := range sum {
				if got := sum[j] * inv; got != v[j] {
					t.Fatalf("%s, %d workers: v[%d] = %.17g from the dual sum, At's %.17g", c.loss.Name(), workers, j, got, v[j])
				}
			}
			part, err := e.PartialAt(x, y)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Assemble(p.Reg, x, v, part, p.X.Rows)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s, %d workers: assembled %+v, At %+v", c.loss.Name(), workers, got, want)
			}
		}
		// Three ranks of unequal shares, one of them empty.
		var total Partial
		vsum := make([]float64, p.X.Cols)
		for _, r := range [][2]int{{0, 4000}, {4000, 4000}, {4000, 9000}} {
			q := rowsOf(p, r[0], r[1])
			e := NewEvaluator(q, 2)
			part, err := e.PartialAt(x, y[r[0]:r[1]])
			if err != nil {
				t.Fatal(err)
			}
			total.Loss += part.Loss
			total.Conj += part.Conj
			s := make([]float64, p.X.Cols)
			if err := e.DualSum(y[r[0]:r[1]], s); err != nil {
				t.Fatal(err)
			}
			for j := range s {
				vsum[j] += s[j]
			}
		}
		for j := range vsum {
			vsum[j] /= float64(p.X.Rows)
		}
		got, err := Assemble(p.Reg, x, vsum, total, p.X.Rows)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := NewEvaluator(p, 1).At(x, y, OwnDuals)
		if math.Abs(got.Primal-want.Primal) > 1e-12*math.Max(1, math.Abs(want.Primal)) || math.Abs(got.Dual-want.Dual) > 1e-12*math.Max(1, math.Abs(want.Dual)) {
			t.Errorf("%s: three ranks assembled P %.15g D %.15g, one rank P %.15g D %.15g", c.loss.Name(), got.Primal, got.Dual, want.Primal, want.Dual)
		}
	}
}

// TestAssembleRefusesIndicator checks that a regularizer whose conjugate
// is an indicator, at a v outside its domain, is refused rather than
// certified with an infinite dual.
func TestAssembleRefusesIndicator(t *testing.T) {
	reg := ElasticNet{L1: 1e-3}
	if _, err := Assemble(reg, []float64{0}, []float64{1}, Partial{}, 10); err != ErrPartialIndicator {
		t.Fatalf("got %v, want ErrPartialIndicator", err)
	}
	if _, err := Assemble(reg, []float64{0}, []float64{1}, Partial{}, 0); err == nil {
		t.Fatal("no error for zero rows")
	}
}

// TestDualPlane checks D on a plane of dual points against the
// certificate at each point: with every row's conjugate term in Conj,
// DualPlane.At(γ, β, Conj) is AtDualVector's dual value at
// y₀ + γΔy + βp and the v of that point, to rounding (the quadratic of
// plain L2 rounds otherwise than g*), for plain L2, an elastic net with an
// L1 term and one with a centre and weights.
func TestDualPlane(t *testing.T) {
	const n, d = 600, 40
	rng := rand.New(rand.NewPCG(3, 3))
	centre, weights := make([]float64, d), make([]float64, d)
	for j := range d {
		centre[j], weights[j] = 0.1*rng.NormFloat64(), 0.5+rng.Float64()
	}
	grid := [][2]float64{{1, 0}, {2, 0}, {1, 0.5}, {4, 1.5}, {0, 1}}
	for _, reg := range []ElasticNet{{Lambda: 1e-2}, {Lambda: 1e-2, L1: 1e-3}, {Lambda: 1e-2, Center: centre, Weights: weights}} {
		p := randomProblem(n, d, Squared{}, reg, 8)
		e := NewEvaluator(p, 2)
		y0, dy, py := make([]float64, n), make([]float64, n), make([]float64, n)
		for k := range n {
			y0[k], dy[k], py[k] = rng.NormFloat64(), 0.1*rng.NormFloat64(), 0.05*rng.NormFloat64()
		}
		vec := func(y []float64) []float64 {
			v := make([]float64, d)
			if err := e.DualSum(y, v); err != nil {
				t.Fatal(err)
			}
			for j := range v {
				v[j] /= n
			}
			return v
		}
		v0, dv, pv := vec(y0), vec(dy), vec(py)
		plane := NewDualPlane(reg, n)
		if err := plane.Set(v0, dv, pv); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, d)
		for _, gb := range grid {
			y := make([]float64, n)
			var conj float64
			for k := range n {
				y[k] = y0[k] + gb[0]*dy[k] + gb[1]*py[k]
				conj += p.Loss.Conj(y[k], p.B[k])
			}
			want, err := e.At(x, y, OwnDuals)
			if err != nil {
				t.Fatal(err)
			}
			got := plane.At(gb[0], gb[1], conj)
			if math.Abs(got-want.Dual) > 1e-12*math.Max(1, math.Abs(want.Dual)) {
				t.Errorf("%s at (γ, β) = %v: D %.17g from the plane, %.17g from At", reg.Name(), gb, got, want.Dual)
			}
		}
		if got := plane.At(1, 0, math.Inf(1)); !math.IsInf(got, -1) {
			t.Errorf("%s: a point outside dom φ*: D = %v, want −∞", reg.Name(), got)
		}
		if err := plane.Set(v0, dv[1:], pv); err == nil {
			t.Errorf("%s: vectors of different lengths: no error", reg.Name())
		}
	}
}
