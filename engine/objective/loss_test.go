package objective

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// lossTestCase is a loss with the labels or targets it is tested on.
type lossTestCase struct {
	loss   Loss
	labels []float64
}

func lossTestCases() []lossTestCase {
	binary := []float64{-1, 1}
	targets := []float64{-1, 1, 0, 0.3, -2.7, 41}
	return []lossTestCase{
		{Squared{}, targets},
		{Logistic{}, binary},
		{SmoothHinge{S: 1}, binary},
		{SmoothHinge{S: 0.1}, binary},
		{SmoothHinge{S: 2.5}, binary},
		{SmoothHinge{}, binary},
		{SquaredHinge{}, binary},
		{Hinge{}, binary},
		{Absolute{}, targets},
		{EpsInsensitive{Epsilon: 0.1}, targets},
		{EpsInsensitive{Epsilon: 0}, targets},
		{EpsInsensitive{Epsilon: 1.5}, targets},
		{Quantile{Q: 0.5}, targets},
		{Quantile{Q: 0.1}, targets},
		{Quantile{Q: 0.9}, targets},
		{Quantile{}, targets},
	}
}

// lossTestName names a test case, including the smoothing of a smoothed hinge.
func lossTestName(l Loss) string {
	switch l := l.(type) {
	case SmoothHinge:
		return fmt.Sprintf("%s(S=%g)", l.Name(), l.S)
	case EpsInsensitive:
		return fmt.Sprintf("%s(ε=%g)", l.Name(), l.Epsilon)
	case Quantile:
		return fmt.Sprintf("%s(q=%g)", l.Name(), l.Q)
	}
	return l.Name()
}

// lossTestDomain returns the closure of the domain of φ*(·, b) in y, with
// hi = +Inf or lo = −Inf where it is unbounded.
func lossTestDomain(l Loss, b float64) (lo, hi float64) {
	switch l := l.(type) {
	case Squared:
		return math.Inf(-1), math.Inf(1)
	case SquaredHinge:
		if b > 0 {
			return math.Inf(-1), 0
		}
		return 0, math.Inf(1)
	case Absolute, EpsInsensitive:
		return -1, 1
	case Quantile:
		q := l.Q
		if q == 0 {
			q = 0.5
		}
		return -q, 1 - q
	}
	if b > 0 {
		return -1, 0
	}
	return 0, 1
}

// lossTestConjDeriv returns dφ*(y, b)/dy from the textbook formulas, written
// independently of the implementation under test.
func lossTestConjDeriv(l Loss, y, b float64) float64 {
	switch l := l.(type) {
	case Squared:
		return y + b
	case SmoothHinge:
		return b + l.Gamma()*y
	case SquaredHinge:
		return b + y/2
	case Hinge, Absolute, Quantile:
		return b
	case EpsInsensitive:
		// The subgradient of ε|y| at 0 is taken as 0: bisection only needs a
		// non-decreasing selection.
		switch {
		case y > 0:
			return b + l.Epsilon
		case y < 0:
			return b - l.Epsilon
		}
		return b
	case Logistic:
		u := -b * y
		return -b * (lossTestLog(u) - math.Log1p(-u))
	}
	panic("unknown loss " + l.Name())
}

// lossTestLog returns log x, also for subnormal x, where math.Log is wrong on
// amd64 (golang/go#56600).
func lossTestLog(x float64) float64 {
	if x < 0x1p-1000 {
		return math.Log(x*0x1p100) - 100*math.Ln2
	}
	return math.Log(x)
}

// lossTestGoldenMin minimises a unimodal f on [lo, hi] by golden-section
// search and returns the best point seen and its value.
func lossTestGoldenMin(f func(float64) float64, lo, hi float64) (x, fx float64) {
	const invPhi = 0.6180339887498949
	a, b := lo, hi
	c := b - invPhi*(b-a)
	d := a + invPhi*(b-a)
	fc, fd := f(c), f(d)
	for range 400 {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
		if !(d-c > 0) {
			break
		}
	}
	x, fx = c, fc
	for _, p := range []float64{d, lo, hi} {
		if fp := f(p); fp < fx {
			x, fx = p, fp
		}
	}
	return x, fx
}

// lossTestBisectMin returns the minimiser on [lo, hi] of a convex function
// with non-decreasing derivative df, by bisection on the sign of df. It
// converges to an end of the interval when df has one sign throughout.
func lossTestBisectMin(df func(float64) float64, lo, hi float64) float64 {
	for range 2000 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if df(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	if df(lo) > 0 {
		return lo
	}
	if df(hi) < 0 {
		return hi
	}
	if math.Abs(df(lo)) < math.Abs(df(hi)) {
		return lo
	}
	return hi
}

func TestLossByName(t *testing.T) {
	for _, tc := range []struct {
		name      string
		smoothing float64
		want      Loss
	}{
		{"squared", 0, Squared{}},
		{"squared", 1, Squared{}},
		{"logistic", 1, Logistic{}},
		{"smoothhinge", 0, SmoothHinge{S: 1}},
		{"smoothhinge", 0.25, SmoothHinge{S: 0.25}},
		{"sqhinge", 3, SquaredHinge{}},
		{"hinge", 0, Hinge{}},
		{"absolute", 0, Absolute{}},
		{"epsinsensitive", 0, EpsInsensitive{Epsilon: DefaultEpsilon}},
		{"quantile", 0, Quantile{Q: 0.5}},
	} {
		got, err := LossByName(tc.name, tc.smoothing)
		if err != nil {
			t.Errorf("LossByName(%q, %g): %v", tc.name, tc.smoothing, err)
			continue
		}
		if got != tc.want {
			t.Errorf("LossByName(%q, %g) = %#v, want %#v", tc.name, tc.smoothing, got, tc.want)
		}
		if got.Name() != tc.name {
			t.Errorf("LossByName(%q, %g).Name() = %q", tc.name, tc.smoothing, got.Name())
		}
	}

	for _, name := range []string{"", "svm", "Logistic", "squared ", "l2"} {
		_, err := LossByName(name, 1)
		if err == nil {
			t.Errorf("LossByName(%q) succeeded, want an error", name)
			continue
		}
		for _, valid := range []string{"squared", "logistic", "smoothhinge", "sqhinge", "hinge", "absolute", "epsinsensitive", "quantile"} {
			if !strings.Contains(err.Error(), valid) {
				t.Errorf("LossByName(%q) error %q does not list %q", name, err, valid)
			}
		}
	}

	for _, s := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, name := range []string{"smoothhinge", "logistic"} {
			if _, err := LossByName(name, s); err == nil {
				t.Errorf("LossByName(%q, %g) succeeded, want an error", name, s)
			}
		}
	}
}

