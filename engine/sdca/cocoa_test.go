package sdca

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestCoCoAConverges checks that three workers reach a 1e-9 relative gap (1e-6 for
// the hinge)
// and the optimum of a tight SDCA run, for smooth and non-smooth losses and
// with an L1 term, and that the dual never decreases from one certificate
// to the next, which the per-feature weights ωⱼ guarantee (see cocoa): with
// ωⱼ = 1 the summed changes overshoot on shared features.
func TestCoCoAConverges(t *testing.T) {
	x, b := enginetest.SparseData(2500, 300, 40, 5) // 100k nonzeros: three workers
	for _, c := range []struct {
		loss objective.Loss
		reg  objective.ElasticNet
		tol  float64
	}{
		{objective.Logistic{}, objective.ElasticNet{Lambda: 1e-3}, 1e-9},
		{objective.SquaredHinge{}, objective.ElasticNet{Lambda: 1e-4}, 1e-9},
		{objective.Logistic{}, objective.ElasticNet{Lambda: 1e-4, L1: 1e-3}, 1e-9},
		{objective.Hinge{}, objective.ElasticNet{Lambda: 1e-3}, 1e-6}, // a sublinear rate
	} {
		prob := objective.Problem{X: x, B: b, Loss: c.loss, Reg: c.reg}
		_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-12, MaxEpochs: 5000, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverCoCoA, Threads: 3, Tol: c.tol, MaxEpochs: 5000, Seed: 3})
		if err != nil {
			t.Fatalf("%s %+v: %v", c.loss.Name(), c.reg, err)
		}
		if res.Threads != 3 {
			t.Errorf("%s: %d workers, want 3", c.loss.Name(), res.Threads)
		}
		last := res.Trace[len(res.Trace)-1]
		if last.RelGap > c.tol {
			t.Errorf("%s %+v: relative gap %.3g after %d epochs", c.loss.Name(), c.reg, last.RelGap, last.Epoch)
		}
		pStar := ref.Trace[len(ref.Trace)-1].Primal
		if d := math.Abs(last.Primal - pStar); d > 2*c.tol*math.Max(1, pStar) {
			t.Errorf("%s %+v: P = %.12g, SDCA's optimum %.12g", c.loss.Name(), c.reg, last.Primal, pStar)
		}
		for i := 1; i < len(res.Trace); i++ {
			if prev, cur := res.Trace[i-1].Dual, res.Trace[i].Dual; cur < prev-1e-12*math.Max(1, math.Abs(prev)) {
				t.Errorf("%s %+v: the dual fell from %.15g to %.15g at certificate %d", c.loss.Name(), c.reg, prev, cur, i)
				break
			}
		}
	}
}

// TestCoCoAOneWorkerIsSDCA checks that with one worker the solver is
// sequential SDCA, certificate for certificate.
func TestCoCoAOneWorkerIsSDCA(t *testing.T) {
	x, b := enginetest.SparseData(400, 50, 8, 2)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	opt := driver.Options{Threads: 1, Tol: 1e-10, MaxEpochs: 200, Seed: 4}
	opt.Solver = SolverSDCA
	_, want, err := enginetest.Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Solver = SolverCoCoA
	_, got, err := enginetest.Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Trace) != len(want.Trace) {
		t.Fatalf("%d certificates, sdca %d", len(got.Trace), len(want.Trace))
	}
	for i := range got.Trace {
		if got.Trace[i].Primal != want.Trace[i].Primal || got.Trace[i].Dual != want.Trace[i].Dual {
			t.Fatalf("certificate %d: P %.17g D %.17g, sdca P %.17g D %.17g", i, got.Trace[i].Primal, got.Trace[i].Dual, want.Trace[i].Primal, want.Trace[i].Dual)
		}
	}
}

// TestCoCoASearch checks the merges' step search (stepSearch) against the
// plain CoCoA+ merge: both reach the tolerance at SDCA's optimum, the dual
// never falls from one certificate to the next, the search leaves the
// summed change in some merges (the note counts them) and needs no more
// epochs than the plain merge, and two runs with the same seed give the
// same model bit for bit.
func TestCoCoASearch(t *testing.T) {
	defer func(on bool) { cocoaSearch = on }(cocoaSearch)
	x, b := enginetest.SparseData(2500, 300, 40, 5) // 100k nonzeros: three workers
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4}}
	_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-12, MaxEpochs: 5000, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	pStar := ref.Trace[len(ref.Trace)-1].Primal
	opt := driver.Options{Solver: SolverCoCoA, Threads: 3, Tol: 1e-9, MaxEpochs: 5000, Seed: 3}
	epochs := map[bool]int{}
	weights := map[bool][]float64{}
	for _, on := range []bool{false, true, true} {
		cocoaSearch = on
		w, res, err := enginetest.Train(context.Background(), prob, opt)
		if err != nil {
			t.Fatalf("search %v: %v", on, err)
		}
		last := res.Trace[len(res.Trace)-1]
		if last.RelGap > opt.Tol || math.Abs(last.Primal-pStar) > 2*opt.Tol*math.Max(1, pStar) {
			t.Errorf("search %v: P = %.12g, gap %.3g, SDCA's optimum %.12g", on, last.Primal, last.RelGap, pStar)
		}
		for i := 1; i < len(res.Trace); i++ {
			if prev, cur := res.Trace[i-1].Dual, res.Trace[i].Dual; cur < prev-1e-12*math.Max(1, math.Abs(prev)) {
				t.Errorf("search %v: the dual fell from %.15g to %.15g at certificate %d", on, prev, cur, i)
				break
			}
		}
		if on && !strings.Contains(res.Note, "step search moved") {
			t.Errorf("the search never moved: note %q", res.Note)
		}
		if e, ok := epochs[on]; ok {
			if e != last.Epoch {
				t.Errorf("the same seed ran %d and %d epochs", e, last.Epoch)
			}
			if w2, ok := weights[on]; ok && !slices.Equal(w2, w.Weights) {
				t.Errorf("the same seed gave different models")
			}
		}
		epochs[on] = last.Epoch
		weights[on] = w.Weights
	}
	if epochs[true] > epochs[false] {
		t.Errorf("the search took %d epochs, the plain merge %d", epochs[true], epochs[false])
	}
}
