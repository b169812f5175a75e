package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
	if status != 1 || !strings.Contains(errOut, mixed+":3: row 3 has label 7") {
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

// TestPredictProbabilities: -probabilities writes LIBLINEAR's -b 1 format,
// each row's probabilities summing to 1 within 1e-12 (binary and
// one-vs-rest), and prints the log-loss; -scores writes the margins and
// prints the AUC; a squared-loss model gives no probabilities.
func TestPredictProbabilities(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("data", "heart_scale")
	model := trainedModel(t, "-bias", "1")
	out := filepath.Join(dir, "p")
	status, stdout, errOut := runCmd("predict", "-model", model, "-data", data, "-probabilities", "-output", out)
	if status != 0 || !strings.Contains(stdout, " log_loss=") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, errOut)
	}
	checkProbabilities(t, out, "labels 1 -1", 2)
	three := filepath.Join(dir, "three")
	os.WriteFile(three, []byte("1 1:1\n2 2:1\n3 3:1\n1 1:0.9 2:0.1\n2 2:0.8 3:0.1\n3 1:0.1 3:1.1\n"), 0o644)
	m3 := filepath.Join(dir, "m3.json")
	if status, _, errOut := runCmd("train", "-quiet", "-data", three, "-model", m3); status != 0 {
		t.Fatal(errOut)
	}
	if status, _, errOut := runCmd("predict", "-model", m3, "-data", three, "-probabilities", "-output", out); status != 0 {
		t.Fatal(errOut)
	}
	checkProbabilities(t, out, "labels 1 2 3", 3)
	status, stdout, _ = runCmd("predict", "-model", model, "-data", data, "-scores", "-output", out)
	if status != 0 || !strings.Contains(stdout, " auc=0.") {
		t.Errorf("-scores: status %d, stdout %q", status, stdout)
	}
	sq := trainedModel(t, "-loss", "squared")
	if status, _, errOut := runCmd("predict", "-model", sq, "-data", data, "-probabilities"); status != 1 || !strings.Contains(errOut, "only logistic models") {
		t.Errorf("squared model: status %d, stderr %q", status, errOut)
	}
	if status, stdout, _ := runCmd("predict", "-model", sq, "-data", data); status != 0 || !strings.Contains(stdout, " r2=") {
		t.Errorf("regression metrics: %q", stdout)
	}
}

func checkProbabilities(t *testing.T, path, header string, classes int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if lines[0] != header {
		t.Errorf("header %q, want %q", lines[0], header)
	}
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != classes+1 {
			t.Fatalf("line %d: %q", i+2, l)
		}
		var sum float64
		for _, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 || v > 1 {
				t.Fatalf("line %d: probability %q", i+2, s)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("line %d: probabilities sum to %.17g", i+2, sum)
		}
	}
}

// TestPredictOutputToPipe: -output naming a pipe (here /proc/self/fd/N,
// as /dev/stdout is in a pipeline) writes the predictions into it, where
// a temporary file and a rename have no folder to go to.
func TestPredictOutputToPipe(t *testing.T) {
	model := trainedModel(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	out := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
	if _, err := os.Stat(out); err != nil {
		t.Skip(err)
	}
	status, stdout, errOut := runCmd("predict", "-model", model, "-data", filepath.Join("data", "heart_scale"), "-output", out)
	w.Close()
	got, _ := io.ReadAll(r)
	if status != 0 || !strings.HasPrefix(stdout, "accuracy=") || strings.Count(string(got), "\n") != 270 {
		t.Errorf("status %d, stdout %q, stderr %q, %d bytes through the pipe", status, stdout, errOut, len(got))
	}
}

// TestPredictMixedLabelsLine: the refusal of a label outside the model's
// names the file and the line the row is on, which blank and comment
// lines put after its row number, and a long line before it does not
// confuse.
func TestPredictMixedLabelsLine(t *testing.T) {
	model := trainedModel(t)
	data := filepath.Join(t.TempDir(), "mixed")
	var long strings.Builder // a line longer than a read buffer
	long.WriteString("1")
	for j := 1; j <= 20000; j++ {
		fmt.Fprintf(&long, " %d:0.5", j)
	}
	long.WriteString("\n")
	os.WriteFile(data, []byte("# a header\n1 1:0.5\n\n"+long.String()+"  # comment only\n-1 2:1 # why\n3 3:1\n-1 1:1\n"), 0o644)
	status, _, errOut := runCmd("predict", "-model", model, "-data", data)
	if status != 1 || !strings.Contains(errOut, data+":7: row 4 has label 3") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}
