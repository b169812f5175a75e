package vr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

// The variance-reduced primal methods.
//
// SAG, SAGA and SVRG (sag.go, saga.go, svrg.go) step on the primal point x
// alone, with an estimate of the full gradient of the smooth part
// f(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) whose variance vanishes at the optimum, and
// treat g = ElasticNet through its proximal map:
//
//	x ← prox_{ηg}(x − η·(estimate of ∇f(x))).
//
// For linear models ∇fₖ(x) = φ'(aₖᵀx)·aₖ, so each method keeps scalars per
// sample, and every estimate is a sparse row term plus a dense vector c
// that changes on the sampled row's coordinates only. That is the form a
// coordStore applies lazily (coordstore.go): on sparse data an iteration
// costs O(nnz of the row), not O(d).
//
// The steps are the papers' in units of L = maxₖ ‖aₖ‖²/γ, the largest
// smoothness constant of the fₖ (γ is the strong convexity of φ*, so φ is
// 1/γ-smooth); the L2 part of g is in the prox, not in L. CoordinateSettings.StepScale
// multiplies them. Since g's λ may be 0 (the lasso), these methods take
// any L1 ≥ 0 and λ ≥ 0 but not both zero.
//
// They certify with the dual point that the optimality conditions pair
// with x, yₖ = φ'(aₖᵀx), as Certify does. For λ = 0 that point is
// generally outside dom g* (|vⱼ| ≤ L1 for v = (1/n) Σₖ yₖaₖ), where D = −∞;
// the certificate then scales y by θ = min(1, L1/‖v‖∞), the largest
// factor that makes it feasible (a dual scaling as in the gap-safe
// screening literature). D stays a true lower bound on P*, the gap is
// finite, and it still goes to 0 as x goes to the optimum, where
// ‖v‖∞ ≤ L1.

// The variance-reduced solvers.
const (
	SolverSAG  driver.Solver = "sag"
	SolverSAGA driver.Solver = "saga"
	SolverSVRG driver.Solver = "svrg"
)

// vrMethod is the state the variance-reduced methods share: the data, the
// step, the coordinate store that holds x, the sampler and the
// certificate's buffers. The methods add their scalars and their epoch.
type vrMethod struct {
	prob objective.Problem
	name driver.Solver
	n, d int
	loss objective.Loss
	reg  objective.ElasticNet
	eta  float64
	// stepRule says how eta was chosen, for the divergence hint.
	stepRule string

	values  []float64
	indices []int32
	indptr  []int64

	store coordStore
	rng   *rand.Rand

	rows  int64 // rows whose gradient the method evaluated, for passes
	epoch func()

	xcur []float64 // x at the last certificate
	eval *objective.Evaluator
}

// acceptsVR reports why SAG, SAGA or SVRG cannot solve prob.
func acceptsVR(prob objective.Problem, opt driver.Options) error {
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the elastic net (with or without a centre), not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if en.Weights != nil {
		return fmt.Errorf("engine: %s does not take per-coordinate regularizer weights: its lazy updates assume one λ and one L1 for every coordinate", opt.Solver)
	}
	if en.Lambda == 0 && en.L1 == 0 {
		return fmt.Errorf("engine: %s needs λ > 0 or L1 > 0: without a regularizer the optimum may not exist (separable data), and no duality gap certifies it", opt.Solver)
	}
	if g := prob.Loss.Gamma(); !(g > 0) {
		return fmt.Errorf("engine: the %s loss has γ = %g: %s needs a smooth loss (φ' Lipschitz, γ > 0)", prob.Loss.Name(), g, opt.Solver)
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s samples one row per iteration: it takes no CoordinateSettings.M (%d) or CoordinateSettings.BlockSize (%d) above 1", opt.Solver, opt.Coordinate().M, opt.Coordinate().BlockSize)
	}
	return nil
}

