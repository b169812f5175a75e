package objective

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/sched"
)

// Certificate is a primal value P(x), a dual value D(y) and their gap.
// Weak duality gives P(x) ≥ P* ≥ D(y) for every x and every feasible y, so
// Gap = P − D bounds the suboptimality of x; RelGap is Gap / max(1, |P|),
// the quantity the stopping rules compare with a tolerance.
type Certificate struct {
	Primal, Dual, Gap, RelGap float64
}

// DualPoint names the dual point a certificate is taken at.
type DualPoint int

const (
	// OwnDuals is the method's own dual iterate y, projected into dom φ*.
	OwnDuals DualPoint = iota + 1
	// PairedDuals is the point the optimality conditions pair with x,
	// yₖ = wₖ·φ'(aₖᵀx, bₖ) projected into dom φ*: the gap it gives goes to
	// zero as x goes to the optimum, whatever method produced x.
	PairedDuals
	// BetterDuals takes both and keeps the larger dual value. Both are
	// lower bounds on P*, so the better one is too.
	BetterDuals
)

func (p DualPoint) String() string {
	switch p {
	case OwnDuals:
		return "the method's duals"
	case PairedDuals:
		return "φ'(aᵀx)"
	case BetterDuals:
		return "the better of the method's duals and φ'(aᵀx)"
	}
	return fmt.Sprintf("DualPoint(%d)", int(p))
}

// chunkRows is the number of rows whose terms are summed together before
// the chunks' sums are added in chunk order. The chunks do not depend on
// the number of workers, so neither do the certificate's last bits.
const chunkRows = 4096

// marginBlock is the number of rows whose margins a sweep computes in one
// call of MulVecRows, into a buffer on the stack: enough to spread the
// call over many short rows, few enough to stay in the first-level cache
// until the loss terms read them.
const marginBlock = 128

// Evaluator computes certificates for one problem: the one place where
// the engine evaluates P, D and the gap. Every method certifies through
// it, so that a change to the objective (sample weights, a centre, a new
// regularizer) changes every certificate at once.
//
// For the duals y it evaluates
//
//	P(x) = (1/n) Σₖ wₖ φ(aₖᵀx, bₖ) + g(x)
//	D(y) = −(1/n) Σₖ wₖ φ*(yₖ/wₖ, bₖ) − g*(−v),   v = (1/n) Σₖ yₖaₖ,
//
// with wₖ the sample weights (1 without them). It computes v from y
// itself, never from a method's running copy, which drifts by rounding: a
// dual value must belong to an actual y for the bound to hold. (The two
// exceptions say what they need: AtDualVector a v that is the sum exactly,
// AtDualVectorWithin a bound on its drift, which it subtracts.) When g* is
// an indicator (L1 or group lasso with no ridge term on some coordinates)
// and −v falls outside its domain, the dual point is scaled by the largest s ≤ 1 that brings it
// inside (DualScale): every dom φ* here contains 0, so s·y is feasible.
//
// The sums are deterministic: the loss terms are summed with compensation
// in fixed chunks of rows, added in chunk order; each vⱼ is summed over the
// rows in order, with compensation and each product's rounding error (FMA),
// by the worker that owns column j; g and g* are evaluated on one
// goroutine. The result is therefore bit-identical whatever the number of
// workers. Compensation matters: P and D are often far smaller than their
// terms (the logistic conjugates are near −0.69 where D is 0.05), and on
// data whose values span orders of magnitude the terms of v cancel to a v
// far smaller than they are.
//
// An Evaluator is not safe for concurrent use; its methods reuse its
// scratch between calls.
type Evaluator struct {
	prob    Problem
	n, d    int
	workers int
	owners  sched.Owners

	paired     []float64 // φ'(aₖᵀx) projected, times wₖ
	vOwn       []float64 // (1/n) Σ yₖaₖ for the own duals
	vPaired    []float64
	comp       []float64 // compensation terms of v, zero between calls
	tmp        []float64
	duals      []float64 // the winning dual point, scaled
	lossSum    []float64 // per chunk of rows
	conjSum    []float64
	clipped    []bool    // per chunk: some φ'(aₖᵀx) was projected into dom φ*
	pairedConj []float64 // per chunk: Σ wₖφ*(φ'(aₖᵀx)) for a CurvedLoss
	scale      float64
	from       DualPoint
	ownValid   bool
	dualsValid bool
}

