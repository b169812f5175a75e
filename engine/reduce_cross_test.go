package engine

import (
	"context"
	"github.com/adaspdc/adaspdc/engine/driver"
	"strings"
	"testing"
)

// TestReductionChoice: with no solver named, Train runs the reduction that
// fits (adaptreg for the lasso, sdca for the SVM, jointadapt for the
// L1-SVM), and the reductions refuse with reasons what they cannot take.
func TestReductionChoice(t *testing.T) {
	x, b := sparseData(200, 30, 5, 3)
	cases := []struct {
		loss Loss
		reg  ElasticNet
		want Solver
	}{
		{Squared{}, ElasticNet{L1: 1e-2}, SolverAdaptReg},
		{Logistic{}, ElasticNet{L1: 1e-2}, SolverAdaptReg},
		{Hinge{}, ElasticNet{Lambda: 1e-2}, "sdca"}, // SDCA takes the hinge directly (LIBLINEAR -s 3)
		{Hinge{}, ElasticNet{L1: 1e-2}, SolverJointAdapt},
		{Logistic{}, ElasticNet{Lambda: 1e-2}, SolverAdaSPDC},
	}
	for _, c := range cases {
		prob := Problem{X: x, B: b, Loss: c.loss, Reg: c.reg}
		e, err := chooseSolver(prob, Options{})
		if err != nil || e.Name != c.want {
			t.Errorf("%s + %s: chose %v (%v), want %s", c.loss.Name(), c.reg.Name(), e, err, c.want)
		}
	}
	refusals := []struct {
		prob Problem
		opt  Options
		want string
	}{
		{Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{L1: 1}}, Options{Solver: SolverAdaptSmooth}, "smooths the hinge"},
		{Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{L1: 1}}, Options{Solver: SolverAdaptReg}, "adaptsmooth or jointadapt"},
		{Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{L1: 1}}, Options{Solver: SolverAdaptSmooth}, "use jointadapt"},
		{Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 1}}, Options{Solver: SolverAdaptReg}.With(ReductionSettings{Inner: SolverJointAdapt}), "direct solver"},
		{Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 1}}, Options{Solver: SolverAdaptReg}.With(ReductionSettings{Inner: "nope"}), "unknown inner solver"},
		{Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 1, Weights: make([]float64, 30)}}, Options{Solver: SolverAdaptReg}, "weights"},
	}
	for _, r := range refusals {
		_, _, err := Train(context.Background(), r.prob, r.opt)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s over %s on %s + %s: error %v, want one about %q", r.opt.Solver, inner(r.opt), r.prob.Loss.Name(), r.prob.Reg.Name(), err, r.want)
		}
	}
}

// TestReductionRefusesColdDualInner: a dual method that cannot start a
// stage from the last stage's duals (sdca could not before
// SDCASettings.WarmDuals: measured then, the stages stalled on housing and
// diverged on abalone) is refused with the reason; the reduction runs
// over a primal method, saga, to the lasso's optimum.
func TestReductionRefusesColdDualInner(t *testing.T) {
	x, b := sharedRegression(t, "housing_scale")
	l1 := 0.1 * lassoMaxL1(x, b)
	prob := Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: l1}}
	for _, inner := range []Solver{"dfsdca", "wx-adaspdc"} {
		_, _, err := Train(context.Background(), prob, Options{Solver: SolverAdaptReg, Tol: 1e-7}.With(ReductionSettings{Inner: inner}))
		if err == nil || !strings.Contains(err.Error(), `ReductionSettings.Inner "adaspdc"`) {
			t.Errorf("adaptreg over %s: error %v, want a refusal that names ReductionSettings.Inner \"adaspdc\"", inner, err)
		}
	}
	ref := referenceLasso(t, x, b, l1)
	pstar, err := Certify(prob, ref)
	if err != nil {
		t.Fatal(err)
	}
	model, res, err := Train(context.Background(), prob, Options{Solver: SolverAdaptReg, Tol: 1e-7, MaxEpochs: 5000}.With(ReductionSettings{Inner: SolverSAGA}))
	if err != nil || !res.Converged {
		t.Fatalf("adaptreg over saga: %v, stop %s, gap %.3g", err, res.Stop, res.Final.RelGap)
	}
	p, _ := Certify(prob, model.Weights)
	if rel := (p.Primal - pstar.Primal) / pstar.Primal; rel > 1e-6 || rel < -1e-12 {
		t.Errorf("adaptreg over saga: relative objective gap %.3g, want in [−1e-12, 1e-6]", rel)
	}
}

// inner names the inner solver that opt's reduction settings name.
func inner(opt Options) Solver {
	st, _ := driver.SettingsOf[ReductionSettings](opt)
	return st.Inner
}
