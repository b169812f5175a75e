package main

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestPrintedPrimalIsTheModels: for every solver, the primal that train
// prints is P evaluated at the model it saves, summed here from the loss
// and the regularizer alone (not through the engine's certificate), to a
// relative 1e-10: the numbers a user sees are those of the model written,
// whichever certificate that is.
func TestPrintedPrimalIsTheModels(t *testing.T) {
	ds, err := sparse.ReadFile("../../testdata/heart_scale", sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const lambda, l1 = 1e-2, 1e-3
	for _, info := range engine.Solvers() {
		ran := false
		for _, lossName := range []string{"logistic", "hinge"} {
			for _, withL1 := range []bool{false, true} {
				if ran {
					break
				}
				path := filepath.Join(t.TempDir(), "m.json")
				args := []string{"train", "-quiet", "-solver", string(info.Name), "-loss", lossName, "-lambda", "0.01", "-bias", "1",
					"-max-epochs", "300", "-tol", "1e-6", "-model", path}
				if withL1 {
					args = append(args, "-l1", "0.001")
				}
				status, out, errOut := runCmd(args...)
				m := summaryRE.FindStringSubmatch(out)
				if m == nil {
					if status == 3 {
						t.Errorf("%s: status 3 but no summary: %q", info.Name, errOut)
					}
					continue // refused: try the next loss
				}
				ran = true
				model, err := modelio.Load(path)
				if err != nil {
					t.Fatalf("%s: %v", info.Name, err)
				}
				loss, _ := engine.LossByName(lossName, 1)
				var sum float64
				for i := range ds.X.Rows {
					val, idx := ds.X.Row(i)
					b := -1.0
					if ds.Y[i] == model.Labels[1] {
						b = 1
					}
					sum += loss.Value(model.Margin(val, idx), b)
				}
				p := sum / float64(ds.X.Rows)
				for _, w := range model.Weights {
					p += lambda / 2 * w * w
					if withL1 {
						p += l1 * math.Abs(w)
					}
				}
				printed, _ := strconv.ParseFloat(m[1], 64)
				if math.Abs(printed-p) > 1e-10*math.Max(1, math.Abs(p)) {
					t.Errorf("%s (%s, l1 %v): printed primal %.15g, P at the saved model %.15g", info.Name, lossName, withL1, printed, p)
				}
			}
		}
		if !ran && !strings.HasPrefix(string(info.Name), "pdprox") {
			t.Errorf("%s ran on none of the losses tried", info.Name)
		}
	}
}
