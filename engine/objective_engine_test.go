package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestRegularizerStronglyConvex: λ = 0 is a valid problem (Validate) that
// AdaSPDC refuses (StronglyConvex, and Train), with an error that says why;
// its conjugate is the indicator of the L1 box.
func TestRegularizerStronglyConvex(t *testing.T) {
	for _, r := range []ElasticNet{{Lambda: 0}, {Lambda: 0, L1: 1}} {
		if err := r.Validate(0); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", r, err)
		}
		err := objective.NeedStrongConvexity(r, "AdaSPDC")
		for _, w := range []string{"AdaSPDC", "strongly convex", "lasso", "solvers"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("needStrongConvexity(%+v) = %v, want it to mention %q", r, err, w)
			}
		}
		x, b := sparseData(20, 5, 2, 1)
		opt := adaspdcOptions()
		opt.Solver = SolverAdaSPDC // with none named, Train runs a solver that takes the lasso
		if _, _, err := Train(t.Context(), Problem{X: x, B: b, Loss: Logistic{}, Reg: r}, opt); err == nil || !strings.Contains(err.Error(), "strongly convex") {
			t.Errorf("Train with %+v: error %v, want one about strong convexity", r, err)
		}
	}
	if err := objective.NeedStrongConvexity(ElasticNet{Lambda: 1e-9}, "AdaSPDC"); err != nil {
		t.Errorf("λ = 1e-9: %v", err)
	}
	lasso := ElasticNet{L1: 0.5}
	if got := lasso.ConjNeg([]float64{0.5, -0.2}); got != 0 {
		t.Errorf("L1 box conjugate inside the box = %v, want 0", got)
	}
	if got := lasso.ConjNeg([]float64{0.1, -0.51}); !math.IsInf(got, 1) {
		t.Errorf("L1 box conjugate outside the box = %v, want +Inf", got)
	}
}
