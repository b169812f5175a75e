package engine

import (
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// Certify computes the primal objective, a dual objective and their gap for
// any weights w, for instance a model trained by another tool. The dual
// point is the one the optimality conditions pair with w,
// yₖ = φ'(aₖᵀw) projected into dom φ*, so the gap goes to zero as w goes to
// the optimum and, by weak duality, always bounds P(w) − P*.
func Certify(prob Problem, w []float64) (TracePoint, error) {
	if err := prob.Validate(); err != nil {
		return TracePoint{}, err
	}
	if len(w) != prob.X.Cols {
		return TracePoint{}, fmt.Errorf("engine: %d weights for %d columns", len(w), prob.X.Cols)
	}
	n := float64(prob.X.Rows)
	r := make([]float64, len(w))
	var loss, conj float64
	for k := 0; k < prob.X.Rows; k++ {
		val, idx := prob.X.Row(k)
		z := kernels.SparseDot(val, idx, w)
		b := prob.B[k]
		y := prob.Loss.DualFeasible(prob.Loss.Deriv(z, b), b)
		loss += prob.Loss.Value(z, b)
		conj += prob.Loss.Conj(y, b)
		kernels.SparseAxpy(y/n, val, idx, r)
	}
	p := loss/n + prob.Reg.Value(w)
	d := -conj/n - prob.Reg.ConjNeg(r)
	return TracePoint{Primal: p, Dual: d, Gap: p - d, RelGap: (p - d) / math.Max(1, math.Abs(p))}, nil
}
