package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

var summaryRE = regexp.MustCompile(`^epochs=\d+ passes=[\d.]+ primal=(\S+) dual=(\S+) gap=(\S+) rel_gap=(\S+) seconds=[\d.]+ threads=\d+ solver=\S+\n$`)

// TestTrainBundled runs the bare "adaspdc train" (the README's main job) and
// checks that it reaches the default tolerance and writes a usable model.
func TestTrainBundled(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "model.json")
	tracePath := filepath.Join(dir, "trace.csv")
	status, out, errOut := runCmd("train", "-model", modelPath, "-trace", tracePath, "-bias", "1")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, errOut)
	}
	m := summaryRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("summary line %q does not match %s", out, summaryRE)
	}
	primal, _ := strconv.ParseFloat(m[1], 64)
	dual, _ := strconv.ParseFloat(m[2], 64)
	gap, _ := strconv.ParseFloat(m[3], 64)
	rel, _ := strconv.ParseFloat(m[4], 64)
	if !(rel <= 1e-6) {
		t.Errorf("relative gap %v, want ≤ 1e-6 (the default -tol)", rel)
	}
	// primal and dual are printed to 12 significant digits, so their
	// difference is known to about 1e-12·|P|, which matters once the gap is
	// that small (newton overshoots -tol to 4e-10 here).
	if math.Abs(gap-(primal-dual)) > 1e-3*gap+2e-12*math.Max(1, math.Abs(primal)) || math.Abs(rel-gap/math.Max(1, math.Abs(primal))) > 1e-3*rel {
		t.Errorf("gap=%v rel_gap=%v do not match primal %v and dual %v", gap, rel, primal, dual)
	}
	if !strings.Contains(errOut, "epoch ") {
		t.Errorf("no progress lines on stderr: %q", errOut)
	}
	raw, err := os.ReadFile(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"loss", "lambda", "l1", "bias", "labels", "dim", "weights"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("model JSON lacks %q", k)
		}
	}
	model, err := modelio.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if model.Dim != 13 || len(model.Weights) != 14 || model.Bias != 1 {
		t.Errorf("model dim %d, %d weights, bias %v; want 13, 14, 1", model.Dim, len(model.Weights), model.Bias)
	}
	trace, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(trace), "\n"); lines < 3 {
		t.Errorf("trace has %d lines", lines)
	}
	// predict must report exactly the accuracy of the saved weights,
	// computed here from the JSON by hand.
	ds, err := sparse.ReadLIBSVM(bytes.NewReader(bundledData), "heart", sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	correct := 0
	for i := 0; i < ds.X.Rows; i++ {
		val, idx := ds.X.Row(i)
		z := model.Bias * model.Weights[model.Dim]
		for p, j := range idx {
			z += val[p] * model.Weights[j]
		}
		pred := model.Labels[0]
		if z > 0 {
			pred = model.Labels[1]
		}
		if pred == ds.Y[i] {
			correct++
		}
	}
	want := fmt.Sprintf("accuracy=%.4f%% (%d/%d)\n", 100*float64(correct)/float64(ds.X.Rows), correct, ds.X.Rows)
	status, out, errOut = runCmd("predict", "-model", modelPath, "-data", filepath.Join("data", "heart_scale"))
	if status != 0 || out != want || correct < 216 {
		t.Errorf("predict: status %d, stdout %q, stderr %q; want %q (and at least 80%%)", status, out, errOut, want)
	}
}

func TestTrainErrors(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"-lambda", "-1"}, 2, "≥ 0"},
		{[]string{"-lambda", "0", "-solver", "adaspdc"}, 1, "strongly convex"},
		{[]string{"-m", "300"}, 1, "only 270 blocks"},
		{[]string{"-m", "100", "-block", "10"}, 1, "only 27 blocks"},
		{[]string{"-loss", "svm"}, 2, "logistic"},
		{[]string{"-threads", "-1"}, 2, "0 (automatic) or more"},
		{[]string{"-m", "0"}, 2, "-m 0: must be at least 1"},
		{[]string{"-block", "-2"}, 2, "-block -2: must be at least 1"},
		{[]string{"-max-epochs", "-1"}, 2, "-max-epochs -1: must be 0"},
		{[]string{"-tol", "NaN"}, 2, "finite"},
		{[]string{"-step-scale", "5"}, 2, "step scale"},
		{[]string{"-normalize", "max"}, 2, "want none or unit"},
		{[]string{"-partition", "random"}, 2, "shuffle"},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
		{[]string{"-data", "/nonexistent/file"}, 1, "/nonexistent/file"},
		{[]string{"-loss", "quantile", "-quantile", "1.5"}, 2, "quantile level 1.5"},
		{[]string{"-loss", "epsinsensitive", "-epsilon", "-1"}, 2, "ε-insensitive width -1"},
		{[]string{"-groups", "g.txt", "-l1", "0.1"}, 2, "sparse group lasso"},
		{[]string{"-group-weight", "-1"}, 2, "-group-weight -1"},
		{[]string{"-groups", "/nonexistent/groups"}, 1, "/nonexistent/groups"},
	} {
		status, _, errOut := runCmd(append([]string{"train", "-quiet"}, tc.args...)...)
		if status != tc.status || !strings.Contains(errOut, tc.want) {
			t.Errorf("train %v: status %d, stderr %q; want status %d and %q", tc.args, status, errOut, tc.status, tc.want)
		}
	}
}

