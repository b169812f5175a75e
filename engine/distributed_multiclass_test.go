package engine

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// rankOut is one rank's model, results and collectives.
type rankOut struct {
	model   *Model
	res     *Result
	classes []ClassResult
	calls   int64
	err     error
}

// multiRanks runs train on p in-process ranks, rank r on its share of prob
// and of the labels y, and returns every rank's output.
func multiRanks(t *testing.T, prob Problem, y []float64, p int, train func(context.Context, comm.Comm, Problem, []float64) rankOut) []rankOut {
	t.Helper()
	shared := prob
	shared.B = y
	parts := enginetest.Shares(shared, p)
	out := make([]rankOut, p)
	err := comm.RunLocal(p, func(c comm.Comm) error {
		cnt := comm.Counted(c)
		part := parts[c.Rank()]
		o := train(context.Background(), cnt, part, part.B)
		o.calls = cnt.Stats().Calls
		out[c.Rank()] = o
		return nil
	})
	if err != nil {
		t.Fatalf("%d ranks: %v", p, err)
	}
	for r, o := range out {
		if o.err != nil {
			t.Fatalf("P = %d, rank %d: %v", p, r, o.err)
		}
		if !slices.Equal(o.model.Weights, out[0].model.Weights) || !slices.Equal(o.model.Labels, out[0].model.Labels) || o.calls != out[0].calls {
			t.Fatalf("P = %d: rank %d's model or collectives (%d) differ from rank 0's (%d)", p, r, o.calls, out[0].calls)
		}
	}
	return out
}

func checkCalls(t *testing.T, p int, calls, calls1 int64) {
	t.Helper()
	if float64(calls) > 1.05*float64(calls1)+2 || float64(calls) < 0.95*float64(calls1)-2 {
		t.Errorf("P = %d: %d collectives, against %d on one rank", p, calls, calls1)
	}
}

// fourClasses draws n rows of d features whose class (raw labels 1…4)
// shifts one feature each; the classes of the first rows are 1 and 2 only,
// so that the first ranks of a split do not see every class.
func fourClasses(n, d int) (*Problem, []float64) {
	x, y := threeClasses(n, d, 3)
	for k := range y {
		if k%5 == 4 && k > n/4 {
			y[k] = 4
			val, idx := x.Row(k)
			for q, j := range idx {
				if j == 3 {
					val[q] += 1.5
				}
			}
		}
		if k < n/8 && y[k] == 3 {
			y[k] = 1
		}
	}
	return &Problem{X: x, Loss: objective.Logistic{}}, y
}

// TestDistributedMultinomialRanks: the multinomial model over P = 1 … 8
// in-process ranks reaches one process's certified optimum (primal within
// the sum of the gaps), every rank holds the same model, and the
// collectives are one rank's within 5% + 2.
func TestDistributedMultinomialRanks(t *testing.T) {
	prob, y := fourClasses(600, 12)
	prob.Reg = objective.ElasticNet{Lambda: 1e-3}
	opt := DefaultOptions()
	opt.Tol, opt.Threads, opt.Deterministic = 1e-9, 2, true
	m1, res1, err := TrainMultinomial(context.Background(), *prob, y, opt)
	if err != nil {
		t.Fatal(err)
	}
	maxP := 8
	if testing.Short() {
		maxP = 4
	}
	var calls1 int64
	for p := 1; p <= maxP; p++ {
		out := multiRanks(t, *prob, y, p, func(ctx context.Context, c comm.Comm, local Problem, y []float64) rankOut {
			m, res, err := TrainMultinomialDistributed(ctx, c, local, y, opt)
			return rankOut{model: m, res: res, err: err}
		})
		o := out[0]
		fin := o.res.Final
		if !o.res.Converged || fin.RelGap > opt.Tol {
			t.Errorf("P = %d: stopped %q at relative gap %g", p, o.res.Stop, fin.RelGap)
		}
		if d := math.Abs(fin.Primal - res1.Final.Primal); d > fin.Gap+res1.Final.Gap+1e-15 {
			t.Errorf("P = %d: primal %.17g against one process's %.17g", p, fin.Primal, res1.Final.Primal)
		}
		if !o.model.Multinomial || !slices.Equal(o.model.Labels, m1.Labels) || len(o.model.Weights) != len(m1.Weights) {
			t.Fatalf("P = %d: model of labels %v, %d weights; one process %v, %d", p, o.model.Labels, len(o.model.Weights), m1.Labels, len(m1.Weights))
		}
		if d := enginetest.RelDiff(o.model.Weights, m1.Weights); d > 1e-3 {
			t.Errorf("P = %d: the model is %g from one process's", p, d)
		}
		if p == 1 {
			calls1 = o.calls
			if fin.Epoch == res1.Final.Epoch && !slices.Equal(o.model.Weights, m1.Weights) {
				t.Errorf("one rank's model is not one process's to the bit")
			}
		}
		checkCalls(t, p, o.calls, calls1)
		t.Logf("P = %d: steps %d, collectives %d, rel gap %.3g", p, fin.Epoch, o.calls, fin.RelGap)
	}
}

