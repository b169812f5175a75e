package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
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
// ranks, newton.TrainDistributed), owlqn (OWL-QN for an L1 term,
// newton.TrainOWLQNDistributed) or cocoa (CoCoA+ rounds,
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
	case SolverOWLQN:
		w, res, err = newton.TrainOWLQNDistributed(ctx, c, local, opt)
	case SolverCoCoA:
		w, res, err = sdca.TrainDistributed(ctx, c, local, opt)
	default:
		err = fmt.Errorf("engine: distributed training runs newton, owlqn or cocoa, not %s", opt.Solver)
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

// SolverOWLQN is OWL-QN (newton.SolverOWLQN), which a distributed run
// trains an L1 term with.
const SolverOWLQN = newton.SolverOWLQN

// DistributedSolver returns the solver that TrainDistributed runs when no
// solver is named, and why: newton for a loss with a second derivative
// and an L2 term with λ > 0 (squared, logistic, sqhinge, smoothhinge),
// whose collectives, one per sum over rows, do not grow with the ranks
// and whose iterates are one process's; owlqn for such a loss with an L1
// term (the plain elastic net, λ ≥ 0), L-BFGS on the orthant-wise
// pseudo-gradient, one allreduce per trial point, whose collectives do not
// grow with the ranks either (newGLMNET, the one-process choice, would
// need the Hessian's columns in its coordinate descent); cocoa otherwise
// (the hinge and the other losses without a second derivative), whose
// rounds grow with the ranks. The choice reads the rank's loss and regularizer,
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
	case isEN && en.L1 > 0 && en.Plain():
		return SolverOWLQN, fmt.Sprintf("%s loss is smooth with an L1 term: OWL-QN over the ranks takes one process's steps, and its collectives (f's value and gradient, a d-vector, once per line-search point) do not grow with the ranks (Options.Solver \"cocoa\" for CoCoA+ rounds)", name)
	case !isEN || en.L1 > 0:
		return SolverCoCoA, fmt.Sprintf("%s regularizer is not twice differentiable: CoCoA+ rounds over the ranks (their number grows with the ranks)", local.Reg.Name())
	case local.Reg.StrongConvexity() == 0:
		return SolverCoCoA, "no L2 term (λ = 0): CoCoA+ rounds over the ranks"
	}
	return SolverNewton, fmt.Sprintf("%s loss is smooth with an L2 term: Newton over the ranks takes one process's steps, and its collectives (the gradient and each Hessian product, a d-vector each; the Hessian once a step on narrow data) do not grow with the ranks (Options.Solver \"cocoa\" for CoCoA+ rounds)", name)
}

