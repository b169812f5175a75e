package engine

import (
	"context"
	"fmt"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/newton"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/engine/sdca"
	"github.com/adaspdc/adaspdc/sparse"
)

// TrainDistributed trains the problem whose rows are spread over the ranks
// of c and returns on every rank the same model, built as Train builds it:
// local's Classes as its labels, its Bias, and the columns the ranks
// agreed on. Every rank of c calls it with its own rows and the same
// options.
//
// Options.Solver names the method: newton (truncated Newton over the
// ranks, newton.TrainDistributed) or cocoa (CoCoA+ rounds,
// sdca.TrainDistributed); each says what every rank must bring and how the
// ranks agree. With none named, DistributedSolver picks, and
// Result.Choice says why.
func TrainDistributed(ctx context.Context, c comm.Comm, local Problem, opt Options) (*Model, *Result, error) {
	var choice string
	if opt.Solver == "" {
		opt.Solver, choice = DistributedSolver(local, opt)
	}
	var (
		w   []float64
		res *Result
		err error
	)
	switch opt.Solver {
	case SolverNewton:
		w, res, err = newton.TrainDistributed(ctx, c, local, opt)
	case SolverCoCoA:
		w, res, err = sdca.TrainDistributed(ctx, c, local, opt)
	default:
		err = fmt.Errorf("engine: distributed training runs newton or cocoa, not %s", opt.Solver)
		c.Abort(err)
		return nil, nil, err
	}
	if res != nil {
		res.Choice = choice
	}
	if w == nil {
		return nil, res, err
	}
	// The ranks agreed on the columns: the model is as wide as w.
	shape := local
	shape.X = &sparse.CSR{Cols: len(w)}
	model := newModel(shape, w, local.Classes)
	return model, res, err
}

// DistributedSolver returns the solver that TrainDistributed runs when no
// solver is named, and why: newton for a loss with a second derivative
// and an L2 term with λ > 0 (squared, logistic, sqhinge, smoothhinge),
// whose collectives, one per sum over rows, do not grow with the ranks
// and whose iterates are one process's; cocoa otherwise (the hinge and
// the other losses without a second derivative, an L1 term), whose rounds
// grow with the ranks. The choice reads the rank's loss and regularizer,
// which every rank must share, so every rank makes it alike.
func DistributedSolver(local Problem, opt Options) (Solver, string) {
	_, curved := local.Loss.(objective.CurvedLoss)
	var en objective.ElasticNet
	isEN := false
	if local.Reg != nil {
		en, isEN = local.Reg.AsElasticNet()
	}
	name := "this"
	if local.Loss != nil {
		name = "the " + local.Loss.Name()
	}
	switch {
	case local.Loss == nil || local.Reg == nil:
		return SolverCoCoA, "no loss or regularizer to choose by"
	case opt.Coordinate().M > 1 || opt.Coordinate().BlockSize > 1:
		return SolverCoCoA, "coordinate settings (CoordinateSettings.M or BlockSize), which newton does not take"
	case !curved:
		return SolverCoCoA, fmt.Sprintf("%s loss has no second derivative: CoCoA+ rounds over the ranks (their number grows with the ranks)", name)
	case !isEN || en.L1 > 0:
		return SolverCoCoA, fmt.Sprintf("%s regularizer is not twice differentiable: CoCoA+ rounds over the ranks (their number grows with the ranks)", local.Reg.Name())
	case local.Reg.StrongConvexity() == 0:
		return SolverCoCoA, "no L2 term (λ = 0): CoCoA+ rounds over the ranks"
	}
	return SolverNewton, fmt.Sprintf("%s loss is smooth with an L2 term: Newton over the ranks takes one process's steps, and its collectives (the gradient and each Hessian product, a d-vector each; the Hessian once a step on narrow data) do not grow with the ranks (Options.Solver \"cocoa\" for CoCoA+ rounds)", name)
}
