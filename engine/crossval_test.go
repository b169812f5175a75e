package engine

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestFoldsStratifiedAndReproducible: every row is held out exactly once;
// with stratification each fold's count of each class is within one of
// its share; the same seed gives the same folds and another seed others.
func TestFoldsStratifiedAndReproducible(t *testing.T) {
	b := make([]float64, 1003)
	for i := range b {
		b[i] = -1
		if i%10 < 3 {
			b[i] = 1 // 30% positive
		}
	}
	folds, err := Folds(b, 5, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, len(b))
	var pos int
	for _, v := range b {
		if v > 0 {
			pos++
		}
	}
	for f, rows := range folds {
		var p int
		for _, r := range rows {
			seen[r]++
			if b[r] > 0 {
				p++
			}
		}
		want := float64(pos) / 5
		if math.Abs(float64(p)-want) > 1 || math.Abs(float64(len(rows)-p)-float64(len(b)-pos)/5) > 1 {
			t.Errorf("fold %d: %d positives of %d rows; want %.1f of %.1f", f, p, len(rows), want, float64(len(b))/5)
		}
	}
	for r, c := range seen {
		if c != 1 {
			t.Fatalf("row %d held out %d times", r, c)
		}
	}
	again, _ := Folds(b, 5, 7, true)
	other, _ := Folds(b, 5, 8, true)
	for f := range folds {
		if !slices.Equal(folds[f], again[f]) {
			t.Fatal("the same seed gave other folds")
		}
	}
	if slices.Equal(folds[0], other[0]) {
		t.Error("another seed gave the same first fold")
	}
	if _, err := Folds(b, 1, 1, true); err == nil {
		t.Error("one fold was accepted")
	}
}

// TestCrossValidateByHand: the pooled score is what training on each
// fold's complement and scoring its rows gives, computed here directly.
func TestCrossValidateByHand(t *testing.T) {
	x, b := sparseData(300, 20, 5, 3)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	folds, _ := Folds(b, 3, 1, true)
	opt := Options{Solver: SolverNewton, Tol: 1e-10, MaxEpochs: 100, Threads: 1}
	got, err := CrossValidate(context.Background(), prob, opt, folds)
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for _, test := range folds {
		held := map[int]bool{}
		for _, r := range test {
			held[r] = true
		}
		var rows []int
		var bb []float64
		for r := range x.Rows {
			if !held[r] {
				rows, bb = append(rows, r), append(bb, b[r])
			}
		}
		m, _, err := Train(context.Background(), Problem{X: x.SelectRows(rows), B: bb, Loss: Logistic{}, Reg: prob.Reg}, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range test {
			val, idx := x.Row(r)
			if (m.Margin(val, idx) > 0) == (b[r] > 0) {
				correct++
			}
		}
	}
	if want := float64(correct) / float64(x.Rows); got.Accuracy != want || !math.IsNaN(got.RMSE) {
		t.Errorf("accuracy %v (RMSE %v), by hand %v", got.Accuracy, got.RMSE, want)
	}
}

// TestPathWarmStartsMatchColdStarts: each point of the path, warm-started
// from the last, reaches the optimum a cold start reaches: the held-out
// scores agree, and a regression reports an RMSE.
func TestPathWarmStartsMatchColdStarts(t *testing.T) {
	x, b := sparseData(400, 30, 6, 5)
	for _, loss := range []Loss{Logistic{}, Squared{}} {
		prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1}}
		folds, _ := Folds(b, 4, 2, loss.Classification())
		opt := Options{Solver: SolverNewton, Tol: 1e-12, MaxEpochs: 200, Threads: 2}
		grid := LambdaGrid(1, 1e-4, 9)
		path, err := LambdaPath(context.Background(), prob, opt, folds, grid, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(path.Scores) != len(grid) {
			t.Fatalf("%s: %d scores for %d points with no patience", loss.Name(), len(path.Scores), len(grid))
		}
		for i, lam := range grid {
			cold, err := CrossValidate(context.Background(), Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: lam}}, opt, folds)
			if err != nil {
				t.Fatal(err)
			}
			w := path.Scores[i]
			// Both fits are certified to a 1e-12 gap, so by λ-strong
			// convexity their weights differ by at most √(2·gap/λ):
			// 1e-4 at the smallest λ, which moves the RMSE in its 7th digit.
			same := w.Accuracy == cold.Accuracy || math.Abs(w.RMSE-cold.RMSE) <= 1e-6*cold.RMSE
			if !same || w.Lambda != lam {
				t.Errorf("%s, λ = %g: warm %+v, cold %+v", loss.Name(), lam, w, cold)
			}
		}
		best := path.Scores[path.Best]
		for _, s := range path.Scores {
			if s.better(best) {
				t.Errorf("%s: best is λ = %g, but λ = %g scores better", loss.Name(), best.Lambda, s.Lambda)
			}
		}
	}
}

