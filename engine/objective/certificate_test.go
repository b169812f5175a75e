package objective

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// randomProblem draws a sparse problem with values spanning several orders
// of magnitude, where uncompensated sums lose digits.
func randomProblem(n, d int, loss Loss, reg Regularizer, seed uint64) Problem {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	for k := range n {
		for j := range d {
			if rng.Float64() < 0.3 {
				x.Indices = append(x.Indices, int32(j))
				x.Values = append(x.Values, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(5)-2)))
			}
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = 1
		if rng.IntN(2) == 0 {
			b[k] = -1
		}
		if !loss.Classification() {
			b[k] = rng.NormFloat64()
		}
	}
	return Problem{X: x, B: b, Loss: loss, Reg: reg}
}

// naiveCertificate is the definition, summed plainly in float64.
func naiveCertificate(p Problem, x, y []float64) (primal, dual float64) {
	n := float64(p.X.Rows)
	v := make([]float64, p.X.Cols)
	var ls, cs float64
	for k := range p.X.Rows {
		val, idx := p.X.Row(k)
		var z float64
		for q, j := range idx {
			z += val[q] * x[j]
		}
		w := 1.0
		if p.SampleWeights != nil {
			w = p.SampleWeights[k]
		}
		ls += w * p.Loss.Value(z, p.B[k])
		yk := y[k]
		if yk != yk { // NaN asks for the paired dual
			yk = w * p.Loss.DualFeasible(p.Loss.Deriv(z, p.B[k]), p.B[k])
		}
		cs += w * p.Loss.Conj(yk/w, p.B[k])
		for q, j := range idx {
			v[j] += yk * val[q] / n
		}
	}
	return ls/n + p.Reg.Value(x), -cs/n - p.Reg.ConjNeg(v)
}

func TestEvaluatorMatchesTheDefinition(t *testing.T) {
	for _, tc := range []struct {
		name string
		loss Loss
		reg  Regularizer
	}{
		{"logistic ridge", Logistic{}, ElasticNet{Lambda: 0.1}},
		{"sqhinge elastic net", SquaredHinge{}, ElasticNet{Lambda: 0.05, L1: 0.01}},
		{"squared ridge", Squared{}, ElasticNet{Lambda: 1}},
	} {
		p := randomProblem(300, 40, tc.loss, tc.reg, 1)
		rng := rand.New(rand.NewPCG(2, 2))
		x := make([]float64, 40)
		for j := range x {
			x[j] = 0.1 * rng.NormFloat64()
		}
		y := make([]float64, 300)
		nan := make([]float64, 300)
		for k := range y {
			y[k] = p.Loss.DualFeasible(0.7*p.Loss.Deriv(0.3*rng.NormFloat64(), p.B[k]), p.B[k])
			nan[k] = math.NaN()
		}
		e := NewEvaluator(p, 1)
		for _, which := range []DualPoint{OwnDuals, PairedDuals} {
			c, err := e.At(x, y, which)
			if err != nil {
				t.Fatal(err)
			}
			ref := y
			if which == PairedDuals {
				ref = nan
			}
			wp, wd := naiveCertificate(p, x, ref)
			if math.Abs(c.Primal-wp) > 1e-12*math.Abs(wp) || math.Abs(c.Dual-wd) > 1e-12*math.Max(1, math.Abs(wd)) {
				t.Errorf("%s at %v: P = %.17g, D = %.17g; the definition gives %.17g, %.17g", tc.name, which, c.Primal, c.Dual, wp, wd)
			}
			if c.Gap != c.Primal-c.Dual || c.RelGap != c.Gap/math.Max(1, math.Abs(c.Primal)) {
				t.Errorf("%s: gap %g, relative %g for P = %g, D = %g", tc.name, c.Gap, c.RelGap, c.Primal, c.Dual)
			}
		}
		// The better of the two is the larger dual value.
		co, _ := e.At(x, y, OwnDuals)
		cp, _ := e.At(x, y, PairedDuals)
		cb, _ := e.At(x, y, BetterDuals)
		if cb.Dual != math.Max(co.Dual, cp.Dual) {
			t.Errorf("%s: better dual %g, want max(%g, %g)", tc.name, cb.Dual, co.Dual, cp.Dual)
		}
	}
}

