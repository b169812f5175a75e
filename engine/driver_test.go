package engine

import (
	"context"
	"testing"
)

// TestStopRule: a rule sees every certificate in order and ends the run
// with Stop "rule"; the tolerance still wins when both fire.
func TestStopRule(t *testing.T) {
	x, b := sparseData(300, 50, 5, 1)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	var seen []int
	opt := adaspdcOptions()
	opt.Tol = -1
	opt.StopRule = func(trace []TracePoint) bool {
		seen = append(seen, trace[len(trace)-1].Epoch)
		return len(trace) == 4
	}
	_, res, err := Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != "rule" || len(res.Trace) != 4 || res.Final.Epoch != 3 {
		t.Errorf("stop %q after %d certificates, final epoch %d; want rule after 4, epoch 3", res.Stop, len(res.Trace), res.Final.Epoch)
	}
	for i, e := range seen {
		if e != i {
			t.Errorf("the rule saw epochs %v, want 0, 1, 2, 3", seen)
			break
		}
	}
	opt.Tol = 1e30
	_, res, err = Train(context.Background(), prob, opt)
	if err != nil || res.Stop != "tol" {
		t.Errorf("with a tolerance met at once: stop %q, error %v; want tol", res.Stop, err)
	}
}

// TestNoAllocationPerIteration: the iterations allocate nothing once
// warmed up. Twenty more epochs of 2000 iterations each may add only the
// per-epoch allocations of the certificates and pool phases (a few dozen
// each), never one per iteration.
func TestNoAllocationPerIteration(t *testing.T) {
	x, b := sparseData(2000, 5000, 8, 4)
	for _, tc := range []struct {
		name    string
		reg     ElasticNet
		lazy    Lazy
		m       int
		threads int
	}{
		{"lazy L2", ElasticNet{Lambda: 1e-3}, LazyOn, 1, 1},
		{"lazy L2, m=4", ElasticNet{Lambda: 1e-3}, LazyOn, 4, 1},
		{"lazy L2, m=4, 2 workers", ElasticNet{Lambda: 1e-3}, LazyOn, 4, 2},
		{"lazy L1", ElasticNet{Lambda: 1e-3, L1: 1e-4}, LazyOn, 1, 1},
		{"dense, 2 workers", ElasticNet{Lambda: 1e-3}, LazyOff, 4, 2},
	} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: tc.reg}
		allocs := func(epochs int) float64 {
			return testing.AllocsPerRun(2, func() {
				if _, _, err := Train(context.Background(), prob, Options{Threads: tc.threads, Tol: -1, MaxEpochs: epochs}.With(CoordinateSettings{M: tc.m})); err != nil {
					t.Fatal(err)
				}
			})
		}
		iters := x.Rows / tc.m
		if extra := allocs(22) - allocs(2); extra > 20*20 {
			t.Errorf("%s: 20 more epochs of %d iterations allocated %.0f times more", tc.name, iters, extra)
		} else {
			t.Logf("%s: 20 more epochs of %d iterations: %.0f more allocations", tc.name, iters, extra)
		}
	}
}
