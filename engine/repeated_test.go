package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestTrainMergesRepeatedRows: on data whose rows repeat (a third of them
// copies, with their labels, and sample weights on some), newton and
// glmnet run on the distinct rows with counts as weights, and the model
// they return is certified on the data as given: its P and gap, computed
// on every row, are those the run reported.
func TestTrainMergesRepeatedRows(t *testing.T) {
	base, bb := enginetest.SparseData(1500, 60, 6, 3)
	x := &sparse.CSR{Cols: base.Cols, Indptr: []int64{0}}
	var b []float64
	for i := range 2400 {
		r := i
		if i >= base.Rows {
			r = (i * 7) % base.Rows // a copy of an earlier row
		}
		val, idx := base.Row(r)
		x.Indices, x.Values = append(x.Indices, idx...), append(x.Values, val...)
		x.Indptr = append(x.Indptr, int64(len(x.Indices)))
		x.Rows++
		b = append(b, bb[r])
	}
	weights := make([]float64, x.Rows)
	for k := range weights {
		weights[k] = 1 + float64(k%3)/2
	}
	n := float64(x.Rows)
	for _, c := range []struct {
		name    string
		reg     ElasticNet
		weights []float64
	}{
		{"newton", ElasticNet{Lambda: 1 / n}, nil},
		{"newton", ElasticNet{Lambda: 1 / n}, weights},
		{"glmnet", ElasticNet{L1: 1 / n}, nil},
		{"glmnet", ElasticNet{L1: 1 / n, Lambda: 0.1 / n}, weights},
	} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: c.reg, SampleWeights: c.weights}
		model, res, err := Train(context.Background(), prob, Options{Solver: Solver(c.name), Tol: 1e-9, MaxEpochs: 200})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(res.Note, "900 repeated rows merged") {
			t.Errorf("%s, weights %v: note %q", c.name, c.weights != nil, res.Note)
		}
		tp, err := Certify(prob, model.Weights)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(tp.Primal - res.Model.Primal); d > 1e-12*tp.Primal || !(tp.RelGap <= 1e-9) {
			t.Errorf("%s, weights %v: on every row P = %.15g and relative gap %.3g; the run reported P = %.15g",
				c.name, c.weights != nil, tp.Primal, tp.RelGap, res.Model.Primal)
		}
	}
}
