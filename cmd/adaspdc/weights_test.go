package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassWeightsBalanced: balanced weights are n/(K·n_k).
func TestClassWeightsBalanced(t *testing.T) {
	y := []float64{1, 1, 1, -1, 2, 2}
	cw, err := classWeights("balanced", y)
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range map[float64]float64{1: 6.0 / 9, -1: 6.0 / 3, 2: 6.0 / 6} {
		if math.Abs(cw[c]-want) > 1e-15 {
			t.Errorf("class %v: weight %v, want %v", c, cw[c], want)
		}
	}
	if cw, err := classWeights("1:3,-1:0.5", y); err != nil || cw[1] != 3 || cw[-1] != 0.5 {
		t.Errorf("pairs: %v, %v", cw, err)
	}
	for _, bad := range []string{"1:0", "1:-2", "x:1", "1", "7:2"} {
		if _, err := classWeights(bad, y); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTrainSampleWeightsFile: a weights file is read row by row; a wrong
// count or a weight that is not > 0 is refused naming the line, and a
// weighted run trains.
func TestTrainSampleWeightsFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "w")
	os.WriteFile(ok, []byte(strings.Repeat("1\n", 269)+"2\n"), 0o644)
	if status, out, errOut := runCmd("train", "-quiet", "-sample-weights", ok); status != 0 || !strings.Contains(out, "solver=newton") {
		t.Errorf("weighted run: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	for name, c := range map[string]struct{ content, want string }{
		"short": {strings.Repeat("1\n", 100), "100 weights for the data's 270 rows"},
		"zero":  {strings.Repeat("1\n", 5) + "0\n" + strings.Repeat("1\n", 264), ":6: weight \"0\""},
		"long":  {strings.Repeat("1\n", 271), ":271: more weights"},
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(c.content), 0o644)
		if status, _, errOut := runCmd("train", "-quiet", "-sample-weights", path); status != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: status %d, stderr %q; want %q", name, status, errOut, c.want)
		}
	}
}
