package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// chooseSolver returns the solver that runs prob: the one asked for, which
// must accept it (its refusal names one that would), or with none asked
// for the first in order of preference that accepts it.
// acceptsProblem is e.Accepts, with the sample weights' gate in front:
// the solvers that weight the rows declare it (SolverInfo.Takes).
func acceptsProblem(e *driver.Entry, prob Problem, opt Options) error {
	if prob.SampleWeights != nil && !e.Takes.SampleWeights {
		var takers []string
		for _, o := range driver.Entries() {
			if o.Takes.SampleWeights {
				takers = append(takers, string(o.Name))
			}
		}
		return fmt.Errorf("engine: %s does not take sample weights (%s do)", e.Name, strings.Join(takers, " and "))
	}
	return e.Accepts(prob, opt)
}

func chooseSolver(prob Problem, opt Options) (*driver.Entry, error) {
	if opt.Solver == "" {
		var why []string
		for _, e := range driver.Entries() {
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
	e := driver.Lookup(opt.Solver)
	if e == nil {
		return nil, fmt.Errorf("engine: unknown solver %q (want one of %s)", opt.Solver, driver.Names())
	}
	err := acceptsProblem(e, prob, opt)
	if err == nil {
		return e, nil
	}
	for _, o := range driver.Entries() {
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
// options carry coordinate settings away from their defaults
// (CoordinateSettings: M, BlockSize, Partition, Lazy, Steps, StepScale,
// Sampling) or warm duals (SDCASettings): then it runs the first of Solvers
// that takes the problem, AdaSPDC where it can.
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
	if err := opt.ValidateFor(prob.X.Rows); err != nil {
		return nil, nil, err
	}
	var choice string
	if _, warm := driver.SettingsOf[SDCASettings](opt); opt.Solver == "" && !opt.AsksForCoordinateMethod() && !warm {
		// The one automatic choice, the command line's too.
		if s, why := AutoSolver(prob, opt); s != "" {
			opt.Solver, choice = s, why
		}
	}
	e, err := chooseSolver(prob, opt)
	if err != nil {
		return nil, nil, err
	}
	w, res, err := driver.Solve(ctx, e, prob, opt)
	if res != nil {
		res.Choice = choice
	}
	if w == nil {
		return nil, res, err
	}
	model := newModel(prob, w, prob.Classes) // the method is done with w
	return model, res, err
}
