package engine

import (
	"context"
	"errors"
	"math"
	"math/big"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/sparse"
)

// The tests in this file pin down behaviour that review found wrong: each
// failed on the code before its fix.

// TestCancelledContext: a context done before the start is an error and
// gives no model; one cancelled after the first certificate ends the run
// with the model, Stop "context" and no error.
func TestCancelledContext(t *testing.T) {
	x, b := sparseData(500, 100, 5, 2)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	model, _, err := Train(ctx, prob, Options{Tol: -1, MaxEpochs: 100})
	if !errors.Is(err, context.Canceled) || model != nil {
		t.Errorf("context cancelled before the start: model %v, error %v; want no model and context.Canceled", model != nil, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	model, res, err := Train(ctx, prob, Options{Tol: -1, MaxEpochs: 100, Threads: 2, Callback: func(tp TracePoint) error {
		if tp.Epoch == 2 {
			cancel()
		}
		return nil
	}}.With(CoordinateSettings{M: 4}))
	if err != nil || model == nil || res.Stop != "context" || res.Final.Epoch != 2 {
		t.Errorf("context cancelled at epoch 2: model %v, error %v, stop %q at epoch %d", model != nil, err, res.Stop, res.Final.Epoch)
	}
}

// exactDual evaluates D(y) = −(1/n)Σφ*(yₖ) − g*(−r), r = (1/n)Σ yₖaₖ, with
// every sum of r and the sum of the conjugates formed exactly (big.Float
// at 2000 bits) and rounded once.
func exactDual(prob Problem, y []float64) float64 {
	n, d := prob.X.Rows, prob.X.Cols
	acc := make([]*big.Float, d)
	for j := range acc {
		acc[j] = new(big.Float).SetPrec(2000)
	}
	tmp := new(big.Float).SetPrec(2000)
	for k := 0; k < n; k++ {
		val, idx := prob.X.Row(k)
		for p, j := range idx {
			tmp.SetFloat64(y[k])
			tmp.Mul(tmp, new(big.Float).SetFloat64(val[p]))
			acc[j].Add(acc[j], tmp)
		}
	}
	r := make([]float64, d)
	for j := range r {
		acc[j].Quo(acc[j], new(big.Float).SetFloat64(float64(n)))
		r[j], _ = acc[j].Float64()
	}
	// The conjugates are summed exactly too: D is often far smaller than
	// the terms (0.05 from terms of −0.69 for the logistic loss), so a
	// plain sum's rounding shows at 1e-14.
	conj := new(big.Float).SetPrec(2000)
	for k := 0; k < n; k++ {
		conj.Add(conj, tmp.SetFloat64(prob.Loss.Conj(y[k], prob.B[k])))
	}
	c, _ := conj.Float64()
	return -c/float64(n) - prob.Reg.ConjNeg(r)
}

// TestDualIsTheDualOfY: the reported dual value must be D at the returned
// duals. Data whose values span four orders of magnitude make the
// incrementally kept r drift: before the fix the reported D was off by
// 4.7e-12 of its value after 200 epochs (dense: 7e-15 at λ = 1e-5).
func TestDualIsTheDualOfY(t *testing.T) {
	x, b := sparseData(2000, 300, 8, 3)
	for i := range x.Values {
		if i%7 == 0 {
			x.Values[i] *= 1e4
		}
	}
	for _, lazy := range []Lazy{LazyOn, LazyOff} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
		model, res, err := Train(context.Background(), prob, Options{Tol: -1, MaxEpochs: 200, Seed: 1, Threads: 1}.With(CoordinateSettings{M: 1, Lazy: lazy}))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Duals) != x.Rows {
			t.Fatalf("lazy %s: %d duals for %d rows", lazy, len(res.Duals), x.Rows)
		}
		want := exactDual(prob, res.Duals)
		if diff := math.Abs(res.Final.Dual - want); diff > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("lazy %s: reported dual %.17g, D(y) = %.17g: off by %.3g", lazy, res.Final.Dual, want, diff)
		}
		cert, err := Certify(prob, model.Weights)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Primal != res.Final.Primal && math.Abs(cert.Primal-res.Final.Primal) > 1e-14*math.Abs(cert.Primal) {
			t.Errorf("lazy %s: reported primal %.17g, P(x) = %.17g", lazy, res.Final.Primal, cert.Primal)
		}
	}
}