// TestTrainOneVsRest: three classes train one against the rest each, the
// summary names them, and the JSON and LIBLINEAR models predict the class
// of the largest margin, alike.
func TestTrainOneVsRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "three")
	os.WriteFile(path, []byte("1 1:1\n2 2:1\n3 3:1\n1 1:0.9 2:0.1\n2 2:0.8 3:0.1\n3 1:0.1 3:1.1\n"), 0o644)
	js, ll := filepath.Join(dir, "m.json"), filepath.Join(dir, "m.model")
	status, out, errOut := runCmd("train", "-data", path, "-lambda", "0.01", "-model", js, "-liblinear-model", ll)
	if status != 0 || !strings.HasPrefix(out, "classes=3 ") || strings.Count(errOut, "\nclass ")+strings.Count(errOut[:min(6, len(errOut))], "class ") < 3 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	for _, m := range []string{js, ll} {
		status, out, errOut := runCmd("predict", "-model", m, "-data", path)
		if status != 0 || !strings.HasPrefix(out, "accuracy=100.0000% (6/6)\nclass 1: precision=1.0000 recall=1.0000 (2 rows)\n") {
			t.Errorf("predict with %s: status %d, stdout %q, stderr %q", filepath.Base(m), status, out, errOut)
		}
	}
	if status, out, errOut := runCmd("train", "-quiet", "-data", path, "-cv", "2"); status != 0 || !strings.HasPrefix(out, "cv_accuracy=") {
		t.Errorf("-cv with three classes: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if status, _, errOut := runCmd("train", "-quiet", "-data", path, "-trace", filepath.Join(dir, "t.csv")); status != 2 || !strings.Contains(errOut, "not supported with several classes") {
		t.Errorf("-trace with three classes: status %d, stderr %q", status, errOut)
	}
}

