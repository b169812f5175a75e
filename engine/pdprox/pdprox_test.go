package pdprox

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// hingeSVMReference solves min (1/n)Σ max(0, 1 − bₖaₖᵀx) + (λ/2)‖x‖² by
// dual coordinate descent (Hsieh et al. 2008, LIBLINEAR's -s 3 with
// C = 1/(nλ)) until its own duality gap is below tol, and returns the
// optimal x and P(x). The dual point is yₖ = −bₖαₖ/C, which is the dual of
// this package's convention, so the gap is a certificate in the same terms.
func hingeSVMReference(t testing.TB, x *sparse.CSR, b []float64, lam, tol float64) ([]float64, float64) {
	n, d := x.Rows, x.Cols
	c := 1 / (float64(n) * lam)
	alpha := make([]float64, n)
	w := make([]float64, d)
	sq := x.RowSquaredNorms()
	prob := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: lam}}
	for sweep := range 100000 {
		for k := range n {
			if sq[k] == 0 {
				continue
			}
			val, idx := x.Row(k)
			g := b[k]*kernels.SparseDot(val, idx, w) - 1
			a := min(max(alpha[k]-g/sq[k], 0), c)
			if a != alpha[k] {
				kernels.SparseAxpy((a-alpha[k])*b[k], val, idx, w)
				alpha[k] = a
			}
		}
		if sweep%10 != 9 {
			continue
		}
		// P(w) and D(y) with yₖ = −bₖαₖ/C: v = (1/n)Σyₖaₖ = −λw.
		var loss, conj float64
		for k := range n {
			val, idx := x.Row(k)
			loss += max(0, 1-b[k]*kernels.SparseDot(val, idx, w))
			conj -= alpha[k] / c
		}
		var wsq float64
		for _, e := range w {
			wsq += e * e
		}
		p := loss/float64(n) + 0.5*lam*wsq
		dual := -conj/float64(n) - 0.5*lam*wsq
		if p-dual <= tol*math.Max(1, p) {
			_ = prob
			return w, p
		}
	}
	t.Fatalf("the hinge SVM reference did not converge")
	return nil, 0
}

// pdproxRun runs a Pdprox solver for T iterations and returns the method
// and its certificate on the averaged iterates.
func pdproxRun(t *testing.T, prob objective.Problem, solver driver.Solver, iters int) (*pdprox, driver.TracePoint) {
	t.Helper()
	opt := enginetest.AdaSPDCOptions()
	opt.Solver = solver
	if err := acceptsPdprox(prob, opt); err != nil {
		t.Fatal(err)
	}
	m, err := startPdprox(context.Background(), prob, opt.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	pm := m.(*pdprox)
	if _, err := pm.RunEpochs(context.Background(), iters); err != nil {
		t.Fatal(err)
	}
	tp, err := pm.Certify()
	if err != nil {
		t.Fatal(err)
	}
	return pm, tp
}

// pdproxBound is the bound of Theorem 6 on P(x̄_T) − P* for a start at 0,
// (‖x*‖² + maxₐ‖α‖²)/(2γT): the gap of the averaged iterates at (x*, α̂),
// where α̂ ∈ dom φ* maximises L(x̄, ·), is at most half the squared
// distance of that pair from the start over γT.
func pdproxBound(xstar []float64, alphaSq, gamma float64, iters int) float64 {
	var sq float64
	for _, e := range xstar {
		sq += e * e
	}
	return (sq + alphaSq) / (2 * gamma * float64(iters))
}

// TestPdproxHingeSVM runs the three Pdprox variants on an L2 hinge SVM and
// compares the averaged iterate with the exact optimum from dual coordinate
// descent (certified to a gap of 1e-13): P(x̄_T) − P* must lie within the
// bound of Theorem 6, the dual point must be a valid one (D ≤ P*), the
// certified P must be the objective of the returned point, and the gap must
// fall like 1/T.
func TestPdproxHingeSVM(t *testing.T) {
	x, b := enginetest.SparseData(400, 40, 6, 3)
	const lam = 1e-2
	xstar, pstar := hingeSVMReference(t, x, b, lam, 1e-13)
	prob := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: lam}}
	short, long := 200, 2000
	if testing.Short() {
		long = 600
	}
	for _, s := range []driver.Solver{SolverPdproxDual, SolverPdproxNoProj, SolverPdproxPrimal} {
		var gaps []float64
		for _, iters := range []int{short, long} {
			m, tp := pdproxRun(t, prob, s, iters)
			excess := tp.Primal - pstar
			bound := pdproxBound(xstar, float64(x.Rows), m.gamma, iters)
			t.Logf("%s T=%d: P−P* = %.3e (Theorem 6 bound %.3e), gap = %.3e", s, iters, excess, bound, tp.Gap)
			if excess < -1e-12 || excess > bound {
				t.Errorf("%s T=%d: P(x̄) − P* = %.3e, outside [0, %.3e]", s, iters, excess, bound)
			}
			if tp.Dual > pstar+1e-12 || tp.Gap < excess {
				t.Errorf("%s T=%d: D = %.15g above P* = %.15g: not a valid dual point", s, iters, tp.Dual, pstar)
			}
			ref, err := driver.Certify(prob, m.Point())
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ref.Primal-tp.Primal) > 1e-12*tp.Primal {
				t.Errorf("%s: certified P = %.17g, P of the returned point = %.17g", s, tp.Primal, ref.Primal)
			}
			gaps = append(gaps, tp.Gap)
		}
		// O(1/T): ten times the iterations, at least five times smaller.
		if ratio := gaps[1] / gaps[0]; ratio > 5*float64(short)/float64(long) {
			t.Errorf("%s: the gap fell from %.3e to %.3e over T = %d → %d: not O(1/T)", s, gaps[0], gaps[1], short, long)
		}
	}
}