// TestStepScaleBound: only scales in (0, 2] keep στ‖K‖² ≤ 1.
func TestStepScaleBound(t *testing.T) {
	x, b := sparseData(200, 50, 5, 4)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	for _, c := range []float64{2.0001, 3, 4, -1, math.NaN()} {
		if _, _, err := Train(context.Background(), prob, Options{MaxEpochs: 1}.With(CoordinateSettings{StepScale: c})); err == nil || !strings.Contains(err.Error(), "step scale") {
			t.Errorf("step scale %v: error %v, want a refusal", c, err)
		}
	}
	if _, res, err := Train(context.Background(), prob, Options{MaxEpochs: 1000, Tol: 1e-8}.With(CoordinateSettings{StepScale: 2})); err != nil || !res.Converged {
		t.Errorf("step scale 2: error %v", err)
	}
}

// panicky is a loss that panics once its dual prox has been called more
// than after times, to stand for a bug in a user's loss.
type panicky struct {
	Logistic
	calls *atomic.Int64
	after int64
}

func (p panicky) DualProx(y0, z, sigma, b float64) float64 {
	if p.calls.Add(1) > p.after {
		panic("loss exploded")
	}
	return p.Logistic.DualProx(y0, z, sigma, b)
}

// TestWorkerPanicIsAnError: a panic in any worker ends Train with an error
// and the model of the best certificate, instead of killing the process or
// leaving workers parked at a barrier.
func TestWorkerPanicIsAnError(t *testing.T) {
	x, b := sparseData(2000, 300, 8, 3)
	for _, threads := range []int{1, 2, 3} {
		for _, lazy := range []Lazy{LazyOn, LazyOff} {
			loss := panicky{calls: new(atomic.Int64), after: 3 * 2000} // in the 4th epoch
			prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1e-3}}
			done := make(chan struct{})
			var model *Model
			var res *Result
			var err error
			go func() {
				defer close(done)
				model, res, err = Train(context.Background(), prob, Options{Threads: threads, Tol: -1, MaxEpochs: 10}.With(CoordinateSettings{M: 64, Lazy: lazy}))
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("threads %d, lazy %s: Train hung after a worker panic", threads, lazy)
			}
			if err == nil || !strings.Contains(err.Error(), "loss exploded") {
				t.Fatalf("threads %d, lazy %s: error %v, want the panic", threads, lazy, err)
			}
			if model == nil || res == nil || res.Stop != "panic" || res.Best.Epoch > 3 {
				t.Fatalf("threads %d, lazy %s: model %v, result %+v; want the best certified model", threads, lazy, model != nil, res)
			}
			cert, _ := Certify(Problem{X: x, B: b, Loss: Logistic{}, Reg: prob.Reg}, model.Weights)
			if math.Abs(cert.Primal-res.Best.Primal) > 1e-12 {
				t.Errorf("threads %d, lazy %s: returned model has primal %.15g, best certificate %.15g", threads, lazy, cert.Primal, res.Best.Primal)
			}
		}
	}
}

// TestTimeLimitCoversSetUp: the time limit and the context also bound the
// spectral norms, which on large blocks take longer than any epoch.
func TestTimeLimitCoversSetUp(t *testing.T) {
	x, b := sparseData(3000, 2000, 20, 7)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	model, _, err := Train(context.Background(), prob, Options{TimeLimit: time.Nanosecond, MaxEpochs: 1}.With(CoordinateSettings{BlockSize: 300}))
	if err == nil || model != nil || !strings.Contains(err.Error(), "time limit") || !strings.Contains(err.Error(), "set-up") {
		t.Errorf("time limit of 1ns: model %v, error %v; want no model and an error saying the time limit ran out during set-up", model != nil, err)
	}
}

