package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

// variedRows writes rows of 0 to 30 entries over 40 columns, lengths drawn
// anew at each row, as short rows of words vary, labelled from a planted
// model's margin z: "binary" ±1 by its sign, "classes" 1, 2 or 3 by its
// size, "targets" z itself with noise; it returns the path and the targets
// of each problem the run solves, in the file's order (one per class
// against the rest where there are three classes).
func variedRows(t *testing.T, dir, kind string) (string, [][]float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	planted := make([]float64, 40)
	for j := range planted {
		planted[j] = rng.NormFloat64()
	}
	var sb strings.Builder
	var y []float64
	for range 1500 {
		cols := rng.Perm(40)[:rng.IntN(31)]
		slices.Sort(cols)
		var z float64
		var row strings.Builder
		for _, j := range cols {
			v := math.Round(rng.Float64()*100) / 100
			z += planted[j] * v
			fmt.Fprintf(&row, " %d:%g", j+1, v)
		}
		z += rng.NormFloat64()
		switch kind {
		case "binary":
			y = append(y, math.Copysign(1, z))
		case "classes":
			y = append(y, 1+math.Min(2, math.Max(0, math.Floor(z/2+1))))
		default:
			y = append(y, math.Round(z*1e4)/1e4)
		}
		sb.WriteString(fmt.Sprint(y[len(y)-1]) + row.String() + "\n")
	}
	path := filepath.Join(dir, kind)
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if kind != "classes" {
		return path, [][]float64{y}
	}
	var classes [][]float64
	for _, c := range []float64{1, 2, 3} {
		b := make([]float64, len(y))
		for k, v := range y {
			b[k] = -1
			if v == c {
				b[k] = 1
			}
		}
		classes = append(classes, b)
	}
	return path, classes
}

// TestTrainSortsRows checks that train's rows sorted by length for newton
// (engine.RowWindow, sortRows) carry their labels, raw labels and sample
// weights with them: with weights, with targets that are the labels
// themselves (the squared loss), and one class against the rest, the
// model of each problem, trained on the sorted rows, is at the optimum of
// that problem in the file's order, which the engine solves here.
func TestTrainSortsRows(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		kind, loss string
		weighted   bool
	}{
		{"binary", "logistic", true},
		{"targets", "squared", false},
		{"classes", "logistic", false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			path, problems := variedRows(t, dir, tc.kind)
			ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if engine.RowWindow(engine.Problem{X: ds.X}, engine.SolverNewton) == 0 {
				t.Fatal("RowWindow does not sort these rows")
			}
			mpath := filepath.Join(dir, tc.kind+".json")
			args := []string{"train", "-quiet", "-data", path, "-solver", "newton", "-loss", tc.loss, "-lambda", "1e-3",
				"-tol", "1e-12", "-max-epochs", "200", "-model", mpath}
			var weights []float64
			if tc.weighted {
				var sb strings.Builder
				for k := range ds.X.Rows {
					weights = append(weights, 0.5+float64(k%7))
					fmt.Fprintf(&sb, "%g\n", weights[k])
				}
				wpath := filepath.Join(dir, "weights")
				if err := os.WriteFile(wpath, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "-sample-weights", wpath)
			}
			if status, _, errOut := runCmd(args...); status != 0 {
				t.Fatalf("status %d: %s", status, errOut)
			}
			m, err := modelio.Load(mpath)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := engine.LossByName(tc.loss, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := ds.X.Cols
			if len(m.Weights) != d*len(problems) {
				t.Fatalf("%d weights, want %d", len(m.Weights), d*len(problems))
			}
			for c, b := range problems {
				prob := engine.Problem{X: ds.X, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: 1e-3}, SampleWeights: weights}
				_, res, err := engine.Train(context.Background(), prob, engine.Options{Solver: engine.SolverNewton, Tol: 1e-12, MaxEpochs: 200})
				if err != nil {
					t.Fatal(err)
				}
				got, err := engine.Certify(prob, m.Weights[c*d:(c+1)*d])
				if err != nil {
					t.Fatal(err)
				}
				if want := res.Model.Primal; math.Abs(got.Primal-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("problem %d: P at the model from the sorted rows %.15g, the optimum in the file's order %.15g", c, got.Primal, want)
				}
			}
		})
	}
}