// NewEvaluator returns an Evaluator for prob that runs on up to workers
// goroutines (at least one). It does not validate prob; the caller has.
func NewEvaluator(prob Problem, workers int) *Evaluator {
	x := prob.X
	workers = max(1, min(workers, x.Cols, x.Rows))
	chunks := (x.Rows + chunkRows - 1) / chunkRows
	e := &Evaluator{
		prob: prob, n: x.Rows, d: x.Cols, workers: workers,
		lossSum:    make([]float64, chunks),
		conjSum:    make([]float64, chunks),
		clipped:    make([]bool, chunks),
		pairedConj: make([]float64, chunks),
	}
	return e
}

// UseColumnCounts hands e the column counts of its problem's rows
// (sparse.CSR.ColumnCounts), which a method that has counted them already
// passes on: e cuts its workers' ranges of columns by them instead of
// counting the columns again. counts must not change afterwards.
func (e *Evaluator) UseColumnCounts(counts []int64) {
	if e.workers > 1 && e.owners.Bounds == nil && len(counts) == e.d {
		e.owners = sched.NewOwners(counts, e.workers)
	}
}

// Workers returns the number of goroutines the Evaluator runs on.
func (e *Evaluator) Workers() int { return e.workers }

// At returns the certificate at the primal point x and the dual point
// which: for OwnDuals and BetterDuals, y holds the method's duals (one per
// row, projected into dom φ* here); for PairedDuals y is ignored and may
// be nil. It neither keeps nor modifies x and y.
func (e *Evaluator) At(x, y []float64, which DualPoint) (Certificate, error) {
	return e.at(x, nil, y, nil, which)
}

// AtDualVector is At with OwnDuals for a method that keeps
// v = (1/n) Σₖ yₖaₖ itself, to spare the certificate the pass that
// computes v from y (on wide data it costs about an epoch). The dual value
// is a lower bound on P* only when v is that sum exactly, and y lies in
// dom φ*: a method that keeps v by increments must confirm a certificate
// it stops on with a v it has recomputed. DualVector is then nil.
func (e *Evaluator) AtDualVector(x, y, v []float64) (Certificate, error) {
	if len(v) != e.d {
		return Certificate{}, fmt.Errorf("engine: certificate at a dual vector of %d for %d columns", len(v), e.d)
	}
	return e.at(x, nil, y, v, OwnDuals)
}

// AtDualVectorWithin is AtDualVector for a method whose v is known only to
// lie within drift, in ℓ1 norm, of (1/n) Σₖ yₖaₖ: one that adds its steps
// into v and bounds their rounding errors, and so spares the pass that
// recomputes v. Where g is λ-strongly convex, ∇g* is (1/λ)-Lipschitz and
// ∇g*(−v) = x, so for every u with ‖u − v‖₁ ≤ δ
//
//	|g*(−u) − g*(−v)| ≤ ‖x‖∞·δ + δ²/(2λ)
//
// (the first-order term by Hölder, the rest by the Lipschitz gradient).
// The dual value is lowered by that bound, which is returned too, so that
// it is a lower bound on P* at the duals y. x must be ∇g*(−v), and g must
// be strongly convex.
func (e *Evaluator) AtDualVectorWithin(x, y, v []float64, drift float64) (Certificate, float64, error) {
	lam := e.prob.Reg.StrongConvexity()
	if !(lam > 0) {
		return Certificate{}, 0, fmt.Errorf("engine: a certificate at a dual vector within a drift needs a strongly convex regularizer, not %s", e.prob.Reg.Name())
	}
	if !(drift >= 0) || math.IsInf(drift, 1) {
		return Certificate{}, 0, fmt.Errorf("engine: certificate at a dual vector within a drift of %v", drift)
	}
	c, err := e.AtDualVector(x, y, v)
	if err != nil {
		return c, 0, err
	}
	var xMax float64
	for _, xj := range x {
		xMax = math.Max(xMax, math.Abs(xj))
	}
	bound := drift*xMax + drift*drift/(2*lam)
	c.Dual -= bound
	c.Gap = c.Primal - c.Dual
	c.RelGap = c.Gap / math.Max(1, math.Abs(c.Primal))
	return c, bound, nil
}

