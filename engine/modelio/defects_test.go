//go:build unix

package modelio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

func smallModel() *engine.Model {
	return &engine.Model{Loss: "logistic", Lambda: 0.1, Bias: 1, Labels: []float64{2, 4}, Dim: 3, Weights: []float64{0.5, -1.25, 0, 0.75}}
}

// TestSaveThroughSymlink: a model path that is a symbolic link keeps the
// link; its target gets the model.
func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "models", "current.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "model.json")
	if err := os.Symlink(filepath.Join("models", "current.json"), link); err != nil {
		t.Skip(err)
	}
	if err := Save(link, smallModel()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	m, err := Load(target)
	if err != nil || !reflect.DeepEqual(m, smallModel()) {
		t.Errorf("the target holds %+v (%v)", m, err)
	}
}

// TestSaveModes: a new model gets 0666 less the umask, as os.Create would
// give it; overwriting keeps the mode the file had.
func TestSaveModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := Save(path, smallModel()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("new model mode %v, want 0644 under umask 022", fi.Mode().Perm())
	}
	os.Chmod(path, 0o640)
	if err := SaveLIBLINEAR(path, smallModel()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("overwritten model mode %v, want the 0640 it had", fi.Mode().Perm())
	}
}

// TestStaleTemporaryFilesRemoved: temporary files that a dead process of
// this host left for this name are removed by the next write; a live
// process's, another name's and another host's (whose process ids mean
// nothing here) are not.
func TestStaleTemporaryFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	host := hostTag()
	other := "0badc0de"
	if other == host {
		other = "0badc0df"
	}
	stale := filepath.Join(dir, ".m.json.tmp-999999999-"+host+"-42")
	keep := []string{
		filepath.Join(dir, ".m.json.tmp-1-"+host+"-7"),          // pid 1 always runs
		filepath.Join(dir, ".n.json.tmp-999999999-"+host+"-1"),  // another name
		filepath.Join(dir, ".m.json.tmp-999999999-"+other+"-1"), // another host
		filepath.Join(dir, ".m.json.tmp-999999999-x"),           // not ours
	}
	for _, p := range append(keep, stale) {
		os.WriteFile(p, []byte("partial"), 0o600)
	}
	if err := Save(filepath.Join(dir, "m.json"), smallModel()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a dead process's temporary file is still there")
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(keep)+1 {
		t.Errorf("%d files in the folder, want the %d kept and the model", len(entries), len(keep))
	}
}