// newVRMethod sets up what the variance-reduced methods share, with the
// step η = StepScale / (div·L); rule names it for messages ("1/(3L)").
func newVRMethod(prob objective.Problem, opt driver.Options, div float64, rule string) (*vrMethod, error) {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet() // acceptsVR checked that it is one
	m := &vrMethod{
		prob: prob, name: opt.Solver, n: x.Rows, d: x.Cols, loss: prob.Loss,
		reg:    en,
		values: x.Values, indices: x.Indices, indptr: x.Indptr,
		rng: rand.New(rand.NewPCG(opt.Seed, 0x5a6a)),
	}
	rmax := 0.0
	for k, r := range x.RowSquaredNorms() {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("engine: row %d has squared norm %v: the data holds non-finite values", k, r)
		}
		rmax = math.Max(rmax, r)
	}
	if rmax == 0 {
		return nil, fmt.Errorf("engine: every row of the data is zero")
	}
	lip := rmax / prob.Loss.Gamma()
	m.eta = opt.Coordinate().StepScale / (div * lip)
	m.stepRule = fmt.Sprintf("the step is %g × %s = %.4g, with L = max‖aₖ‖²/γ = %.4g", opt.Coordinate().StepScale, rule, m.eta, lip)
	if !(m.eta > 0) || math.IsInf(m.eta, 0) {
		return nil, fmt.Errorf("engine: %s: %s is not a usable step", opt.Solver, m.stepRule)
	}
	var lazy bool
	switch opt.Coordinate().Lazy {
	case driver.LazyOn:
		lazy = true
	case driver.LazyOff:
		lazy = false
	default: // as AdaSPDC decides at m = 1
		lazy = float64(m.d) > driver.LazyBreakEven*float64(x.NNZ())/float64(m.n)
	}
	m.store = newCoordStore(lazy, m.d, m.eta, m.reg)
	m.xcur = make([]float64, m.d)
	if opt.WarmStart != nil {
		copy(m.xcur, opt.WarmStart)
	}
	m.eval = driver.NewEvaluator(prob, opt.Threads)
	return m, nil
}

// row returns row k's values and column indices.
func (m *vrMethod) row(k int) ([]float64, []int32) {
	lo, hi := m.indptr[k], m.indptr[k+1]
	return m.values[lo:hi], m.indices[lo:hi]
}

// gradientTable sets dst[k] = φ'(aₖᵀx) for every row and returns
// c = (1/n) Σₖ dst[k]·aₖ, the gradient of f at x, in c.
func (m *vrMethod) gradientTable(x, dst, c []float64) {
	clear(c)
	invN := 1 / float64(m.n)
	for k := range m.n {
		val, idx := m.row(k)
		g := m.loss.Deriv(kernels.SparseDot(val, idx, x), m.prob.B[k])
		dst[k] = g
		kernels.SparseAxpy(g*invN, val, idx, c)
	}
}

func (m *vrMethod) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := range k {
		if ctx.Err() != nil {
			return e, nil
		}
		m.epoch()
	}
	return k, nil
}

// Certify reads x from the store and returns the certificate at x and the
// duals yₖ = φ'(aₖᵀx) (scaled into dom g* when λ = 0, see above).
func (m *vrMethod) Certify() (driver.TracePoint, error) {
	m.store.read(m.xcur)
	c, err := m.eval.At(m.xcur, nil, objective.PairedDuals)
	return driver.TracePointOf(c), err
}

func (m *vrMethod) Point() []float64 { return m.xcur }

func (m *vrMethod) Passes() float64 { return float64(m.rows) / float64(m.n) }

func (m *vrMethod) Threads() int { return 1 }

func (m *vrMethod) DivergenceHint() string {
	return fmt.Sprintf("%s; lower CoordinateSettings.StepScale below 1", m.stepRule)
}

// Finish reports the lazy mode and the last certificate's duals.
func (m *vrMethod) Finish(res *driver.Result) error {
	res.Lazy = m.store.lazy()
	res.Duals = slices.Clone(m.eval.Duals())
	return nil
}
