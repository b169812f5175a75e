package engine_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestConformance holds every registered solver, through the public API,
// to one optimum per problem on data bundled with the repository (so it
// runs, and can fail, on a clone with no ../shared): logistic regression
// and the squared-hinge SVM on heart_scale with an intercept, each with and
// without an L1 term, ridge regression on housing_scale, and the hinge SVM.
// The references are certified to a relative gap of 1e-12 by Newton (L2)
// and SDCA (L1, hinge). A solver must reach the tolerance asked with a
// primal within twice it of the reference, and must take at least one
// problem, so that a new solver cannot slip through unchecked. Pdprox and
// JointAdaptRegSmooth converge as 1/T and have tests of their own bounds.
func TestConformance(t *testing.T) {
	read := func(name string) *sparse.Dataset {
		ds, err := sparse.ReadFile("../testdata/"+name, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	heart, housing := read("heart_scale"), read("housing_scale")
	type problem struct {
		name string
		prob engine.Problem
		ref  engine.Solver // certifies the optimum
		tol  float64
	}
	var problems []problem
	add := func(name string, ds *sparse.Dataset, loss engine.Loss, reg engine.ElasticNet, ref engine.Solver, tol float64) {
		prob, err := engine.NewProblem(ds, loss, reg, 1)
		if err != nil {
			t.Fatal(err)
		}
		problems = append(problems, problem{name, prob, ref, tol})
	}
	for _, loss := range []engine.Loss{engine.Logistic{}, engine.SquaredHinge{}} {
		add("heart/"+loss.Name(), heart, loss, engine.ElasticNet{Lambda: 1e-2}, engine.SolverNewton, 1e-8)
		add("heart/"+loss.Name()+"/l1", heart, loss, engine.ElasticNet{Lambda: 1e-2, L1: 1e-2}, engine.SolverSDCA, 1e-8)
	}
	add("housing/ridge", housing, engine.Squared{}, engine.ElasticNet{Lambda: 1e-2}, engine.SolverNewton, 1e-8)
	add("heart/hinge", heart, engine.Hinge{}, engine.ElasticNet{Lambda: 1e-2}, engine.SolverSDCA, 1e-6)
	refs := make([]float64, len(problems))
	for i, p := range problems {
		opt := engine.Options{Solver: p.ref, Tol: 1e-12, MaxEpochs: 100000, StallEpochs: -1, Threads: 1}
		_, res, err := engine.Train(t.Context(), p.prob, opt)
		if err != nil || !res.Converged {
			t.Fatalf("reference for %s (%s): %v", p.name, p.ref, err)
		}
		refs[i] = res.Final.Primal
	}
	for _, info := range engine.Solvers() {
		if strings.HasPrefix(string(info.Name), "pdprox") || info.Name == engine.SolverJointAdapt {
			continue
		}
		checked := 0
		for i, p := range problems {
			tol := p.tol
			if info.Name == engine.SolverSAG {
				tol = max(tol, 1e-6) // its step 1/(16L) makes 1e-8 cost tens of thousands of epochs
			}
			opt := engine.Options{Solver: info.Name, Tol: tol, MaxEpochs: 20000, Seed: 3, Threads: 2}
			_, res, err := engine.Train(t.Context(), p.prob, opt)
			if res == nil {
				continue // the solver does not take this problem: refused before it started
			}
			checked++
			name := fmt.Sprintf("%s on %s", info.Name, p.name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !res.Converged {
				t.Errorf("%s: stopped (%s) at a relative gap of %.3g after %d epochs", name, res.Stop, res.Final.RelGap, res.Final.Epoch)
				continue
			}
			scale := math.Max(1, math.Abs(refs[i]))
			if d := res.Model.Primal - refs[i]; d > 2*tol*scale || d < -1e-10*scale {
				t.Errorf("%s: P = %.15g, the optimum is %.15g (difference %.3g)", name, res.Model.Primal, refs[i], d)
			}
		}
		t.Logf("%s: %d problems", info.Name, checked)
		if checked == 0 {
			t.Errorf("solver %s took none of the bundled problems: add one it takes", info.Name)
		}
	}
}
