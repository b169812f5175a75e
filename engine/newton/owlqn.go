package newton

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverOWLQN is OWL-QN, the orthant-wise limited-memory quasi-Newton
// method of Andrew & Gao ("Scalable training of L1-regularized log-linear
// models", ICML 2007), for a smooth loss with an L1 term: L-BFGS on the
// pseudo-gradient, with the direction and the line search's points kept in
// the orthant of the iterate. Each of its iterations sums over the rows
// once (the loss and its gradient at the line search's point), so that
// over the ranks it allreduces one d-vector and three scalars per trial
// point, whatever the number of ranks: it is what a distributed run trains
// an L1 term with (TrainOWLQNDistributed). In one process newGLMNET
// (glmnet) stays the default for an L1 term.
const SolverOWLQN driver.Solver = "owlqn"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverOWLQN,
			Takes:        driver.Takes{L1: true, SampleWeights: true},
			Summary:      "OWL-QN: L-BFGS on the orthant-wise pseudo-gradient, the direction and the line search projected onto the iterate's orthant (Andrew & Gao 2007); one sum over rows per trial point, so one allreduce per step over the ranks",
			Losses:       "with a first derivative: squared, logistic, sqhinge, smoothhinge",
			Regularizers: "elastic net with L1 > 0 (λ ≥ 0), no centre or weights",
			Parallel:     true,
			Certified:    true,
		},
		// After glmnet (36): the automatic choice and the first-that-accepts
		// fallback keep picking glmnet for an L1 term in one process.
		Rank:    37,
		Accepts: acceptsOWLQN,
		Start: func(_ context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return newOWLQN(prob, opt, nil)
		},
	})
}

