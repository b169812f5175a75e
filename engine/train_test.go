package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestElasticNetOptimality solves elastic-net problems to a tiny gap and
// checks the subgradient optimality conditions directly, for every loss.
func TestElasticNetOptimality(t *testing.T) {
	x, b := sparseData(800, 300, 8, 21)
	for _, loss := range []Loss{Logistic{}, Squared{}, SquaredHinge{}, SmoothHinge{S: 0.5}} {
		prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1e-2, L1: 5e-3}}
		model, res, err := Train(context.Background(), prob, Options{Threads: 2, Seed: 3, Tol: 1e-12, MaxEpochs: 2000}.With(CoordinateSettings{M: 4, Lazy: LazyOn}))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged {
			t.Errorf("%s: gap %.3g after %d epochs", loss.Name(), res.Final.RelGap, res.Final.Epoch)
		}
		zeros := 0
		for _, w := range model.Weights {
			if w == 0 {
				zeros++
			}
		}
		if v := kktViolation(prob, model.Weights); v > 1e-5 {
			t.Errorf("%s: optimality conditions violated by %.3g", loss.Name(), v)
		}
		if zeros == 0 || zeros == len(model.Weights) {
			t.Errorf("%s: %d of %d weights are zero; the test wants a sparse but non-trivial model", loss.Name(), zeros, len(model.Weights))
		}
	}
}

func TestWarmStartAndModelRoundTrip(t *testing.T) {
	x, b := sparseData(1500, 400, 10, 5)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	ctx := context.Background()
	model, cold, err := Train(ctx, prob, Options{Threads: 2, Tol: 1e-8, MaxEpochs: 1000}.With(CoordinateSettings{M: 8}))
	if err != nil {
		t.Fatal(err)
	}
	// The JSON form (the struct tags; engine/modelio writes the files)
	// keeps every weight bit for bit.
	model.Labels = []float64{0, 1}
	data, err := json.Marshal(model)
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	for j := range model.Weights {
		if back.Weights[j] != model.Weights[j] {
			t.Fatalf("weight %d: saved %v, loaded %v", j, model.Weights[j], back.Weights[j])
		}
	}
	// A warm start from the solution is certified at once.
	_, warm, err := Train(ctx, prob, Options{Threads: 2, Tol: 1e-6, MaxEpochs: 1000, WarmStart: model.Weights}.With(CoordinateSettings{M: 8}))
	if err != nil {
		t.Fatal(err)
	}
	if warm.Final.Epoch > 1 || !warm.Converged {
		t.Errorf("warm start took %d epochs (cold: %d), converged %v", warm.Final.Epoch, cold.Final.Epoch, warm.Converged)
	}
	if _, _, err := Train(ctx, prob, Options{WarmStart: make([]float64, 3)}); err == nil {
		t.Error("warm start of the wrong length accepted")
	}
}

