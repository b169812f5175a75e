package vr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/engine/objective"
)

// storeCase is a regularizer and a step for the coordinate store tests.
type storeCase struct {
	name string
	eta  float64
	reg  objective.ElasticNet
}

func storeCases(d int, rng *rand.Rand) []storeCase {
	centre := make([]float64, d)
	for j := range centre {
		centre[j] = rng.NormFloat64()
	}
	return []storeCase{
		{"ridge", 0.5, objective.ElasticNet{Lambda: 0.3}},
		{"ridge-small", 0.5, objective.ElasticNet{Lambda: 1e-4}},
		{"ridge+centre", 0.4, objective.ElasticNet{Lambda: 0.7, Center: centre}},
		{"none", 0.3, objective.ElasticNet{}},
		{"elasticnet", 0.5, objective.ElasticNet{Lambda: 0.3, L1: 0.05}},
		{"elasticnet-small", 0.5, objective.ElasticNet{Lambda: 1e-4, L1: 0.05}},
		{"elasticnet+centre", 0.4, objective.ElasticNet{Lambda: 0.7, L1: 0.2, Center: centre}},
		{"lasso", 0.3, objective.ElasticNet{L1: 0.05}},
	}
}

// storeClose fails unless every coordinate of the stores agrees with the
// dense one to 1e-12·max(1, peak[j]), where peak[j] is the largest |xⱼ|
// since the last reset: a value that came down from there carries that
// value's rounding, in the dense store as much as in the lazy ones.
func storeClose(t *testing.T, what string, dense coordStore, others []coordStore, peak []float64) {
	t.Helper()
	for j := int32(0); j < int32(len(peak)); j++ {
		want := dense.get(j)
		for _, s := range others {
			if got := s.get(j); !(math.Abs(got-want) <= 1e-12*math.Max(1, peak[j])) {
				t.Fatalf("%s: %T coordinate %d = %.17g, dense %.17g", what, s, j, got, want)
			}
		}
	}
}

// TestCoordStoreLazyMatchesDense drives the dense and the lazy stores
// through the same random iterations (rows of 0–4 distinct coordinates
// stepped with random u and dc, dot products, reads and resets in
// between, and long stretches with no touch at all) and checks that every
// coordinate agrees to 1e-12 relative, for ridge, elastic net and lasso,
// with and without a centre. The scaled store runs with a floor of 1e-3,
// so that it rescales every few iterations.
func TestCoordStoreLazyMatchesDense(t *testing.T) {
	const d = 24
	iters := 6000
	if testing.Short() {
		iters = 1500
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range storeCases(d, rng) {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(tc.name))))
			dense := newCoordStore(false, d, tc.eta, tc.reg)
			lazy := newCoordStore(true, d, tc.eta, tc.reg)
			stores := []coordStore{lazy}
			if tc.reg.L1 == 0 {
				lazy.(*scaledStore).floor = 1e-3
				// The stamped store must give the same with L1 = 0.
				st := &stampedStore{p: newProxStep(tc.eta, tc.reg), recs: make([]stampedCoord, d)}
				stores = append(stores, st)
			}
			all := append([]coordStore{dense}, stores...)
			x0, c0 := make([]float64, d), make([]float64, d)
			peak := make([]float64, d)
			track := func() {
				for j := range peak {
					peak[j] = math.Max(peak[j], math.Abs(dense.get(int32(j))))
				}
			}
			randomise := func() {
				clear(peak)
				for j := range x0 {
					x0[j] = rng.NormFloat64()
					c0[j] = 0.1 * rng.NormFloat64()
				}
				for _, s := range all {
					s.reset(x0, c0)
				}
				track()
			}
			randomise()
			buf := make([]float64, d)
			for it := 0; it < iters; it++ {
				switch r := rng.IntN(1000); {
				case r == 0:
					randomise()
				case r < 5:
					// A long stretch without touches: the catch-up of
					// thousands of steps at once.
					// Without contraction (λη ≈ 0) the dense store's own
					// rounding grows with the stretch, so it stays short.
					gap := 2000 + rng.IntN(3000)
					if tc.eta*tc.reg.Lambda < 1e-2 {
						gap = 50 + rng.IntN(250)
					}
					for range gap {
						for _, s := range all {
							s.next()
						}
						track()
					}
					storeClose(t, fmt.Sprintf("after a long gap at iteration %d", it), dense, stores, peak)
				case r < 10:
					for _, s := range all {
						s.read(buf)
					}
				}
				nnz := rng.IntN(5)
				idx := make([]int32, 0, nnz)
				for _, j := range rng.Perm(d)[:nnz] {
					idx = append(idx, int32(j))
				}
				val := make([]float64, nnz)
				for p := range val {
					val[p] = rng.NormFloat64()
				}
				want := dense.dot(val, idx)
				scale := 1.0 // Σ|vₚ|·peakₚ: the dot's own rounding is relative to it
				for p, j := range idx {
					scale += math.Abs(val[p]) * peak[j]
				}
				for _, s := range stores {
					if got := s.dot(val, idx); !(math.Abs(got-want) <= 1e-12*scale) {
						t.Fatalf("iteration %d: %T dot %.17g, dense %.17g", it, s, got, want)
					}
				}
				u, dc := 0.3*rng.NormFloat64(), 0.05*rng.NormFloat64()
				for _, s := range all {
					s.step(val, idx, u, dc)
					s.next()
				}
				track()
				if it%97 == 0 {
					storeClose(t, fmt.Sprintf("iteration %d", it), dense, stores, peak)
				}
			}
			storeClose(t, "end", dense, stores, peak)
			for _, s := range all {
				s.read(buf)
				for j, v := range buf {
					if want := dense.get(int32(j)); !(math.Abs(v-want) <= 1e-12*math.Max(1, peak[j])) {
						t.Fatalf("%T read coordinate %d = %.17g, dense %.17g", s, j, v, want)
					}
				}
			}
		})
	}
}

