package sdca

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestBufferedSteps checks B, the steps a worker of sdca-async buffers its
// changes to the frequent columns for: a power of two, at most
// n/(64·workers) and 4096, and no buffer below 16.
func TestBufferedSteps(t *testing.T) {
	for _, c := range []struct{ n, threads, want int }{
		{1_000_000, 2, 4096},
		{4096, 2, 32},
		{3000, 2, 16},
		{2048, 2, 16},
		{2047, 2, 0},
		{100_000, 16, 64},
		{300, 1, 0},
	} {
		if got := bufferedSteps(c.n, c.threads); got != c.want {
			t.Errorf("bufferedSteps(%d, %d) = %d, want %d", c.n, c.threads, got, c.want)
		}
	}
}

// TestSDCAAsyncBufferedColumns checks the atomic mode's buffered columns
// on two workers: after epochs, every buffer is empty and the running v
// equals (1/n) Σₖ yₖaₖ recomputed from the duals to rounding (every change
// landed once: a worker that kept its last buffer, or added it twice,
// fails), and the run reaches sdca's optimum with a certified gap. Run it
// with -race: the buffers are private and v is touched only atomically.
func TestSDCAAsyncBufferedColumns(t *testing.T) {
	x, b := enginetest.SparseData(4096, 300, 12, 7) // B = 32, the first 128 columns buffered
	for _, reg := range []objective.ElasticNet{{Lambda: 1e-3}, {Lambda: 1e-3, L1: 1e-4}, {Lambda: 1e-3, Weights: constVec(300, 2)}} {
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: reg}
		m, err := startSDCAAsync(prob, driver.Options{Threads: 2, Seed: 1, Tol: -1}, false)
		if err != nil {
			t.Fatal(err)
		}
		s := m.(*sdcaAsync)
		if len(s.buffers) != 2 || s.flushEvery != 32 || len(s.buffers[0].delta) != 128 {
			t.Fatalf("%+v: %d buffers of %d columns flushed every %d steps, want 2 of 128 every 32", reg, len(s.buffers), len(s.buffers[0].delta), s.flushEvery)
		}
		if _, err := s.RunEpochs(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		for w, buf := range s.buffers {
			if i := slices.IndexFunc(buf.delta, func(d float64) bool { return d != 0 }); i >= 0 {
				t.Errorf("%+v: worker %d kept %g for column %d after the epoch", reg, w, buf.delta[i], i)
			}
		}
		running := slices.Clone(s.v)
		s.recomputeV()
		var scale, worst float64
		for j, vj := range s.v {
			scale = math.Max(scale, math.Abs(vj))
			worst = math.Max(worst, math.Abs(running[j]-vj))
		}
		if worst > 1e-12*scale {
			t.Errorf("%+v: the running v is %.3g from the duals' (largest |vⱼ| %.3g)", reg, worst, scale)
		}
		if err := s.Finish(&driver.Result{}); err != nil {
			t.Fatal(err)
		}

		_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-12, MaxEpochs: 5000, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCAAsync, Threads: 2, Tol: 1e-9, MaxEpochs: 5000, Seed: 3})
		if err != nil || !res.Converged {
			t.Fatalf("%+v: %v, gap %.3g", reg, err, res.Final.RelGap)
		}
		if d := res.Final.Primal - ref.Final.Primal; d < -1e-11 || d > res.Final.Gap+1e-11 {
			t.Errorf("%+v: P = %.15g, sdca's optimum %.15g, gap %.3g", reg, res.Final.Primal, ref.Final.Primal, res.Final.Gap)
		}
	}
}

// TestSDCAAsyncDrift checks the atomic mode's bound on the rounding of its
// running v, with and without buffered columns: after epochs the bound is
// positive and at least ‖v − (1/n)Σₖ yₖaₖ‖₁ against v recomputed from the
// duals, on values spanning orders of magnitude (it is a worst-case bound:
// about a hundred times the error measured here), and a certificate then
// uses the running v: its D is at most the exact v's, and close to it.
func TestSDCAAsyncDrift(t *testing.T) {
	x, b := enginetest.SparseData(4096, 300, 12, 7)
	for p := range x.Values {
		x.Values[p] *= math.Pow(10, float64(p%7-3)) // terms that cancel: larger roundings
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	for _, threads := range []int{2, 3} { // 3: 4096/(64·3) < 32, B = 16; both buffered
		for _, buffered := range []bool{true, false} {
			m, err := startSDCAAsync(prob, driver.Options{Threads: threads, Seed: 1, Tol: -1}, false)
			if err != nil {
				t.Fatal(err)
			}
			s := m.(*sdcaAsync)
			if !buffered {
				s.buffers = nil
			}
			if _, err := s.RunEpochs(context.Background(), 4); err != nil {
				t.Fatal(err)
			}
			running := slices.Clone(s.v)
			tp, err := s.Certify()
			if err != nil {
				t.Fatal(err)
			}
			drift := s.drift
			if !(drift > 0) {
				t.Fatalf("%d workers, buffered %v: drift %v after four epochs", threads, buffered, drift)
			}
			if !slices.Equal(running, s.v) {
				t.Errorf("%d workers, buffered %v: the certificate recomputed v at a drift of %.3g", threads, buffered, drift)
			}
			s.recomputeV()
			var actual float64
			for j := range s.v {
				actual += math.Abs(running[j] - s.v[j])
			}
			if actual > drift {
				t.Errorf("%d workers, buffered %v: ‖v − (1/n)Σ yₖaₖ‖₁ = %.3g, beyond the bound %.3g", threads, buffered, actual, drift)
			}
			exact := s.evaluate()
			if tp.Dual > exact.Dual || exact.Dual-tp.Dual > 1e-9 {
				t.Errorf("%d workers, buffered %v: D %.17g with the running v, %.17g with the exact v", threads, buffered, tp.Dual, exact.Dual)
			}
			if s.drift != 0 {
				t.Errorf("recomputing v left a drift of %v", s.drift)
			}
			// A drift that overflowed (steps that diverged) recomputes v
			// instead of panicking on the bound.
			for _, bad := range []float64{math.Inf(1), math.NaN()} {
				s.drift = bad
				if got, err := s.Certify(); err != nil || got.Dual != exact.Dual || s.drift != 0 {
					t.Errorf("drift %v: D %.17g (exact %.17g), drift after %v, error %v", bad, got.Dual, exact.Dual, s.drift, err)
				}
			}
			if err := s.Finish(&driver.Result{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
