package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/modelio"
)

// TestTrainCV: -cv K prints the held-out accuracy (or RMSE for the squared
// loss), reproducibly for a seed, and trains no model, as LIBLINEAR's -v.
func TestTrainCV(t *testing.T) {
	status, out, errOut := runCmd("train", "-quiet", "-cv", "5", "-bias", "1")
	m := regexp.MustCompile(`^cv_accuracy=(\d+\.\d+)% folds=5 lambda=\S+\n$`).FindStringSubmatch(out)
	if status != 0 || m == nil {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if acc, _ := strconv.ParseFloat(m[1], 64); acc < 75 || acc > 95 {
		t.Errorf("heart_scale 5-fold accuracy %v%%: LIBLINEAR's is about 84%%", acc)
	}
	if _, again, _ := runCmd("train", "-quiet", "-cv", "5", "-bias", "1"); again != out {
		t.Errorf("the same seed gave %q, then %q", out, again)
	}
	status, out, _ = runCmd("train", "-quiet", "-cv", "3", "-loss", "squared", "-data", "../../testdata/housing_scale")
	if status != 0 || !strings.HasPrefix(out, "cv_rmse=") {
		t.Errorf("regression: status %d, stdout %q", status, out)
	}
	for _, args := range [][]string{
		{"-cv", "1"},
		{"-cv", "5", "-model", filepath.Join(t.TempDir(), "m.json")},
		{"-lambda-grid", "1:0.1:5"},
		{"-lambda", "auto", "-lambda-grid", "0.1:1:5"},
		{"-lambda", "often"},
	} {
		if status, _, errOut := runCmd(append([]string{"train", "-quiet"}, args...)...); status != 2 {
			t.Errorf("train %v: status %d (%q), want 2", args, status, errOut)
		}
	}
}

// TestTrainLambdaAuto: -lambda auto searches the grid, prints the best λ
// with its cross-validated score, trains the model at that λ and writes
// it; the model's λ is the one printed.
func TestTrainLambdaAuto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	status, out, errOut := runCmd("train", "-lambda", "auto", "-lambda-grid", "1:0.0001:9", "-bias", "1", "-model", path)
	m := regexp.MustCompile(`^best_lambda=(\S+) cv_accuracy=\S+% nonzeros=\S+ folds=5 grid_points=\d+\n`).FindStringSubmatch(out)
	if status != 0 || m == nil || !summaryRE.MatchString(strings.SplitN(out, "\n", 2)[1]) {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if got := strings.Count(errOut, "cv_accuracy="); got < 6 || got > 9 {
		t.Errorf("%d grid points reported on stderr, want 6 to 9 (patience 5)", got)
	}
	best, _ := strconv.ParseFloat(m[1], 64)
	model, err := modelio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rel := (model.Lambda - best) / best; rel > 1e-5 || rel < -1e-5 {
		t.Errorf("model λ %v, best λ printed %v", model.Lambda, best)
	}
}

// TestTrainInit: -init starts from a saved model, so that a run from the
// optimum certifies at once, and a model of other features is refused.
func TestTrainInit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	if status, _, errOut := runCmd("train", "-quiet", "-bias", "1", "-tol", "1e-10", "-model", path); status != 0 {
		t.Fatal(errOut)
	}
	status, out, errOut := runCmd("train", "-quiet", "-bias", "1", "-tol", "1e-9", "-init", path)
	if status != 0 || !strings.HasPrefix(out, "epochs=0 ") {
		t.Errorf("from the optimum: status %d, stdout %q, stderr %q; want epochs=0", status, out, errOut)
	}
	if status, _, errOut := runCmd("train", "-quiet", "-init", path); status != 1 || !strings.Contains(errOut, "bias") {
		t.Errorf("a model with a bias into a run without: status %d, stderr %q", status, errOut)
	}
}

// TestTrainL1Auto: -l1 auto follows the L1 path, reports the support along
// it and the best l1, and trains the sparse model at that l1.
func TestTrainL1Auto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	status, out, errOut := runCmd("train", "-l1", "auto", "-lambda", "0", "-model", path)
	m := regexp.MustCompile(`^best_l1=(\S+) cv_accuracy=\S+% nonzeros=\S+ folds=5 grid_points=\d+\n`).FindStringSubmatch(out)
	if status != 0 || m == nil || !strings.Contains(out, "solver=glmnet") || !strings.Contains(errOut, "  nonzeros ") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	best, _ := strconv.ParseFloat(m[1], 64)
	model, err := modelio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rel := (model.L1 - best) / best; rel > 1e-5 || rel < -1e-5 || model.Lambda != 0 {
		t.Errorf("model l1 %v λ %v, best l1 printed %v", model.L1, model.Lambda, best)
	}
}
