package newton

import (
	"context"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

// SolverLBFGS is limited-memory BFGS on the primal, which runs the
// multinomial logistic regression (objective.Multinomial).
const SolverLBFGS driver.Solver = "lbfgs"

func init() {
	driver.RegisterMultinomial(&driver.MultinomialEntry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverLBFGS,
			Summary:      "limited-memory BFGS on the primal (Nocedal & Wright, Alg. 7.5), the default solver of the multinomial loss (TrainMultinomial)",
			Losses:       "multinomial logistic (TrainMultinomial; sdca takes it too)",
			Regularizers: "L2 with λ > 0",
			Parallel:     true,
			Certified:    true,
		},
		Rank:  0,
		Start: StartSoftmax,
	})
}

// lbfgsMemory is the number of curvature pairs kept: 10, as in most
// implementations (Nocedal & Wright, §7.2, find 3 to 20 enough).
const lbfgsMemory = 10

// Armijo's sufficient decrease constant and the line search's cap.
const (
	lbfgsArmijo   = 1e-4
	lbfgsMaxTrial = 40
)

// softmaxLBFGS minimises the multinomial objective
//
//	P(W) = (1/n) Σₖ wₖ (log Σⱼ exp(aₖᵀWⱼ) − aₖᵀW_{cₖ}) + (λ/2)‖W‖²
//
// by L-BFGS (Nocedal & Wright, Alg. 7.4 and 7.5): the direction is
// d = −H∇P, with H the inverse-Hessian estimate that the two-loop recursion
// forms from the last lbfgsMemory steps sᵢ and gradient changes yᵢ,
// started from γI with γ = sᵀy/yᵀy of the newest pair; the step αd takes
// the first α in 1, ½, ¼, … with P(W + αd) ≤ P(W) + 10⁻⁴α∇Pᵀd (Armijo).
// P is smooth and λ-strongly convex, so every yᵢᵀsᵢ ≥ λ‖sᵢ‖² > 0 and H
// stays positive definite. An epoch is one step; each evaluation of P and
// ∇P is two passes over the data (margins, then the scatter of the
// gradient), on the driver's row sweep.
type softmaxLBFGS struct {
	prob  objective.Multinomial
	lam   float64
	invN  float64
	sweep *driver.WorldSweep

	// At w and at the trial point, the loss's gradient V = (1/N) Σₖ aₖYₖᵀ
	// and the sums Σwφ, Σwφ* of the paired duals, from which the
	// certificate is formed (objective.AssembleMultinomialPaired); over the
	// ranks (world not nil) they are every rank's rows', N rows in all.
	world      *driver.World
	nGlobal    int64
	v, vTry    []float64
	sums, sTry [2]float64
	conjSum    []float64 // per chunk of the sweep

	w, g []float64 // the iterate and ∇P there
	f    float64   // P(w)
	wTry []float64 // a trial point of the line search
	gTry []float64
	dir  []float64
	curvaturePairs
	lossSum []float64 // per chunk of the sweep
	evals   float64
}

// StartSoftmax builds L-BFGS for the multinomial problem prob, at W = 0 or
// at opt.WarmStart (feature-major, d·K weights).
func StartSoftmax(prob objective.Multinomial, opt driver.Options) (driver.Method, error) {
	if err := prob.Validate(); err != nil {
		return nil, err
	}
	if err := softmaxRegOK(prob); err != nil {
		return nil, err
	}
	return startSoftmaxOn(prob, opt, nil)
}

func softmaxRegOK(prob objective.Multinomial) error {
	if prob.Reg.L1 != 0 || !(prob.Reg.Lambda > 0) {
		return fmt.Errorf("engine: %s solves the multinomial loss with an L2 term λ > 0 and no L1 term (got λ = %g, l1 = %g)", SolverLBFGS, prob.Reg.Lambda, prob.Reg.L1)
	}
	return nil
}

// startSoftmaxOn is StartSoftmax on the rank's rows of a problem whose
// rows are spread over the ranks of world (nil: one process, all rows).
func startSoftmaxOn(prob objective.Multinomial, opt driver.Options, world *driver.World) (*softmaxLBFGS, error) {
	dim := prob.Dim()
	nGlobal := int64(prob.X.Rows)
	if world != nil {
		nGlobal = world.Rows()
	}
	s := &softmaxLBFGS{prob: prob, lam: prob.Reg.Lambda, invN: 1 / float64(nGlobal), world: world, nGlobal: nGlobal,
		w: make([]float64, dim), g: make([]float64, dim), wTry: make([]float64, dim),
		gTry: make([]float64, dim), dir: make([]float64, dim), curvaturePairs: newCurvaturePairs()}
	if opt.WarmStart != nil {
		if len(opt.WarmStart) != dim {
			return nil, fmt.Errorf("engine: warm start has %d weights, the multinomial model %d (%d features × %d classes)", len(opt.WarmStart), dim, prob.X.Cols, prob.K)
		}
		copy(s.w, opt.WarmStart)
	}
	// A row's work is K times a scalar loss's: K margins and K scatters.
	work := float64(prob.X.NNZ()) * float64(prob.K)
	s.sweep = driver.NewWorldSweep(prob.X, driver.WorkersFor(opt.Threads, work, driver.SweepMinNNZ, driver.NoLimit), !opt.Deterministic, world)
	s.lossSum = make([]float64, s.sweep.Chunks())
	// The certificate comes from the last evaluation's sums, in one process
	// as over the ranks: re-reading the rows for it cost as much as the
	// L-BFGS steps themselves.
	s.v, s.vTry, s.conjSum = make([]float64, dim), make([]float64, dim), make([]float64, s.sweep.Chunks())
	var err error
	if s.f, err = s.valueGrad(s.w, s.g, s.v, &s.sums); err != nil {
		s.sweep.Close()
		return nil, err
	}
	return s, nil
}

