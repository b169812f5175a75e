package driver

import (
	"context"
	"errors"
	"fmt"
)

// Solve runs the solver e on prob from its starting point to the stopping
// rules of opt, and returns the point it hands back as the model
// (Result.ModelPoint), the result and an error. It fills opt's defaults
// and the stall rule's advice for the loss, applies the time limit, and
// lets the method finish (Finisher). prob and opt must be valid
// (Problem.Validate, Options.ValidateFor), and e must accept them: Train
// checks all three, and picks e.
//
// The point is nil, with the error, when the method could not start (or
// the time limit ran out first), or failed before its first certificate.
func Solve(ctx context.Context, e *Entry, prob Problem, opt Options) ([]float64, *Result, error) {
	opt.StallHint = "the steps may not fit the data (one feature on a much larger scale than the others sets every coordinate's step): scale the features, or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), try Options.Solver \"newton\" for a smooth loss with an L2 term, or allow a longer plateau with a larger Options.StallEpochs"
	if prob.Loss.Gamma() == 0 {
		opt.StallHint = "a loss that is not smooth converges sublinearly, and its gap rests on plateaus before falling again: allow a longer plateau with a larger Options.StallEpochs (negative: never stall), or use a smooth loss (sqhinge, smoothhinge)"
		if opt.StallEpochs == 0 {
			// Methods on a non-smooth loss converge sublinearly, and their
			// gaps sit on plateaus for hundreds of epochs before falling
			// again (SDCA on a9a's SVM: 1e-6 to 1e-10).
			opt.StallEpochs = NonSmoothStallEpochs
		}
	}
	opt = opt.WithDefaults()
	opt.Solver = e.Name
	if opt.WarmStart != nil && len(opt.WarmStart) != prob.X.Cols {
		return nil, nil, fmt.Errorf("engine: warm start has %d weights, data has %d columns", len(opt.WarmStart), prob.X.Cols)
	}
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opt.TimeLimit, ErrTimeLimit)
		defer cancel()
	}
	m, err := e.Start(ctx, prob, opt)
	if err != nil {
		if errors.Is(err, ErrTimeLimit) {
			return nil, nil, fmt.Errorf("engine: the time limit of %v ran out during set-up, before the first certificate: %w", opt.TimeLimit, err)
		}
		return nil, nil, err
	}
	if opt.WarmDuals != nil {
		// Options.Validate has checked that e takes them.
		ws, ok := m.(DualWarmStarter)
		if !ok {
			err = fmt.Errorf("engine: %s declares that it takes warm duals, but takes none (a bug)", e.Name)
		} else {
			err = ws.WarmDuals(opt.WarmDuals)
		}
		if err != nil {
			if f, ok := m.(Finisher); ok {
				f.Finish(&Result{})
			}
			return nil, nil, err
		}
	}
	res, err := Run(ctx, m, opt)
	res.Solver = e.Name
	if f, ok := m.(Finisher); ok {
		if ferr := f.Finish(res); err == nil {
			err = ferr
		}
	}
	return res.ModelPoint(m.Point(), err), res, err
}
