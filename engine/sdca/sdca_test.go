package sdca

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

func distance(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// TestSDCAMiniBatchThreadsBitIdentical: the mini-batch form reduces each
// batch by coordinate owners in batch order, so one and two workers give
// the same model to the last bit.
func TestSDCAMiniBatchThreadsBitIdentical(t *testing.T) {
	x, b := enginetest.SparseData(500, 60, 8, 11)
	for _, reg := range []objective.ElasticNet{{Lambda: 1e-2}, {Lambda: 1e-2, L1: 1e-3}} {
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: reg}
		var w [2][]float64
		for i, threads := range []int{1, 2} {
			model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: threads, Seed: 2, Tol: -1, MaxEpochs: 20}.With(driver.Coordinate{M: 16}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Threads != threads {
				t.Fatalf("asked for %d threads, ran %d", threads, res.Threads)
			}
			w[i] = model.Weights
		}
		for j := range w[0] {
			if w[0][j] != w[1][j] {
				t.Fatalf("%s: coordinate %d differs: %v on one worker, %v on two", reg.Name(), j, w[0][j], w[1][j])
			}
		}
	}
}

// TestSDCAWeightsOptimality: per-coordinate weights (one coordinate
// barely penalised) change the steps σₖ = n/Σⱼ aₖⱼ²/λⱼ; the solution must
// satisfy the optimality conditions of the weighted elastic net.
func TestSDCAWeightsOptimality(t *testing.T) {
	x, b := enginetest.SparseData(400, 30, 6, 4)
	weights := make([]float64, 30)
	for j := range weights {
		weights[j] = 1 + float64(j%3)
	}
	weights[0] = 0.01
	for _, reg := range []objective.ElasticNet{{Lambda: 1e-2, Weights: weights}, {Lambda: 1e-2, L1: 1e-3, Weights: weights}} {
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: reg}
		model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Tol: 1e-11, MaxEpochs: 20000})
		if err != nil || !res.Converged {
			t.Fatalf("%s: %v, gap %.3g", reg.Name(), err, res.Final.RelGap)
		}
		if v := enginetest.KktViolation(prob, model.Weights); v > 1e-6 {
			t.Errorf("%s: optimality violated by %.3g", reg.Name(), v)
		}
	}
}

// TestDFSDCAInvariant: after epochs of steps with no certificate between
// them (which would restore it), λw = (1/n) Σ αᵢaᵢ holds to rounding, under
// uniform and importance sampling.
func TestDFSDCAInvariant(t *testing.T) {
	x, b := enginetest.SparseData(500, 60, 8, 5)
	for _, sampling := range []driver.Sampling{driver.SamplingUniform, driver.SamplingImportance} {
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
		m, err := startDFSDCA(context.Background(), prob, driver.Options{Seed: 1}.With(driver.Coordinate{Sampling: sampling}))
		if err != nil {
			t.Fatal(err)
		}
		s := m.(*dfsdca)
		if _, err := s.RunEpochs(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, x.Cols)
		for i := 0; i < x.Rows; i++ {
			val, idx := x.Row(i)
			kernels.SparseAxpy(s.alpha[i]/float64(x.Rows), val, idx, sum)
		}
		var worst, scale float64
		for j := range sum {
			worst = math.Max(worst, math.Abs(s.lam*s.w[j]-sum[j]))
			scale = math.Max(scale, math.Abs(sum[j]))
		}
		if scale == 0 || worst > 1e-13*scale {
			t.Errorf("%s: max |λw − (1/n)Σαᵢaᵢ| = %.3g, scale %.3g", sampling, worst, scale)
		}
		// The pseudo-duals are feasible duals: y = −α lies in dom φ*.
		for i, a := range s.alpha {
			if math.IsInf(prob.Loss.Conj(-a, b[i]), 1) {
				t.Fatalf("%s: −α_%d = %v is outside dom φ*", sampling, i, -a)
			}
		}
	}
}

