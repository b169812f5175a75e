package engine

import (
	"context"
	"slices"
	"testing"
)

// TestOneVsRestIsKBinaryRuns: each class's weight vector is, bit for bit,
// the model of the binary problem of that class against the rest, and the
// model predicts the class of the largest margin.
func TestOneVsRestIsKBinaryRuns(t *testing.T) {
	x, _ := sparseData(300, 20, 5, 6)
	y := make([]float64, x.Rows)
	for i := range y {
		y[i] = float64(3 + 2*(i%4)) // classes 3, 5, 7, 9
	}
	prob := Problem{X: x, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	opt := Options{Solver: SolverNewton, Tol: 1e-10, MaxEpochs: 100, Threads: 1}
	var done []float64
	model, results, err := TrainOneVsRest(context.Background(), prob, y, opt, func(c ClassResult) { done = append(done, c.Label) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(model.Labels, []float64{3, 5, 7, 9}) || len(results) != 4 || len(done) != 4 {
		t.Fatalf("labels %v, %d results, %d callbacks", model.Labels, len(results), len(done))
	}
	for k, label := range model.Labels {
		b := make([]float64, len(y))
		for i, v := range y {
			b[i] = -1
			if v == label {
				b[i] = 1
			}
		}
		m, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: Logistic{}, Reg: prob.Reg}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(model.ClassWeights(k), m.Weights) {
			t.Errorf("class %v: the one-vs-rest weights differ from the binary run's", label)
		}
		if !results[k].Result.Converged {
			t.Errorf("class %v did not converge", label)
		}
	}
	margins := make([]float64, 4)
	for i := range x.Rows {
		val, idx := x.Row(i)
		model.Margins(val, idx, margins)
		best := model.Labels[slices.Index(margins, slices.Max(margins))]
		if p := model.Predict(val, idx); p != best {
			t.Fatalf("row %d: predicted %v, largest margin is class %v", i, p, best)
		}
	}
	if err := model.Validate(); err != nil {
		t.Error(err)
	}
	if _, _, err := TrainOneVsRest(context.Background(), prob, y[:10], opt, nil); err == nil {
		t.Error("labels of the wrong length were accepted")
	}
}
