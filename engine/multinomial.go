package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TrainMultinomial fits the multinomial (softmax) logistic regression of
// the K ≥ 2 classes of the raw labels y, one weight vector per class,
//
//	min_W (1/n) Σₖ wₖ (log Σⱼ exp(aₖᵀWⱼ) − aₖᵀW_{cₖ}) + (λ/2)‖W‖²,
//
// where one-vs-rest (TrainOneVsRest) fits K separate binary problems. prob
// holds the data (with its bias column), the logistic loss, the elastic
// net (λ > 0, no L1 term, no centre or weights) and the sample weights;
// its B and Classes are not read. The run is L-BFGS (SolverLBFGS,
// the default) or, with Options.Solver sdca, multinomial SDCA, whose dual
// step is exact, under the driver's rules, certified by the multinomial
// duality gap
// (objective.MultinomialEvaluator): its dual has one vector per row, the
// conjugate of log-sum-exp being the negative entropy on the simplex.
//
// With three classes or more the model's Multinomial field is set, so
// that its probabilities are the softmax of the margins. With two it is a
// binary model, w = W₁ − W₀, whose σ(margin) is that softmax.
func TrainMultinomial(ctx context.Context, prob Problem, y []float64, opt Options) (*Model, *Result, error) {
	if prob.X == nil || len(y) != prob.X.Rows {
		return nil, nil, fmt.Errorf("engine: multinomial: %d labels for %d rows", len(y), rowsOf(prob))
	}
	if _, ok := prob.Loss.(Logistic); !ok {
		return nil, nil, errors.New("engine: the multinomial loss (TrainMultinomial) is the softmax generalisation of the logistic loss: use Problem.Loss Logistic")
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return nil, nil, fmt.Errorf("engine: the multinomial loss takes the elastic net, not the %s regularizer", prob.Reg.Name())
	}
	me := driver.LookupMultinomial(opt.Solver)
	if me == nil {
		var names []string
		for _, e := range driver.MultinomialEntries() {
			names = append(names, string(e.Name))
		}
		return nil, nil, fmt.Errorf("engine: the multinomial loss runs on %s (the first is the default); %s takes binary (scalar) losses only", strings.Join(names, " or "), opt.Solver)
	}
	opt.Solver = me.Name
	if opt.WarmStart != nil {
		return nil, nil, errors.New("engine: the multinomial loss takes no warm start yet")
	}
	check := opt
	check.Solver = "" // lbfgs is not in the registry, which lists the scalar losses' solvers
	if err := check.ValidateFor(prob.X.Rows); err != nil {
		return nil, nil, err
	}
	classes := slices.Clone(y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	k := len(classes)
	class := make([]int, len(y))
	for i, v := range y {
		class[i], _ = slices.BinarySearch(classes, v)
	}
	mp := objective.Multinomial{X: prob.X, Class: class, K: k, Reg: en, Weights: prob.SampleWeights}
	if err := mp.Validate(); err != nil {
		return nil, nil, err
	}
	entry := &driver.Entry{
		SolverInfo: driver.SolverInfo{Name: opt.Solver, Certified: true},
		Start: func(_ context.Context, _ Problem, o Options) (driver.Method, error) {
			return me.Start(mp, o)
		},
	}
	// Solve reads the problem for its loss (the stall rule's advice) and
	// checks no warm start against it: the scalar problem serves.
	w, res, err := driver.Solve(ctx, entry, prob, opt)
	if w == nil {
		return nil, res, err
	}
	return multinomialModel(prob, w, classes), res, err
}

// multinomialModel returns the model of the softmax weights W (feature-
// major, K per column of prob.X) of the given classes: a binary model of
// w = W₁ − W₀ for two classes, since σ(a·(W₁ − W₀)) is the softmax's
// probability of the second class; otherwise one vector per class, marked
// Multinomial.
func multinomialModel(prob Problem, w, classes []float64) *Model {
	k, cols := len(classes), prob.X.Cols
	model := newModel(prob, nil, classes)
	if k == 2 {
		model.Weights = make([]float64, cols)
		for j := range cols {
			model.Weights[j] = w[j*2+1] - w[j*2]
		}
		return model
	}
	model.Multinomial = true
	model.Weights = make([]float64, k*cols)
	for c := range k {
		for j := range cols {
			model.Weights[c*cols+j] = w[j*k+c]
		}
	}
	return model
}

// IsMultinomialSolver reports whether the solver called name takes the
// multinomial loss (TrainMultinomial runs it).
func IsMultinomialSolver(name Solver) bool {
	return name != "" && driver.LookupMultinomial(name) != nil
}

// MultinomialSolvers describes the solvers that take the multinomial loss
// alone, which Solvers (the registry of the scalar losses' solvers) does
// not list; those that take both (sdca) are listed there.
func MultinomialSolvers() []SolverInfo {
	var out []SolverInfo
	for _, e := range driver.MultinomialEntries() {
		if driver.Lookup(e.Name) == nil {
			out = append(out, e.SolverInfo)
		}
	}
	return out
}
