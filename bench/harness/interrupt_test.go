package harness

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// errSignal stands for the cause a signal gives the command's context.
var errSignal = errors.New("terminated signal received")

// cancelAfter is a progress writer that cancels a context once n lines
// have been written, standing for a signal that arrives after the n-th
// run: the sweep sees it before the next run starts.
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelCauseFunc
	buf    bytes.Buffer
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Count(w.buf.String(), "\n") >= w.n {
		w.cancel(errSignal)
	}
	return len(p), nil
}

// TestScaleInterrupted: a sweep interrupted after its first run returns
// that run beside an error naming the cause, and writes it with a summary
// that says the sweep was cut short.
func TestScaleInterrupted(t *testing.T) {
	cfg := ScaleConfig{Data: "synth:rcv1:200", Loss: "logistic", Lambda: 1e-3, Solvers: []string{"adaspdc"},
		Ms: []int{1}, Threads: []int{1, 2}, Repeats: 2, Seed: 1, Tol: 1e-4, MaxEpochs: 100, Command: "test"}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	res, err := Scale(ctx, cfg, &cancelAfter{n: 1, cancel: cancel}, false)
	if !errors.Is(err, errSignal) || !strings.Contains(err.Error(), "1 of 4 runs") {
		t.Errorf("error %v, want the signal after 1 of 4 runs", err)
	}
	if res == nil {
		t.Fatal("no result: the run that finished is lost")
	}
	if len(res.Runs) != 1 || res.Planned != 4 {
		t.Fatalf("%d runs of %d planned, want 1 of 4", len(res.Runs), res.Planned)
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Errorf("runs.csv: %d rows (%v), want the header and one run", len(rows), err)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(sum), "**Interrupted** (terminated signal received) after 1 of 4 runs") {
		t.Errorf("summary.md does not say the sweep was interrupted:\n%s", sum)
	}
}

// TestScaleInterruptedBeforeAnyRun: with nothing measured there is nothing
// to write, and only the error comes back.
func TestScaleInterruptedBeforeAnyRun(t *testing.T) {
	cfg := ScaleConfig{Data: "synth:rcv1:50", Loss: "logistic", Solvers: []string{"adaspdc"},
		Ms: []int{1}, Threads: []int{1}, Repeats: 1, Tol: 1e-4, MaxEpochs: 10}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errSignal)
	res, err := Scale(ctx, cfg, nil, false)
	if res != nil || !errors.Is(err, errSignal) {
		t.Errorf("result %v, error %v; want none and the signal", res, err)
	}
}

// TestFig1Interrupted: an experiment interrupted during its second λ keeps
// the first, whose every curve finished, and drops the second, whose mean
// would be over some of the seeds only.
func TestFig1Interrupted(t *testing.T) {
	cfg := Fig1Config{N: 40, D: 40, Lambdas: []float64{1e-2, 1e-3, 1e-4}, Passes: 5, Seeds: 1, DataSeed: 1, Command: "test"}
	methods := 0
	for _, m := range Fig1Methods() {
		if registered(m.Solver) {
			methods++
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	res, err := Fig1(ctx, cfg, &cancelAfter{n: methods + 1, cancel: cancel}, false)
	if !errors.Is(err, errSignal) || res == nil {
		t.Fatalf("result %v, error %v; want the first λ and the signal", res, err)
	}
	if len(res.Config.Lambdas) != 1 || len(res.Mean) != 1 || len(res.PStar) != 1 {
		t.Fatalf("λ values %v, %d means, %d optima; want the first λ only", res.Config.Lambdas, len(res.Mean), len(res.PStar))
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "fig1.md"))
	if !strings.Contains(string(md), "**Interrupted** (terminated signal received after 1 of 3 λ values)") {
		t.Errorf("fig1.md does not say the experiment was interrupted:\n%s", md)
	}
}

// TestCurvesInterrupted: a reproduction interrupted in its second panel
// keeps the first, with its reference, and writes it.
func TestCurvesInterrupted(t *testing.T) {
	c := ZSFig23Config{DataDir: tinyData(t), Datasets: []string{"cls"}, Losses: []string{"smoothhinge", "logistic"},
		Lambdas: []float64{1e-3}, Passes: 3, Seeds: 1, Out: t.TempDir(), Command: "test"}
	cfg, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, m := range cfg.Methods {
		if m.Accepts == nil || m.Accepts(cfg.Panels[0]) {
			first += cfg.Seeds
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	res, err := Curves(ctx, cfg, &cancelAfter{n: first + 1, cancel: cancel}, false)
	if !errors.Is(err, errSignal) || res == nil {
		t.Fatalf("result %v, error %v; want the first panel and the signal", res, err)
	}
	if len(res.Config.Panels) != 1 || len(res.Curves) != 1 || len(res.Ref) != 1 {
		t.Fatalf("%d panels, %d rows of curves, %d references; want the first panel only", len(res.Config.Panels), len(res.Curves), len(res.Ref))
	}
	if err := res.Write(); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(cfg.Out, "summary.md"))
	if !strings.Contains(string(md), "after 1 of 2 panels") {
		t.Errorf("summary.md does not say the reproduction was interrupted:\n%s", md)
	}
	refs := readReferences(filepath.Join(cfg.Out, "reference.csv"))
	if _, ok := refs[cfg.Panels[0].Key]; !ok || len(refs) != 1 {
		t.Errorf("reference.csv holds %v, want the first panel's reference", refs)
	}
}

// TestFamiliesInterrupted: families interrupted in the second one return
// the first, which finished, beside the error.
func TestFamiliesInterrupted(t *testing.T) {
	x, y, err := synth.Generate(synth.RCV1Like(100, 3))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.WriteLIBSVM(f, &sparse.Dataset{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fam := func(name string) Family {
		return Family{Name: name, Title: name, Data: "tiny", Loss: "logistic", Lambda: 1e-2, Passes: 5, Reference: engine.SolverAdaSPDC,
			Runs: []FamilyRun{{Label: "sdca", Solver: "sdca"}, {Label: "saga", Solver: "saga"}}}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// The first family writes its optimum and one line per run; the
	// second is cancelled once it has written its optimum.
	results, err := RunFamilies(ctx, FamilyConfig{DataDir: dir, Families: []Family{fam("one"), fam("two")}, Seed: 1},
		&cancelAfter{n: 4, cancel: cancel})
	if !errors.Is(err, errSignal) || !strings.Contains(err.Error(), "1 of 2 families") {
		t.Errorf("error %v, want the signal after 1 of 2 families", err)
	}
	if len(results) != 1 || results[0].Family.Name != "one" || len(results[0].Curves) != 2 {
		t.Fatalf("results %v, want the first family whole", results)
	}
}