// AtMargins is At for a method that holds the margins z = Ax already,
// each computed as kernels.SparseDot of its row and x (so that the result
// is At's to the bit): it saves the certificate one product per row.
func (e *Evaluator) AtMargins(x, z, y []float64, which DualPoint) (Certificate, error) {
	if len(z) != e.n {
		return Certificate{}, fmt.Errorf("engine: certificate at %d margins for %d rows", len(z), e.n)
	}
	return e.at(x, z, y, nil, which)
}

// AtMarginsDualVector is AtDualVector for a method that holds the margins
// z = Ax as well (each by kernels.SparseDot, as AtMargins asks): it reads
// no row of the data, only the n loss and conjugate terms and g, g* on
// the d columns. AtDualVector's caveat holds: with a v kept by increments
// the dual value bounds P* only to v's rounding, so it serves as the
// estimate a method steers by, and a certificate it stops on takes v
// from y. DualVector is then nil.
func (e *Evaluator) AtMarginsDualVector(x, z, y, v []float64) (Certificate, error) {
	if len(z) != e.n {
		return Certificate{}, fmt.Errorf("engine: certificate at %d margins for %d rows", len(z), e.n)
	}
	if len(v) != e.d {
		return Certificate{}, fmt.Errorf("engine: certificate at a dual vector of %d for %d columns", len(v), e.d)
	}
	return e.at(x, z, y, v, OwnDuals)
}

// RowSums are the row terms of a paired certificate that a method summed
// in a sweep it makes anyway, each row's from CurvedTerms: Loss is
// Σₖ wₖφ(zₖ, bₖ), Conj is Σₖ wₖφ*(φ′(zₖ, bₖ), bₖ), and Projected reports
// that some φ′(zₖ) lay outside dom φ* (the paired dual is then projected,
// and Conj is not its term).
//
// Deriv, when not nil, holds φ′(zₖ, bₖ) of every row (without the
// weight), which spares the certificate its pass over the rows where the
// dual point must be scaled into dom g*.
type RowSums struct {
	Loss, Conj float64
	Projected  bool
	Deriv      []float64
}

// AtGradient is At with PairedDuals for a method that has just computed,
// at x, the margins z = Ax (each by kernels.SparseDot of its row and x)
// and the loss's gradient g = (1/n) Σₖ wₖφ'(zₖ)aₖ: where every φ'(zₖ)
// lies in dom φ*, g is the v of the paired duals, and the certificate
// costs O(n + d) instead of a pass over the data. With the sweep's sums
// as well (sums not nil) it costs O(d), unless the dual point must be
// projected or scaled into dom g*; Duals is then not computed. The method
// vouches for g and the sums: they carry its rounding, as a running v
// would.
func (e *Evaluator) AtGradient(x, z, g []float64, sums *RowSums) (Certificate, error) {
	if len(z) != e.n || len(g) != e.d || len(x) != e.d {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights, %d margins and a gradient of %d for %d rows and %d columns", len(x), len(z), len(g), e.n, e.d)
	}
	if sums != nil && !sums.Projected {
		reg := e.prob.Reg
		invN := 1 / float64(e.n)
		p := float64(sums.Loss*invN) + reg.Value(x)
		var d float64
		gc := reg.ConjNeg(g)
		switch {
		case !math.IsInf(gc, 1) || reg.StrongConvexity() > 0:
			d = -sums.Conj*invN - gc
			e.ownValid, e.dualsValid, e.scale, e.from = false, false, 1, PairedDuals
		case len(sums.Deriv) == e.n:
			// The paired duals, to be scaled into dom g*.
			e.alloc(false, true, nil)
			sw := e.prob.SampleWeights
			for k, d1 := range sums.Deriv {
				wk := 1.0
				if sw != nil {
					wk = sw[k]
				}
				e.paired[k] = wk * d1
			}
			var s float64
			d, s = e.dualValue(e.paired, g, nil)
			copy(e.duals, e.paired)
			for k := range e.duals {
				e.duals[k] *= s
			}
			e.ownValid, e.dualsValid, e.scale, e.from = false, true, s, PairedDuals
		default:
			return e.atWith(x, z, nil, nil, g, PairedDuals)
		}
		gap := p - d
		return Certificate{Primal: p, Dual: d, Gap: gap, RelGap: gap / math.Max(1, math.Abs(p))}, nil
	}
	return e.atWith(x, z, nil, nil, g, PairedDuals)
}

