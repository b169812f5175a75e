package engine

import (
	"context"
	"math"
	"testing"
)

// TestRestartFromPointAndDuals restarts each solver that takes warm duals
// from the point and the duals of its best certificate, as a checkpoint
// keeps them (Options.Checkpoint): the restart's first certificate is that
// certificate, to rounding. Without the duals (WarmStart alone), its gap
// is more than twice as large (5 to 700 times on this problem).
func TestRestartFromPointAndDuals(t *testing.T) {
	x, b := sharedData(t, "heart_scale")
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	for _, solver := range []Solver{SolverAdaSPDC, SolverSPDC, SolverSDCA, SolverCoCoA} {
		var bestTP TracePoint
		var bestX, bestY []float64
		opt := Options{Solver: solver, Tol: -1, MaxEpochs: 8, Seed: 1, Threads: 1}
		opt.Checkpoint = func(tp TracePoint, x, duals []float64) {
			bestTP, bestX, bestY = tp, append([]float64(nil), x...), append([]float64(nil), duals...)
		}
		if _, _, err := Train(context.Background(), prob, opt); err != nil {
			t.Fatalf("%s: %v", solver, err)
		}
		if len(bestY) != x.Rows {
			t.Fatalf("%s: the checkpoint got %d duals for %d rows", solver, len(bestY), x.Rows)
		}
		restart := func(duals []float64) TracePoint {
			_, res, err := Train(context.Background(), prob, Options{Solver: solver, Tol: -1, MaxEpochs: 0, Threads: 1, WarmStart: bestX, WarmDuals: duals})
			if err != nil {
				t.Fatalf("%s: restart: %v", solver, err)
			}
			return res.Trace[0]
		}
		got := restart(bestY)
		if math.Abs(got.Primal-bestTP.Primal) > 1e-12*bestTP.Primal || math.Abs(got.Dual-bestTP.Dual) > 1e-12*math.Max(1, math.Abs(bestTP.Dual)) {
			t.Errorf("%s: restart certified P = %.17g, D = %.17g; the checkpoint %.17g, %.17g", solver, got.Primal, got.Dual, bestTP.Primal, bestTP.Dual)
		}
		if cold := restart(nil); !(cold.Gap > 2*bestTP.Gap) {
			t.Errorf("%s: from the point alone the gap is %.3g, from the point and duals %.3g", solver, cold.Gap, bestTP.Gap)
		}
	}
}