// TestLossByNameParams checks that each parameter reaches its loss, that
// the defaults apply, and that a bad parameter is an error whatever the loss.
func TestLossByNameParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    LossParams
		want Loss
	}{
		{"epsinsensitive", LossParams{Epsilon: 0.25}, EpsInsensitive{Epsilon: 0.25}},
		{"epsinsensitive", LossParams{}, EpsInsensitive{Epsilon: 0}},
		{"quantile", LossParams{Quantile: 0.9}, Quantile{Q: 0.9}},
		{"quantile", LossParams{}, Quantile{Q: 0.5}},
		{"smoothhinge", LossParams{Smoothing: 0.5, Epsilon: 3, Quantile: 0.2}, SmoothHinge{S: 0.5}},
		{"absolute", LossParams{Epsilon: 3, Quantile: 0.2}, Absolute{}},
	} {
		got, err := LossByNameParams(tc.name, tc.p)
		if err != nil || got != tc.want {
			t.Errorf("LossByNameParams(%q, %+v) = %#v, %v; want %#v", tc.name, tc.p, got, err, tc.want)
		}
	}
	for _, p := range []LossParams{
		{Epsilon: -0.1}, {Epsilon: math.NaN()}, {Epsilon: math.Inf(1)},
		{Quantile: 1}, {Quantile: -0.5}, {Quantile: 1.5}, {Quantile: math.NaN()},
	} {
		for _, name := range []string{"epsinsensitive", "quantile", "squared"} {
			if _, err := LossByNameParams(name, p); err == nil {
				t.Errorf("LossByNameParams(%q, %+v) succeeded, want an error", name, p)
			}
		}
	}
}

func TestLossProperties(t *testing.T) {
	for _, tc := range []struct {
		loss           Loss
		gamma          float64
		classification bool
	}{
		{Squared{}, 1, false},
		{Logistic{}, 4, true},
		{SmoothHinge{S: 0.5}, 0.5, true},
		{SmoothHinge{}, 1, true},
		{SquaredHinge{}, 0.5, true},
		{Hinge{}, 0, true},
		{Absolute{}, 0, false},
		{EpsInsensitive{Epsilon: 0.1}, 0, false},
		{Quantile{Q: 0.3}, 0, false},
	} {
		if g := tc.loss.Gamma(); g != tc.gamma {
			t.Errorf("%s: Gamma() = %g, want %g", lossTestName(tc.loss), g, tc.gamma)
		}
		if c := tc.loss.Classification(); c != tc.classification {
			t.Errorf("%s: Classification() = %v, want %v", lossTestName(tc.loss), c, tc.classification)
		}
	}
}

// TestLossValueReference checks φ at points computed by hand, including the
// LIBLINEAR conventions (no ½ in the squared hinge) and the large-|z| regime
// of the logistic loss.
func TestLossValueReference(t *testing.T) {
	for _, tc := range []struct {
		loss       Loss
		z, b, want float64
	}{
		{Squared{}, 3, 1, 2},
		{Squared{}, -1.5, 0.5, 2},
		{SquaredHinge{}, 0.25, 1, 0.5625},
		{SquaredHinge{}, -0.25, -1, 0.5625},
		{SquaredHinge{}, 2, 1, 0},
		{SquaredHinge{}, -3, 1, 16},
		{SmoothHinge{S: 1}, 0.5, 1, 0.125},
		{SmoothHinge{S: 1}, -2, 1, 2.5},
		{SmoothHinge{S: 1}, -2, -1, 0},
		{SmoothHinge{S: 0.5}, 0.75, 1, 0.0625},
		{SmoothHinge{S: 0.5}, 0.25, -1, 1.25 - 0.25},
		{Logistic{}, 0, 1, math.Ln2},
		{Logistic{}, 1e3, 1, 0},
		{Logistic{}, -1e3, 1, 1e3},
		{Logistic{}, 1e3, -1, 1e3},
		{Logistic{}, 40, 1, 4.248354255291589e-18},
		{Logistic{}, -40, 1, 40},
		{Logistic{}, 2, -1, 2.1269280110429727},
		{Absolute{}, 3, 1, 2},
		{Absolute{}, -1.5, 0.5, 2},
		{EpsInsensitive{Epsilon: 0.5}, 3, 1, 1.5},
		{EpsInsensitive{Epsilon: 0.5}, 0.75, 1, 0},
		{EpsInsensitive{Epsilon: 0.5}, -0.5, 1, 1},
		{Quantile{Q: 0.1}, 0, 1, 0.1},
		{Quantile{Q: 0.1}, 2, 1, 0.9},
		{Quantile{}, 2, 1, 0.5},
	} {
		got := tc.loss.Value(tc.z, tc.b)
		if math.Abs(got-tc.want) > 1e-15*math.Max(1e-300, math.Abs(tc.want)) && got != tc.want {
			t.Errorf("%s.Value(%g, %g) = %.17g, want %.17g", lossTestName(tc.loss), tc.z, tc.b, got, tc.want)
		}
	}
	// The logistic conjugate keeps its relative precision near both ends of
	// its domain: with d the distance to the nearer end, φ* = d·(log d − 1) + O(d²).
	for _, d := range []float64{0x1p-40, 0x1p-52, 1e-20, 1e-200, 1e-310} {
		want := d * (lossTestLog(d) - 1)
		for _, b := range []float64{-1, 1} {
			ys := []float64{-b * d}
			if 1-d != 1 {
				ys = append(ys, -b*(1-d))
			}
			for _, y := range ys {
				if got := (Logistic{}).Conj(y, b); math.Abs(got-want) > 1e-11*math.Abs(want) {
					t.Errorf("logistic.Conj(%g, %g) = %.17g, want %.17g", y, b, got, want)
				}
			}
		}
	}
	// Away from overflow the stable form agrees with the naive one.
	for z := -30.0; z <= 30; z += 0.37 {
		for _, b := range []float64{-1, 1} {
			got, want := Logistic{}.Value(z, b), math.Log(1+math.Exp(-b*z))
			if math.Abs(got-want) > 1e-14*(1+want) {
				t.Errorf("logistic.Value(%g, %g) = %.17g, want %.17g", z, b, got, want)
			}
		}
	}
}