// TestPdproxAbsoluteLasso runs least absolute deviations with an L1 penalty
// (λ = 0: g* is the indicator of ‖v‖∞ ≤ l1) on housing_scale against the
// optimum of the linear program, P* = 7.20693816908321, computed by HiGHS
// (scipy 1.10 linprog, feasibility tolerances 1e-10; the script is
// testdata/lad_lasso.py). The certificate must stay finite (the dual is
// scaled into the box) and valid.
func TestPdproxAbsoluteLasso(t *testing.T) {
	x, b := enginetest.SharedRegression(t, "housing_scale")
	const l1, pstar = 0.1, 7.20693816908321
	// The LP's solution, for the bound of Theorem 6.
	xstar := []float64{-16.532857, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.688713, -7.895756}
	prob := objective.Problem{X: x, B: b, Loss: objective.Absolute{}, Reg: objective.ElasticNet{L1: l1}}
	iters := 3000
	if testing.Short() {
		iters = 500
	}
	for _, s := range []driver.Solver{SolverPdproxDual, SolverPdproxPrimal} {
		var prev float64 = math.Inf(1)
		for _, T := range []int{iters / 10, iters} {
			m, tp := pdproxRun(t, prob, s, T)
			bound := pdproxBound(xstar, float64(x.Rows), m.gamma, T)
			t.Logf("%s T=%d: P−P* = %.3e (bound %.3e), D = %.6g, gap = %.3e, dual scale %.6f", s, T, tp.Primal-pstar, bound, tp.Dual, tp.Gap, m.dualScale)
			if excess := tp.Primal - pstar; excess < -1e-9 || excess > bound || excess >= prev {
				t.Errorf("%s T=%d: P(x̄) − P* = %.3e: want it in [0, %.3e] and below %.3e", s, T, excess, bound, prev)
			}
			prev = tp.Primal - pstar
			if math.IsInf(tp.Dual, 0) || math.IsNaN(tp.Dual) || tp.Dual > pstar+1e-9 {
				t.Errorf("%s T=%d: D = %g: want a finite lower bound on P*", s, T, tp.Dual)
			}
		}
	}
}

// TestPdproxGroupLassoSingletons checks that a group lasso whose groups are
// single coordinates runs exactly as the elastic net with the same weights
// (w√1 = l1), which ties its prox and conjugate to ElasticNet's through
// the whole solver, with λ > 0 and with λ = 0.
func TestPdproxGroupLassoSingletons(t *testing.T) {
	x, b := enginetest.SparseData(300, 30, 5, 7)
	groups := make([]int32, x.Cols)
	for j := range groups {
		groups[j] = int32(x.Cols - j) // any distinct ids
	}
	for _, lam := range []float64{1e-2, 0} {
		en := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: lam, L1: 0.02}}
		gl := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: &objective.GroupLasso{Lambda: lam, Weight: 0.02, Groups: groups}}
		for _, s := range []driver.Solver{SolverPdproxDual, SolverPdproxPrimal} {
			me, te := pdproxRun(t, en, s, 300)
			mg, tg := pdproxRun(t, gl, s, 300)
			if d := enginetest.RelDiff(mg.Point(), me.Point()); d > 1e-12 {
				t.Errorf("λ=%g %s: group lasso of singletons and elastic net differ by %.3e", lam, s, d)
			}
			if math.Abs(tg.Primal-te.Primal) > 1e-12 || math.Abs(tg.Dual-te.Dual) > 1e-12*max(1, math.Abs(te.Dual)) {
				t.Errorf("λ=%g %s: certificates differ: (%.15g, %.15g) vs (%.15g, %.15g)", lam, s, tg.Primal, tg.Dual, te.Primal, te.Dual)
			}
		}
	}
}

