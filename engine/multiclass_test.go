package engine

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/newton"
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
		m, _, err := Train(context.Background(), Problem{X: x, B: againstTheRest(y, label), Loss: Logistic{}, Reg: prob.Reg}, opt)
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

// TestOneVsRestSharesProducts: on wide data, where newton solves its
// steps by CG, one-vs-rest's classes take their Hessian products and
// margins in shared sweeps; each class reaches the optimum its binary run
// reaches alone, and with Options.Deterministic two runs give the same
// bits, whichever classes happened to share a sweep.
func TestOneVsRestSharesProducts(t *testing.T) {
	x, b := enginetest.RawCountData(1500, 4000, 10, 120, 30, 0.05, 7)
	if !newton.SharesProducts(x) {
		t.Fatalf("%d × %d, %d nonzeros: the classes would not share their products", x.Rows, x.Cols, x.NNZ())
	}
	y := make([]float64, x.Rows)
	for i := range y {
		y[i] = float64(2*(i%3)) + (b[i]+1)/2 // six classes
	}
	prob := Problem{X: x, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	opt := Options{Solver: SolverNewton, Tol: 1e-9, MaxEpochs: 200, Threads: 2, Deterministic: true}
	train := func() (*Model, []ClassResult) {
		model, results, err := TrainOneVsRest(context.Background(), prob, y, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return model, results
	}
	model, results := train()
	again, _ := train()
	if !slices.Equal(model.Weights, again.Weights) {
		t.Error("two deterministic runs gave different weights")
	}
	for k, label := range model.Labels {
		res := results[k].Result
		if !strings.Contains(res.Note, "shared") {
			t.Fatalf("class %v did not share its products: %q", label, res.Note)
		}
		_, alone, err := Train(context.Background(), Problem{X: x, B: againstTheRest(y, label), Loss: Logistic{}, Reg: prob.Reg}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(alone.Note, "shared") {
			t.Fatalf("class %v alone shared its products: %q", label, alone.Note)
		}
		p, q := res.Best.Primal, alone.Best.Primal
		if !res.Converged || math.Abs(p-q) > 2e-9*math.Abs(q) {
			t.Errorf("class %v: P = %.15g shared (converged %v), %.15g alone", label, p, res.Converged, q)
		}
	}
}