// TestLossDeriv checks φ' against central differences of φ.
func TestLossDeriv(t *testing.T) {
	const h = 1e-6
	for _, tc := range lossTestCases() {
		for _, b := range tc.labels {
			for z := -6.0; z <= 6; z += 0.0173 {
				got := tc.loss.Deriv(z, b)
				fd := (tc.loss.Value(z+h, b) - tc.loss.Value(z-h, b)) / (2 * h)
				if math.Abs(got-fd) > 1e-5*(1+math.Abs(fd)) {
					t.Errorf("%s: Deriv(%g, %g) = %g, finite difference %g", lossTestName(tc.loss), z, b, got, fd)
				}
			}
		}
	}
	for _, z := range []float64{-1e3, 1e3, -1e300, 1e300} {
		for _, b := range []float64{-1, 1} {
			got := Logistic{}.Deriv(z, b)
			want := 0.0
			if b*z < 0 {
				want = -b
			}
			if got != want {
				t.Errorf("logistic.Deriv(%g, %g) = %g, want %g", z, b, got, want)
			}
		}
	}
}

// TestLossFenchelYoung checks φ(z) + φ*(y) ≥ y·z on a grid, with equality at
// y = φ'(z).
func TestLossFenchelYoung(t *testing.T) {
	for _, tc := range lossTestCases() {
		name := lossTestName(tc.loss)
		for _, b := range tc.labels {
			dlo, dhi := lossTestDomain(tc.loss, b)
			for z := -8.0; z <= 8; z += 0.093 {
				fz := tc.loss.Value(z, b)
				for y := -6.0; y <= 6; y += 0.0517 {
					fy := tc.loss.Conj(y, b)
					if y < dlo || y > dhi {
						if !math.IsInf(fy, 1) {
							t.Fatalf("%s: Conj(%g, %g) = %g outside the domain, want +Inf", name, y, b, fy)
						}
						continue
					}
					if gap := fz + fy - y*z; gap < -1e-12*(1+math.Abs(y*z)) {
						t.Fatalf("%s, b=%g: φ(%g) + φ*(%g) − yz = %g < 0", name, b, z, y, gap)
					}
				}
				y := tc.loss.Deriv(z, b)
				if gap := fz + tc.loss.Conj(y, b) - y*z; math.Abs(gap) > 1e-10*(1+math.Abs(y*z)+fz) {
					t.Errorf("%s, b=%g: at y = φ'(%g) = %g the Fenchel–Young gap is %g, want 0", name, b, z, y, gap)
				}
			}
		}
	}
	// The equality holds far out on the logistic curve too.
	for _, z := range []float64{-700, -50, 50, 700} {
		y := Logistic{}.Deriv(z, 1)
		gap := Logistic{}.Value(z, 1) + Logistic{}.Conj(y, 1) - y*z
		if math.IsNaN(gap) || math.Abs(gap) > 1e-12*(1+math.Abs(z)) {
			t.Errorf("logistic at z=%g: Fenchel–Young gap %g, want 0", z, gap)
		}
	}
}