// TestTrainDeterministicFlag checks that -deterministic reaches the engine:
// the model files of a 1-thread and a 2-thread run must be identical. (The
// engine may keep one worker of two when it times one faster in the first
// epoch; engine's TestThreadsBitIdentical forces the worker counts.)
func TestTrainDeterministicFlag(t *testing.T) {
	dir := t.TempDir()
	var models [2][]byte
	for i, threads := range []string{"1", "2"} {
		path := filepath.Join(dir, "m"+threads+".json")
		// m = 256 rows of 13 nonzeros: enough work for two workers.
		status, out, errOut := runCmd("train", "-quiet", "-deterministic", "-m", "256", "-lazy", "off",
			"-threads", threads, "-tol", "-1", "-max-epochs", "5", "-model", path)
		if status != 0 {
			t.Fatalf("threads %s: status %d, %s", threads, status, errOut)
		}
		if !strings.Contains(out, "threads="+threads+" ") && !strings.Contains(out, "threads=1 ") {
			t.Errorf("-threads %s ran with another count: %q", threads, out)
		}
		var err error
		if models[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if string(models[0]) != string(models[1]) {
		t.Error("-deterministic models differ between 1 and 2 threads")
	}
}

// TestTrainPdproxGroups trains a hinge SVM with a group lasso read from a
// groups file through Pdprox, and checks that a bad groups file is reported
// with its line.
func TestTrainPdproxGroups(t *testing.T) {
	dir := t.TempDir()
	groups := filepath.Join(dir, "groups.txt")
	var sb strings.Builder
	sb.WriteString("# heart_scale's 13 features in groups of 3\n")
	for j := 1; j <= 13; j++ {
		fmt.Fprintf(&sb, "%d %d\n", j, (j-1)/3)
	}
	if err := os.WriteFile(groups, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCmd("train", "-quiet", "-loss", "hinge", "-solver", "pdprox-noproj", "-groups", groups,
		"-group-weight", "0.01", "-lambda", "0.01", "-bias", "1", "-tol", "1e-2", "-max-epochs", "20000")
	if status != 0 || !strings.Contains(out, "solver=pdprox-noproj") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if err := os.WriteFile(groups, []byte("1 0\n14 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errOut = runCmd("train", "-quiet", "-loss", "hinge", "-solver", "pdprox-dual", "-groups", groups)
	if status != 1 || !strings.Contains(errOut, groups+", line 2: feature 14 is beyond the data's 13 features") {
		t.Errorf("bad groups file: status %d, stderr %q", status, errOut)
	}
}

// TestTrainAutoChoice: with no -solver, train picks newton for a smooth
// loss with L2, glmnet for a smooth loss with an L1 term, sdca for the
// hinge, and says so; -m and -block are obeyed by a mini-batch
// coordinate method, and -solver is obeyed as given.
func TestTrainAutoChoice(t *testing.T) {
	for _, c := range []struct {
		args   []string
		solver string
		picked bool
	}{
		{[]string{"-loss", "logistic"}, "newton", true},
		{[]string{"-loss", "sqhinge"}, "newton", true},
		{[]string{"-m", "4"}, "adaspdc", false},
		{[]string{"-block", "2"}, "adaspdc", false},
		{[]string{"-l1", "1e-3"}, "glmnet", true},
		{[]string{"-l1", "1e-3", "-loss", "hinge", "-tol", "1e-3"}, "sdca", true},
		{[]string{"-loss", "hinge", "-tol", "1e-3"}, "sdca", true},
		{[]string{"-solver", "spdc"}, "spdc", false},
	} {
		status, out, errOut := runCmd(append([]string{"train", "-max-epochs", "2000"}, c.args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d, stderr %s", c.args, status, errOut)
		}
		if !strings.HasSuffix(out, " solver="+c.solver+"\n") {
			t.Errorf("%v: summary %q, want solver=%s", c.args, out, c.solver)
		}
		if got := strings.Contains(errOut, "adaspdc train: picked "+c.solver+": "); got != c.picked {
			t.Errorf("%v: says it picked %s: %v, want %v (stderr %q)", c.args, c.solver, got, c.picked, errOut)
		}
	}
}

// TestTrainMultinomial: -multiclass multinomial trains one softmax model of
// three classes, certified; the model file says so; predict's probabilities
// are its softmax, each row summing to 1, and its classes the largest
// margin's. A bad value or loss is a usage error.
func TestTrainMultinomial(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "three")
	os.WriteFile(path, []byte("1 1:1\n2 2:1\n3 3:1\n1 1:0.9 2:0.1\n2 2:0.8 3:0.1\n3 1:0.1 3:1.1\n"), 0o644)
	js := filepath.Join(dir, "m.json")
	status, out, errOut := runCmd("train", "-quiet", "-data", path, "-multiclass", "multinomial", "-lambda", "0.01", "-tol", "1e-8", "-model", js)
	if status != 0 || !strings.Contains(out, "solver=lbfgs") || !strings.Contains(out, " rel_gap=") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	raw, err := os.ReadFile(js)
	if err != nil || !strings.Contains(string(raw), `"multinomial": true`) {
		t.Fatalf("model file: %v\n%s", err, raw)
	}
	probs := filepath.Join(dir, "p")
	status, out, errOut = runCmd("predict", "-model", js, "-data", path, "-probabilities", "-output", probs)
	if status != 0 || !strings.HasPrefix(out, "accuracy=100.0000% (6/6)") {
		t.Fatalf("predict: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	checkProbabilities(t, probs, "labels 1 2 3", 3)
	for _, solver := range []string{"lbfgs", "sdca"} {
		status, out, errOut := runCmd("train", "-quiet", "-data", path, "-multiclass", "multinomial", "-solver", solver, "-lambda", "0.01")
		if status != 0 || !strings.Contains(out, "solver="+solver) {
			t.Errorf("-solver %s: status %d, stdout %q, stderr %q", solver, status, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"-multiclass", "softmax"},
		{"-multiclass", "multinomial", "-loss", "sqhinge"},
		{"-multiclass", "multinomial", "-l1", "0.1"},
		{"-multiclass", "multinomial", "-solver", "newton"},
	} {
		if status, _, errOut := runCmd(append([]string{"train", "-quiet", "-data", path}, args...)...); status != 2 || !strings.Contains(errOut, "-multiclass") {
			t.Errorf("%v: status %d, stderr %q", args, status, errOut)
		}
	}
}
