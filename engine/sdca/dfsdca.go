package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverDFSDCA is dual-free SDCA (Shalev-Shwartz 2016), a variance-reduced
// SGD whose pseudo-duals need no conjugate.
const SolverDFSDCA driver.Solver = "dfsdca"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:               SolverDFSDCA,
			Reads:              []string{driver.CoordinateFamily},
			Summary:            "dual-free SDCA, SGD with one pseudo-dual per sample, optional importance sampling (Shalev-Shwartz 2016)",
			Losses:             "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:       "plain L2 with λ > 0",
			Certified:          true,
			ImportanceSampling: true,
		},
		Rank:    24,
		Accepts: acceptsDFSDCA,
		Start:   startDFSDCA,
	})
}

// acceptsDFSDCA reports why dual-free SDCA cannot solve prob: its step
// η = 1/(L + λn) needs a smooth loss (L = maxᵢ ‖aᵢ‖²/γ) and its invariant
// λw = (1/n) Σ αᵢaᵢ a plain L2 regularizer.
func acceptsDFSDCA(prob objective.Problem, opt driver.Options) error {
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return fmt.Errorf("engine: %s takes the L2 regularizer, not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if en.L1 > 0 {
		return fmt.Errorf("engine: %s takes pure L2 only (its primal is the sum of its pseudo-duals); for L1 = %g use sdca, which handles the elastic net", opt.Solver, en.L1)
	}
	if en.Center != nil || en.Weights != nil {
		return fmt.Errorf("engine: %s takes the plain L2 regularizer only, not the %s one; use sdca", opt.Solver, en.Name())
	}
	if !(en.Lambda > 0) {
		return fmt.Errorf("engine: %s needs λ > 0 (its step is η = 1/(L + λn) and its primal λw = (1/n) Σ αᵢaᵢ); got λ = %g", opt.Solver, en.Lambda)
	}
	if g := prob.Loss.Gamma(); !(g > 0) {
		return fmt.Errorf("engine: the %s loss has γ = %g: %s needs a smooth loss (its step is η = 1/(L + λn) with L = ‖a‖²/γ); use sdca", prob.Loss.Name(), g, opt.Solver)
	}
	if opt.Coordinate().M > 1 {
		return fmt.Errorf("engine: %s steps one sample at a time; m = %d mini-batches are sdca's", opt.Solver, opt.Coordinate().M)
	}
	if opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s updates single samples: block size %d is AdaSPDC's", opt.Solver, opt.Coordinate().BlockSize)
	}
	return nil
}

// dfsdca is the state of one dual-free SDCA run.
type dfsdca struct {
	prob objective.Problem
	x    *sparse.CSR
	n, d int
	lam  float64
	invN float64

	w     []float64 // the primal point; λw = (1/n) Σ αᵢaᵢ
	alpha []float64 // αᵢ: the pseudo-dual αᵢ·aᵢ of sample i, one scalar
	// step[i] and beta[i] are sample i's primal step and dual mixing weight:
	// η and β = ηλn under uniform sampling, η/(nqᵢ) and ηλ/qᵢ under
	// importance sampling.
	step, beta []float64

	perm    []int32 // uniform sampling: this epoch's order
	rng     *rand.Rand
	sampler *blocks.Importance // importance sampling: i ~ q
	draws   []int32

	v, comp []float64 // certificate scratch
	sampled int64
	// ownDuals records whether the last certificate's dual value was the
	// one at y = −α (else at yᵢ = φ'(aᵢᵀw)).
	ownDuals bool
	negAlpha []float64 // −α, the own duals the certificate takes
	eval     *objective.Evaluator
}