func (e *Evaluator) at(x, zs, y, vGiven []float64, which DualPoint) (Certificate, error) {
	return e.atWith(x, zs, y, vGiven, nil, which)
}

func (e *Evaluator) atWith(x, zs, y, vGiven, gGiven []float64, which DualPoint) (Certificate, error) {
	if len(x) != e.d {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights for %d columns", len(x), e.d)
	}
	own := which == OwnDuals || which == BetterDuals
	paired := which == PairedDuals || which == BetterDuals
	if !own && !paired {
		return Certificate{}, fmt.Errorf("engine: certificate at %v", which)
	}
	if own && len(y) != e.n {
		return Certificate{}, fmt.Errorf("engine: certificate at %d duals for %d rows", len(y), e.n)
	}
	e.alloc(own, paired, vGiven)
	clear(e.clipped)
	loss, b, sw := e.prob.Loss, e.prob.B, e.prob.SampleWeights
	invN := 1 / float64(e.n)

	// The own duals, projected, and their v: it needs no margin, so its
	// column sums run beside the rows' sweep below, each over all the
	// rows, and their workers share the cores. Where the columns are
	// grouped by count, the range of the frequent ones is summed from the
	// cache long before the others; the rows' chunks fill that time.
	var yOwn []float64
	if own {
		yOwn = e.duals
		for k, yk := range y {
			if sw != nil {
				// wφ's conjugate is wφ*(·/w): its domain is w·dom φ*.
				yOwn[k] = sw[k] * loss.DualFeasible(yk/sw[k], b[k])
			} else {
				yOwn[k] = loss.DualFeasible(yk, b[k])
			}
		}
	}
	var ownSum sync.WaitGroup
	if own && vGiven == nil {
		ownSum.Go(func() {
			e.forOwners(func(lo, hi int32) { e.dualVector(yOwn, e.vOwn, lo, hi) })
		})
	}

	// The rows: P's loss terms, and the paired duals. A loss with
	// CurvedTerms gives φ, φ′ and φ*(φ′) at once (the logistic's share one
	// exp and one log), so that the paired duals' conjugate terms come
	// with the loss terms unless the duals are projected or scaled.
	curved, isCurved := loss.(CurvedLoss)
	// At x = 0, where methods that start from zero take their first
	// certificate, every margin is 0: no need to read the rows.
	zero := zs == nil && isZero(x)
	e.forChunks(func(c, lo, hi int) {
		var ls, cs Sum
		// The margins of a block of rows at a time, in one call
		// (MulVecRows): short rows cost less so than one by one.
		// With the paired duals, a curved loss's terms are taken a block
		// at a time too (CurvedTermsBlock: the logistic's exponentials
		// and logarithms eight at once).
		var block, tv, t1, t2, tc [marginBlock]float64
		for k := lo; k < hi; k++ {
			i := (k - lo) % marginBlock
			end := min(k+marginBlock, hi)
			var z float64
			if zs != nil {
				z = zs[k]
			} else if !zero {
				if i == 0 {
					e.prob.X.MulVecRows(k, end, x, block[:])
				}
				z = block[i]
			}
			if paired && isCurved && i == 0 {
				zb := block[:end-k]
				if zs != nil {
					zb = zs[k:end]
				} else if zero {
					clear(zb)
				}
				CurvedTermsBlock(curved, zb, b[k:end], tv[:], t1[:], t2[:], tc[:])
			}
			wk := 1.0
			if sw != nil {
				wk = sw[k]
			}
			if !paired {
				ls.Add(wk * loss.Value(z, b[k]))
				continue
			}
			var val, d1, conj float64
			if isCurved {
				val, d1, conj = tv[i], t1[i], tc[i]
			} else {
				val, d1 = loss.Value(z, b[k]), loss.Deriv(z, b[k])
			}
			ls.Add(wk * val)
			y := loss.DualFeasible(d1, b[k])
			if y != d1 {
				e.clipped[c] = true
			}
			e.paired[k] = wk * y
			cs.Add(wk * conj)
		}
		e.lossSum[c] = ls.Sum()
		e.pairedConj[c] = cs.Sum()
	})
	var pairedConj []float64
	if paired && isCurved && !slices.Contains(e.clipped, true) {
		pairedConj = e.pairedConj
	}
	if gGiven != nil && !slices.Contains(e.clipped, true) {
		copy(e.vPaired, gGiven)
	} else {
		gGiven = nil
	}
	var ps Sum
	for _, v := range e.lossSum {
		ps.Add(v)
	}
	p := float64(ps.Sum()*invN) + e.prob.Reg.Value(x)

	// The columns: v for each dual point, by owners; the own duals' v
	// is being summed already.
	ownSum.Wait()
	vOwn := e.vOwn
	if vGiven != nil {
		vOwn = vGiven
	}
	if paired && gGiven == nil {
		e.forOwners(func(lo, hi int32) {
			e.dualVector(e.paired, e.vPaired, lo, hi)
		})
	}
	e.ownValid = own && vGiven == nil
	e.dualsValid = true

	d, s := math.Inf(-1), 1.0
	from := which
	if own {
		d, s = e.dualValue(yOwn, vOwn, nil)
		from = OwnDuals
	}
	if paired {
		dp, sp := e.dualValue(e.paired, e.vPaired, pairedConj)
		if !own || dp > d || math.IsNaN(d) {
			d, s, from = dp, sp, PairedDuals
		}
	}
	src := yOwn
	if from == PairedDuals {
		src = e.paired
	}
	if &src[0] != &e.duals[0] {
		copy(e.duals, src)
	}
	if s != 1 {
		for k := range e.duals {
			e.duals[k] *= s
		}
	}
	e.scale, e.from = s, from
	gap := p - d
	return Certificate{Primal: p, Dual: d, Gap: gap, RelGap: gap / math.Max(1, math.Abs(p))}, nil
}

