package objective

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// Multinomial is the multinomial (softmax) logistic regression of K ≥ 2
// classes:
//
//	min_W P(W) = (1/n) Σₖ wₖ φ(Wᵀaₖ, cₖ) + g(W),
//	φ(z, c) = log Σⱼ exp(zⱼ) − z_c,
//
// over W ∈ ℝ^{d×K}, stored feature-major (W[j·K + c]), so that a row's K
// margins read one contiguous block of K weights per nonzero. g is the
// elastic net on all d·K entries. Its Fenchel dual, with one dual vector
// Yₖ ∈ ℝᴷ per row, is
//
//	D(Y) = −(1/n) Σₖ wₖ φ*(Yₖ/wₖ, cₖ) − g*(−V),   V = (1/n) Σₖ aₖYₖᵀ,
//	φ*(u, c) = Σⱼ pⱼ log pⱼ  for p = u + e_c in the simplex, +∞ otherwise:
//
// the conjugate of log-sum-exp is the negative entropy on the simplex,
// shifted by the label's unit vector. The duals paired with W are
// Yₖ = wₖ(softmax(Wᵀaₖ) − e_{cₖ}), the gradient of the loss.
type Multinomial struct {
	X       *sparse.CSR
	Class   []int // cₖ ∈ [0, K) for every row
	K       int
	Reg     ElasticNet
	Weights []float64 // sample weights wₖ > 0; nil: all 1
}

// Validate reports the first reason the problem cannot be solved.
func (p Multinomial) Validate() error {
	if p.X == nil || p.X.Rows == 0 {
		return errors.New("engine: multinomial problem has no rows")
	}
	if p.K < 2 {
		return fmt.Errorf("engine: multinomial problem of %d classes: want 2 or more", p.K)
	}
	if len(p.Class) != p.X.Rows {
		return fmt.Errorf("engine: %d classes for %d rows", len(p.Class), p.X.Rows)
	}
	for k, c := range p.Class {
		if c < 0 || c >= p.K {
			return fmt.Errorf("engine: row %d has class %d, outside [0, %d)", k+1, c, p.K)
		}
	}
	if p.Weights != nil && len(p.Weights) != p.X.Rows {
		return fmt.Errorf("engine: %d sample weights for %d rows", len(p.Weights), p.X.Rows)
	}
	for k, w := range p.Weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("engine: sample weight of row %d is %v: want a finite value > 0", k+1, w)
		}
	}
	if !p.Reg.Plain() {
		return errors.New("engine: the multinomial loss takes the plain elastic net (no centre or weights)")
	}
	return p.Reg.Validate(p.X.Cols * p.K)
}

// Dim returns the number of weights, d·K.
func (p Multinomial) Dim() int { return p.X.Cols * p.K }

// Margins sets z = Wᵀa for the row (val, idx) and returns z.
func (p Multinomial) Margins(val []float64, idx []int32, w, z []float64) []float64 {
	K := p.K
	clear(z)
	for q, j := range idx {
		v := val[q]
		wj := w[int(j)*K : int(j)*K+K]
		for c, wc := range wj {
			z[c] += v * wc
		}
	}
	return z
}

// SoftmaxTerms returns φ(z, c) and sets y = softmax(z) − e_c, the
// gradient, computed from the largest margin so that no exp overflows.
// It also returns φ*(y, c) = Σⱼ pⱼ log pⱼ, which shares the exponentials:
// log pⱼ = zⱼ − m − log s with m the largest margin and s = Σ exp(zⱼ − m).
func SoftmaxTerms(z []float64, c int, y []float64) (val, conj float64) {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, v)
	}
	var s float64
	for j, v := range z {
		e := math.Exp(v - m)
		y[j] = e
		s += e
	}
	ls := math.Log(s)
	for j, v := range z {
		p := y[j] / s
		if p > 0 {
			conj += p * (v - m - ls)
		}
		y[j] = p
	}
	y[c] -= 1
	return m + ls - z[c], conj
}