// TestPdproxGroupLasso solves a hinge SVM with a group lasso (groups of 3,
// λ > 0) through Train to a relative gap of 1e-2, and checks that the
// certificate is valid against the primal of perturbed points (D ≤ P(x)
// everywhere).
func TestPdproxGroupLasso(t *testing.T) {
	x, b := enginetest.SparseData(300, 30, 5, 7)
	groups := make([]int32, x.Cols)
	for j := range groups {
		groups[j] = int32(j / 3)
	}
	reg := &objective.GroupLasso{Lambda: 1e-3, Weight: 0.03, Groups: groups}
	prob := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: reg}
	opt := enginetest.AdaSPDCOptions()
	opt.Solver = SolverPdproxNoProj
	opt.Tol = 1e-2
	opt.MaxEpochs = 20000
	model, res, err := enginetest.Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stop %s after %d iterations: P = %.6g, gap %.3e", res.Stop, res.Final.Epoch, res.Final.Primal, res.Final.Gap)
	if !res.Converged {
		t.Fatalf("did not reach a relative gap of 1e-2: %+v", res.Final)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		p := append([]float64(nil), model.Weights...)
		for j := range p {
			p[j] += 0.05 * rng.NormFloat64()
		}
		tp, _ := driver.Certify(prob, p)
		if tp.Primal < res.Final.Dual {
			t.Fatalf("P(x) = %.15g below the certified D = %.15g", tp.Primal, res.Final.Dual)
		}
	}
}

// TestPdproxRegressionLosses runs the ε-insensitive and quantile losses with
// an L2 penalty on housing_scale: the certificate must be valid (D ≤ P at
// every certificate, and below the primal of the final point) and the gap
// must fall tenfold from T = 100 to T = 1000.
func TestPdproxRegressionLosses(t *testing.T) {
	x, b := enginetest.SharedRegression(t, "housing_scale")
	for _, loss := range []objective.Loss{objective.EpsInsensitive{Epsilon: 1}, objective.Quantile{Q: 0.2}, objective.Quantile{Q: 0.9}} {
		prob := objective.Problem{X: x, B: b, Loss: loss, Reg: objective.ElasticNet{Lambda: 1e-2}}
		_, t1 := pdproxRun(t, prob, SolverPdproxDual, 100)
		_, t2 := pdproxRun(t, prob, SolverPdproxDual, 1000)
		t.Logf("%s: gap %.3e at T=100, %.3e at T=1000 (P = %.6g)", enginetest.LossTestName(loss), t1.Gap, t2.Gap, t2.Primal)
		if !(t1.Gap >= 0 && t2.Gap >= 0 && t2.Gap < t1.Gap/5) {
			t.Errorf("%s: gap %.3e at T=100, %.3e at T=1000: want it to fall like 1/T", enginetest.LossTestName(loss), t1.Gap, t2.Gap)
		}
	}
}

// TestPdproxAccepts checks what Pdprox refuses, and that a λ = 0 problem
// with an unpenalised coordinate (whose g* pins v there to 0, so the dual
// scale is 0) still gives a finite certificate, D = 0.
func TestPdproxAccepts(t *testing.T) {
	x, b := enginetest.SparseData(50, 10, 3, 2)
	opt := enginetest.AdaSPDCOptions()
	opt.Solver = SolverPdproxDual
	for _, prob := range []objective.Problem{
		{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1}},
		{X: x, B: b, Loss: objective.SmoothHinge{S: 1}, Reg: objective.ElasticNet{Lambda: 1}},
	} {
		if _, _, err := enginetest.Train(context.Background(), prob, opt); err == nil || !strings.Contains(err.Error(), "bilinear") {
			t.Errorf("%s loss: %v, want a refusal naming the bilinear losses", prob.Loss.Name(), err)
		}
	}
	o := opt
	o = o.WithCoordinate(func(c *driver.Coordinate) { c.M = 4 })
	if _, _, err := enginetest.Train(context.Background(), objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: 1}}, o); err == nil || !strings.Contains(err.Error(), "full-batch") {
		t.Errorf("M = 4: %v, want a refusal", err)
	}
	groups := make([]int32, x.Cols)
	groups[0] = -1
	prob := objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: &objective.GroupLasso{Weight: 0.1, Groups: groups}}
	opt.Tol, opt.MaxEpochs = -1, 30
	_, res, err := enginetest.Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Final.Dual != 0 || res.Final.Gap != res.Final.Primal {
		t.Errorf("λ = 0 with a free coordinate: D = %g, gap %g, P %g; want D = 0", res.Final.Dual, res.Final.Gap, res.Final.Primal)
	}
}