// TestLossConjugateNumerical checks φ*(y) = sup_z (y·z − φ(z)) by golden-section
// maximisation, and that the sup is unbounded outside the domain.
func TestLossConjugateNumerical(t *testing.T) {
	for _, tc := range lossTestCases() {
		name := lossTestName(tc.loss)
		for _, b := range tc.labels {
			dlo, dhi := lossTestDomain(tc.loss, b)
			negGain := func(y float64) func(float64) float64 {
				return func(z float64) float64 { return tc.loss.Value(z, b) - y*z }
			}
			ys := []float64{dlo, dhi}
			for i := 0; i <= 40; i++ {
				ys = append(ys, -5+float64(i)/4)
			}
			for _, y := range ys {
				if math.IsInf(y, 0) || y < dlo || y > dhi {
					continue
				}
				_, m := lossTestGoldenMin(negGain(y), -60, 60)
				want := -m
				if got := tc.loss.Conj(y, b); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("%s: Conj(%g, %g) = %.15g, numerical sup %.15g", name, y, b, got, want)
				}
			}
			for _, dist := range []float64{0.05, 1} {
				for _, y := range []float64{dlo - dist, dhi + dist} {
					if math.IsInf(y, 0) {
						continue
					}
					if got := tc.loss.Conj(y, b); !math.IsInf(got, 1) {
						t.Errorf("%s: Conj(%g, %g) = %g outside the domain, want +Inf", name, y, b, got)
					}
					const zmax = 1e4
					if _, m := lossTestGoldenMin(negGain(y), -zmax, zmax); -m < 0.5*dist*zmax {
						t.Errorf("%s: sup_z over |z| ≤ %g of yz − φ(z) at y=%g, b=%g is only %g; the conjugate should be +Inf",
							name, zmax, y, b, -m)
					}
				}
			}
		}
	}
}

// TestLossGamma checks that φ* is γ-strongly convex, in the midpoint form
// φ*((y1+y2)/2) ≤ (φ*(y1) + φ*(y2))/2 − (γ/8)(y1 − y2)², and that γ is tight.
func TestLossGamma(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, tc := range lossTestCases() {
		name := lossTestName(tc.loss)
		gamma := tc.loss.Gamma()
		for _, b := range tc.labels {
			dlo, dhi := lossTestDomain(tc.loss, b)
			dlo, dhi = max(dlo, -20), min(dhi, 20)
			minRatio := math.Inf(1)
			for i := range 4000 {
				y1 := dlo + (dhi-dlo)*rng.Float64()
				y2 := dlo + (dhi-dlo)*rng.Float64()
				if i%2 == 0 {
					// Close pairs around the centre of the domain, where the
					// logistic conjugate is flattest.
					c := (dlo + dhi) / 2
					w := 0.02 * (dhi - dlo)
					y1, y2 = c-w*rng.Float64(), c+w*rng.Float64()
				}
				d := y1 - y2
				if math.Abs(d) < 1e-3 {
					continue
				}
				f1, f2, fm := tc.loss.Conj(y1, b), tc.loss.Conj(y2, b), tc.loss.Conj((y1+y2)/2, b)
				excess := (f1+f2)/2 - fm
				ratio := 8 * excess / (d * d)
				minRatio = min(minRatio, ratio)
				// The absolute slack covers the rounding of the piecewise-
				// linear conjugates (b·y with |b| up to 41, over d² ≥ 1e-6).
				if ratio < gamma*(1-1e-6)-1e-6 {
					t.Fatalf("%s, b=%g: φ* is not %g-strongly convex between %g and %g (ratio %g)", name, b, gamma, y1, y2, ratio)
				}
			}
			if minRatio > gamma*1.01+1e-6 {
				t.Errorf("%s, b=%g: γ = %g is not tight: φ* is at least %g-strongly convex", name, b, gamma, minRatio)
			}
		}
	}
}

func TestLossDualFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, tc := range lossTestCases() {
		name := lossTestName(tc.loss)
		for _, b := range tc.labels {
			dlo, dhi := lossTestDomain(tc.loss, b)
			start := tc.loss.DualStart(b)
			if math.IsInf(tc.loss.Conj(start, b), 0) {
				t.Errorf("%s: DualStart(%g) = %g is not feasible", name, b, start)
			}
			for range 1000 {
				y := 10 * (2*rng.Float64() - 1)
				p := tc.loss.DualFeasible(y, b)
				want := min(max(y, dlo), dhi)
				if p != want {
					t.Fatalf("%s: DualFeasible(%g, %g) = %g, want the projection %g", name, y, b, p, want)
				}
				if math.IsInf(tc.loss.Conj(p, b), 0) {
					t.Fatalf("%s: DualFeasible(%g, %g) = %g is not feasible", name, y, b, p)
				}
				if q := tc.loss.DualFeasible(p, b); q != p {
					t.Fatalf("%s: DualFeasible is not idempotent at %g: %g then %g", name, y, p, q)
				}
			}
			if p := tc.loss.DualFeasible(math.NaN(), b); !math.IsNaN(p) {
				t.Errorf("%s: DualFeasible(NaN) = %g, want NaN", name, p)
			}
		}
	}
	for _, b := range []float64{-1, 1} {
		if got := (Logistic{}).DualStart(b); got != -b/2 {
			t.Errorf("logistic.DualStart(%g) = %g, want %g", b, got, -b/2)
		}
	}
}

// lossTestProxBracket returns an interval of y that contains the dual prox
// minimiser, derived from the problem without using the closed forms.
func lossTestProxBracket(l Loss, y0, z, sigma, b float64) (lo, hi float64) {
	switch l.(type) {
	case Squared:
		// The derivative (y − (z − b)) + (y − y0)/σ is ≤ 0 at the smaller
		// and ≥ 0 at the larger of y0 and z − b.
		return min(y0, z-b), max(y0, z-b)
	case SquaredHinge:
		// With u = −b·y ≥ 0 and c = b·z the derivative −1 + u/2 + c + (u − u0)/σ
		// is positive beyond u0 + σ(1 − c).
		umax := max(0, -b*y0+sigma*(1-b*z))
		if b > 0 {
			return -umax, 0
		}
		return 0, umax
	}
	return lossTestDomain(l, b)
}

