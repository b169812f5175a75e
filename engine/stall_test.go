package engine

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestGuardLetsAFallingPrimalRecover: a primal far above P₀ that falls
// back while the gap falls is not divergence; the same primal rising is.
func TestGuardLetsAFallingPrimalRecover(t *testing.T) {
	run := func(primal, gap []float64) error {
		g := divergenceGuard{hint: "hint"}
		for i := range primal {
			if err := g.observe(TracePoint{Epoch: i, Primal: primal[i], Dual: primal[i] - gap[i], Gap: gap[i]}); err != nil {
				return err
			}
		}
		return nil
	}
	// The a9a squared-hinge run at λ = 1e-6, m = 256: 1 → 7443, then down.
	recovering := []float64{1, 7443, 5000, 3000, 2000, 1500, 1200, 900, 40, 3, 0.5}
	gaps := []float64{3.6e6, 6e5, 3e5, 1e5, 5e4, 3e4, 2e4, 1e4, 100, 10, 1}
	if err := run(recovering, gaps); err != nil {
		t.Errorf("a primal falling back from a first-epoch jump was called divergence: %v", err)
	}
	rising := []float64{1, 7443, 8000, 9000, 9500, 9900, 12000, 15000}
	if err := run(rising, gaps[:len(rising)]); err == nil || !strings.Contains(err.Error(), "primal") {
		t.Errorf("a primal rising far above P₀: %v, want a divergence error about the primal", err)
	}
	// High and falling, then rising again: the falling certificate neither
	// counts nor resets, so five rising ones still stop the run.
	zigzag := []float64{1, 7443, 8000, 7000, 9000, 9500, 9900, 12000}
	if err := run(zigzag, gaps[:len(zigzag)]); err == nil {
		t.Error("a primal rising around one falling certificate was not stopped")
	}
}

// TestStallRule drives the stall rule with best-gap sequences.
func TestStallRule(t *testing.T) {
	stalls := func(window int, gaps []float64, every int) (int, bool) {
		w := stallWatch{window: window}
		best := math.Inf(1)
		for i, g := range gaps {
			best = math.Min(best, g)
			tp := TracePoint{Epoch: i * every, Primal: 1, Gap: g}
			if _, _, ok := w.stalled(tp, TracePoint{Epoch: i * every, Primal: 1, Gap: best}); ok {
				return i * every, true
			}
		}
		return 0, false
	}
	flat := make([]float64, 60)
	for i := range flat {
		flat[i] = 7 + 0.001*math.Sin(float64(i))
	}
	if e, ok := stalls(200, flat, 8); !ok || e < 400 || e > 408 {
		t.Errorf("flat gap: stalled %v at epoch %d, want a stop at epoch 400–408", ok, e)
	}
	noisy := make([]float64, 120) // wandering tenfold around 500, lucky lows included
	for i := range noisy {
		noisy[i] = 500 * math.Pow(10, math.Sin(float64(i)*1.7)) / (1 + 0.01*float64(i%40))
	}
	if e, ok := stalls(200, noisy, 8); !ok || e > 480 {
		t.Errorf("a gap wandering around one level: stalled %v at epoch %d, want a stop by epoch 480", ok, e)
	}
	slow := make([]float64, 100) // 2% lower every 100 epochs: slow, not stalled
	for i := range slow {
		slow[i] = math.Pow(0.98, float64(i*8)/100)
	}
	if e, ok := stalls(200, slow, 8); ok {
		t.Errorf("a gap falling 2%% per 100 epochs was called stalled at epoch %d", e)
	}
	floor := make([]float64, 60) // converged: rounding noise below the floor
	for i := range floor {
		floor[i] = 1e-13 * float64(i%3)
	}
	if e, ok := stalls(200, floor, 8); ok {
		t.Errorf("a gap at rounding level was called stalled at epoch %d", e)
	}
	if _, ok := stalls(-1, flat, 8); ok {
		t.Error("the rule fired although switched off")
	}
	if _, ok := stalls(200, flat[:4], 100); ok {
		t.Error("the rule fired on fewer than five certificates in its window")
	}
}

// TestStalledRunStops: AdaSPDC on rows whose norms spread over two decades
// (TestImportanceSampling's data) stalls with a gap near 7; the run ends
// with Stop "stalled", its best model and a note that says what to change.
func TestStalledRunStops(t *testing.T) {
	x, b := sparseData(400, 60, 6, 7)
	for k := 0; k < x.Rows; k++ {
		val, _ := x.Row(k)
		for p := range val {
			val[p] *= math.Pow(10, float64(k%3))
		}
	}
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	model, res, err := Train(context.Background(), prob, Options{Solver: SolverAdaSPDC, Tol: 1e-9, MaxEpochs: 3000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "stalled" || model == nil {
		t.Fatalf("stop %q after %d epochs (relative gap %.3g), want \"stalled\" and a model", res.Stop, res.Final.Epoch, res.Final.RelGap)
	}
	if res.Final.Epoch >= 3000 || !strings.Contains(res.StallNote, "normalize") {
		t.Errorf("stalled at epoch %d, note %q", res.Final.Epoch, res.StallNote)
	}
	t.Logf("stalled at epoch %d: %s", res.Final.Epoch, res.StallNote)
}
