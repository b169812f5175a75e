package driver

import (
	"fmt"

	"github.com/adaspdc/adaspdc/engine/objective"
)

// certifyMinNNZ is the number of nonzeros per worker below which a
// certificate does not start another goroutine: a worker rescans the rows
// to find its columns, which costs more than it saves on small data.
const CertifyMinNNZ = 1 << 16

// NewEvaluator returns the certificate's evaluator for prob on the
// workers the worker policy gives its nonzeros, at most threads
// (0: GOMAXPROCS).
func NewEvaluator(prob Problem, threads int) *objective.Evaluator {
	return objective.NewEvaluator(prob, WorkersFor(threads, float64(prob.X.NNZ()), CertifyMinNNZ, prob.X.Cols))
}

// tracePoint is a certificate as the trace records it.
func TracePointOf(c objective.Certificate) TracePoint {
	return TracePoint{Primal: c.Primal, Dual: c.Dual, Gap: c.Gap, RelGap: c.RelGap}
}

// Certify computes the primal objective, a dual objective and their gap for
// any weights w, for instance a model trained by another tool, or the
// iterate of a method that keeps no dual variables. The dual point is the
// one the optimality conditions pair with w, yₖ = φ'(aₖᵀw) projected into
// dom φ* (and scaled into dom g* when g* is an indicator), so the gap goes
// to zero as w goes to the optimum and, by weak duality, always bounds
// P(w) − P*. It is objective.Evaluator's certificate, the one every method
// reports: bit-identical whatever the number of goroutines it runs on (up
// to GOMAXPROCS, one per 65536 nonzeros).
func Certify(prob Problem, w []float64) (TracePoint, error) {
	if err := prob.Validate(); err != nil {
		return TracePoint{}, err
	}
	if len(w) != prob.X.Cols {
		return TracePoint{}, fmt.Errorf("engine: %d weights for %d columns", len(w), prob.X.Cols)
	}
	c, err := NewEvaluator(prob, 0).At(w, nil, objective.PairedDuals)
	return TracePointOf(c), err
}
