package newton

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverGLMNET is newGLMNET (Yuan, Ho & Lin, "An improved GLMNET for
// L1-regularized logistic regression", JMLR 2012; LIBLINEAR's -s 6 and
// -s 5), for an L1 term with a smooth loss.
const SolverGLMNET driver.Solver = "glmnet"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverGLMNET,
			Takes:        driver.Takes{L1: true, SampleWeights: true},
			Summary:      "newGLMNET: a Newton-type step whose quadratic model is minimised by coordinate descent over the features not shrunk, with a line search (Yuan, Ho & Lin 2012; LIBLINEAR's solvers 5 and 6); parallel sweeps over rows",
			Losses:       "with a (generalised) second derivative: squared, logistic, sqhinge, smoothhinge",
			Regularizers: "elastic net with L1 > 0 (λ ≥ 0), no centre or weights",
			Parallel:     true,
			Certified:    true,
		},
		Rank:    36, // after the reductions, which a request for a coordinate method falls back to; AutoSolver picks it for an L1 term
		Accepts: acceptsGLMNET,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newGLMNET(prob, opt)
		},
	})
}

func acceptsGLMNET(prob objective.Problem, opt driver.Options) error {
	if _, ok := prob.Loss.(objective.CurvedLoss); !ok {
		return fmt.Errorf("engine: the %s loss has no second derivative: %s takes squared, logistic, sqhinge and smoothhinge", prob.Loss.Name(), opt.Solver)
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok || !en.Plain() {
		return fmt.Errorf("engine: %s takes the elastic net without centre or weights", opt.Solver)
	}
	if !(en.L1 > 0) {
		return fmt.Errorf("engine: %s is for an L1 term (l1 > 0); for pure L2 use newton", opt.Solver)
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s reads every sample in each step: CoordinateSettings.M and CoordinateSettings.BlockSize are the coordinate methods'", opt.Solver)
	}
	return nil
}

// The constants of newGLMNET, as in the paper and LIBLINEAR.
const (
	glmnetNu        = 1e-12 // added to H's diagonal: H is then positive definite
	glmnetSigma     = 0.01  // Armijo's sufficient decrease
	glmnetMaxLine   = 20    // halvings of the line search
	glmnetMaxInner  = 100   // coordinate-descent passes per outer step, on A's columns
	glmnetMaxDense  = 1000  // the same on the formed Hessian, where a pass costs O(d²)
	glmnetInnerInit = 1.0   // the inner tolerance's start, as a fraction of the first outer violation
	glmnetForcing   = 0.1   // the inner loop also runs until its violations are this fraction of the step's
	// glmnetForcingDense is glmnetForcing on the formed Hessian, where a
	// pass costs O(d²) against the O(nnz + Σₖ mₖ²) of forming it: the
	// closer model costs little and saves outer steps (a9a at l1 = 1/n:
	// 10 to 7, the dense correlated set: 5 to 4).
	glmnetForcingDense = 1e-3
	// glmnetHessianWork: glmnet forms the Hessian where that costs at most
	// this many passes of coordinate descent over A's columns (2·nnz
	// each). Its inner loop makes several passes per outer step where
	// newton's CG makes one product, so it pays on data where newton's
	// rule (denseHessianPays) declines: dense columns of moderate width.
	glmnetHessianWork = 24
	glmnetRounding    = 1e-13 // relative: below it, changes of F are rounding
	glmnetMaxMove     = 10    // the largest change of a weight in one coordinate step (LIBLINEAR's solve_l1r_lr)
)

// glmnet is the state of one newGLMNET run. An epoch is one outer step.
//
// With L(w) = (1/n) Σₖ φ(aₖᵀw, bₖ) + (λ/2)‖w‖², the smooth part, each outer
// step minimises the quadratic model of L plus the L1 term,
//
//	q(d) = ∇Lᵀd + ½ dᵀH d + l1‖w + d‖₁,   H = (1/n) Aᵀ diag(φ″) A + (λ + ν) I,
//
// by cyclic coordinate descent in random order over the active features,
// each coordinate's one-dimensional problem solved exactly by soft
// thresholding (Eq. 17 of the paper) while A·d is kept up to date, so that
// a coordinate costs two reads of its column (on narrow data, where H is
// formed, a coordinate costs O(d), and once the signs settle the model is
// solved on its orthant by a Cholesky factor: orthantStep). Each coordinate step is
// clipped to |Δdⱼ| ≤ 10 (glmnetMaxMove), as LIBLINEAR's solve_l1r_lr
// clips it: the model's curvature φ″ is a local one, and on a row that
// the iterate misclassifies by a margin t it is about e⁻ᵗ while φ′ stays
// near ±1, so a feature seen only in such rows has Hⱼⱼ ≈ e⁻ᵗ‖Aⱼ‖²/n and
// its exact one-dimensional minimiser (|∇ⱼL| − l1)/Hⱼⱼ lies some e^t
// away. On raw counts (news20: rows of norm up to 621, margins in the
// thousands at the optimum) t reaches 30 within a few steps; the unclipped
// model then asks for weights of 10⁸, moves every other row the feature
// touches as far, and no step 2⁻²⁰d of the line search decreases F. A
// clipped step still decreases q, q being convex along the coordinate, so
// d stays a descent direction (Δ < 0 below). The squared loss is exempt:
// its model is exact. The inner loop stops as
// LIBLINEAR's does, once its violations fall below a tolerance that
// tightens 4× whenever one pass sufficed, and besides not before they are
// a tenth of the outer step's (glmnetForcing, the forcing term of an
// inexact Newton method): the certificate's dual point is first order in
// w's error where P is second, and loose inner solves left it lagging
// (a9a, l1 = 1/n: 60 outer steps to a 1e-6 gap, 13 with the forcing). A feature at zero whose
// gradient lies inside (−l1, l1) by more than M/n, with M the largest
// violation of the optimality conditions at the last step, is shrunk: it
// is left out of this step's model (Sect. 5.1). The gradient is computed
// in full at every step, so a feature shrunk wrongly comes back at the
// next. The step d is then scaled by the largest β ∈ {1, ½, ¼, …} with
// F(w + βd) − F(w) ≤ σβ(∇Lᵀd + l1‖w + d‖₁ − l1‖w‖₁) (Armijo, Eq. 20).
//
// The certificate reuses the margins of the sweep that computes ∇L: its
// dual point is yₖ = φ′(aₖᵀw), scaled into the box |vⱼ| ≤ l1 when λ = 0
// (objective.DualScale), so that it holds for the lasso too.
type glmnet struct {
	prob objective.Problem
	loss objective.CurvedLoss
	reg  objective.ElasticNet
	x    *sparse.CSR
	csc  *sparse.CSR // the transpose: row j of csc is column j of x
	n, d int
	invN float64
	rng  *rand.Rand

	w, grad, hdiag []float64 // the iterate, ∇L and H's diagonal (without ν)
	hmat           []float64 // (1/n) Aᵀ diag(φ″) A, d×d, where it pays to form it
	hd             []float64 // H·d during the dense coordinate descent
	hStale         bool      // hmat is not yet formed at w
	z, y, curv     []float64 // margins Aw, φ′(z) and φ″(z)/n per row
	step, ad       []float64 // the direction d and A·d
	active         []int32   // the features not shrunk in this step
	inner          []int32   // the inner loop's active features
	// orth, sub, subChol and subVec are orthantStep's buffers.
	orth                 []int32
	sub, subChol, subVec []float64
	orthantSteps         int       // the inner solves orthantStep finished
	lossSum              []float64 // per chunk of the sweep

	sweep     *driver.RowSweep
	bundles   *bundleCD // the parallel coordinate descent on A's columns; nil: the serial one
	fresh     bool      // the sweep is at w
	eval      *objective.Evaluator
	lossGrad  []float64 // the loss's gradient at the sweep's point
	rowSums   objective.RowSums
	conjSum   []float64 // per chunk of the sweep: Σ wφ*(φ′)
	projected []bool    // per chunk: some φ′ lay outside dom φ*
	lossMean  float64   // (1/n) Σ φ(zₖ) at w
	violMax   float64   // the largest violation at the last step (M)
	violFirst float64   // the sum of violations at the first step
	violNow   float64   // the sum of violations at this step
	innerTol  float64   // the inner loop stops below innerTol·violFirst
	noShrink  bool      // tests: every feature in every model
	noScreen  bool      // tests and measurements: no Gap Safe screening
	screened  []bool    // features proved zero at the optimum (screen)
	colNorm   []float64 // ‖Aⱼ‖, for screen
	nScreened int
	maxMove   float64 // the bound on a coordinate step: glmnetMaxMove, or +Inf where q is exact
	visits    float64
	steps     int
	cdPasses  int
}

func newGLMNET(prob objective.Problem, opt driver.Options) (*glmnet, error) {
	x := prob.X
	n, d := x.Rows, x.Cols
	en, _ := prob.Reg.AsElasticNet() // Accepts checked that it is one
	s := &glmnet{
		prob: prob, loss: prob.Loss.(objective.CurvedLoss), reg: en,
		x: x, csc: transpose(x), n: n, d: d, invN: 1 / float64(n),
		rng: rand.New(rand.NewPCG(opt.Seed, 0x91e7)),
		w:   make([]float64, d), grad: make([]float64, d), hdiag: make([]float64, d),
		z: make([]float64, n), y: make([]float64, n), curv: make([]float64, n),
		step: make([]float64, d), ad: make([]float64, n),
		violMax: math.Inf(1), innerTol: glmnetInnerInit, maxMove: glmnetMaxMove,
	}
	if _, exact := prob.Loss.(objective.Squared); exact {
		s.maxMove = math.Inf(1) // q is F's change itself: its minimiser is safe to take
	}
	if opt.WarmStart != nil {
		copy(s.w, opt.WarmStart)
	}
	s.sweep = driver.NewRowSweep(x, driver.SweepWorkers(x, opt.Threads), !opt.Deterministic)
	if denseHessianPays(x) || glmnetHessianPays(x) {
		// glmnet's covariance updates: on narrow data each coordinate
		// step costs O(d) on the formed Hessian instead of two reads of
		// its column, so the inner problems can be solved closely.
		s.hmat, s.hd = make([]float64, d*d), make([]float64, d)
	} else if s.sweep.Threads() > 1 && bundlesPay(x) {
		s.bundles = newBundleCD(s, s.sweep.Pool(), opt.Threads)
	}
	s.lossSum = make([]float64, s.sweep.Chunks())
	s.conjSum, s.projected = make([]float64, s.sweep.Chunks()), make([]bool, s.sweep.Chunks())
	s.eval = driver.NewEvaluator(prob, opt.Threads)
	s.lossGrad = make([]float64, x.Cols)
	return s, nil
}

// glmnetHessianPays reports whether forming (1/n) Aᵀ diag(φ″) A, Σₖ
// mₖ(mₖ + 1)/2 multiply-adds for rows of mₖ entries, costs at most
// glmnetHessianWork passes over A's columns, on data of width at most
// newtonDenseMaxD.
func glmnetHessianPays(x *sparse.CSR) bool {
	if x.Cols > newtonDenseMaxD {
		return false
	}
	var build int64
	for k := range x.Rows {
		m := x.Indptr[k+1] - x.Indptr[k]
		build += m * (m + 1) / 2
	}
	return float64(build) <= glmnetHessianWork*float64(2*x.NNZ())
}

// transpose returns the CSC form of x as a CSR matrix of its transpose.
func transpose(x *sparse.CSR) *sparse.CSR {
	t := &sparse.CSR{Rows: x.Cols, Cols: x.Rows, Indptr: make([]int64, x.Cols+1),
		Indices: make([]int32, len(x.Indices)), Values: make([]float64, len(x.Values))}
	for _, j := range x.Indices {
		t.Indptr[j+1]++
	}
	for j := range x.Cols {
		t.Indptr[j+1] += t.Indptr[j]
	}
	next := append([]int64(nil), t.Indptr[:x.Cols]...)
	for k := range x.Rows {
		val, idx := x.Row(k)
		for p, j := range idx {
			q := next[j]
			t.Indices[q], t.Values[q] = int32(k), val[p]
			next[j]++
		}
	}
	return t
}

// sweepAt computes, at w, the margins, φ′ and φ″ of every row, ∇L, H's
// diagonal, and the loss part of F at w.
func (s *glmnet) sweepAt() error {
	clear(s.grad)
	clear(s.hdiag)
	outs := [][]float64{s.grad, s.hdiag}
	if s.hmat != nil {
		// H's diagonal comes with the formed matrix (formHessian).
		outs = outs[:1]
	}
	b, w := s.prob.B, s.w
	err := s.sweep.RunChunks(func(c, lo, hi int, acc [][]float64) {
		g := acc[0]
		var h []float64
		if len(acc) > 1 {
			h = acc[1]
		}
		var ls, cs objective.Sum
		projected := false
		// The margins, the loss terms (the logistic's exponentials and
		// logarithms eight at once) and the gradient's rows a block at a
		// time, as newton's sweep takes them.
		s.x.MulVecRows(lo, hi, w, s.z[lo:hi])
		var tv, t1, t2, tc, coef [termsBlock]float64
		for k0 := lo; k0 < hi; k0 += termsBlock {
			k1 := min(k0+termsBlock, hi)
			objective.CurvedTermsBlock(s.loss, s.z[k0:k1], b[k0:k1], tv[:], t1[:], t2[:], tc[:])
			projected = projected || objective.Projects(s.loss, t1[:k1-k0], b[k0:k1])
			for k := k0; k < k1; k++ {
				i := k - k0
				v, d1, d2, conj := tv[i], t1[i], t2[i], tc[i]
				// y keeps φ′(z); with sample weights w's factor goes on
				// the value, the curvature, the conjugate's term and the
				// gradient.
				wk := 1.0
				if sw := s.prob.SampleWeights; sw != nil {
					wk = sw[k]
				}
				s.y[k], s.curv[k] = d1, wk*d2*s.invN
				ls.Add(wk * v)
				cs.Add(wk * conj)
				coef[i] = wk * d1 * s.invN
				cv := s.curv[k]
				if cv == 0 || h == nil {
					continue
				}
				val, idx := s.x.Row(k)
				for p, j := range idx {
					h[j] += cv * val[p] * val[p]
				}
			}
			kernels.SparseAxpyRows(s.x.Indptr[k0:k1+1], coef[:k1-k0], s.x.Values, s.x.Indices, g)
		}
		s.lossSum[c], s.conjSum[c], s.projected[c] = ls.Sum(), cs.Sum(), projected
	}, outs...)
	if err != nil {
		return err
	}
	s.visits += 2 * float64(s.x.NNZ())
	// The Hessian is formed when a step needs it (formHessian): the sweep
	// of the certificate that ends a run never pays for it.
	s.hStale = s.hmat != nil
	var lsum, csum objective.Sum
	s.rowSums.Projected = false
	for c := range s.lossSum {
		lsum.Add(s.lossSum[c])
		csum.Add(s.conjSum[c])
		s.rowSums.Projected = s.rowSums.Projected || s.projected[c]
	}
	s.rowSums.Loss, s.rowSums.Conj = lsum.Sum(), csum.Sum()
	s.rowSums.Deriv = s.y
	s.lossMean = lsum.Sum() * s.invN
	copy(s.lossGrad, s.grad) // (1/n) Aᵀy, the certificate's v
	for j := range s.grad {
		s.grad[j] += s.reg.Lambda * w[j]
	}
	s.fresh = true
	return nil
}

// Certify returns the certificate at w from the sweep's margins there:
// the duals φ′(aₖᵀw), scaled into the box that is dom g* of the lasso.
func (s *glmnet) Certify() (driver.TracePoint, error) {
	if !s.fresh {
		if err := s.sweepAt(); err != nil {
			return driver.TracePoint{}, err
		}
	}
	c, err := s.eval.AtGradient(s.w, s.z, s.lossGrad, &s.rowSums)
	if err == nil {
		s.screen(c.Gap, s.eval.Scale())
	}
	return driver.TracePointOf(c), err
}

func (s *glmnet) Point() []float64 { return s.w }
func (s *glmnet) Passes() float64  { return s.visits / (2 * float64(max(1, s.x.NNZ()))) }
func (s *glmnet) Threads() int     { return s.sweep.Threads() }
func (s *glmnet) DivergenceHint() string {
	return "newGLMNET's line search decreases the objective at every step, so this is non-finite data or a bug; report it with the data"
}

func (s *glmnet) Finish(res *driver.Result) error {
	res.Note = fmt.Sprintf("%d outer steps, %d coordinate-descent passes, %d of %d features screened", s.steps, s.cdPasses, s.nScreened, s.d)
	if s.orthantSteps > 0 {
		res.Note += fmt.Sprintf(", %d inner solves finished on their orthant", s.orthantSteps)
	}
	return s.sweep.Close()
}

// RunEpochs takes one outer step of newGLMNET, whatever k is: the driver
// certifies after each.
func (s *glmnet) RunEpochs(ctx context.Context, k int) (int, error) {
	if k < 1 || ctx.Err() != nil {
		return 0, nil
	}
	if !s.fresh {
		if err := s.sweepAt(); err != nil {
			return 0, err
		}
	}
	s.fresh = false
	moved, err := s.outerStep()
	if err != nil {
		return 0, err
	}
	if !moved {
		return 0, fmt.Errorf("engine: glmnet: the line search found no decrease (%w)", driver.ErrCannotMove)
	}
	s.steps++
	return 1, nil
}

// violation returns how far coordinate j's gradient g breaks the
// optimality conditions of min L + l1‖·‖₁ at wj, and whether the feature
// may be shrunk (wj = 0 and g inside (−l1 + m, l1 − m)).
func violation(g, wj, l1, m float64) (float64, bool) {
	gp, gn := g+l1, g-l1
	switch {
	case wj > 0:
		return math.Abs(gp), false
	case wj < 0:
		return math.Abs(gn), false
	case gp < 0:
		return -gp, false
	case gn > 0:
		return gn, false
	}
	return 0, gp > m && gn < -m
}

// outerStep runs the shrinking, the coordinate descent on q and the line
// search, and reports whether w moved.
func (s *glmnet) outerStep() (bool, error) {
	l1 := s.reg.L1
	// Shrinking (Sect. 5.1), with LIBLINEAR's threshold M/n.
	shrink := s.violMax / float64(s.n)
	s.active = s.active[:0]
	var viol, violSum float64
	for j := range s.d {
		if s.screened != nil && s.screened[j] {
			continue // zero at the optimum (screen)
		}
		v, out := violation(s.grad[j], s.w[j], l1, shrink)
		if out && !s.noShrink {
			continue
		}
		viol, violSum = math.Max(viol, v), violSum+v
		s.active = append(s.active, int32(j))
	}
	s.violMax = viol
	if s.steps == 0 {
		s.violFirst = violSum
	}
	s.violNow = violSum
	if violSum == 0 {
		return false, nil // every coordinate is optimal: the optimum to rounding
	}
	// Coordinate descent on q over the active features.
	clear(s.step)
	var passes int
	if s.hmat != nil {
		if s.hStale {
			if err := s.formHessian(); err != nil {
				return false, err
			}
		}
		passes = s.descendDense()
		// A·d for the line search, one pass over the rows.
		if err := s.sweep.Run(func(lo, hi int, _ [][]float64) {
			s.x.MulVecRows(lo, hi, s.step, s.ad[lo:hi])
		}); err != nil {
			return false, err
		}
		s.visits += float64(s.x.NNZ())
	} else if s.bundles != nil {
		var err error
		if passes, err = s.descendBundles(); err != nil {
			return false, err
		}
	} else {
		passes = s.descendColumns()
	}
	s.cdPasses += passes
	if passes == 1 {
		// The model was solved at once: tighten the inner tolerance, as
		// LIBLINEAR does, or the outer steps stall at a loose model.
		s.innerTol *= 0.25
	}
	return s.lineSearch()
}

// formHessian forms (1/n) Aᵀ diag(w·φ″) A at w from the curvatures the
// last sweep stored, its upper triangle summed by rows on the workers and
// then mirrored.
func (s *glmnet) formHessian() error {
	d := s.d
	clear(s.hmat)
	err := s.sweep.RunChunks(func(c, lo, hi int, acc [][]float64) {
		hm := acc[0]
		for k := lo; k < hi; k++ {
			cv := s.curv[k]
			if cv == 0 {
				continue
			}
			val, idx := s.x.Row(k)
			addOuterUpper(hm, d, cv, val, idx)
		}
	}, s.hmat)

	if err != nil {
		return err
	}
	h := s.hmat
	for i := range d {
		s.hdiag[i] = h[i*d+i]
		for j := i + 1; j < d; j++ {
			h[j*d+i] = h[i*d+j]
		}
	}
	s.hStale = false
	return nil
}

// descendColumns runs coordinate descent on q reading A's columns, and
// returns the passes it made over the inner active set. A·d is kept in ad.
func (s *glmnet) descendColumns() int {
	l1, lam := s.reg.L1, s.reg.Lambda
	clear(s.ad)
	s.inner = append(s.inner[:0], s.active...)
	innerMax := math.Inf(1)
	passes := 0
	for passes < glmnetMaxInner {
		passes++
		var qMax, qSum float64
		s.rng.Shuffle(len(s.inner), func(a, b int) { s.inner[a], s.inner[b] = s.inner[b], s.inner[a] })
		keep := s.inner[:0]
		for _, j := range s.inner {
			rows, vals := s.csc.Indices[s.csc.Indptr[j]:s.csc.Indptr[j+1]], s.csc.Values[s.csc.Indptr[j]:s.csc.Indptr[j+1]]
			// ∂q/∂dⱼ = ∇ⱼL + (Aᵀ diag(φ″/n) A d)ⱼ + (λ + ν) dⱼ.
			var hd float64
			for p, k := range rows {
				hd += s.curv[k] * vals[p] * s.ad[k]
			}
			g := s.grad[j] + hd + (lam+glmnetNu)*s.step[j]
			dz, v, out := coordinateStep(g, s.hdiag[j]+lam+glmnetNu, s.w[j]+s.step[j], l1, innerMax/float64(s.n), s.maxMove)
			if out {
				continue // shrunk from the inner loop too
			}
			keep = append(keep, j)
			qMax, qSum = math.Max(qMax, v), qSum+v
			if dz != 0 {
				s.step[j] += dz
				for p, k := range rows {
					s.ad[k] += dz * vals[p]
				}
			}
		}
		s.inner = keep
		s.visits += 2 * float64(s.activeNNZ(s.inner))
		innerMax = qMax
		if qSum <= math.Min(s.innerTol*s.violFirst, glmnetForcing*s.violNow) {
			break
		}
	}
	return passes
}

// descendDense runs coordinate descent on q with the formed Hessian: a
// coordinate step reads H's row and updates H·d, O(d) whatever the data's
// height. It returns the passes it made.
func (s *glmnet) descendDense() int {
	l1, lam, d := s.reg.L1, s.reg.Lambda, s.d
	clear(s.hd)
	s.inner = append(s.inner[:0], s.active...)
	innerMax := math.Inf(1)
	passes, spent := 0, 0.0
	for passes < glmnetMaxDense {
		passes++
		var qMax, qSum float64
		s.rng.Shuffle(len(s.inner), func(a, b int) { s.inner[a], s.inner[b] = s.inner[b], s.inner[a] })
		keep := s.inner[:0]
		flips := 0
		for _, j := range s.inner {
			old := s.w[j] + s.step[j]
			g := s.grad[j] + s.hd[j] + (lam+glmnetNu)*s.step[j]
			dz, v, out := coordinateStep(g, s.hdiag[j]+lam+glmnetNu, old, l1, innerMax/float64(s.n), s.maxMove)
			if out {
				continue
			}
			keep = append(keep, j)
			qMax, qSum = math.Max(qMax, v), qSum+v
			if dz != 0 {
				s.step[j] += dz
				kernels.Axpy(dz, s.hmat[int(j)*d:int(j+1)*d], s.hd)
				if sign(old) != sign(s.w[j]+s.step[j]) {
					flips++
				}
			}
		}
		s.inner = keep
		s.visits += float64(len(s.inner) * d)
		spent += float64(len(s.inner) * d)
		innerMax = qMax
		if qSum <= math.Min(s.innerTol*s.violFirst, glmnetForcingDense*s.violNow) {
			break
		}
		// Once a pass changed no sign and the passes have cost what a
		// factor of the model's nonzero block would, solve q on its
		// orthant exactly; the next pass checks the result.
		if k := float64(len(s.inner)); flips == 0 && spent >= k*k*k/6 {
			spent = 0
			if s.orthantStep() {
				s.orthantSteps++
			}
		}
	}
	return passes
}

// sign returns −1, 0 or 1 by the sign of x.
func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// orthantStep moves the inner loop's step to the minimiser of the model
// q on the orthant of w + d, as an active-set method does: with N the
// features of the inner loop at which w + d ≠ 0 and σ their signs, q is
// there the quadratic
//
//	∇Lᵀd + ½ dᵀ(H + μI)d + l1 σᵀ(w + d)_N,   μ = λ + ν,
//
// of d_N, the other features held (at zero, or outside the inner loop at
// d = 0), whose minimiser is d_N + Δ with (H_NN + μI) Δ = −∇_N q(d), by
// the Cholesky factor of the block (|N|³/6). Where Δ would carry some
// coordinate of w + d across zero, the step goes along Δ as far as the
// first such coordinate, which is then held at zero, and the block is
// solved again without it, at most orthantMaxSolves times; a step is also
// cut short where a coordinate would move by more than the coordinate
// steps' bound. q is convex along Δ, so each of these moves decreases it,
// and coordinate descent goes on from where they end. It reports whether
// the last solve was taken in full.
//
// Coordinate descent converges linearly, and slowly where features are
// correlated: on w8a's words in late outer steps a weight the model puts
// at zero crept there over hundreds of passes, and the loop hit its cap
// of passes, while the signs had long settled.
func (s *glmnet) orthantStep() bool {
	l1, mu, d := s.reg.L1, s.reg.Lambda+glmnetNu, s.d
	for range orthantMaxSolves {
		nz := s.orth[:0]
		for _, j := range s.inner {
			if s.w[j]+s.step[j] != 0 {
				nz = append(nz, j)
			}
		}
		s.orth = nz
		k := len(nz)
		if k == 0 {
			return false
		}
		if cap(s.sub) < k*k {
			s.sub, s.subChol = make([]float64, k*k), make([]float64, k*k)
			s.subVec = make([]float64, 4*k)
		}
		sub, chol := s.sub[:k*k], s.subChol[:k*k]
		shift, scale, rhs, delta := s.subVec[:k], s.subVec[k:2*k], s.subVec[2*k:3*k], s.subVec[3*k:4*k]
		for p, i := range nz {
			row := s.hmat[int(i)*d : int(i+1)*d]
			for q, j := range nz {
				sub[p*k+q] = row[j]
			}
			shift[p] = mu
			rhs[p] = -(s.grad[i] + s.hd[i] + mu*s.step[i] + l1*float64(sign(s.w[i]+s.step[i])))
		}
		s.visits += float64(k) * float64(k) * float64(k) / 6
		if !cholFactor(sub, shift, chol, scale, k) {
			return false
		}
		cholSolve(chol, scale, rhs, delta, k)
		// The longest t ≤ 1 along Δ that keeps the signs and the bound.
		t, stop := 1.0, -1
		for p, i := range nz {
			now, dp := s.w[i]+s.step[i], delta[p]
			if sign(now+dp) != sign(now) && -now/dp < t {
				t, stop = -now/dp, p
			}
			if m := s.maxMove / math.Abs(dp); m < t {
				t, stop = m, -2
			}
		}
		for p, i := range nz {
			dp := t * delta[p]
			if p == stop {
				dp = -(s.w[i] + s.step[i]) // exactly to zero
			}
			s.step[i] += dp
			kernels.Axpy(dp, s.hmat[int(i)*d:int(i+1)*d], s.hd)
		}
		switch stop {
		case -1:
			return true
		case -2:
			return false
		}
	}
	return false
}

// orthantMaxSolves bounds the solves of one orthantStep.
const orthantMaxSolves = 8

// coordinateStep returns the minimiser dz of the one-dimensional model
// g·t + ½h·t² + l1|wpd + t| (Eq. 17: a Newton step on the side of zero
// the minimum lies on, or the step to zero) clipped to |dz| ≤ bound, the
// violation of the optimality conditions at wpd, and whether the
// coordinate may be shrunk from the inner loop (at zero, with
// |g| < l1 − m).
func coordinateStep(g, h, wpd, l1, m, bound float64) (dz, viol float64, out bool) {
	viol, out = violation(g, wpd, l1, m)
	if out {
		return 0, 0, true
	}
	switch gp, gn := g+l1, g-l1; {
	case gp < h*wpd:
		dz = -gp / h
	case gn > h*wpd:
		dz = -gn / h
	default:
		dz = -wpd
	}
	return math.Max(-bound, math.Min(dz, bound)), viol, false
}

// activeNNZ returns the stored entries of the given columns.
func (s *glmnet) activeNNZ(cols []int32) int64 {
	var nnz int64
	for _, j := range cols {
		nnz += s.csc.Indptr[j+1] - s.csc.Indptr[j]
	}
	return nnz
}

// lineSearch scales the step by the largest β = 2⁻ᵗ that meets Armijo's
// condition, applies it and reports whether w moved.
func (s *glmnet) lineSearch() (bool, error) {
	l1, lam := s.reg.L1, s.reg.Lambda
	var gd, l1Old, l1New, sqDelta, cross float64
	for _, j := range s.active {
		dj, wj := s.step[j], s.w[j]
		gd += s.grad[j] * dj
		l1Old += math.Abs(wj)
		l1New += math.Abs(wj + dj)
		cross += wj * dj
		sqDelta += dj * dj
	}
	delta := gd + l1*(l1New-l1Old)
	rounding := glmnetRounding * math.Max(1, s.lossMean+s.reg.Value(s.w))
	if !(delta < rounding) {
		return false, nil // no descent left in the model
	}
	b := s.prob.B
	beta := 1.0
	for range glmnetMaxLine {
		// The loss at w + βd on the sweep's workers, summed per chunk of
		// rows and then over the chunks in order, as sweepAt sums it, so
		// that at β = 0 it would equal s.lossMean to the last bit.
		sw := s.prob.SampleWeights
		if err := s.sweep.RunChunks(func(c, lo, hi int, _ [][]float64) {
			var ls objective.Sum
			var vals [termsBlock]float64
			for k0 := lo; k0 < hi; k0 += termsBlock {
				k1 := min(k0+termsBlock, hi)
				objective.ValuesAlong(s.loss, s.z[k0:k1], s.ad[k0:k1], b[k0:k1], beta, vals[:])
				for i, v := range vals[:k1-k0] {
					if sw != nil {
						v *= sw[k0+i]
					}
					ls.Add(v)
				}
			}
			s.lossSum[c] = ls.Sum()
		}); err != nil {
			return false, err
		}
		var ls objective.Sum
		for _, v := range s.lossSum {
			ls.Add(v)
		}
		var l1b float64
		for _, j := range s.active {
			l1b += math.Abs(s.w[j] + beta*s.step[j])
		}
		// F(w + βd) − F(w), the L2 part expanded: (λ/2)(2βwᵀd + β²‖d‖²).
		change := (ls.Sum()*s.invN - s.lossMean) + lam*(beta*cross+0.5*beta*beta*sqDelta) + l1*(l1b-l1Old)
		// Near the optimum both sides fall below the rounding of F's
		// sums of n terms, and Armijo's test decides on noise: there a
		// step that does not raise F beyond rounding is taken, so that the
		// certificate, first order in w where F is second, keeps falling.
		if change <= glmnetSigma*beta*delta || math.Abs(delta) <= rounding && change <= rounding {
			for _, j := range s.active {
				s.w[j] += beta * s.step[j]
			}
			return true, nil
		}
		beta *= 0.5
	}
	return false, nil
}
