package main

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestTrainGroupsWideColumns: on data wider than the cache (engine.ColumnTiers
// asks for grouping), with and without a bias column, train's model, whose
// columns the solver saw grouped by count, has the file's width and the
// weights of the engine's run on the data as read, column by column, to
// within the two runs' 1e-10 gaps.
func TestTrainGroupsWideColumns(t *testing.T) {
	const rows, cols = 5000, 2_000_000
	rng := rand.New(rand.NewPCG(7, 8))
	zipf := rand.NewZipf(rng, 1.1, 1, cols-1)
	perm := rng.Perm(cols)
	ds := &sparse.Dataset{Name: "wide", X: &sparse.CSR{Rows: rows, Cols: cols, Indptr: make([]int64, rows+1)}, Y: make([]float64, rows)}
	x := ds.X
	for i := range rows {
		var row []int32
		for range 60 { // frequent columns, and as many rare ones
			row = append(row, int32(perm[zipf.Uint64()]), int32(rng.IntN(cols)))
		}
		slices.Sort(row)
		row = slices.Compact(row)
		var z float64
		for _, j := range row {
			v := 1 + rng.Float64()
			x.Indices, x.Values = append(x.Indices, j), append(x.Values, v)
			z += v * math.Sin(float64(j))
		}
		x.Indptr[i+1] = int64(len(x.Indices))
		ds.Y[i] = math.Copysign(1, z)
	}
	x.Cols = cols
	used := x.UsedColumns()
	if engine.ColumnTiers(used) == nil {
		t.Skipf("%d used columns fit in this machine's cache: no grouping to test", used)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "wide.svm")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.WriteLIBSVM(f, ds); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, bias := range []float64{0, 1} {
		model := filepath.Join(dir, "model.json")
		status, _, errOut := runCmd("train", "-data", data, "-lambda", "1e-3", "-bias", strconv.FormatFloat(bias, 'g', -1, 64), "-tol", "1e-10", "-quiet", "-model", model)
		if status != 0 {
			t.Fatalf("bias %g: status %d: %s", bias, status, errOut)
		}
		got, err := modelio.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		read, err := sparse.ReadFile(data, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		xx := read.X
		if bias != 0 {
			xx = xx.WithBias(bias)
		}
		b, _, _ := sparse.BinaryLabels(read.Y)
		opt := engine.DefaultOptions()
		opt.Tol = 1e-10
		want, res, err := engine.Train(context.Background(), engine.Problem{X: xx, B: b, Loss: engine.Logistic{}, Reg: engine.ElasticNet{Lambda: 1e-3}, Bias: bias}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got.Dim != read.X.Cols || len(got.Weights) != len(want.Weights) {
			t.Fatalf("bias %g: model of dim %d with %d weights, want %d and %d", bias, got.Dim, len(got.Weights), read.X.Cols, len(want.Weights))
		}
		// Both within a relative gap of 1e-10 of the optimum of a
		// λ-strongly convex P: each within √(2·gap/λ) of w*.
		tol := 2 * math.Sqrt(2*1e-10*math.Max(1, res.Final.Primal)/1e-3)
		var big float64
		for j := range want.Weights {
			big = math.Max(big, math.Abs(want.Weights[j]))
			if d := math.Abs(got.Weights[j] - want.Weights[j]); d > tol {
				t.Fatalf("bias %g: weight %d = %.10g, the engine's on the data as read %.10g", bias, j, got.Weights[j], want.Weights[j])
			}
		}
		if big < 100*tol {
			t.Fatalf("bias %g: the largest weight, %.3g, is too small for the test to tell columns apart", bias, big)
		}
	}
}
