package engine

import (
	"context"
	"testing"
)

// TestRealDataGap runs every loss to a relative duality gap of 1e-9 on real
// LIBSVM data (from ../shared/data; skipped when absent).
func TestRealDataGap(t *testing.T) {
	files := []string{"mushrooms", "a9a", "w8a"}
	if testing.Short() {
		files = files[:1]
	}
	for _, file := range files {
		x, b := sharedData(t, file)
		if raceEnabled {
			x, b = firstRows(x, b, 2000)
		}
		for _, loss := range []Loss{Logistic{}, Squared{}, SquaredHinge{}, SmoothHinge{S: 1}} {
			t.Run(file+"/"+loss.Name(), func(t *testing.T) {
				prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1e-4}}
				_, res, err := Train(context.Background(), prob, Options{Threads: 2, Seed: 1, Tol: 1e-9, MaxEpochs: 600}.With(CoordinateSettings{M: 4}))
				if err != nil {
					t.Fatal(err)
				}
				if !res.Converged {
					t.Errorf("relative gap %.3g after %d epochs, want ≤ 1e-9", res.Final.RelGap, res.Final.Epoch)
				}
				t.Logf("%d epochs, %.2fs, rel gap %.3g, lazy %v", res.Final.Epoch, res.Final.Seconds, res.Final.RelGap, res.Lazy)
			})
		}
	}
}
