package newton

import (
	"context"
	"math"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestNewtonTrustRadius: on wide raw counts with the logistic loss at a
// small λ, where the line search cuts some of CG's full solves below
// trustCut, later solves end on the trust radius; the run reaches the
// optimum of the run without the radius, both certified to a 1e-9 gap;
// and the iterates stay invariant to the features' scale, the radius
// being a length in the M norm.
func TestNewtonTrustRadius(t *testing.T) {
	x, b := enginetest.RawCountData(500, 2000, 20, 500, 50, 0.05, 2)
	if denseHessianPays(x) {
		t.Fatal("the test wants wide data, where CG solves the steps")
	}
	lam := 0.1 / float64(x.Rows)
	run := func(prob objective.Problem, trust bool, epochs int) (*newton, *driver.Result) {
		opt := driver.Options{Solver: SolverNewton, Threads: 2, Tol: 1e-9, MaxEpochs: epochs, StallEpochs: -1, Deterministic: true}.WithDefaults()
		s, err := newNewton(prob, opt)
		if err != nil {
			t.Fatal(err)
		}
		s.trust = trust
		res, err := driver.Run(context.Background(), s, opt)
		if err != nil {
			t.Fatalf("trust %v: %v", trust, err)
		}
		if err := s.Finish(res); err != nil {
			t.Fatal(err)
		}
		return s, res
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: lam}}
	s, with := run(prob, true, 500)
	_, without := run(prob, false, 500)
	if !with.Converged || !without.Converged {
		t.Fatalf("stops %q and %q", with.Stop, without.Stop)
	}
	if s.onRadius == 0 {
		t.Fatalf("no solve ended on the trust radius: %s", with.Note)
	}
	if d := math.Abs(with.Final.Primal - without.Final.Primal); d > 2e-9*math.Abs(without.Final.Primal) {
		t.Errorf("P = %.15g with the radius, %.15g without", with.Final.Primal, without.Final.Primal)
	}

	// The same problem in other units: column j times scale[j], its L2
	// weight times scale[j]², over enough steps for the radius to act.
	scale := make([]float64, x.Cols)
	xs := &sparse.CSR{Rows: x.Rows, Cols: x.Cols, Indptr: x.Indptr, Indices: x.Indices, Values: append([]float64(nil), x.Values...)}
	weights := make([]float64, x.Cols)
	for j := range scale {
		scale[j] = math.Pow(10, float64(j%5-2))
		weights[j] = scale[j] * scale[j]
	}
	for p, j := range xs.Indices {
		xs.Values[p] *= scale[j]
	}
	rescaled := objective.Problem{X: xs, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: lam, Weights: weights}}
	const steps = 12
	sa, _ := run(prob, true, steps)
	sc, _ := run(rescaled, true, steps)
	if sa.onRadius == 0 {
		t.Fatalf("no solve ended on the trust radius in %d steps", steps)
	}
	// The rescaled products round differently. The iterates agree to
	// 1e-12 relative for six steps; then that rounding tips one of the
	// run's discrete choices (where a line search or CG stops) the other
	// way, and the two runs go on along slightly different valid paths:
	// 5e-4 to 2e-3 relative from the eighth step to the fourteenth,
	// with the exponential and logarithm of kernels.ExpNeg and
	// kernels.Log1pUnit or of the math package. A step that depended on
	// the scale would miss by O(1) from the first.
	for j := range x.Cols {
		got, want := sc.w[j]*scale[j], sa.w[j]
		if math.Abs(got-want) > 1e-2*math.Max(1e-3, math.Abs(want)) {
			t.Fatalf("step %d: w[%d] = %.12g in the original units, %.12g in the rescaled ones (scale %g)", steps, j, want, got, scale[j])
		}
	}
}