// Duals returns the dual point of the last certificate, scaled as it was
// certified (nil after AtGradient from a sweep's sums); the slice is the
// Evaluator's and changes with the next call.
func (e *Evaluator) Duals() []float64 {
	if !e.dualsValid {
		return nil
	}
	return e.duals
}

// DualVector returns v = (1/n) Σₖ yₖaₖ of the own duals of the last
// certificate, computed exactly from them (before any scaling): a method
// that keeps v by increments can continue from it. It is nil when the
// last certificate took no own duals. The slice is the Evaluator's.
func (e *Evaluator) DualVector() []float64 {
	if !e.ownValid {
		return nil
	}
	return e.vOwn
}

// Scale returns the factor s ≤ 1 the last certificate's dual point was
// scaled by to bring it into the domain of g* (1 when it was inside).
func (e *Evaluator) Scale() float64 { return e.scale }

// From returns which dual point gave the last certificate's dual value.
func (e *Evaluator) From() DualPoint { return e.from }

// alloc makes the scratch a certificate at own and paired duals needs.
func (e *Evaluator) alloc(own, paired bool, vGiven []float64) {
	if e.duals == nil {
		e.duals = make([]float64, e.n)
		e.comp = hugepage.Make[float64](e.d)
		e.tmp = make([]float64, e.d)
	}
	if own && e.vOwn == nil && vGiven == nil {
		e.vOwn = hugepage.Make[float64](e.d)
	}
	if paired && e.vPaired == nil {
		e.vPaired = hugepage.Make[float64](e.d)
		e.paired = make([]float64, e.n)
	}
}

