package kernels

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// ulps returns how many float64 steps apart a and b are (both finite and
// of one sign, or equal).
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(float64(int64(math.Float64bits(a)) - int64(math.Float64bits(b))))
}

// transcendInputs returns inputs for a unary kernel: a dense sweep of
// [lo, hi], random points in it, its ends and the values around them, and
// values outside it (which must take the math package's value).
func transcendInputs(lo, hi float64, outside []float64) []float64 {
	rng := rand.New(rand.NewPCG(12, 13))
	var x []float64
	for i := 0; i <= 200000; i++ {
		x = append(x, lo+(hi-lo)*float64(i)/200000)
	}
	for range 200000 {
		x = append(x, lo+(hi-lo)*rng.Float64())
	}
	for _, e := range []float64{lo, hi} {
		x = append(x, e, math.Nextafter(e, math.Inf(1)), math.Nextafter(e, math.Inf(-1)))
	}
	for k := -1074; k < 0; k += 7 {
		x = append(x, math.Ldexp(1, k), -math.Ldexp(1, k)) // tiny, of both signs
	}
	x = append(x, 0, math.Copysign(0, -1))
	return append(x, outside...)
}

// checkTranscend checks a unary kernel: every implementation gives the
// pure-Go form's bits on every input, at every length up to 19 (the
// masked tails) and on the whole input at once; the pure-Go form is
// within maxUlps of ref inside [lo, hi], and equal to ref outside it (NaN
// for NaN); and nothing past len(x) in dst is written.
func checkTranscend(t *testing.T, name string, kernel func(im impl) func(dst, x []float64), ref func(float64) float64, lo, hi, maxUlps float64, outside []float64) {
	x := transcendInputs(lo, hi, outside)
	want := make([]float64, len(x))
	kernel(genericImpl)(want, x)
	worst, at := 0.0, 0.0
	for i, v := range x {
		r := ref(v)
		if !(v >= lo && v <= hi) {
			if math.Float64bits(want[i]) != math.Float64bits(r) && !(math.IsNaN(r) && math.IsNaN(want[i])) {
				t.Fatalf("%s(%v) = %v outside [%v, %v], want math's %v", name, v, want[i], lo, hi, r)
			}
			continue
		}
		if u := ulps(want[i], r); u > worst {
			worst, at = u, v
		}
	}
	if worst > maxUlps {
		t.Fatalf("%s: %v ulps from math's value at %v (math: %v), want ≤ %v", name, worst, at, ref(at), maxUlps)
	}
	t.Logf("%s: at most %v ulp from math's value on [%v, %v]", name, worst, lo, hi)
	forEachImpl(t, func(t *testing.T, im impl) {
		f := kernel(im)
		got := make([]float64, len(x))
		f(got, x)
		for i := range x {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%s(%v) = %v, pure-Go form %v", name, x[i], got[i], want[i])
			}
		}
		// Short lengths, from an input that mixes values outside the
		// range with those inside, at every offset.
		mixed := append([]float64{}, outside...)
		for i := range 30 {
			mixed = append(mixed, lo+(hi-lo)*float64(i)/29)
		}
		for n := 0; n <= 19; n++ {
			for off := 0; off+n <= len(mixed); off += 3 {
				in := mixed[off : off+n]
				dst := make([]float64, n+1)
				dst[n] = 42
				f(dst[:n+1], in)
				for i, v := range in {
					var w [1]float64
					kernel(genericImpl)(w[:], []float64{v})
					if math.Float64bits(dst[i]) != math.Float64bits(w[0]) && !(math.IsNaN(dst[i]) && math.IsNaN(w[0])) {
						t.Fatalf("%s: n=%d, lane %d: %v gives %v, pure-Go form %v", name, n, i, v, dst[i], w[0])
					}
				}
				if dst[n] != 42 {
					t.Fatalf("%s: n=%d wrote past len(x)", name, n)
				}
			}
		}
	})
}

func TestExpNeg(t *testing.T) {
	outside := []float64{-708.5, -745, -745.2, -1000, math.Inf(-1), 1e-300, 0.5, 1, 700, 710, math.Inf(1), math.NaN()}
	checkTranscend(t, "ExpNeg", func(im impl) func(dst, x []float64) { return im.expNeg }, math.Exp, -708, 0, 2, outside)
}

func TestLog1pUnit(t *testing.T) {
	outside := []float64{-1e-300, -0.25, -1, -2, 1.5, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	checkTranscend(t, "Log1pUnit", func(im impl) func(dst, x []float64) { return im.log1pUnit }, math.Log1p, 0, 1, 1, outside)
}

// TestTranscendPanics checks that the kernels refuse a dst shorter than x.
func TestTranscendPanics(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		x := []float64{-1, -2, -3}
		mustPanic(t, errLength, func() { ExpNeg(make([]float64, 2), x) })
		mustPanic(t, errLength, func() { Log1pUnit(make([]float64, 2), []float64{0.1, 0.2, 0.3}) })
		ExpNeg(make([]float64, 3), x)
	})
}

// TestTranscendPanicsOnOverlap checks that the kernels refuse a dst that
// overlaps x, exactly or shifted.
func TestTranscendPanicsOnOverlap(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		a := []float64{-1, -2, -3, -4}
		mustPanic(t, errOverlap, func() { ExpNeg(a, a) })
		mustPanic(t, errOverlap, func() { ExpNeg(a[1:], a[:3]) })
		mustPanic(t, errOverlap, func() { Log1pUnit(a[1:], a[:3]) })
		Log1pUnit(a[:3], a[2:])
		ExpNeg(a[2:], a[:2])
	})
}