// startDFSDCA sets αᵢ = 0 and w = 0, or for a warm start x₀ the pseudo-duals
// αᵢ = −φ'(aᵢᵀx₀) and w = (1/(λn)) Σ αᵢaᵢ, which keeps the invariant.
func startDFSDCA(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet()
	s := &dfsdca{prob: prob, x: x, n: x.Rows, d: x.Cols, lam: en.Lambda, invN: 1 / float64(x.Rows)}
	s.w = make([]float64, s.d)
	s.alpha = make([]float64, s.n)
	s.v = make([]float64, s.d)
	s.comp = make([]float64, s.d)
	s.negAlpha = make([]float64, s.n)
	s.eval = driver.NewEvaluator(prob, opt.Threads)
	s.step = make([]float64, s.n)
	s.beta = make([]float64, s.n)

	// Lᵢ = ‖aᵢ‖²/γ is the smoothness of w ↦ φ(aᵢᵀw) (φ'' ≤ 1/γ).
	gamma := prob.Loss.Gamma()
	li := x.RowSquaredNorms()
	var lmax, lsum float64
	for i := range li {
		li[i] /= gamma
		if math.IsNaN(li[i]) || math.IsInf(li[i], 0) {
			return nil, fmt.Errorf("engine: row %d has non-finite values or a squared norm beyond float64", i)
		}
		lmax = max(lmax, li[i])
		lsum += li[i]
	}
	if lmax == 0 {
		return nil, errors.New("engine: every row of the data is zero")
	}
	n := float64(s.n)
	if opt.Coordinate().Sampling == driver.SamplingImportance {
		// qᵢ = (Lᵢ + L̄)/(2nL̄) and η = 1/(2(L̄ + λn)); see step.
		lbar := lsum / n
		weights := make([]float64, s.n)
		for i, l := range li {
			weights[i] = l + lbar
		}
		var err error
		s.sampler, err = blocks.NewImportance(weights, 1024, opt.Seed^0xdf5dca)
		if err != nil {
			return nil, fmt.Errorf("engine: importance sampler: %w", err)
		}
		eta := 1 / (2 * (lbar + s.lam*n))
		for i, l := range li {
			q := (l + lbar) / (2 * n * lbar)
			s.step[i] = eta / (n * q)
			s.beta[i] = eta * s.lam / q
		}
	} else {
		eta := 1 / (lmax + s.lam*n)
		for i := range s.step {
			s.step[i] = eta
			s.beta[i] = eta * s.lam * n
		}
		s.perm = make([]int32, s.n)
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
		s.rng = rand.New(rand.NewPCG(opt.Seed, 0xdf5dca))
	}
	if opt.WarmStart != nil {
		for i := 0; i < s.n; i++ {
			val, idx := x.Row(i)
			s.alpha[i] = -prob.Loss.Deriv(kernels.SparseDot(val, idx, opt.WarmStart), prob.B[i])
		}
		s.syncPrimal()
	}
	return s, nil
}

// Dual-free SDCA (Shalev-Shwartz, "SDCA without duality, regularization,
// and individual convexity", ICML 2016; the slides "SDCA without Duality").
//
// For F(w) = (1/n) Σᵢ φᵢ(w) + (λ/2)‖w‖², the optimum satisfies
// w* = (1/(λn)) Σᵢ αᵢ* with αᵢ* = −∇φᵢ(w*). The method keeps pseudo-duals
// αᵢ with the invariant λw = (1/n) Σᵢ αᵢ and, for a drawn sample i,
//
//	w  ← w − η·(∇φᵢ(w) + αᵢ)
//	αᵢ ← αᵢ − β·(∇φᵢ(w) + αᵢ) = (1 − β)·αᵢ + β·(−∇φᵢ(w)),   β = ηλn,
//
// which keeps the invariant (λ·Δw = (1/n)·Δαᵢ) and is SGD with the
// variance-reduced gradient ∇φᵢ(w) + αᵢ, whose mean over i is ∇F(w). With
// η = 1/(L + λn), so that β ≤ 1 (the reading notes), the potential
// (1/2L)·E‖αᵢ − αᵢ*‖² + (λ/2)‖w − w*‖² contracts by (1 − ηλ) per step.
//
// For a linear model φᵢ(w) = φ(aᵢᵀw, bᵢ), ∇φᵢ(w) = φ'(aᵢᵀw)·aᵢ, and by
// induction every αᵢ is a multiple of aᵢ, so one scalar per sample stands
// for it (αᵢ means αᵢ·aᵢ): g = φ'(aᵢᵀw) + αᵢ, w ← w − η·g·aᵢ, αᵢ ← αᵢ − β·g,
// O(nnz of the row) per step. Lᵢ = ‖aᵢ‖²/γ and L = maxᵢ Lᵢ.
//
// The pseudo-duals are SDCA's duals with the sign flipped, yᵢ = −αᵢ: then
// v = (1/n) Σ yᵢaᵢ = −λw and w = ∇g*(−v). Each αᵢ stays a convex
// combination of its start and values −φ'(·), so −αᵢ lies in dom φ* and the
// certificate can evaluate D at y = −α, the method's own dual point.
//
// Importance sampling (the slides' "dependence on average smoothness"):
// draw i with qᵢ = (Lᵢ + L̄)/(2nL̄), L̄ the mean Lᵢ, and keep the gradient
// estimate unbiased by weighting it with 1/(nqᵢ):
// w ← w − (η/(nqᵢ))·g·aᵢ, αᵢ ← αᵢ − (ηλ/qᵢ)·g, which keeps the invariant.
// Our copy of the paper gives no step for this case; we take
// η = 1/(2(L̄ + λn)), for which every sample's effective step η/(nqᵢ) =
// 2ηL̄/(Lᵢ + L̄) is at most 1/(Lᵢ + λn) — the uniform method's bound with
// its own Lᵢ, since L̄(Lᵢ + λn) ≤ (Lᵢ + L̄)(L̄ + λn) — and every βᵢ = ηλ/qᵢ ≤ 1.
// Uniform sampling visits the samples in a fresh random permutation each
// epoch rather than with replacement; importance sampling draws n samples
// with replacement per epoch.
func (s *dfsdca) stepSample(i int) {
	lo, hi := s.x.Indptr[i], s.x.Indptr[i+1]
	val, idx := s.x.Values[lo:hi], s.x.Indices[lo:hi]
	z := kernels.SparseDot(val, idx, s.w)
	g := s.prob.Loss.Deriv(z, s.prob.B[i]) + s.alpha[i]
	if g == 0 {
		return
	}
	kernels.SparseAxpy(-s.step[i]*g, val, idx, s.w)
	s.alpha[i] -= s.beta[i] * g
}