// TestPathPatience: the path stops once patience points in a row fail to
// improve on the best.
func TestPathPatience(t *testing.T) {
	x, b := sparseData(300, 20, 5, 4)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1}}
	folds, _ := Folds(b, 3, 1, true)
	opt := Options{Solver: SolverNewton, Tol: 1e-8, MaxEpochs: 200, Threads: 1}
	path, err := LambdaPath(context.Background(), prob, opt, folds, LambdaGrid(1e6, 1e3, 20), 3)
	if err != nil {
		t.Fatal(err)
	}
	// λ ≥ 1e3 leaves every model at the same sign pattern: no point
	// improves on the first, so the path ends after 1 + 3 points.
	if len(path.Scores) != 4 || path.Best != 0 {
		t.Errorf("%d points, best %d; want 4 and 0", len(path.Scores), path.Best)
	}
}

// TestL1PathWarmMatchesCold: along the L1 path from L1Max, where every
// weight is zero, newGLMNET warm-started from the last point reaches the
// optimum of a cold start (the same held-out score and support size), and
// the support grows as l1 falls.
func TestL1PathWarmMatchesCold(t *testing.T) {
	x, b := sparseData(500, 40, 6, 8)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{L1: 1}}
	folds, _ := Folds(b, 3, 4, true)
	opt := Options{Solver: SolverGLMNET, Tol: 1e-12, MaxEpochs: 500, Threads: 2}
	hi := L1Max(prob)
	grid := LambdaGrid(hi, hi/100, 8)
	path, err := L1Path(context.Background(), prob, opt, folds, grid, 0)
	if err != nil {
		t.Fatal(err)
	}
	// L1Max is the full data's: there the model is zero (a fold's need not
	// be, its gradient at 0 being another).
	m, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{L1: hi}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	for j, v := range m.Weights {
		if v != 0 {
			t.Errorf("at L1Max weight %d is %g, want 0", j, v)
		}
	}
	if first, last := path.Scores[0].NonZeros, path.Scores[len(grid)-1].NonZeros; !(last > first) {
		t.Errorf("the support went from %.1f to %.1f along the path; want it to grow", first, last)
	}
	for i, l1 := range grid {
		cold, err := CrossValidate(context.Background(), Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{L1: l1}}, opt, folds)
		if err != nil {
			t.Fatal(err)
		}
		if w := path.Scores[i]; w.Accuracy != cold.Accuracy || w.NonZeros != cold.NonZeros {
			t.Errorf("l1 = %g: warm %.4f with %.1f nonzeros, cold %.4f with %.1f", l1, w.Accuracy, w.NonZeros, cold.Accuracy, cold.NonZeros)
		}
	}
	if last := path.Scores[len(grid)-1].NonZeros; !(last > 0) {
		t.Errorf("at L1Max/100 the models have %.1f nonzero weights", last)
	}
}

// TestOneVsRestPathByHand: the cross-validated accuracy of a one-vs-rest
// problem is what training TrainOneVsRest on each fold's complement and
// predicting its rows gives.
func TestOneVsRestPathByHand(t *testing.T) {
	x, _ := sparseData(240, 15, 5, 12)
	y := make([]float64, x.Rows)
	b := make([]float64, x.Rows)
	for i := range y {
		y[i] = float64(i % 3)
		b[i] = -1
		if y[i] == 0 {
			b[i] = 1
		}
	}
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	folds, _ := Folds(y, 3, 5, true)
	opt := Options{Solver: SolverNewton, Tol: 1e-10, MaxEpochs: 100, Threads: 1}
	path, err := OneVsRestPath(context.Background(), prob, y, opt, folds, []float64{1e-2}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for _, test := range folds {
		held := map[int]bool{}
		for _, r := range test {
			held[r] = true
		}
		var rows []int
		var yy []float64
		for r := range x.Rows {
			if !held[r] {
				rows, yy = append(rows, r), append(yy, y[r])
			}
		}
		m, _, err := TrainOneVsRest(context.Background(), Problem{X: x.SelectRows(rows), Loss: Logistic{}, Reg: prob.Reg}, yy, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range test {
			val, idx := x.Row(r)
			if m.Predict(val, idx) == y[r] {
				correct++
			}
		}
	}
	if want := float64(correct) / float64(x.Rows); path.Scores[0].Accuracy != want {
		t.Errorf("accuracy %v, by hand %v", path.Scores[0].Accuracy, want)
	}
}