// TestSDCAFamilyRefuses: what a solver cannot take is refused with a
// message that says why or names a solver that can.
func TestSDCAFamilyRefuses(t *testing.T) {
	x, b := enginetest.SparseData(100, 20, 4, 1)
	cases := []struct {
		solver driver.Solver
		prob   objective.Problem
		opt    driver.Options
		want   string
	}{
		{SolverSDCA, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1e-3}}, driver.Options{}, "λ > 0"},
		{SolverSDCA, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}.With(driver.Coordinate{BlockSize: 4}), "CoordinateSettings.M"},
		{SolverSDCAAsync, objective.Problem{Loss: objective.Hinge{}, Reg: objective.ElasticNet{}}, driver.Options{}, "λ > 0"},
		{SolverSDCAAsync, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}.With(driver.Coordinate{M: 4}), "sdca"},
		{SolverDFSDCA, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-4}}, driver.Options{}, "use sdca"},
		{SolverDFSDCA, objective.Problem{Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}, "smooth loss"},
		{SolverDFSDCA, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, Weights: make([]float64, 20)}}, driver.Options{}, "sdca"},
		{SolverSDCA, objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}.With(driver.Coordinate{Sampling: driver.SamplingImportance}), "importance"},
	}
	for _, c := range cases {
		c.prob.X, c.prob.B = x, b
		c.opt.Solver = c.solver
		_, _, err := enginetest.Train(context.Background(), c.prob, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s/%s: error %v, want one mentioning %q", c.solver, c.prob.Loss.Name(), c.prob.Reg.Name(), err, c.want)
		}
	}
}

// TestSDCACertificateRunningV checks the certificate's two routes: far from
// the tolerance it uses the running v, whose certificate then agrees with
// the exact one to rounding; within twice the tolerance it recomputes v, so
// that a drift of v (planted here) cannot make the run stop on a gap that
// the duals do not back.
func TestSDCACertificateRunningV(t *testing.T) {
	x, b := enginetest.SparseData(300, 40, 6, 11)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	for _, tol := range []float64{1e-12, 1} {
		m, err := startSDCA(context.Background(), prob, driver.Options{Seed: 1, Tol: tol, Threads: 1}.With(driver.Coordinate{M: 1}))
		if err != nil {
			t.Fatal(err)
		}
		s := m.(*sdcaSolver)
		if _, err := s.RunEpochs(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		running, err := s.Certify()
		if err != nil {
			t.Fatal(err)
		}
		s.recomputeV()
		exact := s.evaluate()
		if tol < 1 && math.Abs(running.Gap-exact.Gap) > 1e-12*exact.Primal {
			t.Errorf("tol %g: the running v's gap %.17g, the exact v's %.17g", tol, running.Gap, exact.Gap)
		}
		s.v[0] += 1e-3 // drift
		got, _ := s.Certify()
		drifted := math.Abs(got.Dual-exact.Dual) > 1e-9
		if tol < 1 && !drifted {
			t.Errorf("tol %g: far from the tolerance the certificate should use the running v (no recomputation)", tol)
		}
		if tol == 1 && (drifted || got.Gap != exact.Gap) {
			t.Errorf("tol %g: within the tolerance the certificate must recompute v: D = %.17g, exact %.17g", tol, got.Dual, exact.Dual)
		}
		// exactEvery certificates in a row recompute v at least once.
		s.v[0] += 1e-3
		for range exactEvery {
			got, _ = s.Certify()
		}
		if got.Dual != exact.Dual {
			t.Errorf("tol %g: after %d certificates v should have been recomputed: D = %.17g, exact %.17g", tol, exactEvery, got.Dual, exact.Dual)
		}
	}
}

// TestSDCAParallelCertificate checks that the certificate's workers (the
// row sweep for P and D, the column ranges for recomputing v) give the
// same trace, bit for bit, as one worker: the run's stopping decisions
// must not depend on the thread count.
func TestSDCAParallelCertificate(t *testing.T) {
	x, b := enginetest.SparseData(2500, 300, 40, 5) // 100k nonzeros: three certificate workers
	for _, reg := range []objective.ElasticNet{{Lambda: 1e-3}, {Lambda: 1e-3, L1: 1e-4}, {Lambda: 1e-3, Weights: constVec(300, 2)}} {
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: reg}
		var want []driver.TracePoint
		for _, threads := range []int{1, 2, 3} {
			_, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: threads, Tol: 1e-9, MaxEpochs: 40, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if threads == 3 && res.Threads != 3 {
				t.Errorf("%d threads asked, the certificate used %d", threads, res.Threads)
			}
			if threads == 1 {
				want = res.Trace
				continue
			}
			if len(res.Trace) != len(want) {
				t.Fatalf("%+v, %d threads: %d certificates, one thread %d", reg, threads, len(res.Trace), len(want))
			}
			for i, tp := range res.Trace {
				if tp.Primal != want[i].Primal || tp.Dual != want[i].Dual {
					t.Fatalf("%+v, %d threads, certificate %d: P %.17g D %.17g, one thread P %.17g D %.17g", reg, threads, i, tp.Primal, tp.Dual, want[i].Primal, want[i].Dual)
				}
			}
		}
	}
}

func constVec(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}