// The certificate's bits do not depend on the number of workers.
func TestEvaluatorBitIdenticalAcrossWorkers(t *testing.T) {
	p := randomProblem(9000, 300, Logistic{}, ElasticNet{Lambda: 1e-3, L1: 1e-4}, 4)
	x := make([]float64, 300)
	rng := rand.New(rand.NewPCG(5, 5))
	for j := range x {
		x[j] = rng.NormFloat64()
	}
	y := make([]float64, p.X.Rows)
	for k := range y {
		y[k] = -0.5 * p.B[k] * rng.Float64()
	}
	var first Certificate
	var firstV []float64
	for workers := 1; workers <= 5; workers++ {
		e := NewEvaluator(p, workers)
		c, err := e.At(x, y, BetterDuals)
		if err != nil {
			t.Fatal(err)
		}
		if workers == 1 {
			first, firstV = c, append([]float64(nil), e.DualVector()...)
			continue
		}
		if c != first {
			t.Errorf("%d workers: %+v, one worker %+v", workers, c, first)
		}
		for j, v := range e.DualVector() {
			if v != firstV[j] {
				t.Fatalf("%d workers: v[%d] = %.17g, one worker %.17g", workers, j, v, firstV[j])
			}
		}
	}
}

// A weight of 2 is the row written twice, at n/(n+1) of the sums.
func TestEvaluatorSampleWeights(t *testing.T) {
	p := randomProblem(50, 8, Logistic{}, ElasticNet{Lambda: 0.1}, 6)
	x := make([]float64, 8)
	for j := range x {
		x[j] = 0.1 * float64(j-4)
	}
	w := make([]float64, 50)
	for k := range w {
		w[k] = 1
	}
	w[3] = 2
	pw := p
	pw.SampleWeights = w
	cw, err := NewEvaluator(pw, 1).At(x, nil, PairedDuals)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int, 0, 51)
	for k := range 50 {
		rows = append(rows, k)
	}
	rows = append(rows, 3)
	pd := p
	pd.X = p.X.SelectRows(rows)
	pd.B = append(append([]float64(nil), p.B...), p.B[3])
	// (51/50)·P_dup = (1/50)Σ wφ + (51/50)·g_dup: so g_dup = (50/51)·g.
	pd.Reg = ElasticNet{Lambda: 0.1 * 50 / 51}
	cd, err := NewEvaluator(pd, 1).At(x, nil, PairedDuals)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cw.Primal, cd.Primal*51/50; math.Abs(got-want) > 1e-13 {
		t.Errorf("weighted P = %.17g, duplicated row gives %.17g", got, want)
	}
	if got, want := cw.Dual, cd.Dual*51/50; math.Abs(got-want) > 1e-13 {
		t.Errorf("weighted D = %.17g, duplicated row gives %.17g", got, want)
	}
}

// With L1 and no ridge term g* is an indicator: the certificate scales the
// dual point into its domain rather than report D = −Inf.
func TestEvaluatorScalesIntoTheDomain(t *testing.T) {
	p := randomProblem(200, 20, Logistic{}, ElasticNet{L1: 1e-3}, 7)
	x := make([]float64, 20) // at 0 the paired duals give a large v
	e := NewEvaluator(p, 2)
	c, err := e.At(x, nil, PairedDuals)
	if err != nil {
		t.Fatal(err)
	}
	if !(e.Scale() < 1) || math.IsInf(c.Dual, 0) || math.IsNaN(c.Dual) || !(c.Gap >= 0) {
		t.Errorf("scale %g, D = %g, gap %g: want s < 1, a finite D and a gap ≥ 0", e.Scale(), c.Dual, c.Gap)
	}
	// The scaled point is the one reported, and it is feasible.
	v := make([]float64, 20)
	for k, yk := range e.Duals() {
		val, idx := p.X.Row(k)
		for q, j := range idx {
			v[j] += yk * val[q] / 200
		}
	}
	if g := p.Reg.ConjNeg(v); math.IsInf(g, 1) {
		t.Errorf("g*(−v) = +Inf at the reported duals")
	}
}

