package engine

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// trainRanks trains prob split over p in-process ranks with opt and
// returns rank 0's result and its collective calls.
func trainRanks(t *testing.T, prob Problem, p int, opt Options) (*Model, *Result, int64, time.Duration) {
	t.Helper()
	parts := enginetest.Shares(prob, p)
	var (
		model *Model
		res   *Result
		calls int64
	)
	start := time.Now()
	err := comm.RunLocal(p, func(c comm.Comm) error {
		cnt := comm.Counted(c)
		m, r, err := TrainDistributed(context.Background(), cnt, parts[c.Rank()], opt)
		if c.Rank() == 0 {
			model, res, calls = m, r, cnt.Stats().Calls
		}
		return err
	})
	if err != nil {
		t.Fatalf("%d ranks: %v", p, err)
	}
	return model, res, calls, time.Since(start)
}

// TestTrainDistributedChoice: with no solver named, TrainDistributed runs
// newton for a smooth loss with an L2 term and cocoa for the hinge, and
// says why; a solver named is run.
func TestTrainDistributedChoice(t *testing.T) {
	x, b := enginetest.SharedData(t, "heart_scale")
	for _, c := range []struct {
		loss   objective.Loss
		solver Solver
		want   Solver
	}{
		{objective.Logistic{}, "", SolverNewton},
		{objective.SquaredHinge{}, "", SolverNewton},
		{objective.Hinge{}, "", SolverCoCoA},
		{objective.Logistic{}, SolverCoCoA, SolverCoCoA},
	} {
		prob := Problem{X: x, B: b, Loss: c.loss, Reg: objective.ElasticNet{Lambda: 1e-2}}
		opt := DefaultOptions()
		opt.Solver, opt.Tol = c.solver, 1e-4
		_, res, _, _ := trainRanks(t, prob, 2, opt)
		if res.Solver != c.want || (c.solver == "") != (res.Choice != "") {
			t.Errorf("%s, -solver %q: ran %s (%q), want %s", c.loss.Name(), c.solver, res.Solver, res.Choice, c.want)
		}
	}
}

// TestDistributedScaling measures, on w8a and a9a from ../shared/data,
// the epochs (Newton steps, CoCoA+ rounds) and the collectives to a 1e-6
// relative gap at P = 1, 2, 4, 8 in-process ranks: a table in the log,
// a row as each run ends. Set ADASPDC_RANKS to the solvers to run (a
// comma list, or 1 for newton,cocoa: go test -run TestDistributedScaling
// -v ./engine/).
func TestDistributedScaling(t *testing.T) {
	if os.Getenv("ADASPDC_RANKS") == "" {
		t.Skip("ADASPDC_RANKS not set")
	}
	solvers := []Solver{SolverNewton, SolverCoCoA}
	if v := os.Getenv("ADASPDC_RANKS"); v != "1" {
		solvers = nil
		for _, s := range strings.Split(v, ",") {
			solvers = append(solvers, Solver(s))
		}
	}
	t.Log("| data | λ | solver | P | epochs | allreduces | rel gap | seconds |")
	for _, name := range []string{"w8a", "a9a"} {
		x, b := enginetest.SharedData(t, name)
		for _, lam := range []float64{1 / float64(x.Rows), 1e-5} {
			prob := Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: lam}}
			for _, solver := range solvers {
				for _, p := range []int{1, 2, 4, 8} {
					opt := DefaultOptions()
					opt.Solver, opt.Tol, opt.Threads, opt.MaxEpochs, opt.StallEpochs = solver, 1e-6, 1, 1000, -1
					_, res, calls, took := trainRanks(t, prob, p, opt)
					t.Logf("| %s | %.3g | %s | %d | %d | %d | %.2e | %.2f |", name, lam, solver, p, res.Final.Epoch, calls, res.Final.RelGap, took.Seconds())
				}
			}
		}
	}
}