// valueGrad returns P(w) and sets g = ∇P(w): one sum over the rows, of
// K·d + 1 values in one process and, over the ranks, one allreduce of
// K·d + 2 (with the paired duals' conjugates, for the certificate); there
// v (not nil) receives the loss's gradient and sums Σwφ and Σwφ*.
func (s *softmaxLBFGS) valueGrad(w, g, v []float64, sums *[2]float64) (float64, error) {
	p := s.prob
	K := p.K
	var tail [2]float64
	err := s.sweep.RunSum(func(c, lo, hi int, acc [][]float64) {
		out := acc[0]
		z := make([]float64, K)
		yk := make([]float64, K)
		var ls, cs objective.Sum
		for k := lo; k < hi; k++ {
			val, idx := p.X.Row(k)
			p.Margins(val, idx, w, z)
			v, conj := objective.SoftmaxTerms(z, p.Class[k], yk)
			wk := s.invN
			if p.Weights != nil {
				wk *= p.Weights[k]
				v *= p.Weights[k]
				conj *= p.Weights[k]
			}
			ls.Add(v)
			cs.Add(conj)
			for q, j := range idx {
				kernels.Axpy(wk*val[q], yk, out[int(j)*K:int(j)*K+K])
			}
		}
		s.lossSum[c] = ls.Sum()
		s.conjSum[c] = cs.Sum()
	}, func() []float64 {
		var ls, cs objective.Sum
		for c, v := range s.lossSum {
			ls.Add(v)
			cs.Add(s.conjSum[c])
		}
		tail = [2]float64{ls.Sum(), cs.Sum()}
		return tail[:]
	}, nil, g)
	if err != nil {
		return 0, err
	}
	s.evals++
	copy(v, g)
	*sums = tail
	kernels.Axpy(s.lam, w, g)
	return tail[0]*s.invN + 0.5*s.lam*kernels.Dot(w, w), nil
}

// RunEpochs takes k L-BFGS steps.
func (s *softmaxLBFGS) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := range k {
		if ctx.Err() != nil {
			return e, nil
		}
		if err := s.step(); err != nil {
			return e, err
		}
	}
	return k, nil
}

// step takes one L-BFGS step from w.
func (s *softmaxLBFGS) step() error {
	// The two-loop recursion: dir = −H·g.
	s.twoLoop(s.dir, s.g, kernels.Dot(s.g, s.g))
	for j := range s.dir {
		s.dir[j] = -s.dir[j]
	}
	slope := kernels.Dot(s.g, s.dir)
	if !(slope < 0) {
		// Rounding has made H indefinite along g: restart from γI.
		s.reset()
		for j := range s.dir {
			s.dir[j] = -s.g[j]
		}
		slope = -kernels.Dot(s.g, s.g)
		if !(slope < 0) {
			return fmt.Errorf("engine: %s: %w (zero gradient)", SolverLBFGS, driver.ErrCannotMove)
		}
	}
	alpha := 1.0
	rounding := 1e-15 * math.Max(1, math.Abs(s.f))
	for range lbfgsMaxTrial {
		for j := range s.w {
			s.wTry[j] = s.w[j] + alpha*s.dir[j]
		}
		fTry, err := s.valueGrad(s.wTry, s.gTry, s.vTry, &s.sTry)
		if err != nil {
			return err
		}
		if fTry <= s.f+lbfgsArmijo*alpha*slope || math.Abs(alpha*slope) <= rounding && fTry <= s.f+rounding {
			s.accept(fTry)
			return nil
		}
		alpha *= 0.5
	}
	return fmt.Errorf("engine: %s: no step along the direction lowers P: %w", SolverLBFGS, driver.ErrCannotMove)
}

// accept moves to the trial point and stores the pair (s, y) it gives.
func (s *softmaxLBFGS) accept(fTry float64) {
	sv, yv := s.next(len(s.w))
	for j := range s.w {
		sv[j] = s.wTry[j] - s.w[j]
		yv[j] = s.gTry[j] - s.g[j]
	}
	s.w, s.wTry = s.wTry, s.w
	s.g, s.gTry = s.gTry, s.g
	s.v, s.vTry = s.vTry, s.v
	s.sums = s.sTry
	s.f = fTry
	s.push(sv, yv)
}