// TestZeroOptionsMeanZero: MaxEpochs 0 certifies the start point, K epochs
// run exactly K, and Tol 0 asks for an exact certificate.
func TestZeroOptionsMeanZero(t *testing.T) {
	x, b := sparseData(500, 100, 5, 2)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	opt := adaspdcOptions()
	opt.Tol = 1e-10
	model, _, err := Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxEpochs, opt.WarmStart, opt.Tol = 0, model.Weights, 1e-20
	again, res, err := Train(context.Background(), prob, opt)
	if err != nil || len(res.Trace) != 1 || res.Final.Epoch != 0 || res.Final.Passes != 0 || res.Stop != "max-epochs" {
		t.Fatalf("MaxEpochs 0: error %v, %d certificates, stop %q", err, len(res.Trace), res.Stop)
	}
	cert, _ := Certify(prob, model.Weights)
	if relDiff(again.Weights, model.Weights) != 0 || math.Abs(res.Final.Primal-cert.Primal) > 1e-15 || res.Final.RelGap > 1e-9 {
		t.Errorf("MaxEpochs 0 moved the warm start or certified it badly: %+v (Certify %+v)", res.Final, cert)
	}
	_, res, err = Train(context.Background(), prob, Options{Solver: SolverAdaSPDC, Tol: 0, MaxEpochs: 3})
	if err != nil || res.Final.Epoch != 3 || res.Converged {
		t.Errorf("Tol 0, MaxEpochs 3: error %v, %d epochs, converged %v", err, res.Final.Epoch, res.Converged)
	}
	if d := DefaultOptions(); d.Tol != 1e-6 || d.MaxEpochs != 1000 || len(d.Settings) != 0 || d.Solver != "" {
		t.Errorf("DefaultOptions = %+v", d)
	}
	_, res, err = Train(context.Background(), prob, DefaultOptions())
	if want, _ := AutoSolver(prob, DefaultOptions()); err != nil || res.Solver != want || res.Choice == "" {
		t.Errorf("no solver named: ran %q (%q), error %v; want AutoSolver's %q with its reason", res.Solver, res.Choice, err, want)
	}
	_, res, err = Train(context.Background(), prob, Options{Tol: 1e-6, MaxEpochs: 100}.With(CoordinateSettings{M: 1}))
	if err != nil || res.Solver != SolverAdaSPDC || res.Choice != "" {
		t.Errorf("M = 1, no solver named: ran %q, want %q, the first coordinate method that takes a smooth loss with λ > 0", res.Solver, SolverAdaSPDC)
	}
}

// TestTinyLambdaRefused: λ = 1e-300 used to run 30 epochs to a primal of
// 8e143 with no error.
func TestTinyLambdaRefused(t *testing.T) {
	x, b := sparseData(300, 50, 5, 4)
	for _, lam := range []float64{1e-300, 1e-40} {
		_, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: lam}}, adaspdcOptions())
		if err == nil || !strings.Contains(err.Error(), "too small") || !strings.Contains(err.Error(), "use λ ≥") {
			t.Errorf("λ = %g: error %v, want a refusal that says what λ to use", lam, err)
		}
	}
}

