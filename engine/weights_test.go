package engine

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestSampleWeightsAreDuplicatedRows: a weight of 2 on k rows gives the
// optimum of the file with those rows written twice, at λ·n/(n + k) (and
// l1·n/(n + k)): P on the weighted problem is (n + k)/n times P on the
// duplicated one. Checked with newton (L2) and glmnet (elastic net), each
// certified to 1e-11, and with Certify on the weighted problem.
func TestSampleWeightsAreDuplicatedRows(t *testing.T) {
	x, b := sparseData(300, 25, 5, 11)
	const k = 40
	w := make([]float64, x.Rows)
	rows := make([]int, 0, x.Rows+k)
	for i := range w {
		w[i] = 1
		rows = append(rows, i)
	}
	for i := range k {
		w[i] = 2
		rows = append(rows, i)
	}
	dup := x.SelectRows(rows)
	bd := make([]float64, len(rows))
	for i, r := range rows {
		bd[i] = b[r]
	}
	scale := float64(x.Rows) / float64(x.Rows+k)
	for _, c := range []struct {
		solver Solver
		reg    ElasticNet
	}{{SolverNewton, ElasticNet{Lambda: 1e-2}}, {SolverGLMNET, ElasticNet{Lambda: 1e-3, L1: 1e-2}}} {
		opt := Options{Solver: c.solver, Tol: 1e-11, MaxEpochs: 500, Threads: 1}
		weighted := Problem{X: x, B: b, Loss: Logistic{}, Reg: c.reg, SampleWeights: w}
		mw, rw, err := Train(context.Background(), weighted, opt)
		if err != nil {
			t.Fatal(err)
		}
		dreg := ElasticNet{Lambda: c.reg.Lambda * scale, L1: c.reg.L1 * scale}
		md, rd, err := Train(context.Background(), Problem{X: dup, B: bd, Loss: Logistic{}, Reg: dreg}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(rw.Final.Primal*scale - rd.Final.Primal); d > 1e-9*rd.Final.Primal {
			t.Errorf("%s: P weighted × n/(n+k) = %.15g, P duplicated = %.15g", c.solver, rw.Final.Primal*scale, rd.Final.Primal)
		}
		if d := relDiff(mw.Weights, md.Weights); d > 1e-4 {
			t.Errorf("%s: the weighted and duplicated optima differ by %.3g", c.solver, d)
		}
		cert, err := Certify(weighted, mw.Weights)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(cert.Primal - rw.Final.Primal); d > 1e-12*cert.Primal {
			t.Errorf("%s: Certify's P %.15g, the run's %.15g", c.solver, cert.Primal, rw.Final.Primal)
		}
	}
}

// TestSampleWeightsRefused: solvers that do not weight rows refuse, and
// weights that are not positive are refused with the row.
func TestSampleWeightsRefused(t *testing.T) {
	x, b := sparseData(100, 10, 4, 2)
	w := make([]float64, x.Rows)
	for i := range w {
		w[i] = 1
	}
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}, SampleWeights: w}
	if _, _, err := Train(context.Background(), prob, Options{Solver: SolverSDCA, Tol: 1e-6, MaxEpochs: 10}); err == nil || !strings.Contains(err.Error(), "sample weights") {
		t.Errorf("sdca with sample weights: %v", err)
	}
	if _, res, err := Train(context.Background(), prob, DefaultOptions()); err != nil || res.Solver != SolverNewton {
		t.Errorf("no solver named: %v, %v", res, err)
	}
	w[7] = 0
	if _, _, err := Train(context.Background(), prob, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "row 8") {
		t.Errorf("a zero weight: %v", err)
	}
}