// TestSparseJSON: a model with few nonzero weights is written as their
// indices and values, reads back bit for bit, and takes a fraction of the
// dense form's bytes.
func TestSparseJSON(t *testing.T) {
	m := &engine.Model{Loss: "logistic", L1: 1e-3, Bias: 1, Labels: []float64{-1, 1}, Dim: 100000, Weights: make([]float64, 100001)}
	m.Weights[3], m.Weights[99999], m.Weights[100000] = 0.1, -1.0/3, 2.5e-300
	path := filepath.Join(t.TempDir(), "m.json")
	if err := Save(path, m); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if len(data) > 2000 || !strings.Contains(string(data), `"nonzero_index"`) || strings.Contains(string(data), `"weights"`) {
		t.Errorf("%d bytes:\n%s", len(data), data[:min(len(data), 400)])
	}
	got, err := Load(path)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("read back %v (%v)", got != nil, err)
	}
	os.WriteFile(path, []byte(`{"loss":"logistic","labels":[-1,1],"dim":3,"nonzero_index":[2,1],"nonzero_weight":[1,2]}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "increasing") {
		t.Errorf("indices out of order: %v", err)
	}
}

// TestModelValidation: labels that are not two distinct values, and labels
// on a regression, are refused when the model is read.
func TestModelValidation(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"same-labels":       `{"loss":"logistic","labels":[1,1],"dim":1,"weights":[1]}`,
		"regression-labels": `{"loss":"squared","labels":[-1,1],"dim":1,"weights":[1]}`,
	} {
		path := filepath.Join(dir, name+".json")
		os.WriteFile(path, []byte(content), 0o644)
		if m, err := Load(path); err == nil {
			t.Errorf("%s: loaded %+v", name, m)
		}
	}
}

// TestLoadLIBLINEAR: a LIBLINEAR model, ours or liblinear-train's, reads
// back to a model that predicts the same labels (LIBLINEAR's first label
// is the positive one), through Load as well, which tells the formats
// apart; several classes are refused with the reason.
func TestLoadLIBLINEAR(t *testing.T) {
	dir := t.TempDir()
	m := smallModel()
	path := filepath.Join(dir, "m.model")
	if err := SaveLIBLINEAR(path, m); err != nil {
		t.Fatal(err)
	}
	for _, load := range []func(string) (*engine.Model, error){LoadLIBLINEAR, Load} {
		got, err := load(path)
		if err != nil {
			t.Fatal(err)
		}
		got.Lambda = m.Lambda // LIBLINEAR's format does not keep λ
		if !reflect.DeepEqual(got, m) {
			t.Errorf("read back %+v, saved %+v", got, m)
		}
	}
	// As liblinear-train writes a model: labels in order of appearance,
	// the first predicted where wᵀx > 0.
	hand := "solver_type L1R_LR\nnr_class 2\nlabel -1 1\nnr_feature 2\nbias -1\nw\n0.5 \n-2 \n"
	os.WriteFile(path, []byte(hand), 0o644)
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Predict([]float64{1}, []int32{0}); p != -1 {
		t.Errorf("margin 0.5 > 0 predicts %v, want LIBLINEAR's first label -1", p)
	}
	if got.Bias != 0 || got.Dim != 2 || got.Loss != "logistic" {
		t.Errorf("%+v", got)
	}
	// Three classes, listed out of order as liblinear-train lists them (in
	// order of appearance): a row per feature, a column per class.
	multi := "solver_type L2R_LR\nnr_class 3\nlabel 3 1 2\nnr_feature 2\nbias 1\nw\n1 0 -1 \n0 2 0 \n0.5 0 0 \n"
	os.WriteFile(path, []byte(multi), 0o644)
	got, err = Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &engine.Model{Loss: "logistic", Bias: 1, Labels: []float64{1, 2, 3}, Dim: 2,
		Weights: []float64{0, 2, 0, -1, 0, 0, 1, 0, 0.5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("three classes read as %+v, want %+v", got, want)
	}
	// Row (1, 0): margins 3: 1.5, 1: 0, 2: -1 → class 3; row (0, 1): class 1.
	if a, b := got.Predict([]float64{1}, []int32{0}), got.Predict([]float64{1}, []int32{1}); a != 3 || b != 1 {
		t.Errorf("predicted %v and %v, want 3 and 1", a, b)
	}
	// Written back, it reads the same.
	if err := SaveLIBLINEAR(path, got); err != nil {
		t.Fatal(err)
	}
	if again, err := Load(path); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("round trip: %+v (%v)", again, err)
	}
}

// TestWriteInPlaceNotRegular: a destination that is a named pipe, or a
// /proc/self/fd link to a pipe (as /dev/stdout in a pipeline), is written
// in place: the pipe stays a pipe and its reader gets the model. Renaming
// over it would replace a device or pipe that others use (as /dev/null).
func TestWriteInPlaceNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Save(fifo, smallModel()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the named pipe was replaced: %v (%v)", fi.Mode(), err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !strings.Contains(string(got), `"loss": "logistic"`) {
		t.Errorf("the reader got %q (%v)", got, err)
	}
	if tmp := tempFiles(t, filepath.Dir(fifo)); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	link := fmt.Sprintf("/proc/self/fd/%d", pw.Fd())
	if _, err := os.Stat(link); err != nil {
		t.Skip(err)
	}
	if err := SaveLIBLINEAR(link, smallModel()); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	got, err = io.ReadAll(pr)
	if err != nil || !strings.HasPrefix(string(got), "solver_type L2R_LR\n") {
		t.Errorf("the pipe's reader got %q (%v)", got, err)
	}
}
