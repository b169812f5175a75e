package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// SolverInfo describes one solver: what `adaspdc solvers` prints and what
// Train checks before it runs one.
type SolverInfo struct {
	Name         Solver
	Summary      string // one line: the method and its paper
	Losses       string // the losses it takes, or "any smooth", "any"
	Regularizers string // the regularizers it takes
	Parallel     bool   // uses more than one core
	Async        bool   // workers run without a barrier per iteration
	Certified    bool   // every trace point carries a duality gap
}

// solverEntry is a registered solver: its description, the check of a
// problem against what it can solve, and its constructor.
type solverEntry struct {
	SolverInfo
	// rank orders the preference when no solver is named: lower first.
	// AdaSPDC is 0 and SPDC 10; a method that takes what they refuse
	// (non-smooth losses, no strong convexity) ranks after them.
	rank int
	// accepts returns why the solver cannot solve prob with opt, or nil.
	accepts func(prob Problem, opt Options) error
	// start builds the method at its starting point; the driver runs it.
	// A method that holds workers or buffers also implements finisher.
	start func(ctx context.Context, prob Problem, opt Options) (method, error)
}

// finisher is implemented by methods that have something to add to the
// Result or to release (a worker pool) when the run ends.
type finisher interface {
	finish(res *Result) error
}

// registry lists the solvers in order of preference: with no Solver given,
// Train runs the first that accepts the problem.
var registry []*solverEntry

// register adds a solver; each method's file calls it from init. The
// registry stays sorted by rank, then name, whatever the order of the
// files' init functions.
func register(e *solverEntry) {
	for _, o := range registry {
		if o.Name == e.Name {
			panic("engine: solver " + string(e.Name) + " registered twice")
		}
	}
	registry = append(registry, e)
	slices.SortStableFunc(registry, func(a, b *solverEntry) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		return strings.Compare(string(a.Name), string(b.Name))
	})
}