// dualValue returns D(s·y) for v = (1/n)Σ yₖaₖ and the largest s ≤ 1 for
// which g*(−s·v) is finite. It leaves v as it is. conj, when not nil,
// holds the chunks' sums of the conjugate terms at y, which serve when
// s = 1.
func (e *Evaluator) dualValue(y, v, conj []float64) (float64, float64) {
	reg := e.prob.Reg
	s := 1.0
	gc := reg.ConjNeg(v)
	if math.IsInf(gc, 1) && reg.StrongConvexity() == 0 {
		// g* is an indicator (no ridge term on some coordinates). Where g
		// is strongly convex, g* is finite at every finite v, and +Inf
		// says v overflowed: the certificate reports it, and the driver
		// stops the run as diverged.
		s = DualScale(reg, v, e.tmp)
		for j := range v {
			e.tmp[j] = s * v[j]
		}
		gc = reg.ConjNeg(e.tmp)
	}
	if s == 1 && conj != nil {
		var ds Sum
		for _, v := range conj {
			ds.Add(-v)
		}
		return ds.Sum()/float64(e.n) - gc, s
	}
	loss, b, sw := e.prob.Loss, e.prob.B, e.prob.SampleWeights
	e.forChunks(func(c, lo, hi int) {
		var cs Sum
		for k := lo; k < hi; k++ {
			if sw != nil {
				cs.Add(sw[k] * loss.Conj(s*y[k]/sw[k], b[k]))
			} else {
				cs.Add(loss.Conj(s*y[k], b[k]))
			}
		}
		e.conjSum[c] = cs.Sum()
	})
	var ds Sum
	for _, v := range e.conjSum {
		ds.Add(-v)
	}
	return ds.Sum()/float64(e.n) - gc, s
}

// dualVector sets v = (1/n) Σₖ yₖaₖ on the columns [lo, hi): the sum of
// dualVectorSum, divided by n once.
func (e *Evaluator) dualVector(y, v []float64, lo, hi int32) {
	e.dualVectorSum(y, v, lo, hi)
	inv := 1 / float64(e.n)
	for j := lo; j < hi; j++ {
		v[j] *= inv
	}
}

// dualVectorSum sets v = Σₖ yₖaₖ on the columns [lo, hi), summing the rows
// in order with their rounding errors kept per coordinate in e.comp
// (AddProduct). With terms 1e4 times the sum, rounded products alone left
// v 1e-11 off.
func (e *Evaluator) dualVectorSum(y, v []float64, lo, hi int32) {
	x, comp := e.prob.X, e.comp
	clear(v[lo:hi])
	full := lo == 0 && int(hi) == e.d
	for k := 0; k < e.n; k++ {
		yk := y[k]
		if yk == 0 {
			continue
		}
		val, idx := x.Row(k)
		if !full {
			a, b := sched.Clip(idx, lo, hi)
			val, idx = val[a:b], idx[a:b]
		}
		for p, j := range idx {
			v[j], comp[j] = AddProduct(v[j], comp[j], yk, val[p])
		}
	}
	for j, c := range comp[lo:hi] {
		v[int(lo)+j] += c
	}
	clear(comp[lo:hi])
}

// forChunks runs fn on every chunk of rows, the chunks dealt to the
// workers in turn.
func (e *Evaluator) forChunks(fn func(c, lo, hi int)) {
	chunks := len(e.lossSum)
	run := func(t, workers int) {
		for c := t; c < chunks; c += workers {
			fn(c, c*chunkRows, min((c+1)*chunkRows, e.n))
		}
	}
	workers := min(e.workers, chunks)
	if workers <= 1 {
		run(0, 1)
		return
	}
	var wg sync.WaitGroup
	for t := range workers {
		wg.Go(func() { run(t, workers) })
	}
	wg.Wait()
}

// forOwners runs fn on each worker's range of columns, cut by the
// columns' counts at the first call (or by UseColumnCounts'): a method
// that hands the evaluator its dual vector never needs them, nor the pass
// that counts the columns.
func (e *Evaluator) forOwners(fn func(lo, hi int32)) {
	if e.workers == 1 {
		fn(0, int32(e.d))
		return
	}
	if e.owners.Bounds == nil {
		e.owners = sched.NewOwners(e.prob.X.ColumnCounts(), e.workers)
	}
	var wg sync.WaitGroup
	for w := range e.workers {
		lo, hi := e.owners.Range(w)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// isZero reports whether every entry of x is zero.
func isZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}
