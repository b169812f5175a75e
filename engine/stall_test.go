package engine

import (
	"context"
	"math"
	"strings"
	"testing"
)

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
	if res.Final.Epoch >= 3000 || !strings.Contains(res.StallNote, "NormalizeRowsUnit") {
		t.Errorf("stalled at epoch %d, note %q", res.Final.Epoch, res.StallNote)
	}
	t.Logf("stalled at epoch %d: %s", res.Final.Epoch, res.StallNote)
}
