package objective

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRegularizerValidate(t *testing.T) {
	for _, r := range []ElasticNet{
		{Lambda: 1},
		{Lambda: 1e-12},
		{Lambda: 0.5, L1: 0.1},
		{Lambda: 1e-6, L1: 1e6},
	} {
		if err := r.Validate(0); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", r, err)
		}
	}
	for _, tc := range []struct {
		r    ElasticNet
		want []string // substrings of the error
	}{
		{ElasticNet{Lambda: -1}, []string{"Lambda", "≥ 0"}},
		{ElasticNet{Lambda: math.NaN()}, []string{"Lambda", "not finite"}},
		{ElasticNet{Lambda: math.Inf(1)}, []string{"Lambda", "not finite"}},
		{ElasticNet{Lambda: 1, L1: -0.5}, []string{"L1", "≥ 0"}},
		{ElasticNet{Lambda: 1, L1: math.NaN()}, []string{"L1", "not finite"}},
		{ElasticNet{Lambda: 1, L1: math.Inf(1)}, []string{"L1", "not finite"}},
	} {
		err := tc.r.Validate(0)
		if err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", tc.r)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v.Validate() = %q, want it to mention %q", tc.r, err, w)
			}
		}
	}
}

func TestRegularizerValue(t *testing.T) {
	x := []float64{1, -2, 0, 0.5}
	for _, tc := range []struct {
		r    ElasticNet
		want float64
	}{
		{ElasticNet{Lambda: 0.5, L1: 0.1}, 0.1*3.5 + 0.25*5.25},
		{ElasticNet{Lambda: 2}, 5.25},
	} {
		if got := tc.r.Value(x); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%+v.Value(%v) = %.17g, want %.17g", tc.r, x, got, tc.want)
		}
	}
	if got := (ElasticNet{Lambda: 1, L1: 1}).Value(nil); got != 0 {
		t.Errorf("Value(nil) = %g, want 0", got)
	}
}

// regTestCases returns regularizers from nearly pure L1 to pure L2.
func regTestCases() []ElasticNet {
	return []ElasticNet{
		{Lambda: 1},
		{Lambda: 1e-2, L1: 1e-3},
		{Lambda: 1e-6, L1: 0.1},
		{Lambda: 0.3, L1: 1},
	}
}

// regTestCoordinate returns g_j(x) = L1·|x| + (Lambda/2)·x² computed directly.
func regTestCoordinate(r ElasticNet, x float64) float64 {
	return r.L1*math.Abs(x) + 0.5*r.Lambda*x*x
}

// TestRegularizerProx compares Prox with bisection on the right derivative of
// the prox objective (exact up to rounding) and with golden-section search on
// the objective itself.
func TestRegularizerProx(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, r := range regTestCases() {
		for i := range 2000 {
			v := math.Copysign(math.Pow(10, -4+7*rng.Float64()), rng.Float64()-0.5)
			tau := math.Pow(10, -6+12*rng.Float64())
			got := r.ProxCoord(0, v, tau)

			obj := func(x float64) float64 { return regTestCoordinate(r, x) + (x-v)*(x-v)/(2*tau) }
			// The right derivative is non-decreasing; at 0 it includes +L1.
			dright := func(x float64) float64 {
				sign := 1.0
				if x < 0 {
					sign = -1
				}
				return r.L1*sign + r.Lambda*x + (x-v)/tau
			}
			// Shrinkage: the minimiser lies between 0 and v.
			lo, hi := min(0, v), max(0, v)
			ref := lossTestBisectMin(dright, lo, hi)
			if math.Abs(got-ref) > 1e-12*max(1, math.Abs(ref)) {
				t.Errorf("%+v #%d: Prox(%g, τ=%g) = %.17g, bisection gives %.17g", r, i, v, tau, got, ref)
			}
			gs, fgs := lossTestGoldenMin(obj, lo-1, hi+1)
			if f := obj(got); f > fgs+1e-12*(1+math.Abs(fgs)) {
				t.Errorf("%+v #%d: Prox(%g, τ=%g) = %.17g has objective %.17g, golden section finds %.17g at %.17g",
					r, i, v, tau, got, f, fgs, gs)
			}
		}
	}
}

// TestRegularizerConjugate checks ConjNeg against the numerical conjugate
// sup_x (−v·x − g(x)), PrimalFromDual against its maximiser, and Fenchel–Young
// g(x) + g*(−v) ≥ −v·x with equality at x = PrimalFromDual(v).
func TestRegularizerConjugate(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, r := range regTestCases() {
		const dim = 7
		v := make([]float64, dim)
		x := make([]float64, dim)
		xDual := make([]float64, dim)
		for i := range 300 {
			var sup float64
			for j := range v {
				v[j] = math.Copysign(math.Pow(10, -3+4*rng.Float64()), rng.Float64()-0.5)
				if j == 0 {
					v[j] = 0.5 * r.L1 * (2*rng.Float64() - 1) // inside the L1 dead zone
				}
				x[j] = 10 * rng.NormFloat64()
				xDual[j] = r.PrimalCoord(j, v[j])

				neg := func(xj float64) float64 { return regTestCoordinate(r, xj) + v[j]*xj }
				width := (math.Abs(v[j]) + 1) / r.Lambda
				xs, m := lossTestGoldenMin(neg, -width, width)
				sup += -m
				// PrimalFromDual must attain the sup of its coordinate.
				if got := -neg(xDual[j]); got < -m-1e-12*(1+math.Abs(m)) {
					t.Errorf("%+v: PrimalFromDual(%g) = %g gives %g, less than the sup %g (at %g)",
						r, v[j], xDual[j], got, -m, xs)
				}
			}
			conj := r.ConjNeg(v)
			if math.Abs(conj-sup) > 1e-9*(1+math.Abs(sup)) {
				t.Errorf("%+v #%d: ConjNeg(%v) = %.15g, numerical conjugate %.15g", r, i, v, conj, sup)
			}

			var vx, vxDual float64
			for j := range v {
				vx += v[j] * x[j]
				vxDual += v[j] * xDual[j]
			}
			if gap := r.Value(x) + conj + vx; gap < -1e-12*(1+math.Abs(vx)) {
				t.Errorf("%+v #%d: g(x) + g*(−v) + v·x = %g < 0", r, i, gap)
			}
			if gap := r.Value(xDual) + conj + vxDual; math.Abs(gap) > 1e-10*(1+math.Abs(vxDual)) {
				t.Errorf("%+v #%d: at x = PrimalFromDual(v) the Fenchel–Young gap is %g, want 0", r, i, gap)
			}
		}
	}
}