// lossTestProxInput draws a random dual prox problem: σ log-uniform over
// [1e-8, 1e8] with extra weight on the extremes, |z| up to 1e3, and y0 mostly
// feasible but sometimes far outside the domain.
func lossTestProxInput(rng *rand.Rand, l Loss, labels []float64) (y0, z, sigma, b float64) {
	b = labels[rng.IntN(len(labels))]
	switch r := rng.IntN(10); {
	case r == 0:
		sigma = 1e-8
	case r == 1:
		sigma = 1e8
	default:
		sigma = math.Pow(10, -8+16*rng.Float64())
	}
	z = math.Copysign(math.Pow(10, -3+6*rng.Float64()), rng.Float64()-0.5)
	if rng.IntN(10) == 0 {
		z = 0
	}
	y0 = math.Copysign(math.Pow(10, -3+4*rng.Float64()), rng.Float64()-0.5)
	if rng.IntN(5) != 0 {
		y0 = l.DualFeasible(y0, b)
	}
	return y0, z, sigma, b
}

// TestLossDualProx compares DualProx with brute-force minimisation of
// φ*(y) − y·z + (y − y0)²/(2σ): bisection on its derivative gives the
// minimiser to full precision, and golden-section search on the objective
// itself must not find a better point. (Golden section alone resolves the
// minimiser only to about the square root of the machine precision, so it
// cannot check y to 1e-9 on its own.)
func TestLossDualProx(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range lossTestCases() {
		name := lossTestName(tc.loss)
		for i := range 3000 {
			y0, z, sigma, b := lossTestProxInput(rng, tc.loss, tc.labels)
			y := tc.loss.DualProx(y0, z, sigma, b)
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsInf(tc.loss.Conj(y, b), 0) {
				t.Fatalf("%s: DualProx(y0=%g, z=%g, σ=%g, b=%g) = %g is not feasible", name, y0, z, sigma, b, y)
			}
			obj := func(v float64) float64 {
				d := v - y0
				return tc.loss.Conj(v, b) - v*z + d*d/(2*sigma)
			}
			dobj := func(v float64) float64 { return lossTestConjDeriv(tc.loss, v, b) - z + (v-y0)/sigma }
			lo, hi := lossTestProxBracket(tc.loss, y0, z, sigma, b)
			ref := lossTestBisectMin(dobj, lo, hi)
			if math.Abs(y-ref) > 1e-9*max(1, math.Abs(ref)) {
				t.Errorf("%s #%d: DualProx(y0=%g, z=%g, σ=%g, b=%g) = %.17g, bisection on the derivative gives %.17g",
					name, i, y0, z, sigma, b, y, ref)
			}
			gs, fgs := lossTestGoldenMin(obj, lo, hi)
			scale := 1 + math.Abs(tc.loss.Conj(gs, b)) + math.Abs(gs*z) + (gs-y0)*(gs-y0)/(2*sigma)
			if fy := obj(y); fy > fgs+1e-12*scale {
				t.Errorf("%s #%d: DualProx(y0=%g, z=%g, σ=%g, b=%g) = %.17g has objective %.17g, golden section finds %.17g at %.17g",
					name, i, y0, z, sigma, b, y, fy, fgs, gs)
			}
		}
	}
}

// TestLossDualProxInfiniteStep checks that σ = +Inf gives the maximiser of
// y·z − φ*(y), which is φ'(z).
func TestLossDualProxInfiniteStep(t *testing.T) {
	for _, tc := range lossTestCases() {
		for _, b := range tc.labels {
			for z := -5.0; z <= 5; z += 0.31 {
				got := tc.loss.DualProx(0.1, z, math.Inf(1), b)
				want := tc.loss.Deriv(z, b)
				if math.Abs(got-want) > 1e-15*(1+math.Abs(want)) {
					t.Errorf("%s: DualProx(σ=+Inf, z=%g, b=%g) = %g, want φ'(z) = %g", lossTestName(tc.loss), z, b, got, want)
				}
				// A huge finite step must be close to that limit.
				near := tc.loss.DualProx(0.1, z, 1e12, b)
				if math.Abs(near-want) > 1e-10*(1+math.Abs(want)) {
					t.Errorf("%s: DualProx(σ=1e12, z=%g, b=%g) = %g, want ≈ φ'(z) = %g", lossTestName(tc.loss), z, b, near, want)
				}
			}
		}
	}
}

// lossTestLogisticScaledDeriv returns σ times the derivative of the logistic
// prox objective in u = −b·y at v, σ(logit(v) + c) + (v − u0), and the
// rounding error of its evaluation: a relative 1e-14 of its terms, and two
// steps of the subnormal grid, the absolute resolution of float64. Scaling by
// σ keeps both finite for every σ, including subnormal ones.
func lossTestLogisticScaledDeriv(v, u0, c, sigma float64) (d, tol float64) {
	logit := lossTestLog(v) - math.Log1p(-v)
	d = sigma*(logit+c) + (v - u0)
	tol = 1e-14*(sigma*(1+math.Abs(logit)+math.Abs(c))+math.Abs(v)+math.Abs(u0)) + 2*math.SmallestNonzeroFloat64
	return d, tol
}

