package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestCheckMemory: a run is refused when its vectors exceed what is
// available, or when the model's dense weights alone take more than half
// of it; the advice names the unused columns when most are.
func TestCheckMemory(t *testing.T) {
	const gib = 1 << 30
	if err := checkMemory("f", 2, 3, 1<<31-1, 3, 2, 24*gib); err == nil || !strings.Contains(err.Error(), "renumber the features") {
		t.Errorf("a model of 2³¹ weights for 3 used columns was accepted, or without advice: %v", err)
	}
	if err := checkMemory("f", 270, 13, 30_000_000, 13, 2, 24*gib); err != nil {
		t.Errorf("a 240 MB model on 24 GiB was refused: %v", err)
	}
	if err := checkMemory("f", 1e6, 1e8, 1e8, 1e8, 16, 24*gib); err == nil || !strings.Contains(err.Error(), "fewer -threads") {
		t.Errorf("10⁸ dense columns on 16 workers (about 27 GiB) fit in 24 GiB: %v", err)
	}
	if err := checkMemory("f", 1e6, 1e8, 1e8, 1e8, 16, 0); err != nil {
		t.Errorf("an unknown amount of memory refused a run: %v", err)
	}
}

// TestAbsurdWidthRefused: a 28-byte file naming feature 2³¹ − 1 is refused
// with a message instead of growing until the kernel kills the process.
func TestAbsurdWidthRefused(t *testing.T) {
	if avail := availableMemory(); avail == 0 || avail >= 32<<30 {
		t.Skipf("available memory %d: the refusal is for machines under 32 GiB", avail)
	}
	path := filepath.Join(t.TempDir(), "wide")
	os.WriteFile(path, []byte("1 1:0.5 2147483647:1\n-1 2:1\n"), 0o644)
	status, _, errOut := runCmd("train", "-quiet", "-data", path)
	if status != 1 || !strings.Contains(errOut, "renumber the features") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestUnusedColumnsRemapped: features that never occur are left out of the
// solve and given weight 0; the printed primal equals P evaluated
// independently at the saved model on the full-width problem, and a
// model trained with -features far beyond the data predicts as one
// without.
func TestUnusedColumnsRemapped(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "gappy")
	os.WriteFile(data, []byte("+1 1:1 900:0.5\n-1 2:1 900:-1\n+1 1:0.5 2:0.1\n-1 2:2 7:1\n+1 1:2 7:-1\n"), 0o644)
	model := filepath.Join(dir, "m.json")
	status, out, errOut := runCmd("train", "-quiet", "-data", data, "-lambda", "0.1", "-tol", "1e-10", "-bias", "1", "-model", model)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	m, err := modelio.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim != 900 || len(m.Weights) != 901 {
		t.Fatalf("model of dim %d with %d weights, want 900 and 901 (bias)", m.Dim, len(m.Weights))
	}
	for j, w := range m.Weights[:900] {
		if used := j == 0 || j == 1 || j == 6 || j == 899; !used && w != 0 {
			t.Errorf("unused feature %d has weight %g", j+1, w)
		}
	}
	ds, err := sparse.ReadFile(data, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := sparse.BinaryLabels(ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := engine.Certify(engine.Problem{X: ds.X.WithBias(1), B: b, Loss: engine.Logistic{}, Reg: engine.ElasticNet{Lambda: 0.1}}, m.Weights)
	if err != nil {
		t.Fatal(err)
	}
	printed, _ := strconv.ParseFloat(summaryRE.FindStringSubmatch(out)[1], 64)
	if d := cert.Primal - printed; d > 1e-10*cert.Primal || d < -1e-10*cert.Primal {
		t.Errorf("printed primal %.15g, P at the saved model %.15g", printed, cert.Primal)
	}
}
