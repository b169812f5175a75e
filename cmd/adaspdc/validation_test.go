package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestInnerSolversRefusedBeforeData: every registered solver as the inner
// solver of every reduction is either refused before the data are read
// (status 2, here with a -data that does not exist) or runs (no status 1
// once the data are read): no combination fails after training started.
func TestInnerSolversRefusedBeforeData(t *testing.T) {
	args := map[string][]string{
		"adaptreg":    {"-loss", "squared", "-lambda", "0", "-l1", "0.01"},
		"adaptsmooth": {"-loss", "hinge"},
		"jointadapt":  {"-loss", "hinge", "-lambda", "0", "-l1", "0.01"},
	}
	for r, a := range args {
		for _, s := range engine.Solvers() {
			base := append([]string{"train", "-quiet", "-solver", r, "-inner", string(s.Name), "-max-epochs", "2"}, a...)
			status, _, errOut := runCmd(append(base, "-data", "/nonexistent/data")...)
			if status == 2 {
				if !strings.Contains(errOut, string(s.Name)) {
					t.Errorf("%s over %s: refused without naming it: %q", r, s.Name, errOut)
				}
				continue
			}
			if status, _, errOut := runCmd(base...); status == 1 {
				t.Errorf("%s over %s: accepted before the data, failed after: %q", r, s.Name, errOut)
			}
		}
	}
	status, _, errOut := runCmd("train", "-solver", "adaptreg", "-inner", "spdc-async", "-data", "/nonexistent/data")
	if status != 2 || !strings.Contains(errOut, "spdc-async") {
		t.Errorf("adaptreg over spdc-async: status %d, stderr %q; want 2 before the data", status, errOut)
	}
}

// TestClassWeightsRefusedBeforeData: a malformed -class-weights is a
// mistake in the command line: status 2 before the data are read (a -data
// that does not exist), with the flag and the bad part named.
func TestClassWeightsRefusedBeforeData(t *testing.T) {
	for spec, part := range map[string]string{
		"1:abc": `"abc"`, "1:-3": `"-3"`, "1:": `"1:"`, ":2": `":2"`, "1:inf": `"inf"`, "1:nan": `"nan"`,
		"1:0": `"0"`, "abc": `"abc"`, "1:2,1:3": `"1"`, "x:1": `"x"`,
	} {
		status, _, errOut := runCmd("train", "-class-weights", spec, "-data", "/nonexistent/data")
		if status != 2 || !strings.Contains(errOut, "-class-weights") || !strings.Contains(errOut, part) {
			t.Errorf("-class-weights %s: status %d, stderr %q; want 2 naming the flag and %s", spec, status, errOut, part)
		}
	}
	status, _, errOut := runCmd("train", "-loss", "squared", "-class-weights", "1:2", "-data", "/nonexistent/data")
	if status != 2 || !strings.Contains(errOut, "regression") {
		t.Errorf("-class-weights with the squared loss: status %d, stderr %q; want 2", status, errOut)
	}
	if status, _, errOut := runCmd("train", "-quiet", "-class-weights", "1:2,-1:0.5", "-max-epochs", "5"); status == 1 || status == 2 {
		t.Errorf("-class-weights 1:2,-1:0.5: status %d, stderr %q", status, errOut)
	}
}

// TestFlagWords: the engine's names of its settings become the flags that
// set them.
func TestFlagWords(t *testing.T) {
	for in, want := range map[string]string{
		`try Options.Solver "newton" or lower CoordinateSettings.M`:                        "try -solver newton or lower -m",
		`it needs Options.Solver spdc, and CoordinateSettings.M 1`:                         "it needs -solver spdc, and -m 1",
		`normalise the rows (sparse.CSR.NormalizeRowsUnit)`:                                "normalise the rows (-normalize unit)",
		`a larger Options.StallEpochs; raise λ (ElasticNet.Lambda)`:                        "a larger -stall-epochs; raise λ (-lambda)",
		`Options.MaxEpochs, CoordinateSettings.BlockSize and CoordinateSettings.Partition`: "-max-epochs, -block and -partition",
		`use Problem.Loss Logistic with TrainMultinomial`:                                  "use -loss logistic with -multiclass multinomial",
		`Options.Unknown stays`: "Options.Unknown stays",
	} {
		if got := flagWords(in); got != want {
			t.Errorf("flagWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEngineAdviceInFlags: where the command line prints the engine's
// errors, refusals, choices and solver listing, they name its flags, not
// the engine's fields.
func TestEngineAdviceInFlags(t *testing.T) {
	field := regexp.MustCompile(`Options\.|ElasticNet\.|NormalizeRowsUnit|TrainMultinomial`)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"train", "-solver", "sdca", "-block", "2", "-max-epochs", "2"}, 1, "use -m for mini-batches"},
		{[]string{"train", "-solver", "adaptreg", "-inner", "newton"}, 2, "-inner adaspdc"},
		{[]string{"train", "-sampling", "importance", "-solver", "sdca"}, 2, "-m 1"},
		{[]string{"train", "-solver", "adaspdc", "-m", "300", "-max-epochs", "2"}, 1, "lower -m or -block"},
		{[]string{"train", "-max-epochs", "2"}, 3, "-solver sdca"},
	} {
		status, _, errOut := runCmd(c.args...)
		if status != c.status || !strings.Contains(errOut, c.want) || field.MatchString(errOut) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q in flags", c.args, status, errOut, c.status, c.want)
		}
	}
	status, out, _ := runCmd("solvers")
	if status != 0 || !strings.Contains(out, "mini-batches with -m") || field.MatchString(out) {
		t.Errorf("solvers: status %d, listing names the engine's fields or lacks -m:\n%s", status, out)
	}
}