// lossTestCheckLogisticStationary checks the first-order condition of the
// logistic dual prox at y = DualProx(y0, z, σ, b): the derivative of the
// objective in u = −b·y must change sign within four float64 steps of u on
// either side (up to the rounding of its evaluation), so u is the root to a
// few ulps; when u rounds to an end of the domain, the derivative must have
// the right sign next to that end. It reports whether u is inside (0, 1).
func lossTestCheckLogisticStationary(t *testing.T, y0, z, sigma, b float64) (interior bool) {
	t.Helper()
	y := Logistic{}.DualProx(y0, z, sigma, b)
	u, u0, c := -b*y, -b*y0, b*z
	if !(u >= 0 && u <= 1) {
		t.Errorf("DualProx(y0=%g, z=%g, σ=%g, b=%g) = %g is outside the domain", y0, z, sigma, b, y)
		return false
	}
	below, above := u, u
	for range 4 {
		below = math.Nextafter(below, 0)
		above = math.Nextafter(above, 1)
	}
	if below > 0 {
		if d, tol := lossTestLogisticScaledDeriv(below, u0, c, sigma); !(d <= tol) {
			t.Errorf("DualProx(y0=%g, z=%g, σ=%g, b=%g) = %.17g: σ·derivative %g > %g four steps below, so the root is lower",
				y0, z, sigma, b, y, d, tol)
		}
	}
	if above < 1 {
		if d, tol := lossTestLogisticScaledDeriv(above, u0, c, sigma); !(d >= -tol) {
			t.Errorf("DualProx(y0=%g, z=%g, σ=%g, b=%g) = %.17g: σ·derivative %g < −%g four steps above, so the root is higher",
				y0, z, sigma, b, y, d, tol)
		}
	}
	return u > 0 && u < 1
}

// lossTestExtremeLogisticInput draws a logistic dual prox problem at the
// limits of float64: σ from 1e-320 to 1e300, and y0 within as little as
// 1e-320 of one end of the domain or 1e-16 of the other.
func lossTestExtremeLogisticInput(rng *rand.Rand) (y0, z, sigma, b float64) {
	b = float64(2*rng.IntN(2) - 1)
	sigma = math.Pow(10, -320+620*rng.Float64())
	z = math.Copysign(math.Pow(10, -5+8*rng.Float64()), rng.Float64()-0.5)
	u0 := math.Pow(10, -320+320*rng.Float64())
	if rng.IntN(2) == 0 {
		u0 = 1 - math.Pow(10, -16+16*rng.Float64())
	}
	return -b * u0, z, sigma, b
}

// TestLossLogisticProxStationarity checks the first-order condition of the
// logistic dual prox on random problems. The condition is relative, so it also
// checks solutions within 1e-300 of an end, which an absolute comparison of y
// cannot see.
func TestLossLogisticProxStationarity(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	var interior, atEnd int
	for i := range 40000 {
		y0, z, sigma, b := lossTestProxInput(rng, Logistic{}, []float64{-1, 1})
		if i%2 == 1 {
			y0, z, sigma, b = lossTestExtremeLogisticInput(rng)
		}
		if lossTestCheckLogisticStationary(t, y0, z, sigma, b) {
			interior++
		} else {
			atEnd++
		}
		if t.Failed() {
			t.Fatalf("failed at problem #%d", i)
		}
	}
	if interior < 1000 || atEnd < 100 {
		t.Errorf("the random problems cover the interior %d times and the ends %d times; want both well covered", interior, atEnd)
	}
	// Problems that once went wrong or took the rare paths: subnormal σ and
	// y0, where math.Log is wrong on amd64 (golang/go#56600) and the
	// iteration ends by bisection, and y0 within 1e-11 of −b with a small σ,
	// where sigmoid(t) − u0 must be evaluated without cancellation.
	for _, p := range []struct{ y0, z, sigma, b float64 }{
		{-5.093928271666e-312, -0.0005568425360777152, 4.7212073e-317, 1},
		{-8.2368811518115e-310, -0.0003733674669490895, 2.03827227e-316, 1},
		{-4.543556e-318, -4062.818525533461, 2.0165582686e-314, 1},
		{-9.17206978e-316, -15.82068632186683, 5.778365e-318, 1},
		{2.858516013291e-311, 8.285716709029693, 3.4397375701e-313, -1},
		{9.55881864639e-310, 347.19031197166333, 9.2931e-319, -1},
		{-2.0523248732256e-311, -0.11743144321824256, 1.2276594096e-314, 1},
		{-0.9999999999941784, 2.5367897965656693e-05, 2.748703448548867e-14, 1},
		{-0.9999999999647421, -0.0216171605065479, 3.9536938427000825e-16, 1},
	} {
		lossTestCheckLogisticStationary(t, p.y0, p.z, p.sigma, p.b)
	}
}

// TestLossLogisticProxConvergence checks how many exponentials the logistic
// dual prox takes: from the warm starts of a converging solver the cubic
// steps should need one or two, and near the ends of the domain the
// iteration must not stall.
func TestLossLogisticProxConvergence(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	for _, sigma := range []float64{1e-3, 0.25, 1} {
		var total, worst int
		const trials = 2000
		for range trials {
			c := 3 * rng.NormFloat64()
			u0 := 1 / (1 + math.Exp(c)) // the dual optimum for margin c
			_, exps := logisticProxSolve(u0, c+0.01*rng.NormFloat64(), sigma)
			total += exps
			worst = max(worst, exps)
		}
		if mean := float64(total) / trials; mean > 1.2 || worst > 3 {
			t.Errorf("σ=%g: warm starts take %.2f exponentials on average and %d at worst, want ≤ 1.2 and ≤ 3", sigma, mean, worst)
		}
	}
	// Starts at or next to an end of the domain, where the root is often
	// within rounding of an end of the bracket.
	for _, p := range []struct {
		u0, c, sigma float64
		maxExps      int
	}{
		{0.9999999999941784, 2.5367897965656693e-05, 2.748703448548867e-14, 3},
		{0.9999999999647421, 0.0216171605065479, 3.9536938427000825e-16, 3},
		{1, -96.14, 12.4, 2},
		{0, 91.45, 170, 2},
		{0.5, 0, 1e-8, 2},
		{0.5, 700, 1e8, 2},
	} {
		if _, exps := logisticProxSolve(p.u0, p.c, p.sigma); exps > p.maxExps {
			t.Errorf("logisticProxSolve(u0=%g, c=%g, σ=%g) takes %d exponentials, want ≤ %d", p.u0, p.c, p.sigma, exps, p.maxExps)
		}
	}
	// The adversarial problems of TestLossDualProx, which include cold starts
	// from the ends of the domain with σ down to 1e-8, took 3.6 on average
	// when this test was written.
	var total int
	const trials = 20000
	for range trials {
		y0, z, sigma, b := lossTestProxInput(rng, Logistic{}, []float64{-1, 1})
		_, exps := logisticProxSolve(-b*y0, b*z, sigma)
		total += exps
	}
	if mean := float64(total) / trials; mean > 4 {
		t.Errorf("random problems take %.2f exponentials on average, want ≤ 4", mean)
	}
}