func TestEvaluatorRefusesWrongLengths(t *testing.T) {
	p := randomProblem(10, 4, Squared{}, ElasticNet{Lambda: 1}, 8)
	e := NewEvaluator(p, 1)
	if _, err := e.At(make([]float64, 3), nil, PairedDuals); err == nil {
		t.Error("3 weights for 4 columns: no error")
	}
	if _, err := e.At(make([]float64, 4), make([]float64, 9), OwnDuals); err == nil {
		t.Error("9 duals for 10 rows: no error")
	}
	if _, err := e.At(make([]float64, 4), nil, DualPoint(0)); err == nil {
		t.Error("no dual point named: no error")
	}
}

// Given the exact v, AtDualVector is At with the method's duals.
func TestEvaluatorAtDualVector(t *testing.T) {
	p := randomProblem(500, 30, SquaredHinge{}, ElasticNet{Lambda: 0.01}, 9)
	x := make([]float64, 30)
	y := make([]float64, 500)
	for k := range y {
		y[k] = -0.3 * p.B[k]
		x[k%30] += 0.01 * p.B[k]
	}
	e := NewEvaluator(p, 2)
	want, err := e.At(x, y, OwnDuals)
	if err != nil {
		t.Fatal(err)
	}
	v := append([]float64(nil), e.DualVector()...)
	got, err := NewEvaluator(p, 3).AtDualVector(x, y, v)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("AtDualVector %+v, At %+v", got, want)
	}
	v[0] += 1e-3
	if got, _ := e.AtDualVector(x, y, v); got.Dual == want.Dual {
		t.Error("AtDualVector ignored the v it was given")
	}
}

// Given the margins, AtMarginsDualVector is AtDualVector to the bit, over
// several chunks of rows and whatever the workers, and reads the v and the
// margins it is given.
func TestEvaluatorAtMarginsDualVector(t *testing.T) {
	p := randomProblem(9000, 30, Logistic{}, ElasticNet{Lambda: 0.01, L1: 1e-3}, 11)
	x := make([]float64, 30)
	y := make([]float64, 9000)
	for k := range y {
		y[k] = -0.3 * p.B[k]
		x[k%30] += 1e-3 * p.B[k]
	}
	z := make([]float64, 9000)
	for k := range z {
		val, idx := p.X.Row(k)
		z[k] = kernels.SparseDot(val, idx, x)
	}
	e := NewEvaluator(p, 2)
	if _, err := e.At(x, y, OwnDuals); err != nil {
		t.Fatal(err)
	}
	v := append([]float64(nil), e.DualVector()...)
	want, err := e.AtDualVector(x, y, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		got, err := NewEvaluator(p, workers).AtMarginsDualVector(x, z, y, v)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%d workers: AtMarginsDualVector %+v, AtDualVector %+v", workers, got, want)
		}
	}
	v[0] += 1e-3
	if got, _ := e.AtMarginsDualVector(x, z, y, v); got.Dual == want.Dual {
		t.Error("AtMarginsDualVector ignored the v it was given")
	}
	z[0] += 1
	if got, _ := e.AtMarginsDualVector(x, z, y, v); got.Primal == want.Primal {
		t.Error("AtMarginsDualVector ignored the margins it was given")
	}
	if _, err := e.AtMarginsDualVector(x, z[1:], y, v); err == nil {
		t.Error("margins of the wrong length: no error")
	}
	if _, err := e.AtMarginsDualVector(x, z, y, v[1:]); err == nil {
		t.Error("a dual vector of the wrong length: no error")
	}
}

