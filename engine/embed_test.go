package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestEmbeddedModelIsComplete: a model trained through the library with
// NewProblem (labels 2/4 in the file, an intercept) predicts raw labels on
// raw rows, keeps them through modelio, and its Dim excludes the bias
// column, so that rows without it score as the training rows did.
func TestEmbeddedModelIsComplete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bc")
	rows := "2 1:0.5 2:1\n4 1:2 3:1\n2 2:1.5\n4 1:1.5 3:2\n2 1:0.2 2:0.7\n4 3:1.1\n"
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prob, err := engine.NewProblem(ds, engine.Logistic{}, engine.ElasticNet{Lambda: 0.01}, 1)
	if err != nil {
		t.Fatal(err)
	}
	model, res, err := engine.Train(context.Background(), prob, engine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if model.Dim != 3 || model.Bias != 1 || len(model.Labels) != 2 || model.Labels[0] != 2 || model.Labels[1] != 4 {
		t.Fatalf("model dim %d, bias %v, labels %v; want 3, 1, [2 4]", model.Dim, model.Bias, model.Labels)
	}
	if want, _ := engine.AutoSolver(prob, engine.DefaultOptions()); res.Solver != want {
		t.Errorf("ran %s, AutoSolver picks %s", res.Solver, want)
	}
	saved := filepath.Join(t.TempDir(), "m.json")
	if err := modelio.Save(saved, model); err != nil {
		t.Fatal(err)
	}
	loaded, err := modelio.Load(saved)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ds.X.Rows {
		val, idx := ds.X.Row(i)
		if p := model.Predict(val, idx); p != ds.Y[i] {
			t.Errorf("row %d: predicted %v, label %v", i+1, p, ds.Y[i])
		}
		if a, b := model.Margin(val, idx), loaded.Margin(val, idx); a != b {
			t.Errorf("row %d: margin %v, %v after saving", i+1, a, b)
		}
	}
}

// TestEmbeddedA9A: the ten-line program of the package documentation
// scores on a9a.t what adaspdc train -bias 1 and adaspdc predict score.
func TestEmbeddedA9A(t *testing.T) {
	train, err := sparse.ReadFile("../../shared/data/a9a", sparse.ReadOptions{})
	if err != nil {
		t.Skip("no shared data:", err)
	}
	test, err := sparse.ReadFile("../../shared/data/a9a.t", sparse.ReadOptions{})
	if err != nil {
		t.Skip("no shared data:", err)
	}
	prob, err := engine.NewProblem(train, engine.Logistic{}, engine.ElasticNet{Lambda: 1 / float64(train.X.Rows)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	model, res, err := engine.Train(context.Background(), prob, engine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i := range test.X.Rows {
		val, idx := test.X.Row(i)
		if model.Predict(val, idx) == test.Y[i] {
			correct++
		}
	}
	// LIBLINEAR -s 0 -c 1 -B 1 scores 84.98%; so does train at -tol 1e-6.
	if acc := 100 * float64(correct) / float64(test.X.Rows); acc < 84.95 || acc > 85.02 {
		t.Errorf("accuracy %.4f%% with %s, want 84.98%%", acc, res.Solver)
	}
}
