package objective

import (
	"errors"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/internal/hugepage"
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
	zero := isZero(x) // every margin is 0: no need to read the rows
	e.forChunks(func(c, lo, hi int) {
		var ls, cs Sum
		var block [marginBlock]float64
		for k := lo; k < hi; k++ {
			var z float64
			if !zero {
				i := (k - lo) % marginBlock
				if i == 0 {
					e.prob.X.MulVecRows(k, min(k+marginBlock, hi), x, block[:])
				}
				z = block[i]
			}
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
// over the rows in order with every product's and addition's rounding
// error carried (AddProduct), and the errors added last but not divided by
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
	e.alloc(true, false, out)
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
	primal := float64(p.Loss*invN) + reg.Value(x)
	gc := reg.ConjNeg(v)
	if math.IsInf(gc, 1) && reg.StrongConvexity() == 0 {
		return Certificate{}, ErrPartialIndicator
	}
	dual := -p.Conj/float64(n) - gc
	gap := primal - dual
	return Certificate{Primal: primal, Dual: dual, Gap: gap, RelGap: gap / math.Max(1, math.Abs(primal))}, nil
}

// DualPlane is the dual objective on a plane of dual points, for a step
// search that compares D at many points of it, over several ranks as
// cheaply as on one. The points are y(γ, β) = y₀ + γ·Δy + β·p, whose dual
// vectors are v(γ, β) = v₀ + γ·Δv + β·p_v (Δv and p_v the (1/n) Σₖ of
// Δyₖaₖ and pₖaₖ), and
//
//	D(γ, β) = −Conj(γ, β)/n − g*(−v(γ, β)),
//
// with Conj(γ, β) = Σₖ wₖφ*(yₖ(γ, β)/wₖ, bₖ), the ranks' sums over their
// rows added by one allreduce: the pieces a rank can sum, as for
// Assemble. A row whose Δyₖ and pₖ are both zero adds the same term at
// every point and may be left out of Conj, which shifts every value by
// the same constant. Where g is plain L2, g*(−u) = ‖u‖²/(2λ) is a
// quadratic in (γ, β) whose six coefficients, dot products of v₀, Δv and
// p_v, Set forms once, so that a point costs O(1); otherwise a point
// costs g* at v(γ, β), O(d).
//
// The values serve to compare points with each other, not as a
// certificate: the quadratic rounds otherwise than g*, Conj may lack the
// rows that do not move, and a search's v₀ and Δv carry the rounding of
// their increments. A certificate at the point chosen comes from At,
// AtDualVector, or PartialAt and Assemble.
type DualPlane struct {
	reg       Regularizer
	invN      float64
	v, dv, pv []float64
	// quad holds where g* is ‖u‖²/(2λ); vv … bb are then the products of
	// v₀ (v), Δv (a) and p_v (b).
	quad                   bool
	invLam                 float64
	vv, va, vb, aa, ab, bb float64
	trial                  []float64 // v(γ, β), where g* is not the quadratic
}

// NewDualPlane returns a DualPlane for the regularizer reg of a problem
// of n rows (all ranks' rows).
func NewDualPlane(reg Regularizer, n int) *DualPlane {
	p := &DualPlane{reg: reg, invN: 1 / float64(n)}
	if en, ok := reg.AsElasticNet(); ok && en.Plain() && en.L1 == 0 && en.Lambda > 0 {
		p.quad, p.invLam = true, 1/en.Lambda
	}
	return p
}

// Set takes the plane's dual vectors v₀, Δv and p_v, which it reads (and
// the caller leaves unchanged) until the next Set.
func (p *DualPlane) Set(v, dv, pv []float64) error {
	if len(dv) != len(v) || len(pv) != len(v) {
		return fmt.Errorf("engine: a dual plane through vectors of %d, %d and %d", len(v), len(dv), len(pv))
	}
	p.v, p.dv, p.pv = v, dv, pv
	if !p.quad {
		if len(p.trial) != len(v) {
			p.trial = hugepage.Make[float64](len(v))
		}
		return nil
	}
	var vv, va, vb, aa, ab, bb float64
	for j, vj := range v {
		a, b := dv[j], pv[j]
		vv += vj * vj
		va += vj * a
		vb += vj * b
		aa += a * a
		ab += a * b
		bb += b * b
	}
	p.vv, p.va, p.vb, p.aa, p.ab, p.bb = vv, va, vb, aa, ab, bb
	return nil
}

// At returns D(γ, β) given Conj(γ, β), the summed conjugate terms at the
// point: −Conj/n − g*(−v(γ, β)). A point outside dom φ* has Conj = +∞ and
// D = −∞.
func (p *DualPlane) At(gamma, beta, conj float64) float64 {
	return -p.invN*conj - p.conjNeg(gamma, beta)
}

// conjNeg returns g*(−v(γ, β)).
func (p *DualPlane) conjNeg(g, be float64) float64 {
	if p.quad {
		return (p.vv + 2*g*p.va + 2*be*p.vb + g*g*p.aa + 2*g*be*p.ab + be*be*p.bb) * 0.5 * p.invLam
	}
	for j, vj := range p.v {
		p.trial[j] = vj + g*p.dv[j] + be*p.pv[j]
	}
	return p.reg.ConjNeg(p.trial)
}

// AssemblePaired is Assemble for the paired duals of a method that has
// summed, over the rows of every rank, Loss = Σₖ wₖφ(zₖ) and Conj =
// Σₖ wₖφ*(φ′(zₖ)) at the margins zₖ = aₖᵀx, every φ′(zₖ) in dom φ*, and
// the loss's gradient g = (1/n) Σₖ wₖφ′(zₖ)aₖ, which is then the paired
// duals' v:
//
//	P = Loss·(1/n) + g(x),   D = −Conj·(1/n) − g*(−g),
//
// in AtGradient's arithmetic (both multiply by the rounded 1/n), so that
// on one rank it is AtGradient's certificate from the same sums to the
// bit. It needs a strongly convex regularizer or a g inside dom g*.
func AssemblePaired(reg Regularizer, x, g []float64, p Partial, n int64) (Certificate, error) {
	if n <= 0 {
		return Certificate{}, fmt.Errorf("engine: certificate of %d rows", n)
	}
	if len(x) != len(g) {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights and a gradient of %d", len(x), len(g))
	}
	invN := 1 / float64(n)
	primal := float64(p.Loss*invN) + reg.Value(x)
	gc := reg.ConjNeg(g)
	if math.IsInf(gc, 1) && reg.StrongConvexity() == 0 {
		return Certificate{}, ErrPartialIndicator
	}
	dual := -p.Conj*invN - gc
	gap := primal - dual
	return Certificate{Primal: primal, Dual: dual, Gap: gap, RelGap: gap / math.Max(1, math.Abs(primal))}, nil
}