// readRegression loads a regression file from testdata with raw targets.
func readRegression(t *testing.T, name string) (*sparse.CSR, []float64) {
	t.Helper()
	ds, err := sparse.ReadFile(filepath.Join("..", "testdata", name), sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.X, ds.Y
}

// TestConvergedRunIsNotDiverging is the review's case: housing_scale with
// its targets multiplied by 1e4 converges, and then the rounding noise of
// its gap (0 to 3e-6 at |P| ≈ 1e9) was called divergence and the model lost.
func TestConvergedRunIsNotDiverging(t *testing.T) {
	x, y := readRegression(t, "housing_scale")
	for k := range y {
		y[k] *= 1e4
	}
	prob := Problem{X: x, B: y, Loss: Squared{}, Reg: ElasticNet{Lambda: 1 / float64(x.Rows)}}
	model, res, err := Train(context.Background(), prob, Options{Tol: -1, MaxEpochs: 600, Seed: 1})
	if err != nil || model == nil {
		t.Fatalf("error %v", err)
	}
	if res.Best.RelGap > 1e-12 {
		t.Errorf("best relative gap %.3g, want a converged run", res.Best.RelGap)
	}
}

// TestErrorKeepsBestModel: a run that ends in an error after certificates
// returns the model of its best one beside the error.
func TestErrorKeepsBestModel(t *testing.T) {
	x, b := sparseData(500, 100, 5, 2)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	boom := errors.New("disk full")
	model, res, err := Train(context.Background(), prob, Options{Tol: -1, MaxEpochs: 100, Callback: func(tp TracePoint) error {
		if tp.Epoch == 5 {
			return boom
		}
		return nil
	}})
	if !errors.Is(err, boom) || model == nil {
		t.Fatalf("error %v, model %v", err, model != nil)
	}
	cert, _ := Certify(prob, model.Weights)
	if res.Best.Epoch == 0 || math.Abs(cert.Primal-res.Best.Primal) > 1e-14 {
		t.Errorf("model primal %.15g, best certificate (epoch %d) %.15g", cert.Primal, res.Best.Epoch, res.Best.Primal)
	}
}

// TestLazyRenormalisation runs the lazy update where the running product
// Π 1/(1+τₛλ) underflows many times within an epoch: rows of norm 0.05 and
// λ = 50 give τλ ≈ 0.6 per iteration, so the product falls below 1e-150
// about every 700 of the 4000 iterations of an epoch. Lazy must still agree
// with the dense update, with and without an L1 term.
func TestLazyRenormalisation(t *testing.T) {
	x, b := sparseData(4000, 3000, 6, 17)
	x.NormalizeRowsUnit()
	for i := range x.Values {
		x.Values[i] *= 0.05
	}
	for _, reg := range []ElasticNet{{Lambda: 50}, {Lambda: 50, L1: 1e-3}} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: reg}
		opt := Options{Threads: 1, Seed: 2, Tol: -1, MaxEpochs: 3}.With(CoordinateSettings{M: 1})
		opt = opt.WithCoordinate(func(c *CoordinateSettings) { c.Lazy = LazyOn })
		lazy, lres, err := Train(context.Background(), prob, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt = opt.WithCoordinate(func(c *CoordinateSettings) { c.Lazy = LazyOff })
		dense, _, err := Train(context.Background(), prob, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := relDiff(lazy.Weights, dense.Weights); !lres.Lazy || d > 1e-10 {
			t.Errorf("l1 %g: lazy and dense differ by %.3g", reg.L1, d)
		}
	}
}

// TestThreadsFollowBatchSize: an explicit thread count is an upper bound;
// a batch too small to share runs on fewer workers, and the result and
// every trace point say how many.
func TestThreadsFollowBatchSize(t *testing.T) {
	saved := driver.MinBatchWork
	driver.MinBatchWork = driver.DefaultMinBatchWork
	defer func() { driver.MinBatchWork = saved }()
	x, b := sparseData(4000, 300, 10, 3) // 10 nonzeros a row
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	for _, tc := range []struct{ m, threads, want int }{
		{1, 2, 1},   // 10 nonzeros a batch
		{8, 2, 1},   // 80
		{16, 2, 1},  // 160: not one worker's worth
		{128, 2, 1}, // 1280: not two
		{256, 2, 2}, // 2560
		{256, 8, 2}, // 2560 / 1000
		{1024, 0, min(runtime.GOMAXPROCS(0), 10)},
	} {
		_, res, err := Train(context.Background(), prob, Options{Threads: tc.threads, Tol: -1, MaxEpochs: 1}.With(CoordinateSettings{M: tc.m}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Threads != tc.want || res.Final.Threads != tc.want {
			t.Errorf("m = %d, -threads %d: %d workers (trace %d), want %d", tc.m, tc.threads, res.Threads, res.Final.Threads, tc.want)
		}
	}
}

// TestProblemLiteralPredictsLabels: a Problem built as a struct literal,
// with no Classes, trains a classifier whose Predict gives the labels −1
// and +1 (its B), not the margin, alone and one against the rest; a
// classifier model without labels is refused.
func TestProblemLiteralPredictsLabels(t *testing.T) {
	x, b := sharedData(t, "heart_scale")
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	model, _, err := Train(context.Background(), prob, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for k := range x.Rows {
		val, idx := x.Row(k)
		p := model.Predict(val, idx)
		if p != -1 && p != 1 {
			t.Fatalf("row %d: Predict = %v, want a label −1 or +1", k, p)
		}
		if p == b[k] {
			right++
		}
	}
	if acc := float64(right) / float64(x.Rows); acc < 0.8 {
		t.Errorf("training accuracy %.3f, want at least 0.8", acc)
	}
	if err := model.Validate(); err != nil {
		t.Error(err)
	}
	for _, loss := range []Loss{Squared{}, SquaredHinge{}} {
		m, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1e-2}}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.Labels == nil, !loss.Classification(); got != want {
			t.Errorf("%s: model labels %v", loss.Name(), m.Labels)
		}
	}
	bare := *model
	bare.Labels = nil
	if err := bare.Validate(); err == nil || !strings.Contains(err.Error(), "no labels") {
		t.Errorf("a logistic model without labels: Validate = %v, want an error saying it has no labels", err)
	}
}
