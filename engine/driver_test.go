package engine

import (
	"context"
	"testing"
)

// TestStopRule: a rule sees every certificate in order and ends the run
// with Stop "rule"; the tolerance still wins when both fire.
func TestStopRule(t *testing.T) {
	x, b := sparseData(300, 50, 5, 1)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: Regularizer{Lambda: 1e-2}}
	var seen []int
	opt := DefaultOptions()
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
