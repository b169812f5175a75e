package objective

import (
	"errors"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// Partial holds one rank's share of a certificate whose rows are spread
// over several processes: the unnormalised sums over the rank's own rows
//
//	Loss = Σₖ wₖ φ(aₖᵀx, bₖ),   Conj = Σₖ wₖ φ*(yₖ/wₖ, bₖ),
//
// each a compensated sum in fixed chunks of rows, as At forms them. The
// ranks add their Partials (and their unnormalised dual sums, DualSum)
// element-wise, and Assemble turns the totals into the certificate of the
// whole problem with At's formulas. On one rank the result is At's to the
// bit.
type Partial struct {
	Loss, Conj float64
}

// PartialAt returns the rank's Partial at the primal point x and the
// duals y of its rows, y projected into dom φ* as At projects the own
// duals. It is the row part of AtDualVector: the columns' part, g(x) and
// g*(−v), needs the v of all ranks, and Assemble adds it.
func (e *Evaluator) PartialAt(x, y []float64) (Partial, error) {
	if len(x) != e.d {
		return Partial{}, fmt.Errorf("engine: partial certificate at %d weights for %d columns", len(x), e.d)
	}
	if len(y) != e.n {
		return Partial{}, fmt.Errorf("engine: partial certificate at %d duals for %d rows", len(y), e.n)
	}
	loss, b, sw := e.prob.Loss, e.prob.B, e.prob.SampleWeights
	e.forChunks(func(c, lo, hi int) {
		var ls, cs Sum
		for k := lo; k < hi; k++ {
			val, idx := e.prob.X.Row(k)
			z := kernels.SparseDot(val, idx, x)
			if sw != nil {
				ls.Add(sw[k] * loss.Value(z, b[k]))
				cs.Add(sw[k] * loss.Conj(sw[k]*loss.DualFeasible(y[k]/sw[k], b[k])/sw[k], b[k]))
				continue
			}
			ls.Add(loss.Value(z, b[k]))
			cs.Add(loss.Conj(loss.DualFeasible(y[k], b[k]), b[k]))
		}
		e.lossSum[c] = ls.Sum()
		e.conjSum[c] = cs.Sum()
	})
	var ps, ds Sum
	for c := range e.lossSum {
		ps.Add(e.lossSum[c])
		ds.Add(-e.conjSum[c])
	}
	// Σ(−terms) is −Σ(terms) to the bit: rounding to nearest is symmetric.
	return Partial{Loss: ps.Sum(), Conj: -ds.Sum()}, nil
}

// DualSum sets out to the rank's unnormalised Σₖ yₖaₖ over its rows, the
// duals projected into dom φ* as At projects the own duals: each vⱼ summed
// over the rows in order with Neumaier's compensation and each product's
// rounding error (FMA), and the compensation added last but not divided by
// n. The ranks add their sums, and v = sum·(1/n) for the n of all ranks is
// then the dual vector At computes from all the duals (DualVector), to the
// bit on one rank.
func (e *Evaluator) DualSum(y, out []float64) error {
	if len(y) != e.n {
		return fmt.Errorf("engine: dual sum of %d duals for %d rows", len(y), e.n)
	}
	if len(out) != e.d {
		return fmt.Errorf("engine: dual sum into %d values for %d columns", len(out), e.d)
	}
	e.alloc(true, false, nil)
	loss, b, sw := e.prob.Loss, e.prob.B, e.prob.SampleWeights
	yOwn := e.duals
	for k, yk := range y {
		if sw != nil {
			yOwn[k] = sw[k] * loss.DualFeasible(yk/sw[k], b[k])
		} else {
			yOwn[k] = loss.DualFeasible(yk, b[k])
		}
	}
	e.ownValid, e.dualsValid = false, false
	e.forOwners(func(lo, hi int32) {
		e.dualVectorSum(yOwn, out, lo, hi)
	})
	return nil
}

// ErrPartialIndicator is returned by Assemble for a regularizer whose
// conjugate is an indicator at the dual vector: the dual point would have
// to be scaled into dom g* (DualScale), and the scaled conjugate terms need
// the duals of every rank, which a Partial does not hold.
var ErrPartialIndicator = errors.New("engine: the dual vector lies outside dom g*, and a certificate assembled from partial sums cannot scale it in: it needs a strongly convex regularizer (λ > 0)")

// Assemble returns the certificate of the whole problem from the ranks'
// summed Partial p, the primal point x and the dual vector v = (1/n) Σₖ yₖaₖ
// over all n rows:
//
//	P = p.Loss/n + g(x),   D = −p.Conj/n − g*(−v),
//
// in At's arithmetic (P multiplies by the rounded 1/n, D divides by n), so
// that on one rank it is AtDualVector's certificate to the bit. Every rank
// that calls it with the same totals, x and v gets the same bits.
func Assemble(reg Regularizer, x, v []float64, p Partial, n int) (Certificate, error) {
	if n <= 0 {
		return Certificate{}, fmt.Errorf("engine: certificate of %d rows", n)
	}
	if len(x) != len(v) {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights and a dual vector of %d", len(x), len(v))
	}
	invN := 1 / float64(n)
	primal := p.Loss*invN + reg.Value(x)
	gc := reg.ConjNeg(v)
	if math.IsInf(gc, 1) && reg.StrongConvexity() == 0 {
		return Certificate{}, ErrPartialIndicator
	}
	dual := -p.Conj/float64(n) - gc
	gap := primal - dual
	return Certificate{Primal: primal, Dual: dual, Gap: gap, RelGap: gap / math.Max(1, math.Abs(primal))}, nil
}
