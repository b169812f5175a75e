package newton

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// rankResult is what one rank returned, with its collective calls.
type rankResult struct {
	w     []float64
	res   *driver.Result
	err   error
	calls int64
}

// runRanks trains parts[r] on rank r of an in-process world and returns
// every rank's result and RunLocal's error; ctxOf (nil: Background) gives
// a rank its context.
func runRanks(t *testing.T, parts []objective.Problem, opt driver.Options, ctxOf func(r int) context.Context) ([]rankResult, error) {
	t.Helper()
	out := make([]rankResult, len(parts))
	done := make(chan error, 1)
	go func() {
		done <- comm.RunLocal(len(parts), func(c comm.Comm) error {
			r := c.Rank()
			ctx := context.Background()
			if ctxOf != nil {
				ctx = ctxOf(r)
			}
			cnt := comm.Counted(c)
			w, res, err := TrainDistributed(ctx, cnt, parts[r], opt)
			out[r] = rankResult{w: w, res: res, err: err, calls: cnt.Stats().Calls}
			return nil
		})
	}()
	select {
	case err := <-done:
		return out, err
	case <-time.After(2 * time.Minute):
		t.Fatal("the ranks did not finish within two minutes")
		return nil, nil
	}
}

// distCase is a problem for the tests over ranks.
type distCase struct {
	name string
	prob objective.Problem
}

func distCases(t *testing.T) []distCase {
	hx, hb := enginetest.SharedData(t, "heart_scale")
	gx, gb := enginetest.SharedRegression(t, "housing_scale")
	sx, sb := enginetest.SparseData(400, 60, 6, 7)
	// Wider than tall: the Hessian is not formed, CG multiplies by A.
	wx, wb := enginetest.SparseData(150, 900, 12, 11)
	// Rows of tiny curvature left out of the formed Hessian (splitData).
	px, pb := splitData(2)
	return []distCase{
		{"split/logistic", objective.Problem{X: px, B: pb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-5}}},
		{"heart/logistic", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1 / float64(hx.Rows)}}},
		{"housing/squared", objective.Problem{X: gx, B: gb, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: 1e-3}}},
		{"sparse/sqhinge", objective.Problem{X: sx, B: sb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-3}}},
		{"wide/logistic", objective.Problem{X: wx, B: wb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}},
		{"wide/smoothhinge", objective.Problem{X: wx, B: wb, Loss: objective.SmoothHinge{S: 1}, Reg: objective.ElasticNet{Lambda: 1e-2}}},
	}
}

// TestDistributedNewtonRanks: over P = 1 … 8 in-process ranks, newton's
// collectives are those of one rank (within 5% + 2), every rank returns
// the same bits, the certified optimum is one process's within the sum of
// the gaps, and one rank is one process's newton bit for bit.
func TestDistributedNewtonRanks(t *testing.T) {
	for _, tc := range distCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			opt := driver.DefaultOptions()
			opt.Tol, opt.Threads, opt.Deterministic = 1e-10, 2, true
			one := opt
			one.Solver = SolverNewton
			w1, res1, err := enginetest.Train(context.Background(), tc.prob, one)
			if err != nil {
				t.Fatal(err)
			}
			var calls1 int64
			for p := 1; p <= 8; p++ {
				out, err := runRanks(t, enginetest.Shares(tc.prob, p), opt, nil)
				if err != nil {
					t.Fatalf("P = %d: %v", p, err)
				}
				r0 := out[0]
				if r0.err != nil {
					t.Fatalf("P = %d: %v", p, r0.err)
				}
				for r, o := range out[1:] {
					if o.err != nil || !slices.Equal(o.w, r0.w) || o.res.Final != r0.res.Final && !sameTP(o.res.Final, r0.res.Final) || o.calls != r0.calls {
						t.Fatalf("P = %d: rank %d differs from rank 0 (error %v, calls %d against %d, final %+v against %+v)", p, r+1, o.err, o.calls, r0.calls, o.res.Final, r0.res.Final)
					}
				}
				fin := r0.res.Final
				if !r0.res.Converged || fin.RelGap > opt.Tol {
					t.Errorf("P = %d: stopped %q at relative gap %g", p, r0.res.Stop, fin.RelGap)
				}
				if d := math.Abs(fin.Primal - res1.Final.Primal); d > fin.Gap+res1.Final.Gap+1e-15*math.Abs(fin.Primal) {
					t.Errorf("P = %d: primal %.17g, one process %.17g: apart by %g, more than the gaps %g + %g", p, fin.Primal, res1.Final.Primal, d, fin.Gap, res1.Final.Gap)
				}
				if d := enginetest.RelDiff(r0.w, w1.Weights); d > 1e-4 {
					t.Errorf("P = %d: the model is %g from one process's", p, d)
				}
				if p == 1 {
					calls1 = r0.calls
					if !slices.Equal(r0.w, w1.Weights) || fin.Primal != res1.Final.Primal || fin.Gap != res1.Final.Gap || fin.Epoch != res1.Final.Epoch {
						t.Errorf("one rank is not one process's newton to the bit: primal %.17g against %.17g, epoch %d against %d", fin.Primal, res1.Final.Primal, fin.Epoch, res1.Final.Epoch)
					}
				}
				if lim := float64(calls1)*1.05 + 2; float64(r0.calls) > lim || float64(r0.calls) < float64(calls1)*0.95-2 {
					t.Errorf("P = %d: %d collectives, against %d on one rank", p, r0.calls, calls1)
				}
				t.Logf("P = %d: epochs %d, collectives %d, rel gap %.3g", p, fin.Epoch, r0.calls, fin.RelGap)
			}
		})
	}
}