// stallData writes rows whose norms spread over two decades, on which
// AdaSPDC stalls (engine's TestStalledRunStops), in LIBSVM format.
func stallData(t *testing.T) string {
	rng := rand.New(rand.NewPCG(7, 2))
	const n, d, perRow = 400, 60, 6
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	var buf bytes.Buffer
	for k := 0; k < n; k++ {
		cols := map[int]bool{}
		for len(cols) < perRow {
			cols[int(float64(d)*math.Pow(rng.Float64(), 3))] = true
		}
		idx := make([]int, 0, perRow)
		for j := range cols {
			idx = append(idx, j)
		}
		slices.Sort(idx)
		var z float64
		var row strings.Builder
		for _, j := range idx {
			v := (rng.Float64() + 0.1) * math.Pow(10, float64(k%3))
			z += v * w[j]
			fmt.Fprintf(&row, " %d:%g", j+1, v)
		}
		label := -1
		if z+0.3*rng.NormFloat64() > 0 {
			label = 1
		}
		fmt.Fprintf(&buf, "%d%s\n", label, row.String())
	}
	path := filepath.Join(t.TempDir(), "stall.svm")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStopValuesMeanTheSame: -stall-epochs, -tol and -max-epochs take the
// values of Options.StallEpochs, Tol and MaxEpochs with the same meaning:
// a run through the flag and one through the field stop alike.
func TestStopValuesMeanTheSame(t *testing.T) {
	path := stallData(t)
	ds, err := loadData(path, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loss, _ := engine.LossByName("logistic", 1)
	b, _, _, err := targets(ds, loss)
	if err != nil {
		t.Fatal(err)
	}
	prob := engine.Problem{X: ds.X, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: 1e-3}}
	epochsRE := regexp.MustCompile(`epochs=(\d+)`)
	for _, c := range []struct {
		stall, maxEpochs int
		tol              float64
	}{
		{0, 3000, 1e-9}, // the default window: a stall, at the same epoch
		{-1, 500, 1e-9}, // never: the epoch limit
		{0, 50, 0},      // no gap test: the epoch limit
		{0, 0, 1e-9},    // no epoch: the starting point's certificate
	} {
		_, res, err := engine.Train(context.Background(), prob, engine.Options{Solver: engine.SolverAdaSPDC, Threads: 1, Seed: 3,
			Tol: c.tol, MaxEpochs: c.maxEpochs, StallEpochs: c.stall})
		if err != nil {
			t.Fatal(err)
		}
		status, out, errOut := runCmd("train", "-quiet", "-data", path, "-solver", "adaspdc", "-threads", "1", "-seed", "3", "-lambda", "1e-3",
			"-tol", fmt.Sprint(c.tol), "-max-epochs", fmt.Sprint(c.maxEpochs), "-stall-epochs", fmt.Sprint(c.stall))
		m := epochsRE.FindStringSubmatch(out)
		if m == nil || m[1] != fmt.Sprint(res.Final.Epoch) {
			t.Errorf("stall %d, tol %g, max epochs %d: the field stopped (%s) at epoch %d; the flags: status %d, %q %q",
				c.stall, c.tol, c.maxEpochs, res.Stop, res.Final.Epoch, status, out, errOut)
		}
		t.Logf("stall %d, tol %g, max epochs %d: stop %s at epoch %d", c.stall, c.tol, c.maxEpochs, res.Stop, res.Final.Epoch)
		if res.Stop == "stalled" && !strings.Contains(errOut, "stalled") {
			t.Errorf("stall %d: the field stalled, the flags did not say so: %q", c.stall, errOut)
		}
	}
	// A zero tolerance asks for a zero gap, which SDCA certifies on
	// heart_scale long before the epoch limit; a negative one never stops
	// on the gap. The flag and the field agree on both.
	ds, err = loadData(filepath.Join("data", "heart_scale"), sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _, _, err = targets(ds, loss); err != nil {
		t.Fatal(err)
	}
	prob = engine.Problem{X: ds.X, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: 0.1}}
	for _, tol := range []float64{0, engine.Never} {
		_, res, err := engine.Train(context.Background(), prob, engine.Options{Solver: engine.SolverSDCA, Threads: 1, Seed: 1, Tol: tol, MaxEpochs: 300})
		if err != nil {
			t.Fatal(err)
		}
		status, out, errOut := runCmd("train", "-quiet", "-solver", "sdca", "-threads", "1", "-seed", "1", "-lambda", "0.1",
			"-tol", fmt.Sprint(tol), "-max-epochs", "300")
		m := epochsRE.FindStringSubmatch(out)
		if m == nil || m[1] != fmt.Sprint(res.Final.Epoch) || status != 0 {
			t.Errorf("tol %g: the field stopped (%s) at epoch %d; the flag: status %d, %q %q", tol, res.Stop, res.Final.Epoch, status, out, errOut)
		}
		t.Logf("tol %g: stop %s at epoch %d", tol, res.Stop, res.Final.Epoch)
	}
}
