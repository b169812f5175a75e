package harness

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine/objective"
)

// writeClasses writes a LIBSVM file of rows drawn around one centre per
// class (labels 1..k), some entries left out so that the rows are sparse,
// the values at full precision.
func writeClasses(t *testing.T, rows, cols, k int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(k), 7))
	centre := make([][]float64, k)
	for c := range centre {
		centre[c] = make([]float64, cols)
		for j := range cols {
			centre[c][j] = r.NormFloat64()
		}
	}
	var b strings.Builder
	for i := range rows {
		c := i % k
		fmt.Fprintf(&b, "%d", c+1)
		for j := range cols {
			if r.Float64() < 0.3 {
				continue
			}
			fmt.Fprintf(&b, " %d:%s", j+1, strconv.FormatFloat(centre[c][j]+r.NormFloat64(), 'g', -1, 64))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("classes%d", k))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSklearnMultinomialWeights: scikit-learn's class-major W comes back
// feature-major, and classes other than ours are refused.
func TestSklearnMultinomialWeights(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "w")
	// Two classes × three features, class-major.
	os.WriteFile(out, []byte("1\n2\n3\n4\n5\n6\n"), 0o644)
	os.WriteFile(out+".classes", []byte("1 2"), 0o644)
	w, err := sklearnMultinomialWeights(out, 3, []float64{1, 2})
	if err != nil || !slices.Equal(w, []float64{1, 4, 2, 5, 3, 6}) {
		t.Errorf("feature-major W = %v (%v), want [1 4 2 5 3 6]", w, err)
	}
	if _, err := sklearnMultinomialWeights(out, 3, []float64{0, 1}); err == nil {
		t.Error("scikit-learn's classes 1, 2 were taken for ours 0, 1")
	}
	if _, err := sklearnMultinomialWeights(out, 2, []float64{1, 2}); err == nil {
		t.Error("six weights were taken for two features × two classes")
	}
}

// TestPeersMultinomial compares the softmax objective with scikit-learn's
// lbfgs where python3 imports sklearn, on three classes and on two (which
// scikit-learn fits as the binary problem at 2C): the reference is
// certified, both tools reach every target, and the summary has the row.
func TestPeersMultinomial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds adaspdc and runs processes")
	}
	py := findPython("")
	if py == "" {
		t.Skip("no python3 with scikit-learn (" + InstallHint + ")")
	}
	bin := testAdaspdc(t)
	const tool = "sklearn lbfgs multinomial"
	for _, k := range []int{3, 2} {
		path := writeClasses(t, 150, 12, k)
		cfg := PeersConfig{Data: []string{path}, Objectives: []Objective{{Loss: LossMultinomial, Lambda: 1e-2}},
			Ms: []int{1}, Threads: 1, Runs: 1, RefEpochs: 20000, Timeout: time.Minute, Self: bin, Python: py}
		var log bytes.Buffer
		res, err := Peers(context.Background(), cfg, &log)
		if err != nil {
			t.Fatalf("%d classes: %v\n%s", k, err, log.String())
		}
		pp := res.Problems[0]
		if !(pp.Bound >= 0 && pp.Bound < 1e-8*math.Abs(pp.PStar)) {
			t.Errorf("%d classes: P* = %g is only certified within %g", k, pp.PStar, pp.Bound)
		}
		// P* is the problem's optimum: no point of the objective is lower.
		data, err := LoadData(path)
		if err != nil {
			t.Fatal(err)
		}
		mp, _, _ := multinomialProblem(data, 1e-2)
		if c, err := objective.NewMultinomialEvaluator(mp, 1).At(make([]float64, mp.Dim())); err != nil || !(c.Primal > pp.PStar) || c.Dual > pp.PStar {
			t.Errorf("%d classes: at W = 0 %+v (%v), P* = %g", k, c, err, pp.PStar)
		}
		if !slices.Equal(pp.Tools, []string{tool}) {
			t.Errorf("%d classes: peers %v, want %s alone", k, pp.Tools, tool)
		}
		for i, target := range PeerTargets {
			if o := pp.Times["adaspdc"][i]; math.IsNaN(o.Seconds) {
				t.Errorf("%d classes, target %g: adaspdc did not reach it\n%s", k, target, log.String())
			}
			if p := pp.Times[tool][i]; math.IsNaN(p.Seconds) {
				t.Errorf("%d classes, target %g: scikit-learn did not reach it\n%s", k, target, log.String())
			}
		}
		dir := t.TempDir()
		if err := res.Write(dir); err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "peers.md"))
		row := fmt.Sprintf("| classes%d | multinomial | 0.01 |", k)
		i := strings.Index(string(md), row)
		if i < 0 {
			t.Fatalf("peers.md has no row %q:\n%s", row, md)
		}
		if line, _, _ := strings.Cut(string(md[i:]), "\n"); strings.Contains(line, "not reached") || !strings.Contains(line, tool) {
			t.Errorf("the summary row should have both tools at every target:\n%s", line)
		}
	}
}