func lookupSolver(name Solver) *solverEntry {
	for _, e := range registry {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Solvers returns every solver Train runs, in order of preference.
func Solvers() []SolverInfo {
	out := make([]SolverInfo, len(registry))
	for i, e := range registry {
		out[i] = e.SolverInfo
	}
	return out
}

func solverNames() string {
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = string(e.Name)
	}
	return strings.Join(names, ", ")
}

func init() {
	register(&solverEntry{
		SolverInfo: SolverInfo{
			Name:         SolverAdaSPDC,
			Summary:      "adaptive stochastic primal-dual coordinate method, per-block steps (Zhu & Storkey 2015)",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0, optional centre",
			Parallel:     true,
			Certified:    true,
		},
		rank:    0,
		accepts: acceptsAdaSPDC,
		start:   startAdaSPDC,
	})
	register(&solverEntry{
		SolverInfo: SolverInfo{
			Name:         SolverSPDC,
			Summary:      "stochastic primal-dual coordinate method, one step for all blocks (Zhang & Xiao 2015)",
			Losses:       "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers: "elastic net with λ > 0, optional centre",
			Parallel:     true,
			Certified:    true,
		},
		rank:    10,
		accepts: acceptsAdaSPDC,
		start:   startAdaSPDC,
	})
}

// chooseSolver returns the solver that runs prob: the one asked for, which
// must accept it (its refusal names one that would), or with none asked
// for the first in order of preference that accepts it.
// weightedSolvers are the solvers that take Problem.SampleWeights.
var weightedSolvers = map[Solver]bool{SolverNewton: true, SolverGLMNET: true}

// acceptsProblem is e.accepts, with the sample weights' gate in front.
func acceptsProblem(e *solverEntry, prob Problem, opt Options) error {
	if prob.SampleWeights != nil && !weightedSolvers[e.Name] {
		return fmt.Errorf("engine: %s does not take sample weights (newton, for a smooth loss with L2, and glmnet, with L1, do)", e.Name)
	}
	return e.accepts(prob, opt)
}

func chooseSolver(prob Problem, opt Options) (*solverEntry, error) {
	if opt.Solver == "" {
		var why []string
		for _, e := range registry {
			o := opt
			o.Solver = e.Name
			err := acceptsProblem(e, prob, o)
			if err == nil {
				return e, nil
			}
			why = append(why, err.Error())
		}
		return nil, fmt.Errorf("engine: no solver takes the %s loss with the %s regularizer: %s", prob.Loss.Name(), prob.Reg.Name(), strings.Join(why, "; "))
	}
	e := lookupSolver(opt.Solver)
	if e == nil {
		return nil, fmt.Errorf("engine: unknown solver %q (want one of %s)", opt.Solver, solverNames())
	}
	err := acceptsProblem(e, prob, opt)
	if err == nil {
		return e, nil
	}
	for _, o := range registry {
		oo := opt
		oo.Solver = o.Name
		if o != e && acceptsProblem(o, prob, oo) == nil {
			return nil, fmt.Errorf("%w; solver %s takes this problem", err, o.Name)
		}
	}
	return nil, err
}

// Train solves the problem with the solver Options.Solver names and returns
// the model, the certificate trace and an error. With no solver named, it
// picks one from the problem's shape, loss and regularizer (AutoSolver, the
// choice adaspdc train makes too; Result.Choice says why), unless the
// options set what only a coordinate method reads (M, BlockSize, Partition,
// Lazy, Steps, StepScale, Sampling) or WarmDuals: then it runs the first of
// Solvers that takes the problem, AdaSPDC where it can.
//
// The model carries what predicting on raw data needs: Problem.Classes as
// its Labels, and Problem.Bias with Dim the columns before the bias
// column (NewProblem sets both).
//
// It returns an error, and no model, when the input is unusable, the
// solver cannot take the problem, or the context is done (or the time
// limit runs out) before the first certificate. It returns an error and
// the model of the best certificate so far (Result.Best) when the run
// diverges, a worker panics or the callback fails. A context cancelled
// after the first certificate ends the run like a time limit: the model
// and Result.Stop "context", no error. A run that meets its goal (Tol or
// TargetPrimal) or runs its MaxEpochs returns its last point; any other
// (a time limit, a cancelled context, a stall, the callback's ErrStop, an
// error) returns the point of its best certificate. Result.Model is the
// certificate of the point returned.
func Train(ctx context.Context, prob Problem, opt Options) (*Model, *Result, error) {
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("engine: not started: %w", context.Cause(ctx))
	}
	if err := prob.Validate(); err != nil {
		return nil, nil, err
	}
	if err := opt.validateFor(prob.X.Rows); err != nil {
		return nil, nil, err
	}
	var choice string
	if opt.Solver == "" && !opt.asksForCoordinateMethod() && opt.WarmDuals == nil {
		// The one automatic choice, the command line's too.
		if s, why := AutoSolver(prob, opt); s != "" {
			opt.Solver, choice = s, why
		}
	}
	e, err := chooseSolver(prob, opt)
	if err != nil {
		return nil, nil, err
	}
	opt.stallHint = "the steps may not fit the data (one feature on a much larger scale than the others sets every coordinate's step): scale the features or the rows (-normalize unit), try -solver newton for a smooth loss with an L2 term, or allow a longer plateau with -stall-epochs"
	if prob.Loss.Gamma() == 0 {
		opt.stallHint = "a loss that is not smooth converges sublinearly, and its gap rests on plateaus before falling again: allow a longer plateau with -stall-epochs (0: never stall), or use a smooth loss (sqhinge, smoothhinge)"
		if opt.StallEpochs == 0 {
			// Methods on a non-smooth loss converge sublinearly, and their
			// gaps sit on plateaus for hundreds of epochs before falling
			// again (SDCA on a9a's SVM: 1e-6 to 1e-10).
			opt.StallEpochs = nonSmoothStallEpochs
		}
	}
	opt = opt.withDefaults()
	opt.Solver = e.Name
	if opt.WarmStart != nil && len(opt.WarmStart) != prob.X.Cols {
		return nil, nil, fmt.Errorf("engine: warm start has %d weights, data has %d columns", len(opt.WarmStart), prob.X.Cols)
	}
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opt.TimeLimit, errTimeLimit)
		defer cancel()
	}
	m, err := e.start(ctx, prob, opt)
	if err != nil {
		if errors.Is(err, errTimeLimit) {
			return nil, nil, fmt.Errorf("engine: the time limit of %v ran out during set-up, before the first certificate: %w", opt.TimeLimit, err)
		}
		return nil, nil, err
	}
	res, err := drive(ctx, m, opt)
	res.Solver, res.Choice = e.Name, choice
	if f, ok := m.(finisher); ok {
		if ferr := f.finish(res); err == nil {
			err = ferr
		}
	}
	w := res.modelPoint(m.point(), err)
	if w == nil {
		return nil, res, err
	}
	model := &Model{
		Loss:    prob.Loss.Name(),
		Dim:     prob.X.Cols,
		Weights: w, // the method is done with it
		Bias:    prob.Bias,
		Labels:  slices.Clone(prob.Classes),
	}
	if prob.Bias != 0 {
		model.Dim-- // the last column is the bias feature, which Margin adds
	}
	if en, ok := prob.Reg.(ElasticNet); ok {
		model.Lambda, model.L1 = en.Lambda, en.L1
	}
	return model, res, err
}