func TestTrainRefusesBadInput(t *testing.T) {
	x, b := sparseData(50, 20, 3, 1)
	good := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	ctx := context.Background()
	cases := []struct {
		name string
		prob Problem
		opt  Options
		want string
	}{
		{"lambda zero", Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{}}, Options{}, "strong"},
		{"lambda negative", Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: -1}}, Options{}, "Lambda = -1 must be ≥ 0"},
		{"l1 negative", Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1, L1: -1}}, Options{}, "L1"},
		{"m too large", good, Options{}.With(CoordinateSettings{M: 51}), "only 50 blocks"},
		{"m too large for blocks", good, Options{}.With(CoordinateSettings{M: 11, BlockSize: 5}), "only 10 blocks"},
		{"labels not ±1", Problem{X: x, B: append([]float64{2}, b[1:]...), Loss: Logistic{}, Reg: good.Reg}, Options{}, "−1/+1"},
		{"label count", Problem{X: x, B: b[:10], Loss: Logistic{}, Reg: good.Reg}, Options{}, "10 labels"},
		{"NaN target", Problem{X: x, B: append([]float64{math.NaN()}, b[1:]...), Loss: Squared{}, Reg: good.Reg}, Options{}, "NaN"},
		{"partition", good, Options{}.With(CoordinateSettings{Partition: "rows"}), "partition"},
		{"solver", good, Options{Solver: "nosuch"}, "solver"},
		{"no solver named, λ = 0", Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{}}, Options{}, "no solver takes"},
		{"block size", good, Options{}.With(CoordinateSettings{BlockSize: 60}), "block size"},
		{"all-zero data", Problem{X: &sparse.CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 0, 0}}, B: []float64{1, -1}, Loss: Logistic{}, Reg: good.Reg}, Options{}, "zero"},
	}
	for _, tc := range cases {
		_, _, err := Train(ctx, tc.prob, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestStopping(t *testing.T) {
	x, b := sparseData(500, 100, 5, 2)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	calls := 0
	_, res, err := Train(context.Background(), prob, Options{Tol: -1, MaxEpochs: 100, Callback: func(tp TracePoint) error {
		calls++
		if tp.Epoch == 3 {
			return ErrStop
		}
		return nil
	}})
	if err != nil || res.Stop != "callback" || res.Final.Epoch != 3 || calls != 4 {
		t.Errorf("ErrStop: err %v, stop %q at epoch %d after %d calls", err, res.Stop, res.Final.Epoch, calls)
	}
	boom := errors.New("boom")
	if _, _, err := Train(context.Background(), prob, Options{MaxEpochs: 10, Callback: func(TracePoint) error { return boom }}); !errors.Is(err, boom) {
		t.Errorf("callback error: got %v", err)
	}
	_, res, err = Train(context.Background(), prob, Options{Tol: -1, MaxEpochs: 7})
	if err != nil || res.Stop != "max-epochs" || len(res.Trace) != 8 {
		t.Errorf("max epochs: err %v, stop %q, %d trace points", err, res.Stop, len(res.Trace))
	}
	for i, tp := range res.Trace {
		if tp.Gap < -1e-12 || (i > 0 && tp.Passes <= res.Trace[i-1].Passes) {
			t.Errorf("trace point %d: %+v", i, tp)
		}
	}
}

// TestDivergenceIsAnError feeds data with a non-finite value, which must end
// the run with an error instead of returning NaN weights.
func TestDivergenceIsAnError(t *testing.T) {
	x, b := sparseData(200, 50, 5, 4)
	x.Values[7] = math.Inf(1)
	_, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{Lambda: 1e-2}}, Options{})
	if err == nil {
		t.Fatal("training on data with +Inf succeeded")
	}
	x.Values[7] = 1e200 // finite, but every margin overflows
	_, _, err = Train(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{Lambda: 1e-2}}, Options{MaxEpochs: 50})
	if err == nil {
		t.Fatal("training on data with 1e200 succeeded")
	}
	t.Log(err)
}

// TestCertifyAgreesWithSolver certifies the solver's own output: the gap of
// Certify must be tiny at the optimum, and large at a poor point.
func TestCertifyAgreesWithSolver(t *testing.T) {
	x, b := sparseData(1000, 200, 8, 8)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	model, res, err := Train(context.Background(), prob, Options{Tol: 1e-11, MaxEpochs: 2000}.With(CoordinateSettings{M: 4}))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := Certify(prob, model.Weights)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tp.Primal-res.Final.Primal) > 1e-12 || tp.Gap > 1e-9 || tp.Gap < -1e-12 {
		t.Errorf("Certify: primal %.15g (solver %.15g), gap %.3g", tp.Primal, res.Final.Primal, tp.Gap)
	}
	zero, _ := Certify(prob, make([]float64, x.Cols))
	if zero.Gap < 1e-3 {
		t.Errorf("gap at x = 0 is %.3g; the certificate is not discriminating", zero.Gap)
	}
	if _, err := Certify(prob, make([]float64, 3)); err == nil {
		t.Error("Certify accepted weights of the wrong length")
	}
}