// TestLossDualProxExtremes feeds the dual proxes inputs at the limits of
// float64 and checks the result is a finite feasible point, and for the
// logistic loss that it is accurate where a reference can be computed.
func TestLossDualProxExtremes(t *testing.T) {
	sigmas := []float64{math.SmallestNonzeroFloat64, 1e-300, 1e-8, 1, 1e8, 1e300, math.MaxFloat64, math.Inf(1)}
	values := []float64{-1e300, -1e3, -37, -1, -1e-300, 0, 1e-300, 0.5, 1, 37, 1e3, 1e300}
	for _, tc := range lossTestCases() {
		for _, sigma := range sigmas {
			for _, z := range values {
				for _, y0 := range values {
					for _, b := range tc.labels {
						y := tc.loss.DualProx(y0, z, sigma, b)
						dlo, dhi := lossTestDomain(tc.loss, b)
						if math.IsInf(y, 0) || !(y >= dlo && y <= dhi) {
							t.Fatalf("%s: DualProx(y0=%g, z=%g, σ=%g, b=%g) = %g is not a finite feasible point",
								lossTestName(tc.loss), y0, z, sigma, b, y)
						}
					}
				}
			}
		}
	}
	// NaN in any input comes out as NaN rather than as a plausible number.
	for _, tc := range lossTestCases() {
		nan := math.NaN()
		for _, in := range [][3]float64{{nan, 0.5, 1}, {0, nan, 1}, {0, 0.5, nan}} {
			if y := tc.loss.DualProx(in[0], in[1], in[2], tc.labels[0]); !math.IsNaN(y) {
				t.Errorf("%s: DualProx(y0=%g, z=%g, σ=%g) = %g, want NaN", lossTestName(tc.loss), in[0], in[1], in[2], y)
			}
		}
	}
	// The logistic prox never overflows, whatever the magnitudes.
	for _, sigma := range sigmas {
		for _, z := range []float64{-math.MaxFloat64, math.MaxFloat64} {
			for _, y0 := range []float64{-math.MaxFloat64, -0.5, math.MaxFloat64} {
				for _, b := range []float64{-1, 1} {
					y := Logistic{}.DualProx(y0, z, sigma, b)
					if math.IsNaN(y) || math.IsInf(Logistic{}.Conj(y, b), 0) {
						t.Fatalf("logistic: DualProx(y0=%g, z=%g, σ=%g, b=%g) = %g is not feasible", y0, z, sigma, b, y)
					}
				}
			}
		}
	}
	// Solutions within exp(−1000) of an end of the domain, and their mirror images.
	for _, tc := range []struct{ y0, z, sigma, b, want float64 }{
		{-0.5, 1e3, 1, 1, 0},
		{-0.5, -1e3, 1, 1, -1},
		{0.5, -1e3, 1, -1, 0},
		{0.5, 1e3, 1, -1, 1},
		{0, 700, 1e-8, 1, 0},
		{-1, -700, 1e-8, 1, -1},
	} {
		y := Logistic{}.DualProx(tc.y0, tc.z, tc.sigma, tc.b)
		if math.Abs(y-tc.want) > 1e-300 {
			t.Errorf("DualProx(y0=%g, z=%g, σ=%g, b=%g) = %g, want %g", tc.y0, tc.z, tc.sigma, tc.b, y, tc.want)
		}
	}
	// A minimiser near exp(−700) must be found with full relative precision:
	// logit(u) = −700 − (u − u0)/σ with u0 = 0 and σ = 1 gives log(u) ≈ −700.
	if !lossTestCheckLogisticStationary(t, 0, 700, 1, 1) {
		t.Errorf("DualProx(y0=0, z=700, σ=1, b=1) = %g, want a point inside the domain", Logistic{}.DualProx(0, 700, 1, 1))
	}
}

func TestLossNoAllocations(t *testing.T) {
	for _, tc := range lossTestCases() {
		l := tc.loss
		var sink float64
		allocs := testing.AllocsPerRun(100, func() {
			sink += l.DualProx(0.3, 1.7, 0.25, 1) + l.Value(0.2, 1) + l.Deriv(0.2, 1) + l.Conj(-0.4, 1) +
				l.DualFeasible(0.7, 1) + l.DualStart(-1) + l.Gamma()
		})
		if allocs != 0 {
			t.Errorf("%s: %g allocations per call, want 0", lossTestName(l), allocs)
		}
		if math.IsNaN(sink) {
			t.Errorf("%s: NaN from feasible inputs", lossTestName(l))
		}
	}
}

// lossBenchSink keeps the benchmarked calls from being optimised away.
var lossBenchSink float64