// SoftmaxConj returns φ*(u, c) = Σⱼ pⱼ log pⱼ for p = u + e_c, or +Inf when
// p leaves the simplex by more than rounding.
func SoftmaxConj(u []float64, c int) float64 {
	var sum, conj float64
	for j, v := range u {
		p := v
		if j == c {
			p += 1
		}
		if p < -1e-12 {
			return math.Inf(1)
		}
		if p > 0 {
			conj += p * math.Log(p)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		return math.Inf(1)
	}
	return conj
}

// MultinomialEvaluator computes the certificate of a Multinomial problem,
// as Evaluator does for a scalar loss and with the same care: the loss
// terms summed with compensation in fixed chunks of rows, V summed over
// the rows in order by the owner of its features, g and g* on one
// goroutine, so that the result does not depend on the number of workers.
// The dual point is the one paired with W; where g* is an indicator (an
// L1 term without a ridge term) it is scaled into its domain.
type MultinomialEvaluator struct {
	prob    Multinomial
	workers int
	owners  sched.Owners
	y       []float64 // n·K paired duals
	v, comp []float64 // d·K
	tmp     []float64
	lossSum []float64
	conjSum []float64
	scale   float64
}

// NewMultinomialEvaluator returns the evaluator of prob on up to workers
// goroutines.
func NewMultinomialEvaluator(prob Multinomial, workers int) *MultinomialEvaluator {
	x := prob.X
	workers = max(1, min(workers, x.Cols, x.Rows))
	chunks := (x.Rows + chunkRows - 1) / chunkRows
	e := &MultinomialEvaluator{prob: prob, workers: workers,
		y: make([]float64, x.Rows*prob.K), v: make([]float64, prob.Dim()), comp: make([]float64, prob.Dim()),
		tmp: make([]float64, prob.Dim()), lossSum: make([]float64, chunks), conjSum: make([]float64, chunks)}
	if workers > 1 {
		e.owners = sched.NewOwners(x.ColumnCounts(), workers)
	} else {
		e.owners = sched.Owners{Bounds: []int32{0, int32(x.Cols)}}
	}
	return e
}

// Scale returns the factor the last certificate's dual point was scaled by.
func (e *MultinomialEvaluator) Scale() float64 { return e.scale }

// At returns the certificate at W (feature-major, length d·K) and the
// duals paired with it.
func (e *MultinomialEvaluator) At(w []float64) (Certificate, error) {
	return e.at(w, nil)
}

// AtDuals returns the certificate at W and a method's own duals Y (n·K,
// row-major: Yₖ = y[k·K : (k+1)·K], with Yₖ + e_{cₖ} in the simplex, times
// wₖ with sample weights); V is computed from Y.
func (e *MultinomialEvaluator) AtDuals(w, y []float64) (Certificate, error) {
	if len(y) != len(e.y) {
		return Certificate{}, fmt.Errorf("engine: certificate at %d duals for %d rows × %d classes", len(y), e.prob.X.Rows, e.prob.K)
	}
	return e.at(w, y)
}

func (e *MultinomialEvaluator) at(w, own []float64) (Certificate, error) {
	p := e.prob
	n, K := p.X.Rows, p.K
	if len(w) != p.Dim() {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights for %d features × %d classes", len(w), p.X.Cols, K)
	}
	chunks := len(e.lossSum)
	run := func(fn func(c, lo, hi int)) {
		workers := min(e.workers, chunks)
		var wg sync.WaitGroup
		for t := range workers {
			wg.Go(func() {
				for c := t; c < chunks; c += workers {
					fn(c, c*chunkRows, min((c+1)*chunkRows, n))
				}
			})
		}
		wg.Wait()
	}
	run(func(c, lo, hi int) {
		z := make([]float64, K)
		var ls, cs Sum
		for k := lo; k < hi; k++ {
			val, idx := p.X.Row(k)
			p.Margins(val, idx, w, z)
			yk := e.y[k*K : k*K+K]
			v, cj := SoftmaxTerms(z, p.Class[k], yk)
			wk := 1.0
			if p.Weights != nil {
				wk = p.Weights[k]
			}
			if own != nil {
				// The method's duals, and the conjugate there.
				copy(yk, own[k*K:k*K+K])
				for j := range yk {
					z[j] = yk[j] / wk
				}
				cj = SoftmaxConj(z, p.Class[k])
			} else if wk != 1 {
				for j := range yk {
					yk[j] *= wk
				}
			}
			ls.Add(wk * v)
			cs.Add(wk * cj)
		}
		e.lossSum[c], e.conjSum[c] = ls.Sum(), cs.Sum()
	})
	// V = (1/n) Σₖ aₖYₖᵀ by feature owners, rows in order, compensated.
	var wg sync.WaitGroup
	for t := range e.workers {
		lo, hi := e.owners.Range(t)
		wg.Go(func() { e.dualMatrix(lo, hi) })
	}
	wg.Wait()
	var ps, ds Sum
	for c := range chunks {
		ps.Add(e.lossSum[c])
	}
	invN := 1 / float64(n)
	primal := ps.Sum()*invN + p.Reg.Value(w)
	s := 1.0
	gc := p.Reg.ConjNeg(e.v)
	if math.IsInf(gc, 1) && p.Reg.StrongConvexity() == 0 {
		s = DualScale(p.Reg, e.v, e.tmp)
		for j := range e.v {
			e.tmp[j] = s * e.v[j]
		}
		gc = p.Reg.ConjNeg(e.tmp)
	}
	if s == 1 {
		for c := range chunks {
			ds.Add(-e.conjSum[c])
		}
	} else {
		// φ* at s·Yₖ: the point moves towards e_c's corner of the simplex.
		u := make([]float64, K)
		for k := range n {
			wk := 1.0
			if p.Weights != nil {
				wk = p.Weights[k]
			}
			for j := range u {
				u[j] = s * e.y[k*K+j] / wk
			}
			ds.Add(-wk * SoftmaxConj(u, p.Class[k]))
		}
	}
	e.scale = s
	dual := ds.Sum()*invN - gc
	gap := primal - dual
	return Certificate{Primal: primal, Dual: dual, Gap: gap, RelGap: gap / math.Max(1, math.Abs(primal))}, nil
}

// dualMatrix sets V on the features [lo, hi): Σₖ aₖⱼYₖ/n for each, over
// the rows in order, with every product's and addition's rounding error
// kept per entry (AddProduct).
func (e *MultinomialEvaluator) dualMatrix(lo, hi int32) {
	p := e.prob
	K := p.K
	a, b := int(lo)*K, int(hi)*K
	clear(e.v[a:b])
	clear(e.comp[a:b])
	full := lo == 0 && int(hi) == p.X.Cols
	for k := 0; k < p.X.Rows; k++ {
		val, idx := p.X.Row(k)
		if !full {
			ca, cb := sched.Clip(idx, lo, hi)
			val, idx = val[ca:cb], idx[ca:cb]
		}
		yk := e.y[k*K : k*K+K]
		for q, j := range idx {
			x := val[q]
			vj := e.v[int(j)*K : int(j)*K+K]
			cj := e.comp[int(j)*K : int(j)*K+K]
			for c, y := range yk {
				vj[c], cj[c] = AddProduct(vj[c], cj[c], y, x)
			}
		}
	}
	inv := 1 / float64(p.X.Rows)
	for i := a; i < b; i++ {
		e.v[i] = (e.v[i] + e.comp[i]) * inv
	}
}

// AssembleMultinomialPaired is AssemblePaired for the multinomial problem:
// the certificate at W and its paired duals Yₖ = wₖ(softmax(Wᵀaₖ) − e_{cₖ})
// from sums a method has made over the rows of every rank (over several
// processes, each rank's sums added by an allreduce): Loss = Σₖ wₖφ(Wᵀaₖ,
// cₖ), Conj = Σₖ wₖφ*(Yₖ/wₖ, cₖ) (SoftmaxTerms gives both), and the loss's
// gradient G = (1/n) Σₖ aₖYₖᵀ (feature-major, d·K), which is the paired
// duals' V:
//
//	P = Loss·(1/n) + g(W),   D = −Conj·(1/n) − g*(−G),
//
// MultinomialEvaluator.At's formulas. The paired duals lie in dom φ*
// always (softmax(z) is in the simplex), so no projection is needed; it
// needs a g* finite at −G, as a λ > 0 gives (ErrPartialIndicator
// otherwise: scaling the duals would need every rank's rows).
func AssembleMultinomialPaired(prob Multinomial, w, g []float64, p Partial, n int64) (Certificate, error) {
	if len(w) != prob.Dim() {
		return Certificate{}, fmt.Errorf("engine: certificate at %d weights for %d features × %d classes", len(w), prob.X.Cols, prob.K)
	}
	return AssemblePaired(prob.Reg, w, g, p, n)
}
