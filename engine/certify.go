package engine

import (
	"fmt"
	"math"
	"sync"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
)

// certifyMinNNZ is the number of nonzeros per worker below which Certify
// does not start another goroutine: a worker's private r costs O(d) to
// clear and to add up.
const certifyMinNNZ = 1 << 16

// Certify computes the primal objective, a dual objective and their gap for
// any weights w, for instance a model trained by another tool, or the
// iterate of a method that keeps no dual variables. The dual point is the
// one the optimality conditions pair with w, yₖ = φ'(aₖᵀw) projected into
// dom φ*, so the gap goes to zero as w goes to the optimum and, by weak
// duality, always bounds P(w) − P*.
//
// It runs on up to GOMAXPROCS goroutines, one per 65536 nonzeros: each
// takes fixed chunks of rows, sums the loss and conjugate terms with
// compensation and scatters yₖaₖ/n into its own copy of
// v = (1/n)Σₖ yₖaₖ; the copies are then added by coordinate ranges. The
// chunks, and so the result, do not depend on the scheduling, only on the
// number of goroutines.
func Certify(prob Problem, w []float64) (TracePoint, error) {
	if err := prob.Validate(); err != nil {
		return TracePoint{}, err
	}
	if len(w) != prob.X.Cols {
		return TracePoint{}, fmt.Errorf("engine: %d weights for %d columns", len(w), prob.X.Cols)
	}
	x := prob.X
	n, d := x.Rows, x.Cols
	chunks := (n + certChunk - 1) / certChunk
	workers := workersFor(0, float64(x.NNZ()), certifyMinNNZ, chunks)
	lossSum := make([]float64, chunks)
	conjSum := make([]float64, chunks)
	vs := make([][]float64, workers)
	invN := 1 / float64(n)
	var wg sync.WaitGroup
	for t := range workers {
		vs[t] = hugepage.Make[float64](d)
		wg.Go(func() {
			v := vs[t]
			for c := t; c < chunks; c += workers {
				var ls, cs objective.Sum
				for k := c * certChunk; k < min((c+1)*certChunk, n); k++ {
					val, idx := x.Row(k)
					z := kernels.SparseDot(val, idx, w)
					b := prob.B[k]
					y := prob.Loss.DualFeasible(prob.Loss.Deriv(z, b), b)
					wk := 1.0
					if prob.SampleWeights != nil {
						// wφ's dual point is w·y, and its conjugate's
						// term there w·φ*(y).
						wk = prob.SampleWeights[k]
					}
					ls.Add(wk * prob.Loss.Value(z, b))
					cs.Add(wk * prob.Loss.Conj(y, b))
					kernels.SparseAxpy(wk*y*invN, val, idx, v)
				}
				lossSum[c], conjSum[c] = ls.Sum(), cs.Sum()
			}
		})
	}
	wg.Wait()
	v := vs[0]
	if workers > 1 {
		// Add the private copies by coordinate ranges, in worker order.
		span := (d + workers - 1) / workers
		for t := range workers {
			wg.Go(func() {
				lo, hi := t*span, min((t+1)*span, d)
				for _, o := range vs[1:] {
					if lo < hi {
						kernels.Axpy(1, o[lo:hi], v[lo:hi])
					}
				}
			})
		}
		wg.Wait()
	}
	var loss, conj objective.Sum
	for c := range chunks {
		loss.Add(lossSum[c])
		conj.Add(conjSum[c])
	}
	p := loss.Sum()*invN + prob.Reg.Value(w)
	dv := -conj.Sum()*invN - prob.Reg.ConjNeg(v)
	return TracePoint{Primal: p, Dual: dv, Gap: p - dv, RelGap: (p - dv) / math.Max(1, math.Abs(p))}, nil
}