// Given the exact margins and gradient, AtGradient is At with the paired
// duals, to the rounding of the gradient's sum.
func TestEvaluatorAtGradient(t *testing.T) {
	p := randomProblem(400, 25, Logistic{}, ElasticNet{Lambda: 0.02}, 10)
	x := make([]float64, 25)
	for j := range x {
		x[j] = 0.05 * float64(j%7-3)
	}
	z := make([]float64, 400)
	g := make([]float64, 25)
	for k := range z {
		val, idx := p.X.Row(k)
		for q, j := range idx {
			z[k] += val[q] * x[j]
		}
		d := p.Loss.Deriv(z[k], p.B[k])
		for q, j := range idx {
			g[j] += d * val[q] / 400
		}
	}
	// z by kernels.SparseDot, as the contract asks.
	e := NewEvaluator(p, 1)
	want, err := e.At(x, nil, PairedDuals)
	if err != nil {
		t.Fatal(err)
	}
	for k := range z {
		val, idx := p.X.Row(k)
		z[k] = kernels.SparseDot(val, idx, x)
	}
	got, err := NewEvaluator(p, 2).AtGradient(x, z, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Primal != want.Primal || math.Abs(got.Dual-want.Dual) > 1e-14*math.Max(1, math.Abs(want.Dual)) {
		t.Errorf("AtGradient %+v, At %+v", got, want)
	}
	// With the sweep's sums, the same certificate (the sums plainly added
	// here, so to rounding).
	var sums RowSums
	for k := range z {
		val, _, _, conj := CurvedTerms(Logistic{}, z[k], p.B[k])
		sums.Loss += val
		sums.Conj += conj
	}
	fast, err := e.AtGradient(x, z, g, &sums)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fast.Primal-want.Primal) > 1e-14*math.Abs(want.Primal) || math.Abs(fast.Dual-want.Dual) > 1e-14*math.Max(1, math.Abs(want.Dual)) || e.Duals() != nil {
		t.Errorf("AtGradient with sums %+v (duals %v), At %+v", fast, e.Duals() != nil, want)
	}
	if _, err := e.AtGradient(x, z[:3], g, nil); err == nil {
		t.Error("3 margins for 400 rows: no error")
	}
}

// For the lasso (λ = 0) the paired duals must be scaled into dom g*; with
// the derivatives in the sums, AtGradient does so without a pass over the
// rows, and agrees with At.
func TestEvaluatorAtGradientScales(t *testing.T) {
	p := randomProblem(300, 20, Logistic{}, ElasticNet{L1: 1e-3}, 11)
	x := make([]float64, 20)
	x[3] = 0.2
	z := make([]float64, 300)
	g := make([]float64, 20)
	deriv := make([]float64, 300)
	var sums RowSums
	for k := range z {
		val, idx := p.X.Row(k)
		z[k] = kernels.SparseDot(val, idx, x)
		v, d1, _, conj := CurvedTerms(Logistic{}, z[k], p.B[k])
		sums.Loss += v
		sums.Conj += conj
		deriv[k] = d1
		for q, j := range idx {
			g[j] += d1 * val[q] / 300
		}
	}
	sums.Deriv = deriv
	e := NewEvaluator(p, 1)
	want, err := e.At(x, nil, PairedDuals)
	if err != nil {
		t.Fatal(err)
	}
	wantScale := e.Scale()
	got, err := NewEvaluator(p, 1).AtGradient(x, z, g, &sums)
	if err != nil {
		t.Fatal(err)
	}
	if !(wantScale < 1) || math.Abs(got.Primal-want.Primal) > 1e-14*math.Abs(want.Primal) || math.Abs(got.Dual-want.Dual) > 1e-12*math.Max(1, math.Abs(want.Dual)) {
		t.Errorf("AtGradient %+v, At %+v (scale %g)", got, want, wantScale)
	}
}

// TestEvaluatorAtZero checks the certificate at x = 0, which reads no row,
// against the same certificate from margins given as zeros, bit for bit,
// and against the definition.
func TestEvaluatorAtZero(t *testing.T) {
	for _, loss := range []Loss{Logistic{}, SquaredHinge{}, Squared{}} {
		p := randomProblem(3000, 40, loss, ElasticNet{Lambda: 1e-2}, 6)
		x, z := make([]float64, 40), make([]float64, p.X.Rows)
		y := make([]float64, p.X.Rows)
		for k := range y {
			y[k] = math.NaN()
		}
		for _, workers := range []int{1, 3} {
			e := NewEvaluator(p, workers)
			got, err := e.At(x, nil, PairedDuals)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.AtMargins(x, z, nil, PairedDuals)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%T, %d workers: at zero %+v, from zero margins %+v", loss, workers, got, want)
			}
			primal, dual := naiveCertificate(p, x, y)
			if math.Abs(got.Primal-primal) > 1e-12*math.Abs(primal) || math.Abs(got.Dual-dual) > 1e-12*math.Max(1, math.Abs(dual)) {
				t.Errorf("%T: at zero P = %v, D = %v; the definition %v, %v", loss, got.Primal, got.Dual, primal, dual)
			}
		}
	}
}