func sameTP(a, b driver.TracePoint) bool {
	return a.Primal == b.Primal && a.Dual == b.Dual && a.Gap == b.Gap && a.Epoch == b.Epoch
}

// TestDistributedNewtonEmptyRanks: with more ranks than rows, the ranks
// without rows take part in every collective, and the model is that of
// the rows of the others.
func TestDistributedNewtonEmptyRanks(t *testing.T) {
	x, b := enginetest.SharedData(t, "heart_scale")
	x, b = enginetest.FirstRows(x, b, 5)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 0.1}}
	opt := driver.DefaultOptions()
	opt.Tol = 1e-10
	one := opt
	one.Solver = SolverNewton
	w1, res1, err := enginetest.Train(context.Background(), prob, one)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runRanks(t, enginetest.Shares(prob, 8), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, o := range out {
		if o.err != nil || !slices.Equal(o.w, out[0].w) {
			t.Fatalf("rank %d: error %v, or a model other than rank 0's", r, o.err)
		}
	}
	fin := out[0].res.Final
	if d := math.Abs(fin.Primal - res1.Final.Primal); !out[0].res.Converged || d > fin.Gap+res1.Final.Gap+1e-15 {
		t.Errorf("stopped %q, primal %.17g against one process's %.17g", out[0].res.Stop, fin.Primal, res1.Final.Primal)
	}
	if d := enginetest.RelDiff(out[0].w, w1.Weights); d > 1e-4 {
		t.Errorf("the model is %g from one process's", d)
	}
}

// TestDistributedNewtonStops: a rank whose context is cancelled stops
// every rank after the same collective, with the same certificate; a rank
// whose problem is refused makes every rank return an error.
func TestDistributedNewtonStops(t *testing.T) {
	x, b := enginetest.SharedData(t, "heart_scale")
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	parts := enginetest.Shares(prob, 3)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := runRanks(t, parts, driver.DefaultOptions(), func(r int) context.Context {
		if r == 1 {
			return cancelled
		}
		return context.Background()
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, o := range out {
		if o.err != nil || o.res.Stop != "context" || !sameTP(o.res.Final, out[0].res.Final) {
			t.Errorf("rank %d: error %v, stop %q, final %+v (rank 0's %+v)", r, o.err, o.res.Stop, o.res.Final, out[0].res.Final)
		}
	}

	bad := slices.Clone(parts)
	bad[2].Reg = objective.ElasticNet{Lambda: 1e-3, L1: 0.1}
	out, err = runRanks(t, bad, driver.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, o := range out {
		if o.err == nil || !driver.IsAgreed(o.err) {
			t.Errorf("rank %d: error %v, want an agreed refusal", r, o.err)
		}
	}
	hinge := slices.Clone(parts)
	for r := range hinge {
		hinge[r].Loss = objective.Hinge{}
	}
	out, _ = runRanks(t, hinge, driver.DefaultOptions(), nil)
	if o := out[0]; o.err == nil {
		t.Errorf("the hinge loss: no error")
	} else if errors.Is(o.err, context.Canceled) {
		t.Errorf("the hinge loss: %v", o.err)
	}
	_ = fmt.Sprint
	_ = sparse.CSR{}
}
