package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trainedModel trains on the bundled data and returns the model's path.
func trainedModel(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.json")
	if status, _, errOut := runCmd(append([]string{"train", "-quiet", "-model", path}, args...)...); status != 0 {
		t.Fatal(errOut)
	}
	return path
}

// TestPredictNeedsData: predict without -data is a command-line mistake,
// not a silent score of train's bundled data set.
func TestPredictNeedsData(t *testing.T) {
	status, out, errOut := runCmd("predict", "-model", trainedModel(t))
	if status != 2 || out != "" || !strings.Contains(errOut, "-data is required") {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

// TestPredictUnlabeled: rows whose labels are all placeholders are
// predicted, written, and not scored; a file that mixes the model's labels
// with others is refused with the row, and leaves no output behind.
func TestPredictUnlabeled(t *testing.T) {
	model := trainedModel(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "new")
	os.WriteFile(data, []byte("0 1:0.5 3:1\n0 2:-1\n0 13:0.25\n"), 0o644)
	out := filepath.Join(dir, "pred")
	status, stdout, errOut := runCmd("predict", "-model", model, "-data", data, "-output", out)
	got, _ := os.ReadFile(out)
	if status != 0 || !strings.Contains(stdout, "labels unknown") || strings.Count(string(got), "\n") != 3 {
		t.Errorf("status %d, stdout %q, stderr %q, output %q", status, stdout, errOut, got)
	}
	for _, l := range strings.Fields(string(got)) {
		if l != "1" && l != "-1" {
			t.Errorf("prediction %q is not one of the model's labels", l)
		}
	}
	mixed := filepath.Join(dir, "mixed")
	os.WriteFile(mixed, []byte("1 1:0.5\n-1 2:1\n7 3:1\n"), 0o644)
	out2 := filepath.Join(dir, "pred2")
	status, _, errOut = runCmd("predict", "-model", model, "-data", mixed, "-output", out2)
	if status != 1 || !strings.Contains(errOut, "row 3 has label 7") {
		t.Errorf("mixed labels: status %d, stderr %q", status, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 { // new, pred, mixed, and no pred2 or temporary file
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v", names)
	}
}

// TestPredictModelWiderThanData: a model with more features than the data
// (a w8a model on a9a.t) predicts, and says the files may not match.
func TestPredictModelWiderThanData(t *testing.T) {
	model := trainedModel(t, "-features", "300")
	data := filepath.Join(t.TempDir(), "narrow")
	os.WriteFile(data, []byte("1 1:0.5\n-1 2:1\n"), 0o644)
	status, _, errOut := runCmd("predict", "-model", model, "-data", data)
	if status != 0 || !strings.Contains(errOut, "the data use 2 features and the model was trained on 300") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestPredictReadsLIBLINEARModels: a model written in LIBLINEAR's format
// predicts as the JSON model of the same run.
func TestPredictReadsLIBLINEARModels(t *testing.T) {
	dir := t.TempDir()
	js, ll := filepath.Join(dir, "m.json"), filepath.Join(dir, "m.model")
	if status, _, errOut := runCmd("train", "-quiet", "-bias", "1", "-model", js, "-liblinear-model", ll); status != 0 {
		t.Fatal(errOut)
	}
	data := filepath.Join("data", "heart_scale")
	_, a, _ := runCmd("predict", "-model", js, "-data", data)
	status, b, errOut := runCmd("predict", "-model", ll, "-data", data)
	if status != 0 || a != b || !strings.HasPrefix(a, "accuracy=") {
		t.Errorf("JSON model %q, LIBLINEAR model %q (status %d, %q)", a, b, status, errOut)
	}
}

// TestPredictOutputCollisions: -output naming the data or the model is
// refused before anything is read.
func TestPredictOutputCollisions(t *testing.T) {
	model := trainedModel(t)
	data := filepath.Join(t.TempDir(), "d")
	os.WriteFile(data, []byte("1 1:1\n"), 0o644)
	for _, out := range []string{data, model} {
		if status, _, errOut := runCmd("predict", "-model", model, "-data", data, "-output", out); status != 2 || !strings.Contains(errOut, "overwrite") {
			t.Errorf("-output %s: status %d, stderr %q", out, status, errOut)
		}
	}
}