// AgreeClasses returns the union of the ranks' labels y, sorted, the same
// on every rank, in two collectives: the largest number of distinct labels
// a rank holds (a maximum), then a table of every rank's labels, each rank
// filling its own row and zeros elsewhere (a sum, exact: x + 0 = x).
func AgreeClasses(c comm.Comm, y []float64) ([]float64, error) {
	own := slices.Clone(y)
	slices.Sort(own)
	own = slices.Compact(own)
	m := []float64{float64(len(own))}
	if err := c.AllreduceMax(m); err != nil {
		return nil, err
	}
	width := int(m[0]) + 1
	table := make([]float64, c.Size()*width)
	row := table[c.Rank()*width : (c.Rank()+1)*width]
	row[0] = float64(len(own))
	copy(row[1:], own)
	if err := c.AllreduceSum(table); err != nil {
		return nil, err
	}
	var all []float64
	for r := range c.Size() {
		row := table[r*width : (r+1)*width]
		all = append(all, row[1:1+int(row[0])]...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// TrainMultinomialDistributed is TrainMultinomial over the ranks of c: the
// ranks agree on the classes (the union of their labels y, AgreeClasses),
// map each rank's labels to 0…K−1 alike, and run L-BFGS over the ranks
// (newton.TrainSoftmaxDistributed: one allreduce of K·d + 2 values per
// evaluation of P and ∇P, the multinomial certificate assembled from the
// same sums). Every rank returns the same model, built as TrainMultinomial
// builds it. local holds the rank's rows (with the bias column), the
// logistic loss and the elastic net (λ > 0, no L1 term); its B and Classes
// are not read.
func TrainMultinomialDistributed(ctx context.Context, c comm.Comm, local Problem, y []float64, opt Options) (*Model, *Result, error) {
	if local.X == nil || len(y) != local.X.Rows {
		err := fmt.Errorf("engine: multinomial: %d labels for %d rows", len(y), rowsOf(local))
		c.Abort(err)
		return nil, nil, err
	}
	if _, ok := local.Loss.(Logistic); !ok {
		return nil, nil, errors.New("engine: the multinomial loss is the softmax generalisation of the logistic loss: use Problem.Loss Logistic")
	}
	en, ok := local.Reg.AsElasticNet()
	if !ok {
		return nil, nil, fmt.Errorf("engine: the multinomial loss takes the elastic net, not the %s regularizer", local.Reg.Name())
	}
	classes, err := AgreeClasses(c, y)
	if err != nil {
		c.Abort(err)
		return nil, nil, err
	}
	k := len(classes)
	if k < 2 {
		return nil, nil, driver.Agreed("engine: multinomial: the ranks' labels hold %d class(es): want 2 or more", k)
	}
	class := make([]int, len(y))
	for i, v := range y {
		class[i], _ = slices.BinarySearch(classes, v)
	}
	mp := objective.Multinomial{X: local.X, Class: class, K: k, Reg: en, Weights: local.SampleWeights}
	w, res, err := newton.TrainSoftmaxDistributed(ctx, c, mp, opt)
	if w == nil {
		return nil, res, err
	}
	// The ranks agreed on the columns: the model is as wide as W.
	shape := local
	shape.X = &sparse.CSR{Cols: len(w) / k}
	return multinomialModel(shape, w, classes), res, err
}

// TrainOneVsRestDistributed is TrainOneVsRest over the ranks of c: the
// ranks agree on the classes (the union of their labels y, AgreeClasses,
// three or more), then train the classes in turn, each class against the
// rest a binary problem over the ranks (TrainDistributed, with the solver
// it picks or the one named), so that the collectives are the classes'
// runs', none growing with the ranks. The model holds every class as
// TrainOneVsRest's does, and every rank returns the same. done, when not
// nil, is called as each class finishes.
//
// The classes run in turn rather than batched (one allreduce of the K
// classes' d-vectors per sweep): each class's run keeps its own number of
// steps, whereas a batch would step every class as often as the slowest.
func TrainOneVsRestDistributed(ctx context.Context, c comm.Comm, local Problem, y []float64, opt Options, done func(ClassResult)) (*Model, []ClassResult, error) {
	if local.X == nil || len(y) != local.X.Rows {
		err := fmt.Errorf("engine: one-vs-rest: %d labels for %d rows", len(y), rowsOf(local))
		c.Abort(err)
		return nil, nil, err
	}
	if local.Loss == nil || !local.Loss.Classification() {
		return nil, nil, errors.New("engine: one-vs-rest needs a classification loss")
	}
	classes, err := AgreeClasses(c, y)
	if err != nil {
		c.Abort(err)
		return nil, nil, err
	}
	k := len(classes)
	if k < 3 {
		return nil, nil, driver.Agreed("engine: one-vs-rest needs 3 classes or more, the ranks' labels have %d (train two with TrainDistributed)", k)
	}
	results := make([]ClassResult, k)
	var all []float64
	cols := 0
	for q, label := range classes {
		p := local
		p.B, p.Classes = againstTheRest(y, label), nil
		m, res, err := TrainDistributed(ctx, c, p, opt)
		results[q] = ClassResult{Label: label, Result: res}
		if err != nil {
			return nil, results, fmt.Errorf("class %v against the rest: %w", label, err)
		}
		cols = len(m.Weights)
		all = append(all, m.Weights...)
		if done != nil {
			done(results[q])
		}
	}
	shape := local
	shape.X = &sparse.CSR{Cols: cols}
	return newModel(shape, all, classes), results, nil
}