// Certify returns the multinomial certificate at w, with the duals paired
// with it, from the values of the evaluation that found w
// (objective.AssembleMultinomialPaired): no pass over the rows of its own,
// and over the ranks no collective. Its sums follow the sweep's chunks, so
// their last bits, unlike objective.MultinomialEvaluator's, depend on the
// thread count.
func (s *softmaxLBFGS) Certify() (driver.TracePoint, error) {
	c, err := objective.AssembleMultinomialPaired(s.prob, s.w, s.v, objective.Partial{Loss: s.sums[0], Conj: s.sums[1]}, s.nGlobal)
	return driver.TracePointOf(c), err
}

func (s *softmaxLBFGS) Point() []float64 { return s.w }
func (s *softmaxLBFGS) Passes() float64  { return 2 * s.evals }
func (s *softmaxLBFGS) Threads() int     { return s.sweep.Threads() }
func (s *softmaxLBFGS) DivergenceHint() string {
	return "L-BFGS's line search lowers P at every step, so this is non-finite data; check the data for huge values"
}

// Finish stops the sweep's workers.
func (s *softmaxLBFGS) Finish(res *driver.Result) error {
	return s.sweep.Close()
}

// TrainSoftmaxDistributed solves the multinomial problem whose rows are
// spread over the ranks of c, rank by rank in local, by this L-BFGS over
// the ranks, and returns on every rank the same W (feature-major), the
// result and an error. The method is written against driver.WorldSweep:
// each evaluation of P and ∇P is one allreduce of K·d + 2 values (the
// gradient, the loss, the paired duals' conjugates), from which every rank
// also forms the multinomial certificate (AssembleMultinomialPaired) with
// no collective of its own; the two-loop recursion and the line search's
// tests read those sums and the iterate only, so every rank takes the
// same steps, bit for bit, and the collectives are one process's
// evaluations whatever the number of ranks.
//
// Every rank of c calls it with the same options; local holds the rank's
// rows (any number, none too) with its classes already mapped to 0…K−1 the
// same way on every rank (the ranks' label sets agreed beforehand), the
// same K and the same elastic net. The ranks agree on the columns, K, the
// rows and λ in two collectives; time limits, cancellation and aborts are
// TrainDistributed's.
func TrainSoftmaxDistributed(ctx context.Context, c comm.Comm, local objective.Multinomial, opt driver.Options) (w []float64, res *driver.Result, err error) {
	var prob objective.Multinomial
	return trainOverRanks(ctx, c, SolverLBFGS, opt, func(c comm.Comm) (objective.Problem, int64, error) {
		p, n, err := agreeMultinomial(c, local, opt)
		prob = p
		return objective.Problem{}, n, err
	}, func(_ objective.Problem, opt driver.Options, world *driver.World) (ranksMethod, error) {
		if opt.WarmStart != nil && len(opt.WarmStart) != prob.Dim() {
			return nil, fmt.Errorf("engine: warm start has %d weights, the multinomial model %d", len(opt.WarmStart), prob.Dim())
		}
		return startSoftmaxOn(prob, opt, world)
	})
}

// agreeMultinomial checks the rank's multinomial problem and agrees with
// the other ranks on the columns, the classes K, λ and the L1 strength
// (one maximum, which finds a failed rank too) and on the rows (one sum),
// as driver.AgreeProblem does for a scalar loss.
func agreeMultinomial(c comm.Comm, local objective.Multinomial, opt driver.Options) (objective.Multinomial, int64, error) {
	a := driver.NewAgreement(c, string(SolverLBFGS))
	cols, rows := 0, 0
	if local.X == nil {
		a.Fail(fmt.Errorf("engine: %s: the rank's problem has no data", SolverLBFGS))
	} else {
		cols, rows = local.X.Cols, local.X.Rows
	}
	if opt.Solver != "" && opt.Solver != SolverLBFGS {
		a.Fail(fmt.Errorf("engine: the multinomial loss over the ranks runs %s, not %s", SolverLBFGS, opt.Solver))
	}
	a.Fail(opt.Validate())
	a.Fail(softmaxRegOK(local))
	d, err := a.Columns(cols, []float64{float64(local.K), local.Reg.Lambda, local.Reg.L1},
		[]string{"the number of classes", "λ", "the L1 strength"})
	if err != nil {
		return objective.Multinomial{}, 0, err
	}
	prob := local
	x := *local.X
	x.Cols = d
	prob.X = &x
	if rows > 0 {
		a.Fail(prob.Validate())
	} else {
		a.Fail(prob.Reg.Validate(prob.Dim()))
	}
	n, err := a.Rows(rows)
	if err != nil {
		return objective.Multinomial{}, 0, err
	}
	return prob, n, nil
}
