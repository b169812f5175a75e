package driver

import "github.com/adaspdc/adaspdc/engine/objective"

// certifyMinNNZ is the number of nonzeros per worker below which a
// certificate does not start another goroutine: a worker rescans the rows
// to find its columns, which costs more than it saves on small data.
const CertifyMinNNZ = 1 << 16

// newEvaluator returns the certificate's evaluator for prob on the
// workers the worker policy gives its nonzeros, at most threads
// (0: GOMAXPROCS).
func NewEvaluator(prob Problem, threads int) *objective.Evaluator {
	return objective.NewEvaluator(prob, WorkersFor(threads, float64(prob.X.NNZ()), CertifyMinNNZ, prob.X.Cols))
}

// tracePoint is a certificate as the trace records it.
func TracePointOf(c objective.Certificate) TracePoint {
	return TracePoint{Primal: c.Primal, Dual: c.Dual, Gap: c.Gap, RelGap: c.RelGap}
}