func TestRegularizerNoAllocations(t *testing.T) {
	r := ElasticNet{Lambda: 0.5, L1: 0.1}
	x := []float64{1, -2, 3, 0, 0.25}
	var sink float64
	allocs := testing.AllocsPerRun(100, func() {
		sink += r.Value(x) + r.ConjNeg(x) + r.ProxCoord(1, 0.7, 0.3) + r.PrimalCoord(2, -0.4)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per call, want 0", allocs)
	}
	if math.IsNaN(sink) {
		t.Error("NaN from finite inputs")
	}
}

// regBenchSink keeps the benchmarked calls from being optimised away.
var regBenchSink float64

func BenchmarkRegularizerProx(b *testing.B) {
	const size = 1024
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, size)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	r := ElasticNet{Lambda: 1e-3, L1: 0.2}
	var sum float64
	for i := 0; b.Loop(); i++ {
		sum += r.ProxCoord(0, v[i&(size-1)], 0.5)
	}
	regBenchSink = sum
}

// TestElasticNetCentreAndWeights checks the centred, weighted elastic net
// coordinate by coordinate against its definition: the prox against
// golden-section search on the prox objective, the conjugate against the
// numerical supremum, PrimalCoord as its maximiser, and Value and ConjNeg
// as the sums of those terms.
func TestElasticNetCentreAndWeights(t *testing.T) {
	const dim = 6
	rng := rand.New(rand.NewPCG(31, 32))
	r := ElasticNet{Lambda: 0.7, L1: 0.2, Center: make([]float64, dim), Weights: make([]float64, dim)}
	for j := range dim {
		r.Center[j] = 3 * rng.NormFloat64()
		r.Weights[j] = 0.1 + 2*rng.Float64()
	}
	r.Weights[dim-1] = 0 // an unpenalised coordinate
	if err := r.Validate(dim); err != nil {
		t.Fatal(err)
	}
	if got, want := r.StrongConvexity(), 0.0; got != want {
		t.Errorf("StrongConvexity = %g, want %g (one weight is 0)", got, want)
	}
	gj := func(j int, x float64) float64 {
		c := r.Center[j]
		return r.Weights[j] * (r.L1*math.Abs(x) + 0.5*r.Lambda*(x-c)*(x-c))
	}
	x := make([]float64, dim)
	v := make([]float64, dim)
	for i := range 200 {
		var wantValue, wantConj float64
		for j := range dim {
			x[j] = 5 * rng.NormFloat64()
			v[j] = rng.NormFloat64()
			if j == dim-1 {
				v[j] = 0 // wⱼ = 0 scales L1 away too: the box is {0}
			}
			wantValue += gj(j, x[j])
			tau := math.Pow(10, -3+5*rng.Float64())
			p := r.ProxCoord(j, x[j], tau)
			obj := func(z float64) float64 { return gj(j, z) + (z-x[j])*(z-x[j])/(2*tau) }
			_, m := lossTestGoldenMin(obj, -50, 50)
			if got := obj(p); got > m+1e-9*(1+math.Abs(m)) {
				t.Errorf("#%d coordinate %d: ProxCoord(%g, τ=%g) = %g has objective %.12g, the minimum is %.12g", i, j, x[j], tau, p, got, m)
			}
			if j == dim-1 {
				continue // λⱼ = 0: the conjugate is an indicator, checked below
			}
			neg := func(z float64) float64 { return gj(j, z) + v[j]*z }
			_, mm := lossTestGoldenMin(neg, -100, 100)
			wantConj += -mm
			xd := r.PrimalCoord(j, v[j])
			if got := -neg(xd); got < -mm-1e-9*(1+math.Abs(mm)) {
				t.Errorf("#%d coordinate %d: PrimalCoord(%g) = %g gives %.12g, below the sup %.12g", i, j, v[j], xd, got, -mm)
			}
		}
		if got := r.Value(x); math.Abs(got-wantValue) > 1e-12*(1+math.Abs(wantValue)) {
			t.Errorf("#%d: Value = %.15g, want %.15g", i, got, wantValue)
		}
		if got := r.ConjNeg(v); math.Abs(got-wantConj) > 1e-8*(1+math.Abs(wantConj)) {
			t.Errorf("#%d: ConjNeg = %.15g, numerical %.15g", i, got, wantConj)
		}
	}
	v[dim-1] = 2 * r.L1
	if got := r.ConjNeg(v); !math.IsInf(got, 1) {
		t.Errorf("ConjNeg outside the unpenalised coordinate's box = %g, want +Inf", got)
	}
	for _, bad := range []ElasticNet{
		{Lambda: 1, Center: []float64{1}},
		{Lambda: 1, Weights: []float64{1, 1, -1}},
		{Lambda: 1, Center: []float64{0, math.NaN(), 0}},
	} {
		if err := bad.Validate(3); err == nil {
			t.Errorf("%+v.Validate(3) = nil, want an error", bad)
		}
	}
}
