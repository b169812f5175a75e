package harness

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine"
)

// TestOVRSetup: every seventh row is held out, each class's problem has
// +1 on its rows only, the score of a model sums the classes' primals as
// engine.Certify gives them, and data of two classes, or a model of other
// classes, are refused.
func TestOVRSetup(t *testing.T) {
	data, err := LoadData(writeClasses(t, 70, 6, 3))
	if err != nil {
		t.Fatal(err)
	}
	s, err := newOVRSetup(data, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if s.fit.X.Rows != 60 || s.test.Rows != 10 || len(s.testY) != 10 {
		t.Fatalf("%d rows fitted, %d held out, want 60 and 10", s.fit.X.Rows, s.test.Rows)
	}
	if !slices.Equal(s.testY, []float64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1}) { // rows 6, 13, 20, … (row i has label i mod 3 + 1)
		t.Errorf("held-out labels %v", s.testY)
	}
	if !slices.Equal(s.classes, []float64{1, 2, 3}) {
		t.Errorf("classes %v", s.classes)
	}
	for k, prob := range s.probs {
		for i, b := range prob.B {
			if want := s.fitY[i] == s.classes[k]; (b == 1) != want || (b != 1 && b != -1) {
				t.Fatalf("class %v, row %d (label %v): b = %v", s.classes[k], i, s.fitY[i], b)
			}
		}
	}
	m := &engine.Model{Loss: "logistic", Lambda: 1e-2, Labels: []float64{1, 2, 3}, Dim: s.d, Weights: make([]float64, 3*s.d)}
	for j := range m.Weights {
		m.Weights[j] = float64(j%5) / 10
	}
	p, d, acc, err := s.score(m)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for k, prob := range s.probs {
		tp, err := engine.Certify(prob, m.ClassWeights(k))
		if err != nil {
			t.Fatal(err)
		}
		want += tp.Primal
	}
	if p != want || !(d < p) || acc < 0 || acc > 1 {
		t.Errorf("score: primal %v (want %v), dual %v, accuracy %v", p, want, d, acc)
	}
	m.Labels = []float64{0, 1, 2}
	if _, _, _, err := s.score(m); err == nil {
		t.Error("a model of classes 0, 1, 2 was scored on classes 1, 2, 3")
	}
	two, err := LoadData(writeClasses(t, 70, 6, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newOVRSetup(two, 1e-2); err == nil || !strings.Contains(err.Error(), "three or more") {
		t.Errorf("two classes: %v", err)
	}
}

// TestPeersOneVsRest compares the one-vs-rest objective with LIBLINEAR's
// -s 0 and -s 7 where liblinear-train is installed: the reference is
// certified, every tool reaches every target, and the summary has the row
// and the held-out accuracies.
func TestPeersOneVsRest(t *testing.T) {
	bin, ll := withLIBLINEAR(t)
	path := writeClasses(t, 210, 12, 4)
	cfg := PeersConfig{Data: []string{path}, Objectives: []Objective{{Loss: LossOneVsRest, Lambda: 1e-2}},
		Ms: []int{1}, Threads: 1, Runs: 1, RefEpochs: 20000, Timeout: time.Minute, Self: bin, LIBLINEAR: ll, Python: "/nonexistent"}
	var log bytes.Buffer
	res, err := Peers(context.Background(), cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	pp := res.Problems[0]
	if pp.Rows != 180 || !(pp.Bound >= 0 && pp.Bound < 1e-8*math.Abs(pp.PStar)) {
		t.Errorf("%d rows fitted (want 180); P* = %g is only certified within %g", pp.Rows, pp.PStar, pp.Bound)
	}
	if !slices.Equal(pp.Tools, []string{"liblinear -s 0", "liblinear -s 7"}) {
		t.Errorf("peers %v", pp.Tools)
	}
	for _, tool := range append([]string{"adaspdc"}, pp.Tools...) {
		for i, target := range PeerTargets {
			if s := pp.Times[tool][i]; math.IsNaN(s.Seconds) {
				t.Errorf("%s did not reach %g\n%s", tool, target, log.String())
			}
		}
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "peers.md"))
	i := strings.Index(string(md), "| classes4 | ovr | 0.01 |")
	if i < 0 {
		t.Fatalf("peers.md has no one-vs-rest row:\n%s", md)
	}
	if line, _, _ := strings.Cut(string(md[i:]), "\n"); strings.Contains(line, "not reached") {
		t.Errorf("the summary row should have both tools at every target:\n%s", line)
	}
	if !strings.Contains(string(md), "held-out accuracy") {
		t.Errorf("peers.md notes no held-out accuracy:\n%s", md)
	}
}

// TestLoosestRuns: each target goes to the first run of the ladder at or
// below it, a run that reaches several takes them all, and a run that
// reaches no new target is skipped.
func TestLoosestRuns(t *testing.T) {
	type call struct{ first, last, k int }
	for _, c := range []struct {
		rel  []float64
		want []call
	}{
		{[]float64{0.5, 5e-3, 2e-3, 5e-5, 1e-7, 1e-9}, []call{{0, 1, 1}, {1, 2, 3}, {2, 3, 4}}},
		{[]float64{1e-8}, []call{{0, 3, 0}}},
		{[]float64{0.5, 0.2}, nil},
		{[]float64{5e-3, 5e-3, 1e-3, 2e-5}, []call{{0, 1, 0}, {1, 2, 3}}},
	} {
		var got []call
		loosestRuns(c.rel, func(first, last, k int) { got = append(got, call{first, last, k}) })
		if !slices.Equal(got, c.want) {
			t.Errorf("rel %v: %v, want %v", c.rel, got, c.want)
		}
	}
}