// TestModelNormalizeUnit checks that a model trained on unit-norm rows scales
// a raw row the same way before its margin.
func TestModelNormalizeUnit(t *testing.T) {
	m := &Model{Loss: "logistic", Lambda: 1, Dim: 3, Bias: 1, Normalize: "unit", Labels: []float64{-1, 1}, Weights: []float64{1, 2, 3, 0.5}}
	val, idx := []float64{3, 4, 7}, []int32{0, 2, 5} // column 5 is beyond Dim: ignored, but part of the norm
	want := (3*1+4*3)/math.Sqrt(9+16+49) + 0.5
	if got := m.Margin(val, idx); math.Abs(got-want) > 1e-15 {
		t.Errorf("Margin = %v, want %v", got, want)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
	m.Normalize = "max"
	if err := m.Validate(); err == nil {
		t.Error("normalize \"max\" accepted")
	}
}

// TestCentredElasticNet: AdaSPDC with a centre c solves
// (1/n)Σφ + l1‖x‖₁ + (λ/2)‖x − c‖², dense and lazy: the optimality
// conditions hold at its model, and for ridge it is the closed form
// (AᵀA/n + λI)x = Aᵀb/n + λc.
func TestCentredElasticNet(t *testing.T) {
	x, b := sparseData(600, 40, 6, 41)
	rng := rand.New(rand.NewPCG(4, 2))
	c := make([]float64, x.Cols)
	for j := range c {
		c[j] = rng.NormFloat64()
	}
	for _, lazy := range []Lazy{LazyOff, LazyOn} {
		for _, l1 := range []float64{0, 2e-3} {
			for _, loss := range []Loss{Squared{}, Logistic{}} {
				prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 0.05, L1: l1, Center: c}}
				model, res, err := Train(t.Context(), prob, Options{Threads: 2, Seed: 5, Tol: 1e-12, MaxEpochs: 3000}.With(CoordinateSettings{M: 4, Lazy: lazy}))
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s l1=%g lazy=%s", loss.Name(), l1, lazy)
				if !res.Converged {
					t.Errorf("%s: gap %.3g after %d epochs", name, res.Final.RelGap, res.Final.Epoch)
				}
				if v := kktViolation(prob, model.Weights); v > 1e-6 {
					t.Errorf("%s: optimality conditions violated by %.3g", name, v)
				}
				cert, err := Certify(prob, model.Weights)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(cert.Primal-res.Final.Primal) > 1e-12*math.Abs(cert.Primal) {
					t.Errorf("%s: the run's primal %.15g, Certify's %.15g", name, res.Final.Primal, cert.Primal)
				}
				if _, ok := loss.(Squared); ok && l1 == 0 {
					want := ridgeClosedFormCentred(x, b, 0.05, c)
					for j := range want {
						if math.Abs(model.Weights[j]-want[j]) > 1e-6*(1+math.Abs(want[j])) {
							t.Fatalf("%s: weight %d = %.12g, closed form %.12g", name, j, model.Weights[j], want[j])
						}
					}
				}
			}
		}
	}
	weighted := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1, Weights: make([]float64, x.Cols)}}
	if _, _, err := Train(t.Context(), weighted, adaspdcOptions()); err == nil || !strings.Contains(err.Error(), "weights") {
		t.Errorf("AdaSPDC with per-coordinate weights: error %v, want a refusal that names the weights", err)
	}
}

// TestCertifyParallel: Certify on several goroutines (w8a has 9 chunks of
// 65536 nonzeros) agrees with one goroutine and with the objective summed
// directly, for a point that is not optimal.
func TestCertifyParallel(t *testing.T) {
	x, b := sharedData(t, "w8a")
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-4, L1: 1e-5}}
	rng := rand.New(rand.NewPCG(8, 9))
	w := make([]float64, x.Cols)
	for j := range w {
		w[j] = 0.1 * rng.NormFloat64()
	}
	var direct float64
	for k := 0; k < x.Rows; k++ {
		val, idx := x.Row(k)
		direct += prob.Loss.Value(kernels.SparseDot(val, idx, w), b[k])
	}
	direct = direct/float64(x.Rows) + prob.Reg.Value(w)
	prev := runtime.GOMAXPROCS(1)
	one, err := Certify(prob, w)
	runtime.GOMAXPROCS(max(prev, 2))
	many, err2 := Certify(prob, w)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if math.Abs(one.Primal-direct) > 1e-12*math.Abs(direct) || math.Abs(many.Primal-direct) > 1e-12*math.Abs(direct) {
		t.Errorf("primal: one goroutine %.15g, several %.15g, direct %.15g", one.Primal, many.Primal, direct)
	}
	if math.Abs(one.Dual-many.Dual) > 1e-12*math.Abs(one.Dual) || !(one.Gap > 1e-3) {
		t.Errorf("dual: one goroutine %.15g, several %.15g (gap %.3g)", one.Dual, many.Dual, one.Gap)
	}
}

// TestLassoChoice: with no solver named the lasso goes to newGLMNET; asked
// for a coordinate method, to adaptreg; saga takes it when named.
func TestLassoChoice(t *testing.T) {
	x, b := sparseData(50, 20, 4, 1)
	// With no solver named the lasso goes to newGLMNET (AutoSolver); asked
	// for a coordinate method (M = 1), to adaptreg (parallel, and faster
	// on it than saga), then to saga when a reduction is ruled out.
	_, res, err := Train(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 0.1}}, Options{Tol: 1e-6, MaxEpochs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Solver != SolverGLMNET || !res.Converged {
		t.Errorf("lasso with no solver named: ran %s, converged %v; want glmnet", res.Solver, res.Converged)
	}
	_, res, err = Train(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 0.1}}, Options{Tol: 1e-6, MaxEpochs: 1000}.With(CoordinateSettings{M: 1}))
	if err != nil || res.Solver != SolverAdaptReg || !res.Converged {
		t.Errorf("lasso, M = 1: ran %s, converged %v (%v); want adaptreg", res.Solver, res.Converged, err)
	}
	_, res, err = Train(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 0.1}}, Options{Solver: SolverSAGA, Tol: 1e-6, MaxEpochs: 1000})
	if err != nil || !res.Converged {
		t.Errorf("saga on the lasso: %v, converged %v", err, res != nil && res.Converged)
	}
}
