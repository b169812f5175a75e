package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// TestEverySolverOneOptimum is the solver family's table: every registered
// solver that accepts a problem reaches that problem's one optimum, within
// the tolerance asked, on a synthetic ridge problem (against the closed
// form) and on the first rows of a9a and w8a (logistic, squared hinge and,
// with L1, the elastic net; against AdaSPDC certified to a 1e-11 gap). A
// solver is checked on every problem it accepts; the table fails if a
// solver accepts none, so a new solver cannot slip through unchecked.
func TestEverySolverOneOptimum(t *testing.T) {
	if raceEnabled {
		t.Skip("an optimality table, not a concurrency test: the solvers' own tests run under the race detector")
	}
	type problem struct {
		name string
		prob Problem
		ref  float64 // P*
		tol  float64 // the relative gap asked for; zero: 1e-8
	}
	var problems []problem
	rx, rb := fig1Data(300, 20, 7)
	ridge := Problem{X: rx, B: rb, Loss: Squared{}, Reg: ElasticNet{Lambda: 1e-2}}
	w := ridgeClosedFormCentred(rx, rb, 1e-2, make([]float64, rx.Cols))
	cert, err := Certify(ridge, w)
	if err != nil {
		t.Fatal(err)
	}
	problems = append(problems, problem{"ridge", ridge, cert.Primal, 0})
	rows := 1500
	if testing.Short() {
		rows = 400
	}
	for _, file := range []string{"a9a", "w8a"} {
		x, b := sharedData(t, file)
		x, b = firstRows(x, b, rows)
		for _, loss := range []Loss{Logistic{}, SquaredHinge{}} {
			for _, l1 := range []float64{0, 1e-3} {
				prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1e-3, L1: l1}}
				_, res, err := Train(t.Context(), prob, Options{Solver: SolverAdaSPDC, Tol: 1e-11, MaxEpochs: 5000}.With(CoordinateSettings{M: 4, StepScale: 2}))
				if err != nil || !res.Converged {
					t.Fatalf("%s reference: %v, gap %.3g", file, err, res.Final.RelGap)
				}
				problems = append(problems, problem{fmt.Sprintf("%s/%s/l1=%g", file, loss.Name(), l1), prob, res.Final.Dual, 0})
			}
		}
	}
	// The SVM, for the solvers that take the hinge; its reference is SDCA
	// (LIBLINEAR's -s 3 method) at a 1e-10 gap. Pdprox converges as 1/T
	// and is checked against its theorem's bound in pdprox_test.go instead.
	{
		x, b := sharedData(t, "a9a")
		x, b = firstRows(x, b, rows)
		prob := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-3}}
		_, res, err := Train(t.Context(), prob, Options{Solver: "sdca", Tol: 1e-10, MaxEpochs: 20000, StallEpochs: -1})
		if err != nil || !res.Converged {
			t.Fatalf("SVM reference: %v, gap %.3g", err, res.Final.RelGap)
		}
		// The target for the SVM is 1e-6; SDCA's sublinear tail
		// makes 1e-8 cost thousands of epochs.
		problems = append(problems, problem{"a9a/hinge", prob, res.Final.Dual, 1e-6})
	}
	for _, info := range Solvers() {
		checked := 0
		for _, p := range problems {
			tol := p.tol
			if tol == 0 {
				tol = 1e-8
			}
			if info.Name == SolverSAG {
				// Its step, 1/(16L) with L from the longest row, made 1e-8
				// on w8a's squared hinge cost more than 20000 epochs.
				tol = max(tol, 1e-6)
			}
			opt := Options{Solver: info.Name, Tol: tol, MaxEpochs: 20000, Seed: 3}
			if chooseErr := driver.Lookup(info.Name).Accepts(p.prob, opt.WithDefaults()); chooseErr != nil {
				continue
			}
			if strings.HasPrefix(string(info.Name), "pdprox") || info.Name == SolverJointAdapt {
				continue // O(1/T), or meant for the L1-SVM: their own tests
			}
			checked++
			_, res, err := Train(t.Context(), p.prob, opt)
			if err != nil {
				t.Errorf("%s on %s: %v", info.Name, p.name, err)
				continue
			}
			if !res.Converged {
				t.Errorf("%s on %s: stopped (%s) at a relative gap of %.3g after %d epochs", info.Name, p.name, res.Stop, res.Final.RelGap, res.Final.Epoch)
				continue
			}
			// P − P* ≤ gap ≤ tol·max(1, |P|), and P* ≤ P up to rounding.
			scale := math.Max(1, math.Abs(p.ref))
			if d := res.Final.Primal - p.ref; d > 2*tol*scale || d < -1e-12*scale {
				t.Errorf("%s on %s: P = %.15g, the optimum is %.15g (difference %.3g)", info.Name, p.name, res.Final.Primal, p.ref, d)
			}
		}
		t.Logf("%s: %d problems", info.Name, checked)
		if checked == 0 && !strings.HasPrefix(string(info.Name), "pdprox") && info.Name != SolverJointAdapt {
			t.Errorf("solver %s accepted none of the table's problems: add one it takes", info.Name)
		}
	}
}