// TestDistributedOneVsRestRanks: one-vs-rest over P = 1 … 4 in-process
// ranks holds every class, each within its certified tolerance of one
// process's, with one rank's collectives.
func TestDistributedOneVsRestRanks(t *testing.T) {
	prob, y := fourClasses(600, 12)
	prob.Reg = objective.ElasticNet{Lambda: 1e-3}
	opt := DefaultOptions()
	opt.Tol, opt.Threads, opt.Deterministic = 1e-9, 1, true
	opt.Solver = SolverNewton
	m1, res1, err := TrainOneVsRest(context.Background(), *prob, y, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt.Solver = ""
	var calls1 int64
	for p := 1; p <= 4; p++ {
		out := multiRanks(t, *prob, y, p, func(ctx context.Context, c comm.Comm, local Problem, y []float64) rankOut {
			m, cr, err := TrainOneVsRestDistributed(ctx, c, local, y, opt, nil)
			return rankOut{model: m, classes: cr, err: err}
		})
		o := out[0]
		if !slices.Equal(o.model.Labels, m1.Labels) || len(o.model.Weights) != len(m1.Weights) {
			t.Fatalf("P = %d: labels %v, %d weights; one process %v, %d", p, o.model.Labels, len(o.model.Weights), m1.Labels, len(m1.Weights))
		}
		for q, cr := range o.classes {
			fin, ref := cr.Result.Final, res1[q].Result.Final
			if cr.Result.Solver != SolverNewton || !cr.Result.Converged {
				t.Errorf("P = %d, class %v: %s stopped %q", p, cr.Label, cr.Result.Solver, cr.Result.Stop)
			}
			if d := math.Abs(fin.Primal - ref.Primal); d > fin.Gap+ref.Gap+1e-15 {
				t.Errorf("P = %d, class %v: primal %.17g against one process's %.17g", p, cr.Label, fin.Primal, ref.Primal)
			}
		}
		if d := enginetest.RelDiff(o.model.Weights, m1.Weights); d > 1e-4 {
			t.Errorf("P = %d: the model is %g from one process's", p, d)
		}
		if p == 1 {
			calls1 = o.calls
		}
		checkCalls(t, p, o.calls, calls1)
		t.Logf("P = %d: collectives %d", p, o.calls)
	}
}

// TestDistributedL1Choice: with no solver named, an L1 term on a smooth
// loss runs owlqn over the ranks, to one process's optimum.
func TestDistributedL1Choice(t *testing.T) {
	x, b := enginetest.SharedData(t, "heart_scale")
	prob := Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1 / float64(x.Rows)}}
	opt := DefaultOptions()
	opt.Tol = 1e-8
	_, ref, err := Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 3} {
		_, res, _, _ := trainRanks(t, prob, p, opt)
		if res.Solver != SolverOWLQN || res.Choice == "" {
			t.Errorf("P = %d: ran %s (%q), want owlqn", p, res.Solver, res.Choice)
		}
		if d := math.Abs(res.Final.Primal - ref.Final.Primal); d > res.Final.Gap+ref.Final.Gap+1e-15 {
			t.Errorf("P = %d: primal %.17g against one process's %.17g", p, res.Final.Primal, ref.Final.Primal)
		}
	}
}