// TestEvaluatorAtDualVectorWithin checks the certificate at a v known
// within a drift of the duals' own: for v moved off (1/n)Σₖ yₖaₖ by steps
// of ℓ1 norm δ, along single coordinates the way that raises D and at
// random, the dual value lowered by the bound stays at or
// below the one at the exact v, where the unlowered one rises above it for
// some of the moves (so the bound is what keeps D a lower bound); and a
// drift that is not a finite value ≥ 0, or a g that is not strongly convex,
// is refused.
func TestEvaluatorAtDualVectorWithin(t *testing.T) {
	const n, d = 600, 30
	w := make([]float64, d)
	for j := range w {
		w[j] = 0.5 + float64(j%4)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for _, reg := range []ElasticNet{{Lambda: 1e-2}, {Lambda: 1e-2, L1: 1e-3, Weights: w, Center: w}} {
		p := randomProblem(n, d, Logistic{}, reg, 7)
		y := make([]float64, n)
		for k := range y {
			y[k] = Logistic{}.Deriv(rng.NormFloat64(), p.B[k])
		}
		e := NewEvaluator(p, 2)
		v := make([]float64, d)
		if err := e.DualSum(y, v); err != nil {
			t.Fatal(err)
		}
		var l1 float64
		for j := range v {
			v[j] /= n
			l1 += math.Abs(v[j])
		}
		x := make([]float64, d)
		reg.PrimalFromDual(x, v)
		exact, err := e.AtDualVector(x, y, v)
		if err != nil {
			t.Fatal(err)
		}
		drift := 1e-3 * l1
		above := 0
		byMagnitude := make([]int, d) // the coordinates by |xⱼ|, largest first
		for j := range byMagnitude {
			byMagnitude[j] = j
		}
		slices.SortFunc(byMagnitude, func(a, b int) int { return cmp.Compare(math.Abs(x[b]), math.Abs(x[a])) })
		for i := range 50 {
			moved := make([]float64, d)
			if i < 10 {
				j := byMagnitude[i]
				// All of the drift on one coordinate, the way that raises
				// D the most to first order (−∂g*(−v)/∂vⱼ = xⱼ): where |xⱼ|
				// is largest, the bound is tight to second order.
				moved[j] = math.Copysign(1, x[j])
			} else {
				for j := range moved {
					moved[j] = rng.NormFloat64()
				}
			}
			var norm float64
			for _, m := range moved {
				norm += math.Abs(m)
			}
			for j := range moved {
				moved[j] = v[j] + moved[j]*drift/norm
			}
			xm := make([]float64, d)
			reg.PrimalFromDual(xm, moved)
			got, bound, err := e.AtDualVectorWithin(xm, y, moved, drift)
			if err != nil {
				t.Fatal(err)
			}
			if got.Dual > exact.Dual+1e-15*math.Abs(exact.Dual) {
				t.Errorf("%s: D within the drift %.17g above the exact v's %.17g (bound %.3g)", reg.Name(), got.Dual, exact.Dual, bound)
			}
			if got.Dual+bound > exact.Dual {
				above++
			}
			if got.Gap != got.Primal-got.Dual {
				t.Errorf("%s: gap %v, P − D %v", reg.Name(), got.Gap, got.Primal-got.Dual)
			}
		}
		if above == 0 {
			t.Errorf("%s: no move raised D above the exact v's: the test does not exercise the bound", reg.Name())
		}
		for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
			if _, _, err := e.AtDualVectorWithin(x, y, v, bad); err == nil {
				t.Errorf("%s: drift %v accepted", reg.Name(), bad)
			}
		}
	}
	p := randomProblem(n, d, Logistic{}, ElasticNet{L1: 1e-3}, 7)
	if _, _, err := NewEvaluator(p, 1).AtDualVectorWithin(make([]float64, d), make([]float64, n), make([]float64, d), 0); err == nil {
		t.Error("a drift accepted without strong convexity")
	}
}