// acceptsOWLQN reports why OWL-QN cannot solve prob: it needs a
// differentiable loss (the curved losses, whose CurvedTerms give the value,
// the derivative and the paired conjugate at once) and the plain elastic
// net with an L1 term.
func acceptsOWLQN(prob objective.Problem, opt driver.Options) error {
	if _, ok := prob.Loss.(objective.CurvedLoss); !ok {
		return fmt.Errorf("engine: the %s loss has no derivative everywhere: %s takes squared, logistic, sqhinge and smoothhinge", prob.Loss.Name(), opt.Solver)
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok || !en.Plain() {
		return fmt.Errorf("engine: %s takes the elastic net without centre or weights, not the %s regularizer", opt.Solver, prob.Reg.Name())
	}
	if !(en.L1 > 0) {
		return fmt.Errorf("engine: %s is for an L1 term (L1 > 0); for L2 alone use newton", opt.Solver)
	}
	if opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1 {
		return fmt.Errorf("engine: %s uses every sample in each step: CoordinateSettings.M %d and CoordinateSettings.BlockSize %d are the coordinate methods' (drop them, or use Options.Solver \"adaspdc\")", opt.Solver, opt.Coordinate().M, opt.Coordinate().BlockSize)
	}
	return nil
}

// owlqnArmijo is γ in the line search's sufficient decrease condition.
const owlqnArmijo = 1e-4

// owlqn minimises
//
//	F(w) = f(w) + l1·‖w‖₁,   f(w) = (1/n) Σₖ wₖ φ(aₖᵀw, bₖ) + (λ/2)‖w‖²,
//
// f smooth and convex, by OWL-QN (Andrew & Gao 2007). F is differentiable
// inside each orthant, and its directional derivative along d is
// minimised, over the subgradients, by the pseudo-gradient
//
//	◇ⱼF = ∂ⱼf + l1·sign(wⱼ)   where wⱼ ≠ 0,
//	◇ⱼF = ∂ⱼf + l1            where wⱼ = 0 and ∂ⱼf + l1 < 0,
//	◇ⱼF = ∂ⱼf − l1            where wⱼ = 0 and ∂ⱼf − l1 > 0,
//	◇ⱼF = 0                    otherwise,
//
// which is zero exactly at the minimum. A step:
//
//  1. d = −H·◇F, with H the L-BFGS inverse-Hessian estimate of f from the
//     last lbfgsMemory pairs sᵢ = w⁺ − w, yᵢ = P(∇f(w⁺) − ∇f(w)) (the smooth
//     part's gradients: inside an orthant the L1 term is linear and adds
//     no curvature), by the two-loop recursion from γI, γ = sᵀy/yᵀy. P
//     keeps the coordinates the step moved (sⱼ ≠ 0) and zeroes the rest,
//     the coordinates that stayed at wⱼ = 0 (mostly |∂ⱼf| ≤ l1, where
//     ◇ⱼF = 0): sᵀPy = sᵀy, so
//     the pair is the secant pair of f on the face the step moved in,
//     Py = P∇²f·Ps. The unmasked y would add the held coordinates'
//     gradient change, curvature no step of the face sees, to yᵀy,
//     shrinking γ, and through the two-loop recursion would give the held
//     coordinates components of d that step 2 then drops;
//  2. d is aligned with −◇F where wⱼ = 0: dⱼ = 0 where wⱼ = 0 and
//     dⱼ◇ⱼF ≥ 0, since there the orthant of step 3 is sign(−◇ⱼF) and a dⱼ
//     against it would leave the orthant at once. Where wⱼ ≠ 0, F is
//     differentiable in the orthant with gradient ◇F, and dⱼ is kept
//     whatever its sign: Andrew & Gao's projection π(d; −◇F) over every
//     coordinate also drops the quasi-Newton components that run against
//     the steepest descent, which on an ill-conditioned f is a large share
//     of them at every step, so that the steps, and the pairs of step 1,
//     keep to the coordinates where −H◇F and −◇F agree and the method
//     crawls or stalls short of the minimum. Each component this step
//     drops (dⱼ◇ⱼF ≥ 0) adds nothing or a positive term to ◇Fᵀd, so that
//     ◇Fᵀd ≤ −◇FᵀH◇F < 0: d is a descent direction of F;
//  3. the orthant ξⱼ = sign(wⱼ), or sign(−◇ⱼF) where wⱼ = 0, and the trial
//     points w(α) = π(w + αd; ξ), where π zeroes the coordinates whose sign
//     leaves ξ: α in 1, ½, ¼, … until ◇F(w)ᵀ(w(α) − w) < 0 and
//     F(w(α)) ≤ F(w) + γ·◇F(w)ᵀ(w(α) − w) (Andrew & Gao's condition, γ =
//     owlqnArmijo). The first condition matters once a coordinate whose
//     dⱼ runs against −◇ⱼF is clamped at zero: then w(α) − w is not αd, and
//     at a long step ◇Fᵀ(w(α) − w) may be positive; as α → 0 it is α◇Fᵀd,
//     negative, so the backtracking ends.
//
// Each trial point costs one sum over the rows, of f's value and gradient
// together (a pass: a dot and an axpy per nonzero); the accepted one's
// gradient serves the next step, so a step whose first trial is accepted
// costs one pass, and, over the ranks, one allreduce of d + 3 values (the
// loss's gradient, Σwφ, Σwφ*(φ′), whether a dual was clipped). With λ > 0
// the iterates stay bounded and every sᵀy ≥ λ‖s‖² > 0; with λ = 0 a pair
// with sᵀy ≤ 0 (rounding) is dropped.
//
// The certificate is objective's at w and the paired duals yₖ =
// wₖφ′(aₖᵀw), whose v is the loss's gradient the sum already holds
// (Evaluator.AtGradient; objective.AssemblePaired over the ranks); where
// g* is an indicator (λ = 0) and −v lies outside its domain, the duals are
// scaled into it by s = DualScale(v) as the Evaluator scales them, and
// over the ranks their conjugate terms Σwₖφ*(s·φ′ₖ) take one allreduce of
// one value.
type owlqn struct {
	prob objective.Problem
	loss objective.CurvedLoss
	reg  objective.ElasticNet
	x    *sparse.CSR
	n, d int
	invN float64
	l1   float64

	world   *driver.World
	nGlobal int64
	sweep   *driver.WorldSweep
	eval    *objective.Evaluator

	w, wTry   []float64
	g, gTry   []float64 // ∇f, the smooth part's gradient
	v, vTry   []float64 // the loss's gradient (1/n) Σ wₖφ′ₖaₖ: the paired duals' v
	z, zTry   []float64 // the rank's margins
	dv, dvTry []float64 // the rank's φ′(zₖ) (no weight)
	rows      objective.RowSums
	rowsTry   objective.RowSums
	f         float64 // F(w)
	pg        []float64
	dir       []float64
	orth      []float64
	curvaturePairs
	tmp []float64

	lossSum, conjSum []float64 // per chunk of the sweep
	clipped          []bool
	evals            float64
	restarts         int
}

// newOWLQN builds OWL-QN on the rank's rows of a problem whose rows are
// spread over the ranks of world (nil: one process, all rows), and
// evaluates F at its starting point (0, or opt.WarmStart).
func newOWLQN(prob objective.Problem, opt driver.Options, world *driver.World) (*owlqn, error) {
	x := prob.X
	en, _ := prob.Reg.AsElasticNet()
	nGlobal := int64(x.Rows)
	if world != nil {
		nGlobal = world.Rows()
	}
	d, n := x.Cols, x.Rows
	s := &owlqn{prob: prob, loss: prob.Loss.(objective.CurvedLoss), reg: en, x: x, n: n, d: d,
		invN: 1 / float64(nGlobal), l1: en.L1, world: world, nGlobal: nGlobal}
	vec := func() []float64 { return make([]float64, d) }
	s.w, s.wTry, s.g, s.gTry, s.v, s.vTry = vec(), vec(), vec(), vec(), vec(), vec()
	s.pg, s.dir, s.orth, s.tmp = vec(), vec(), vec(), vec()
	s.z, s.zTry, s.dv, s.dvTry = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	s.curvaturePairs = newCurvaturePairs()
	if opt.WarmStart != nil {
		copy(s.w, opt.WarmStart)
	}
	s.sweep = driver.NewWorldSweep(x, driver.SweepWorkers(x, opt.Threads), !opt.Deterministic, world)
	chunks := s.sweep.Chunks()
	s.lossSum, s.conjSum, s.clipped = make([]float64, chunks), make([]float64, chunks), make([]bool, chunks)
	if world == nil {
		s.eval = driver.NewEvaluator(prob, opt.Threads)
	}
	f, err := s.evaluate(s.w, s.z, s.dv, s.v, s.g, &s.rows)
	if err != nil {
		s.sweep.Close()
		return nil, err
	}
	s.f = f
	return s, nil
}

// evaluate sums over the rows at u: it sets the margins z, the
// derivatives φ′(zₖ) in dv, the loss's gradient v, f's gradient g = v + λu
// and the row sums, and returns F(u). Over the ranks it is one allreduce.
func (s *owlqn) evaluate(u, z, dv, v, g []float64, rows *objective.RowSums) (float64, error) {
	loss, b, sw := s.loss, s.prob.B, s.prob.SampleWeights
	clear(v)
	var tail [3]float64
	err := s.sweep.RunSum(func(c, lo, hi int, acc [][]float64) {
		out := acc[0]
		var ls, cs objective.Sum
		clipped := false
		for k := lo; k < hi; k++ {
			val, idx := s.x.Row(k)
			zk := kernels.SparseDot(val, idx, u)
			z[k] = zk
			val0, d1, _, conj := objective.CurvedTerms(loss, zk, b[k])
			if loss.DualFeasible(d1, b[k]) != d1 {
				clipped = true
			}
			dv[k] = d1
			if sw != nil {
				val0, d1, conj = sw[k]*val0, sw[k]*d1, sw[k]*conj
			}
			ls.Add(val0)
			cs.Add(conj)
			if d1 != 0 {
				kernels.SparseAxpy(d1*s.invN, val, idx, out)
			}
		}
		s.lossSum[c], s.conjSum[c], s.clipped[c] = ls.Sum(), cs.Sum(), clipped
	}, func() []float64 {
		var lsum, csum objective.Sum
		clipped := false
		for c := range s.lossSum {
			lsum.Add(s.lossSum[c])
			csum.Add(s.conjSum[c])
			clipped = clipped || s.clipped[c]
		}
		tail = [3]float64{lsum.Sum(), csum.Sum(), b2f(clipped)}
		return tail[:]
	}, nil, v)
	if err != nil {
		return 0, err
	}
	s.evals++
	*rows = objective.RowSums{Loss: tail[0], Conj: tail[1], Projected: tail[2] != 0, Deriv: dv}
	lam := s.reg.Lambda
	for j := range g {
		g[j] = v[j] + lam*u[j]
	}
	return tail[0]*s.invN + s.reg.Value(u), nil
}

// pseudoGradient sets pg = ◇F(w) and returns ‖◇F‖².
func (s *owlqn) pseudoGradient() float64 {
	l1 := s.l1
	var sq float64
	for j, gj := range s.g {
		var p float64
		switch wj := s.w[j]; {
		case wj > 0:
			p = gj + l1
		case wj < 0:
			p = gj - l1
		case gj+l1 < 0:
			p = gj + l1
		case gj-l1 > 0:
			p = gj - l1
		}
		s.pg[j] = p
		sq += p * p
	}
	return sq
}

// RunEpochs takes k OWL-QN steps.
func (s *owlqn) RunEpochs(ctx context.Context, k int) (int, error) {
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

// step takes one OWL-QN step from w (the type's comment, steps 1–3).
func (s *owlqn) step() error {
	pgSq := s.pseudoGradient()
	if pgSq == 0 {
		return fmt.Errorf("engine: %s: %w (zero pseudo-gradient)", SolverOWLQN, driver.ErrCannotMove)
	}
	// 1. The two-loop recursion: dir = −H·◇F.
	s.twoLoop(s.dir, s.pg, pgSq)
	// 2. dir = −H◇F, aligned with −◇F where w is zero.
	for j, p := range s.pg {
		dj := -s.dir[j]
		if s.w[j] == 0 && dj*p >= 0 {
			dj = 0
		}
		s.dir[j] = dj
	}
	if !(kernels.Dot(s.pg, s.dir) < 0) {
		// Nothing of H's direction survived the projection (or rounding
		// made H indefinite): restart from the steepest descent.
		s.reset()
		s.restarts++
		scale := 1 / math.Max(1, math.Sqrt(pgSq))
		for j, p := range s.pg {
			s.dir[j] = -scale * p
		}
	}
	// 3. The orthant, and the line search on its projection.
	for j, wj := range s.w {
		switch {
		case wj > 0:
			s.orth[j] = 1
		case wj < 0:
			s.orth[j] = -1
		case s.pg[j] < 0:
			s.orth[j] = 1
		case s.pg[j] > 0:
			s.orth[j] = -1
		default:
			s.orth[j] = 0
		}
	}
	rounding := 1e-15 * math.Max(1, math.Abs(s.f))
	alpha := 1.0
	for range lbfgsMaxTrial {
		moved := false
		for j, wj := range s.w {
			t := wj + alpha*s.dir[j]
			if t*s.orth[j] <= 0 {
				t = 0
			}
			s.wTry[j] = t
			moved = moved || t != wj
		}
		var decrease float64 // ◇F(w)ᵀ(w(α) − w), ≤ 0
		for j, p := range s.pg {
			decrease += p * (s.wTry[j] - s.w[j])
		}
		fTry, err := s.evaluate(s.wTry, s.zTry, s.dvTry, s.vTry, s.gTry, &s.rowsTry)
		if err != nil {
			return err
		}
		if moved && (decrease < 0 && fTry <= s.f+owlqnArmijo*decrease || math.Abs(decrease) <= rounding && fTry <= s.f+rounding) {
			s.accept(fTry)
			return nil
		}
		alpha *= 0.5
	}
	return fmt.Errorf("engine: %s: no step along the direction lowers F: %w", SolverOWLQN, driver.ErrCannotMove)
}

// accept moves to the trial point and stores the pair (s, y) it gives.
func (s *owlqn) accept(fTry float64) {
	sv, yv := s.next(s.d)
	for j := range s.w {
		sv[j] = s.wTry[j] - s.w[j]
		if sv[j] != 0 {
			yv[j] = s.gTry[j] - s.g[j]
		} else {
			yv[j] = 0 // held at zero: y = P(∇f(w⁺) − ∇f(w)), the type's step 1
		}
	}
	s.w, s.wTry = s.wTry, s.w
	s.g, s.gTry = s.gTry, s.g
	s.v, s.vTry = s.vTry, s.v
	s.z, s.zTry = s.zTry, s.z
	s.dv, s.dvTry = s.dvTry, s.dv
	s.rows, s.rowsTry = s.rowsTry, s.rows
	s.rows.Deriv = s.dv
	s.f = fTry
	s.push(sv, yv)
}

// Certify returns the certificate at w and the paired duals (the type's
// comment), from the last sum over the rows.
func (s *owlqn) Certify() (driver.TracePoint, error) {
	if s.world == nil {
		c, err := s.eval.AtGradient(s.w, s.z, s.v, &s.rows)
		return driver.TracePointOf(c), err
	}
	c, err := s.worldCertificate()
	return driver.TracePointOf(c), err
}

// worldCertificate is Evaluator.AtGradient's certificate over the ranks:
// AssemblePaired from the summed loss, conjugates and gradient, and, where
// the duals must be scaled into dom g* (λ = 0), the conjugate terms at the
// scaled duals summed over the ranks. Where some rank's φ′(zₖ) lay outside
// dom φ* (rounding at a kink) the duals are projected first and their v
// summed afresh (Evaluator.DualSum).
func (s *owlqn) worldCertificate() (objective.Certificate, error) {
	reg := s.prob.Reg
	v, rows := s.v, s.rows
	sw, b := s.prob.SampleWeights, s.prob.B
	// duals returns the rank's dual of row k, wₖ·φ′ₖ projected into dom φ*.
	duals := func(k int) float64 {
		y := s.loss.DualFeasible(s.dv[k], b[k])
		if sw != nil {
			return sw[k] * y
		}
		return y
	}
	if rows.Projected {
		if s.eval == nil {
			s.eval = objective.NewEvaluator(s.prob, s.sweep.Threads())
		}
		y := make([]float64, s.n)
		for k := range y {
			y[k] = duals(k)
		}
		var part objective.Partial
		var err error
		if v, part, err = s.world.DualSums(s.eval, s.w, y); err != nil {
			return objective.Certificate{}, err
		}
		rows.Loss, rows.Conj = part.Loss, part.Conj
	}
	c, err := objective.AssemblePaired(reg, s.w, v, objective.Partial{Loss: rows.Loss, Conj: rows.Conj}, s.nGlobal)
	if !errors.Is(err, objective.ErrPartialIndicator) {
		return c, err
	}
	// g* is an indicator and −v lies outside its domain: the duals s·y
	// with s = DualScale(v), as Evaluator.dualValue scales them. s is the
	// same on every rank (v is), and so is whether this sum is made.
	scale := objective.DualScale(reg, v, s.tmp)
	for j := range v {
		s.tmp[j] = scale * v[j]
	}
	gc := reg.ConjNeg(s.tmp)
	var conj [1]float64
	err = s.sweep.RunSum(func(c, lo, hi int, _ [][]float64) {
		var cs objective.Sum
		for k := lo; k < hi; k++ {
			y := scale * duals(k)
			if sw != nil {
				cs.Add(sw[k] * s.loss.Conj(y/sw[k], b[k]))
			} else {
				cs.Add(s.loss.Conj(y, b[k]))
			}
		}
		s.conjSum[c] = cs.Sum()
	}, func() []float64 {
		var ds objective.Sum
		for _, x := range s.conjSum {
			ds.Add(-x)
		}
		conj[0] = ds.Sum()
		return conj[:]
	}, nil)
	if err != nil {
		return objective.Certificate{}, err
	}
	primal := rows.Loss*s.invN + reg.Value(s.w)
	dual := conj[0]/float64(s.nGlobal) - gc
	gap := primal - dual
	return objective.Certificate{Primal: primal, Dual: dual, Gap: gap, RelGap: gap / math.Max(1, math.Abs(primal))}, nil
}

func (s *owlqn) Point() []float64 { return s.w }

// Passes counts one pass per sum over the rows (a dot and an axpy per
// nonzero), the unit glmnet and newton count in.
func (s *owlqn) Passes() float64 { return s.evals }
func (s *owlqn) Threads() int    { return s.sweep.Threads() }
func (s *owlqn) DivergenceHint() string {
	return "OWL-QN's line search lowers F at every step, so this is non-finite data; check the data for huge values"
}

// Finish notes the restarts and stops the sweep's workers.
func (s *owlqn) Finish(res *driver.Result) error {
	if s.restarts > 0 {
		res.AddNote(fmt.Sprintf("owlqn: %d restart(s) from steepest descent", s.restarts))
	}
	return s.sweep.Close()
}

// TrainOWLQNDistributed is TrainDistributed (newton's over the ranks) for
// an L1 term: OWL-QN written against driver.WorldSweep, so that every
// trial point of its line search is one allreduce of d + 3 values (f's
// value and gradient), and the certificate is assembled from those sums
// (objective.AssemblePaired), with one allreduce of one value more where
// the duals must be scaled into dom g* (λ = 0). Everything between the
// sums (the two-loop recursion, the projections, the line search's tests)
// reads the summed values and the iterate only, so every rank takes the
// same steps, bit for bit, and the collectives do not depend on the
// number of ranks. The contract (every rank calls it, with its own rows
// and the same options; agreement, time limits, aborts) is
// TrainDistributed's.
func TrainOWLQNDistributed(ctx context.Context, c comm.Comm, local objective.Problem, opt driver.Options) (w []float64, res *driver.Result, err error) {
	return trainOverRanks(ctx, c, SolverOWLQN, opt, func(c comm.Comm) (objective.Problem, int64, error) {
		return driver.AgreeProblem(c, local, opt, string(SolverOWLQN), func(local objective.Problem, opt driver.Options) error {
			if opt.Solver != "" && opt.Solver != SolverOWLQN {
				return fmt.Errorf("engine: owlqn over the ranks was asked to run %s", opt.Solver)
			}
			o := opt
			o.Solver = SolverOWLQN
			return acceptsOWLQN(local, o)
		})
	}, func(prob objective.Problem, opt driver.Options, world *driver.World) (ranksMethod, error) {
		return newOWLQN(prob, opt, world)
	})
}

// ranksMethod is a method that runs over the ranks: it has a point and a
// Finish.
type ranksMethod interface {
	driver.Method
	driver.Finisher
}

// trainOverRanks is the frame of a method over the ranks of c, as
// TrainDistributed runs newton: the ranks agree on the problem (agree),
// join the world, run the method that start builds under the driver, and
// return the model point, with the collectives counted in the note. A rank
// that fails by an error of its own or a panic aborts the world; errors
// every rank finds in the same collective (agreement, divergence, a point
// that cannot move) return without an abort.
func trainOverRanks(ctx context.Context, c comm.Comm, solver driver.Solver, opt driver.Options,
	agree func(comm.Comm) (objective.Problem, int64, error),
	start func(objective.Problem, driver.Options, *driver.World) (ranksMethod, error)) (w []float64, res *driver.Result, err error) {
	agreed := false
	defer func() {
		if r := recover(); r != nil {
			w, agreed = nil, false
			err = fmt.Errorf("engine: %s: rank %d panicked: %v\n\n%s", solver, c.Rank(), r, debug.Stack())
		}
		if err != nil && !agreed {
			c.Abort(err)
		}
	}()
	cnt := comm.Counted(c)
	c = cnt
	begin := cnt.Stats()
	prob, nGlobal, err := agree(c)
	if err != nil {
		agreed = driver.IsAgreed(err)
		return nil, nil, err
	}
	if nGlobal == 0 {
		agreed = true
		return nil, nil, driver.Agreed("engine: %s: no rank has any rows", solver)
	}
	opt.StallHint = "scale the features, or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), or allow a longer plateau with a larger Options.StallEpochs"
	opt = opt.WithDefaults()
	opt.Solver = solver
	world, agreedCtx, release := driver.JoinWorld(ctx, c, nGlobal, opt.TimeLimit)
	defer release()
	m, err := start(prob, opt, world)
	if err != nil {
		return nil, nil, err
	}
	res, err = driver.Run(agreedCtx, m, opt)
	res.Solver = solver
	if ferr := m.Finish(res); err == nil {
		err = ferr
	}
	st := cnt.Stats().Sub(begin)
	ms := 0.0
	if st.Calls > 0 {
		ms = 1e3 * st.Seconds / float64(st.Calls)
	}
	res.AddNote(fmt.Sprintf("collectives: %d allreduces of %d doubles (%d bytes) in all, %.4g ms each", st.Calls, st.Values, 8*st.Values, ms))
	agreed = err != nil && (res.Stop == "diverged" || errors.Is(err, driver.ErrCannotMove))
	return res.ModelPoint(m.Point(), err), res, err
}
