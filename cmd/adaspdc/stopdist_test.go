package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

// epochWatch is rank 0's stderr in these tests: it keeps what is written
// and calls onEpoch with the epoch of each progress line, which rank 0
// writes from the driver's callback, after the checkpoint of that
// certificate.
type epochWatch struct {
	bytes.Buffer
	onEpoch func(epoch int)
}

func (w *epochWatch) Write(p []byte) (int, error) {
	if f := strings.Fields(string(p)); len(f) > 1 && f[0] == "epoch" && w.onEpoch != nil {
		e, _ := strconv.Atoi(f[1])
		w.onEpoch(e)
	}
	return w.Buffer.Write(p)
}

// trainRanksWatched is trainRanks with rank 0's progress shown to
// onEpoch, and rank r's context ctxs[r] (when not nil) in place of the
// signals'.
func trainRanksWatched(t *testing.T, p int, f trainFlags, data string, ctxs []context.Context, onEpoch func(int)) ([]error, string, string) {
	t.Helper()
	saved := rankContext
	defer func() { rankContext = saved }()
	rankContext = func(c comm.Comm, threads int) (context.Context, func()) {
		if ctx := ctxs[c.Rank()]; ctx != nil {
			return ctx, func() {}
		}
		return saved(c, threads)
	}
	loss, err := engine.LossByName(f.loss, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := engine.Options{Tol: f.tol, MaxEpochs: f.maxEpochs, Seed: f.seed, Threads: f.threads}
	errs := make([]error, p)
	var out bytes.Buffer
	watch := &epochWatch{onEpoch: onEpoch}
	comm.RunLocal(p, func(c comm.Comm) error {
		var so, se bytes.Buffer
		var stderr interface{ Write([]byte) (int, error) } = &se
		if c.Rank() == 0 {
			stderr = watch
		}
		err := trainDistributed(c, f, opt, loss, data, 0, false, true, &so, stderr)
		errs[c.Rank()] = err
		if c.Rank() == 0 {
			out = so
		}
		return err
	})
	return errs, out.String(), watch.String()
}

// TestTrainDistributedStopped cancels the context of one rank, then of
// every rank, after rank 0's first Newton step: every rank stops at the
// same certificate, within one step, with status 3, and rank 0 writes the
// model of the best certificate, which the checkpoint, written after every
// certificate that improved on the best, holds too.
func TestTrainDistributedStopped(t *testing.T) {
	const data = "../../testdata/heart_scale"
	for _, c := range []struct {
		name   string
		cancel []int
	}{{"rank 2", []int{2}}, {"rank 0", []int{0}}, {"every rank", []int{0, 1, 2}}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			model, ck := filepath.Join(dir, "model.json"), filepath.Join(dir, "ck.json")
			f := trainFlags{loss: "logistic", tol: 1e-15, maxEpochs: 1000, seed: 1, model: model, checkpoint: ck, solver: "newton"}
			ctxs := make([]context.Context, 3)
			var cancels []context.CancelFunc
			for _, r := range c.cancel {
				var cancel context.CancelFunc
				ctxs[r], cancel = context.WithCancel(context.Background())
				cancels = append(cancels, cancel)
			}
			var once sync.Once
			var seen []int
			onEpoch := func(e int) {
				seen = append(seen, e)
				m, err := modelio.Load(ck)
				if err != nil || m.Dim != 13 {
					t.Errorf("epoch %d: the checkpoint: %v", e, err)
				}
				if e == 1 {
					once.Do(func() {
						for _, cancel := range cancels {
							cancel()
						}
					})
				}
			}
			errs, out, errOut := trainRanksWatched(t, 3, f, data, ctxs, onEpoch)
			for r, err := range errs {
				var ee exitError
				if !errors.As(err, &ee) || ee.status != exitShort {
					t.Errorf("rank %d: %v, want exit status %d (%s)", r, err, exitShort, errOut)
				}
			}
			m := distSummaryRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("summary %q (%s)", out, errOut)
			}
			epochs, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(out)[0], "epochs="))
			// Cancelled after epoch 1's certificate: the step under way
			// when the flag reaches the ranks ends, and its certificate
			// is the last.
			if epochs < 1 || epochs > 2 || seen[len(seen)-1] != epochs {
				t.Errorf("stopped at epoch %d (certificates %v), want 1 or 2", epochs, seen)
			}
			if !strings.Contains(errOut, "interrupted by a signal") {
				t.Errorf("stderr does not say the run was interrupted: %s", errOut)
			}
			if ms := loadModels(t, model, ck); !reflect.DeepEqual(ms[0], ms[1]) {
				t.Errorf("the model written at the stop is not the checkpoint of the best certificate")
			}
		})
	}
}