func (s *dfsdca) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		if s.sampler != nil {
			for done := 0; done < s.n; {
				s.draws = s.sampler.Sample(s.draws)
				batch := s.draws[:min(len(s.draws), s.n-done)]
				for _, i := range batch {
					s.stepSample(int(i))
				}
				done += len(batch)
				s.sampled += int64(len(batch))
				if ctx.Err() != nil {
					return e + 1, nil
				}
			}
		} else {
			s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
			for c, i := range s.perm {
				s.stepSample(int(i))
				s.sampled++
				if c&4095 == 4095 && ctx.Err() != nil {
					return e + 1, nil
				}
			}
		}
	}
	return k, nil
}

// syncPrimal projects every −αᵢ into dom φ* (a change of rounding size at
// most) and sets w = (1/(λn)) Σ αᵢaᵢ exactly, with compensated sums, which
// restores the invariant from the rounding the steps accumulate. It leaves
// v = (1/n) Σ yᵢaᵢ for the duals y = −α, that is v = −λw.
func (s *dfsdca) syncPrimal() {
	loss, b := s.prob.Loss, s.prob.B
	for i, a := range s.alpha {
		s.alpha[i] = -loss.DualFeasible(-a, b[i])
	}
	clear(s.v)
	clear(s.comp)
	for i := 0; i < s.n; i++ {
		yi := -s.alpha[i]
		if yi == 0 {
			continue
		}
		val, idx := s.x.Row(i)
		for p, j := range idx {
			s.v[j], s.comp[j] = objective.AddProduct(s.v[j], s.comp[j], yi, val[p])
		}
	}
	for j := range s.v {
		s.v[j] = (s.v[j] + s.comp[j]) * s.invN
		s.w[j] = -s.v[j] / s.lam
	}
}

// Certify restores the invariant (syncPrimal) and returns P(w) with the
// better of two dual values: D at the method's own duals y = −α, whose
// primal point is w itself, and D at yᵢ = φ'(aᵢᵀw), Certify's. Both are
// lower bounds on P*, so the gap bounds P(w) − P* either way; the first is
// the one that goes to zero with the pseudo-duals.
func (s *dfsdca) Certify() (driver.TracePoint, error) {
	s.syncPrimal()
	for i, a := range s.alpha {
		s.negAlpha[i] = -a
	}
	c, err := s.eval.At(s.w, s.negAlpha, objective.BetterDuals)
	s.ownDuals = s.eval.From() == objective.OwnDuals
	return driver.TracePointOf(c), err
}

func (s *dfsdca) Point() []float64 { return s.w }
func (s *dfsdca) Passes() float64  { return float64(s.sampled) * s.invN }
func (s *dfsdca) Threads() int     { return 1 }
func (s *dfsdca) DivergenceHint() string {
	return "scale the features (e.g. to [-1, 1]), or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), or raise λ (ElasticNet.Lambda)"
}

// Finish reports the duals of the final certificate's dual value: the
// method's own, y = −α, or yᵢ = φ'(aᵢᵀw) when those gave the higher value.
func (s *dfsdca) Finish(res *driver.Result) error {
	y := make([]float64, s.n)
	loss, b := s.prob.Loss, s.prob.B
	for i, a := range s.alpha {
		if s.ownDuals {
			y[i] = -a
			continue
		}
		val, idx := s.x.Row(i)
		y[i] = loss.DualFeasible(loss.Deriv(kernels.SparseDot(val, idx, s.w), b[i]), b[i])
	}
	res.Duals = y
	return nil
}
