package vr

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

var vrSolvers = []driver.Solver{SolverSAGA, SolverSAG, SolverSVRG}

// TestVRCertificateIsCertify: with λ > 0 the methods' certificate is
// Certify's at the model, to rounding; with λ = 0 (the lasso) Certify's
// dual is −∞ away from the optimum, and the methods' scaled dual is finite,
// no larger than P, and closes the gap.
func TestVRCertificateIsCertify(t *testing.T) {
	x, b := enginetest.SparseData(300, 200, 6, 5)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2, L1: 1e-3, Center: make([]float64, 200)}}
	if en, ok := prob.Reg.AsElasticNet(); ok {
		en.Center[3] = 0.5
	}
	for _, s := range vrSolvers {
		model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: s, Tol: -1, MaxEpochs: 3})
		if err != nil {
			t.Fatal(err)
		}
		want, err := driver.Certify(prob, model.Weights)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Final
		if enginetest.RelDiff([]float64{got.Primal, got.Dual}, []float64{want.Primal, want.Dual}) > 1e-14 {
			t.Errorf("%s: certificate P = %.17g, D = %.17g; Certify P = %.17g, D = %.17g", s, got.Primal, got.Dual, want.Primal, want.Dual)
		}
	}

	lasso := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{L1: 1e-2}}
	model, res, err := enginetest.Train(context.Background(), lasso, driver.Options{Solver: SolverSAGA, Tol: -1, MaxEpochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := driver.Certify(lasso, model.Weights)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(raw.Dual, -1) {
		t.Logf("Certify's dual after one epoch is finite (%g): the scaling was not needed here", raw.Dual)
	}
	if f := res.Final; !(f.Dual > math.Inf(-1)) || !(f.Dual <= f.Primal) || !(f.Dual >= raw.Dual) {
		t.Errorf("lasso certificate after one epoch: P = %g, D = %g (Certify's D = %g)", f.Primal, f.Dual, raw.Dual)
	}
}

// TestVRLassoHousing: the lasso (λ = 0) on housing_scale with the squared
// loss, against coordinate descent run to convergence: each method stops
// on its own certificate at a relative gap of 1e-9 (the dual scaled into
// dom g*, so the driver sees a finite gap) and its objective is within
// 1e-6 relative of the reference. The reference is checked by its
// optimality conditions, and the certificate by weak duality.
func TestVRLassoHousing(t *testing.T) {
	x, b := enginetest.SharedRegression(t, "housing_scale")
	const l1 = 0.5
	ref := enginetest.ReferenceLasso(t, x, b, l1) // reduction_test.go
	prob := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{L1: l1}}
	refCert, err := driver.Certify(prob, ref)
	if err != nil {
		t.Fatal(err)
	}
	pstar := refCert.Primal
	if v := enginetest.KktViolation(prob, ref); v > 1e-10 {
		t.Fatalf("coordinate descent reference violates the optimality conditions by %.3g", v)
	}
	zeros := 0
	for _, v := range ref {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == len(ref) {
		t.Fatalf("the reference has %d zeros of %d: pick an L1 that selects", zeros, len(ref))
	}
	solvers := vrSolvers
	if testing.Short() {
		solvers = solvers[:1]
	}
	for _, s := range solvers {
		_, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: s, Tol: 1e-9, MaxEpochs: 20000, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !res.Converged {
			t.Errorf("%s: relative gap %.3g after %d epochs (%s)", s, res.Final.RelGap, res.Final.Epoch, res.Stop)
			continue
		}
		f := res.Final
		if rel := (f.Primal - pstar) / pstar; rel > 1e-6 || rel < -1e-12 {
			t.Errorf("%s: P = %.15g, coordinate descent %.15g: relative gap %.3g", s, f.Primal, pstar, rel)
		}
		if f.Dual > pstar*(1+1e-12) {
			t.Errorf("%s: dual %.15g above the optimum %.15g", s, f.Dual, pstar)
		}
		t.Logf("%s: %d epochs, %.0f passes, P − P* = %.3g, gap %.3g", s, f.Epoch, f.Passes, f.Primal-pstar, f.Gap)
	}
}

// TestVRAccepts: the methods refuse what they cannot solve with a clear
// message, and Train picks SAGA for the lasso, which AdaSPDC refuses.
func TestVRAccepts(t *testing.T) {
	x, b := enginetest.SparseData(50, 20, 4, 1)
	cases := []struct {
		prob objective.Problem
		opt  driver.Options
		want string
	}{
		{objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: 1}}, driver.Options{}, "smooth loss"},
		{objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{}}, driver.Options{}, "λ > 0 or L1 > 0"},
		{objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1, Weights: make([]float64, 20)}}, driver.Options{}, "weights"},
		{objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1}}, driver.Options{}.With(driver.Coordinate{M: 4}), "one row per iteration"},
	}
	for _, s := range vrSolvers {
		for _, c := range cases {
			c.opt.Solver, c.opt.MaxEpochs = s, 1
			_, _, err := enginetest.Train(context.Background(), c.prob, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one that mentions %q", s, err, c.want)
			}
		}
	}
}