// TestCoordStoreLongRun runs a million untouched iterations of a strongly
// contracting ridge map (a = 1/(1+ηλ) = 1/2, so Πa underflows float64
// after 1075 iterations and reaches the default floor of 1e-150 every
// 498): the scaled store must rescale by itself and land on the fixed
// point −c/λ with no NaN, Inf or lost digit; and a lasso coordinate must
// follow x − tηc exactly for 10⁹ iterations caught up at once.
func TestCoordStoreLongRun(t *testing.T) {
	const d = 3
	iters := 1_000_000
	if testing.Short() {
		iters = 20_000
	}
	reg := objective.ElasticNet{Lambda: 1}
	s := newCoordStore(true, d, 1, reg).(*scaledStore)
	x := []float64{1e3, -2, 0}
	c := []float64{0.5, -3, 1e-200}
	s.reset(x, c)
	rescales := 0
	for range iters {
		s.next()
		if s.pt == 1 {
			rescales++
		}
	}
	if rescales < iters/600 {
		t.Errorf("%d rescales in %d iterations: the scale was not renormalised", rescales, iters)
	}
	for j := int32(0); j < d; j++ {
		want := -c[j] / reg.Lambda
		if got := s.get(j); !(math.Abs(got-want) <= 1e-15*math.Max(1e-300, math.Abs(want))) {
			t.Errorf("coordinate %d = %g after %d steps, want the fixed point %g", j, got, iters, want)
		}
	}

	// The lasso: a coordinate with c > l1 drifts down by η(c − l1) per step
	// once it is negative, and the stamped store replays 10⁹ steps in O(1).
	l := newCoordStore(true, 1, 0.25, objective.ElasticNet{L1: 0.5}).(*stampedStore)
	l.reset([]float64{3}, []float64{1.5})
	l.t += 1_000_000_000
	// Positive branch: 3 − 0.25·2·t reaches ≤ 0 at t = 6 exactly (value 0),
	// then the true map: soft(0 − 0.375, 0.125) = −0.25, then −0.25 a step.
	want := -0.25 * float64(1_000_000_000-6)
	if got := l.get(0); got != want {
		t.Errorf("lasso coordinate after 1e9 steps = %.17g, want %.17g", got, want)
	}
	// And in a dead zone (|c| ≤ l1) every coordinate ends at 0.
	l.reset([]float64{-7}, []float64{0.3})
	l.t += 1_000_000_000
	if got := l.get(0); got != 0 {
		t.Errorf("dead-zone coordinate = %g, want 0", got)
	}
}