// BenchmarkLossDualProx measures one dual prox step. For the logistic loss,
// whose prox is iterative, "warm" starts from the dual optimum φ'(z) of a
// margin z that has since moved by about 0.01 (the regime of a converging
// solver), "cold" starts from DualStart with a random margin, and the σ
// suffixes span the step sizes AdaSPDC uses. The exp reference costs one
// math.Exp, to express the others in units that survive a noisy machine.
func BenchmarkLossDualProx(b *testing.B) {
	type input struct{ y0, z, sigma, label float64 }
	const size = 1024
	makeInputs := func(l Loss, sigma float64, warm bool) []input {
		rng := rand.New(rand.NewPCG(5, 8))
		in := make([]input, size)
		for i := range in {
			label := float64(2*rng.IntN(2) - 1)
			z := 3 * rng.NormFloat64()
			y0 := l.DualStart(label)
			if warm {
				// φ'(z) is the fixed point of the prox at margin z.
				y0 = l.Deriv(z, label)
				z += 0.01 * rng.NormFloat64()
			}
			in[i] = input{y0, z, sigma, label}
		}
		return in
	}
	for _, tc := range []struct {
		name  string
		loss  Loss
		sigma float64
		warm  bool
	}{
		{"squared", Squared{}, 0.25, false},
		{"smoothhinge", SmoothHinge{S: 1}, 0.25, false},
		{"sqhinge", SquaredHinge{}, 0.25, false},
		{"logistic/warm/σ=0.25", Logistic{}, 0.25, true},
		{"logistic/cold/σ=0.25", Logistic{}, 0.25, false},
		{"logistic/warm/σ=0.001", Logistic{}, 0.001, true},
		{"logistic/cold/σ=0.001", Logistic{}, 0.001, false},
		{"logistic/cold/σ=100", Logistic{}, 100, false},
	} {
		in := makeInputs(tc.loss, tc.sigma, tc.warm)
		l := tc.loss
		b.Run(tc.name, func(b *testing.B) {
			var sum float64
			for i := 0; b.Loop(); i++ {
				p := &in[i&(size-1)]
				sum += l.DualProx(p.y0, p.z, p.sigma, p.label)
			}
			lossBenchSink = sum
		})
	}
	in := makeInputs(Squared{}, 1, false)
	b.Run("reference/exp", func(b *testing.B) {
		var sum float64
		for i := 0; b.Loop(); i++ {
			sum += math.Exp(in[i&(size-1)].z)
		}
		lossBenchSink = sum
	})
}

// TestLogisticProxWarm checks the lean warm-started prox against
// logisticProxFrom from the same warm logit: chains of proxes with a
// drifting margin, as a converging solver makes them, and the adversarial
// problems of TestLossDualProx started from the logit of a cold solve. The
// answers may differ by the rounding of expNeg, a few ulp of u, and beyond
// ±logisticLogitBound, where logisticProxFrom clamps the logit and u rounds
// to an end of the domain; the lean prox must not take more exponentials
// on average.
func TestLogisticProxWarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(u0, t0, c, sigma float64) (warmExps, fromExps int) {
		u, tw, e := logisticProxWarm(u0, t0, c, sigma)
		v, tv, f := logisticProxFrom(u0, t0, c, sigma)
		du := math.Abs(u - v)
		ulp := math.Nextafter(v, 2) - v
		okT := math.Abs(tw-tv) <= 1e-9*max(1, math.Abs(tv)) || math.Abs(tv) >= logisticLogitBound
		if !(du <= 1e-13*min(v, 1-v)+4*ulp || du <= 1e-300) || !okT {
			t.Errorf("logisticProxWarm(u0=%g, t0=%g, c=%g, σ=%g) = %.17g (logit %.17g), logisticProxFrom %.17g (%.17g)",
				u0, t0, c, sigma, u, tw, v, tv)
		}
		return e, f
	}
	var warm, from, calls int
	for range 2000 {
		sigma := math.Pow(10, -3+3*rng.Float64())
		c := 5 * rng.NormFloat64()
		u, lt, _ := logisticProxFrom(0.5, math.NaN(), c, sigma)
		for range 30 {
			c += 0.3 * rng.NormFloat64()
			e, f := check(u, lt, c, sigma)
			warm, from, calls = warm+e, from+f, calls+1
			u, lt, _ = logisticProxFrom(u, lt, c, sigma)
		}
	}
	if mw, mf := float64(warm)/float64(calls), float64(from)/float64(calls); mw > mf {
		t.Errorf("warm chains: the lean prox takes %.3f exponentials per call, logisticProxFrom %.3f", mw, mf)
	}
	for range 20000 {
		y0, z, sigma, b := lossTestProxInput(rng, Logistic{}, []float64{-1, 1})
		u0, c := -b*y0, b*z
		u, lt, _ := logisticProxFrom(u0, math.NaN(), c, sigma)
		check(u, lt, c*(1+0.1*rng.NormFloat64()), sigma)
		check(u0, math.NaN(), c, sigma)
	}
}

// TestExpNeg checks expNeg against math.Exp: within 2 ulp on [−745, 0],
// exact at 0, and 0 below the underflow.
func TestExpNeg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	if e := expNeg(0); e != 1 {
		t.Errorf("expNeg(0) = %v", e)
	}
	if e := expNeg(-746); e != 0 {
		t.Errorf("expNeg(-746) = %v", e)
	}
	for i := range 200000 {
		x := -745 * rng.Float64()
		if i%4 == 0 {
			x = -math.Pow(10, -20+23*rng.Float64())
		}
		got, want := expNeg(x), math.Exp(x)
		if ulp := math.Nextafter(want, 1) - want; math.Abs(got-want) > 2*ulp {
			t.Fatalf("expNeg(%.17g) = %.17g, math.Exp %.17g", x, got, want)
		}
	}
}