// TestTrainDistributedRestart trains to a loose tolerance on two ranks
// with a checkpoint, and restarts from it (-init) on three: newton's first
// certificate is the checkpoint's primal, to the rounding of the sums
// over other ranks, and both solvers reach the one-process optimum within
// the gaps. cocoa's duals restart from those gathered beside the
// checkpoint (TestTrainDistributedRestartKeepsCheckpoint checks its first
// certificate); its first dual may not exceed the optimum.
func TestTrainDistributedRestart(t *testing.T) {
	const data = "../../testdata/heart_scale"
	_, single, errOut := runCmd("train", "-quiet", "-tol", "1e-10")
	ms := summaryRE.FindStringSubmatch(single)
	if ms == nil {
		t.Fatalf("one process: %q %s", single, errOut)
	}
	p1, _ := strconv.ParseFloat(ms[1], 64)
	g1, _ := strconv.ParseFloat(ms[3], 64)
	for _, solver := range []string{"newton", "cocoa"} {
		dir := t.TempDir()
		ck, trace := filepath.Join(dir, "ck.json"), filepath.Join(dir, "trace.csv")
		f := trainFlags{loss: "logistic", tol: 1e-3, maxEpochs: 1000, seed: 1, quiet: true, checkpoint: ck, solver: solver}
		errs, out, errOut := trainRanks(t, 2, f, data)
		if errs[0] != nil {
			t.Fatalf("%s, 2 ranks: %v (%s)", solver, errs[0], errOut)
		}
		first := distSummaryRE.FindStringSubmatch(out)
		if first == nil {
			t.Fatalf("%s, 2 ranks: summary %q", solver, out)
		}
		if _, err := modelio.Load(ck); err != nil {
			t.Fatal(err)
		}
		f = trainFlags{loss: "logistic", tol: 1e-10, maxEpochs: 5000, seed: 1, quiet: true, init: ck, checkpoint: ck, trace: trace, solver: solver}
		errs, out, errOut = trainRanks(t, 3, f, data)
		if errs[0] != nil {
			t.Fatalf("%s, restart on 3 ranks: %v (%s)", solver, errs[0], errOut)
		}
		m := distSummaryRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s, restart: summary %q", solver, out)
		}
		p, _ := strconv.ParseFloat(m[1], 64)
		g, _ := strconv.ParseFloat(m[3], 64)
		if d := p - p1; d > g+1e-12 || -d > g1+1e-12 {
			t.Errorf("%s, restart: primal %.12g, one process %.12g, gaps %.3g and %.3g", solver, p, p1, g, g1)
		}
		rows := traceRows(t, trace)
		start, _ := strconv.ParseFloat(rows[1][2], 64)
		ckPrimal, _ := strconv.ParseFloat(first[1], 64)
		if solver == "newton" && !(abs(start-ckPrimal) <= 1e-11*abs(ckPrimal)) {
			t.Errorf("newton, restart: first primal %.17g, the checkpoint's %.12g", start, ckPrimal)
		}
		if cols := rows[1]; solver == "cocoa" {
			d0, _ := strconv.ParseFloat(cols[3], 64)
			if d0 > p1+g1 {
				t.Errorf("cocoa, restart: first dual %.12g above the optimum %.12g", d0, p1)
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestTrainDistributedRestartKeepsCheckpoint checkpoints cocoa on two
// ranks and restarts it from its own checkpoint on three. With the duals
// gathered beside the checkpoint, the restart's first certificate is the
// checkpoint's (to the rounding of sums over other ranks). Without them it
// starts from the duals paired with the weights and certifies far worse
// for a while: the file keeps its model and certificate, and rank 0 says
// so.
func TestTrainDistributedRestartKeepsCheckpoint(t *testing.T) {
	const data = "../../testdata/heart_scale"
	dir := t.TempDir()
	ck, trace := filepath.Join(dir, "ck.json"), filepath.Join(dir, "trace.csv")
	f := trainFlags{loss: "logistic", lambda: 1e-5, lambdaSet: true, tol: 1e-2, maxEpochs: 1000, seed: 1, quiet: true, checkpoint: ck, solver: "cocoa"}
	if errs, _, errOut := trainRanks(t, 2, f, data); errs[0] != nil {
		t.Fatalf("2 ranks: %v (%s)", errs[0], errOut)
	}
	before := loadModels(t, ck)[0]
	if before.Certificate == nil {
		t.Fatal("the checkpoint records no certificate")
	}
	f = trainFlags{loss: "logistic", lambda: 1e-5, lambdaSet: true, tol: 1e-10, maxEpochs: 0, seed: 1, quiet: true, init: ck, trace: trace, solver: "cocoa"}
	if errs, _, errOut := trainRanks(t, 3, f, data); errs[0] != nil && !strings.Contains(errOut, "short of the goal") {
		t.Fatalf("restart on 3 ranks: %v (%s)", errs[0], errOut)
	}
	firstIsCertificate(t, trace, before.Certificate, "restart with the duals")

	os.Remove(ck + ".duals")
	f = trainFlags{loss: "logistic", lambda: 1e-5, lambdaSet: true, tol: 1e-10, maxEpochs: 1, seed: 1, quiet: true, init: ck, checkpoint: ck, solver: "cocoa"}
	_, _, errOut := trainRanks(t, 3, f, data)
	after := loadModels(t, ck)[0]
	if !reflect.DeepEqual(before, after) || !strings.Contains(errOut, ck+" still holds the model this run restarted from") {
		t.Errorf("the restart's epoch wrote over the checkpoint: certificate %+v → %+v (rank 0's stderr %q)", *before.Certificate, *after.Certificate, errOut)
	}
}

// TestTrainDistributedRestartEmptyRanks restarts cocoa from its checkpoint
// on more ranks than rows: the ranks without rows take their (no) duals
// too, and the first certificate is the checkpoint's.
func TestTrainDistributedRestartEmptyRanks(t *testing.T) {
	dir := t.TempDir()
	data, ck, trace := filepath.Join(dir, "three"), filepath.Join(dir, "ck.json"), filepath.Join(dir, "trace.csv")
	os.WriteFile(data, []byte("1 1:1\n-1 2:1\n1 1:0.5 2:0.5\n"), 0o644)
	f := trainFlags{loss: "logistic", lambda: 0.01, lambdaSet: true, tol: 1e-12, maxEpochs: 5, seed: 1, quiet: true, checkpoint: ck, solver: "cocoa"}
	if errs, _, errOut := trainRanks(t, 2, f, data); errs[0] != nil && !strings.Contains(errOut, "short of the goal") {
		t.Fatalf("2 ranks: %v (%s)", errs[0], errOut)
	}
	c := loadModels(t, ck)[0].Certificate
	f = trainFlags{loss: "logistic", lambda: 0.01, lambdaSet: true, tol: 1e-12, maxEpochs: 0, seed: 1, quiet: true, init: ck, trace: trace, solver: "cocoa"}
	if errs, _, errOut := trainRanks(t, 5, f, data); errs[0] != nil && !strings.Contains(errOut, "short of the goal") || strings.Contains(errOut, "aside") {
		t.Fatalf("restart on 5 ranks: %v (%s)", errs[0], errOut)
	}
	firstIsCertificate(t, trace, c, "restart")
}

// TestTrainDistributedRestartPicked restarts a run whose solver the ranks
// picked (cocoa, for the hinge loss) from its checkpoint's duals: the
// restart names cocoa for them, and starts at the checkpoint's certificate.
func TestTrainDistributedRestartPicked(t *testing.T) {
	const data = "../../testdata/heart_scale"
	dir := t.TempDir()
	ck, trace := filepath.Join(dir, "ck.json"), filepath.Join(dir, "trace.csv")
	f := trainFlags{loss: "hinge", lambda: 1e-3, lambdaSet: true, tol: 1e-12, maxEpochs: 10, seed: 1, quiet: true, checkpoint: ck}
	if errs, _, errOut := trainRanks(t, 2, f, data); errs[0] != nil && !strings.Contains(errOut, "short of the goal") {
		t.Fatalf("2 ranks: %v (%s)", errs[0], errOut)
	}
	c := loadModels(t, ck)[0].Certificate
	f = trainFlags{loss: "hinge", lambda: 1e-3, lambdaSet: true, tol: 1e-12, maxEpochs: 0, seed: 1, quiet: true, init: ck, trace: trace}
	if errs, _, errOut := trainRanks(t, 3, f, data); errs[0] != nil && !strings.Contains(errOut, "short of the goal") || strings.Contains(errOut, "aside") {
		t.Fatalf("restart on 3 ranks: %v (%s)", errs[0], errOut)
	}
	firstIsCertificate(t, trace, c, "restart")
}

// firstIsCertificate checks that the first certificate of the trace at
// path is c, to the rounding of sums over other ranks.
func firstIsCertificate(t *testing.T, path string, c *engine.ModelCertificate, what string) {
	t.Helper()
	row := traceRows(t, path)[1]
	p0, _ := strconv.ParseFloat(row[2], 64)
	d0, _ := strconv.ParseFloat(row[3], 64)
	if !(abs(p0-c.Primal) <= 1e-12*abs(c.Primal) && abs(d0-c.Dual) <= 1e-12*abs(c.Dual)) {
		t.Errorf("%s: first certificate P = %.17g, D = %.17g; the checkpoint's %.17g, %.17g", what, p0, d0, c.Primal, c.Dual)
	}
}
