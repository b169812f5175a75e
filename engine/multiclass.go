package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/newton"
	"golang.org/x/sync/errgroup"
)

// ClassResult is how the binary problem of one class went in a
// one-vs-rest run.
type ClassResult struct {
	Label  float64 // the class, against the rest
	Result *Result
}

// TrainOneVsRest fits a classifier of K ≥ 3 classes as K binary problems,
// class k (bₖ = +1) against the rest (−1), as LIBLINEAR does: prob holds
// the data, the loss (a classification loss), the regularizer and the bias
// column, and y the raw labels, one per row. Every class's problem is
// solved and certified like a binary one, with the options given (the
// solver each picks by itself when none is named), and the model predicts
// the class of the largest margin.
//
// The classes share the cores: with K classes and t threads
// (Options.Threads, or GOMAXPROCS), min(K, t) problems run at a time on
// t / min(K, t) threads each, so that both cores are busy whether the
// classes are many and small or few and large. Every problem reads the
// same X: only the K label vectors are the classes' own. Where the
// classes are newton runs that sweep the rows for their Hessian products
// (wide data, newton.SharesProducts), up to newton.ProductLanes of them
// run at a time instead and take those products, and their margins, in
// sweeps shared over all t threads (newton.Products), each row read once
// for all of them; a class's weights are then not the same bits as its
// binary run's alone, but the same whichever classes shared its sweeps.
// done, when not nil, is called as each class finishes (from the
// goroutine that ran it, one call at a time).
//
// It returns the model and every class's result. An error in one class
// (an unusable problem, a run that fails) stops the others and is
// returned with the class named; a class cut short (time limit, interrupt,
// stall) returns its best certified point, and its Result says so.
func TrainOneVsRest(ctx context.Context, prob Problem, y []float64, opt Options, done func(ClassResult)) (*Model, []ClassResult, error) {
	if prob.X == nil || len(y) != prob.X.Rows {
		return nil, nil, fmt.Errorf("engine: one-vs-rest: %d labels for %d rows", len(y), rowsOf(prob))
	}
	if prob.Loss == nil || !prob.Loss.Classification() {
		return nil, nil, errors.New("engine: one-vs-rest needs a classification loss")
	}
	classes := slices.Clone(y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	k := len(classes)
	if k < 3 {
		return nil, nil, fmt.Errorf("engine: one-vs-rest needs 3 classes or more, the labels have %d (train two with Train)", k)
	}
	budget := driver.ThreadBudget(opt.Threads)
	parallel := min(k, budget)
	opt.Threads = max(1, budget/parallel)
	if products := sharedProducts(prob, opt, budget); products != nil {
		defer products.Close()
		parallel, opt.Threads = min(k, newton.ProductLanes), 1
		opt = opt.With(newton.Settings{Products: products})
	}
	results := make([]ClassResult, k)
	weights := make([][]float64, k)
	var mu sync.Mutex // serialises done
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for c, label := range classes {
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // another class failed: its error is the run's
			}
			p := prob
			p.B, p.Classes = againstTheRest(y, label), nil
			m, res, err := Train(gctx, p, opt)
			results[c] = ClassResult{Label: label, Result: res}
			if err != nil {
				return fmt.Errorf("class %v against the rest: %w", label, err)
			}
			weights[c] = m.Weights
			if done != nil {
				mu.Lock()
				done(results[c])
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, results, err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, results, fmt.Errorf("engine: one-vs-rest: %w", err)
	}
	all := make([]float64, 0, k*len(weights[0]))
	for _, wc := range weights {
		all = append(all, wc...)
	}
	model := newModel(prob, all, classes)
	return model, results, nil
}

// sharedProducts returns the Products that one-vs-rest's classes share,
// or nil where they should not: where they are newton runs by CG on wide
// data, ProductLanes of them run at a time, one thread each for their own
// sweeps, and take their Hessian products together on every thread
// (newton.Products), since those products are most of their time. Each
// class still makes the solver choice Train makes, which does not depend
// on the labels: the one made here.
func sharedProducts(prob Problem, opt Options, budget int) *newton.Products {
	solver := opt.Solver
	if _, warm := driver.SettingsOf[SDCASettings](opt); solver == "" && !opt.AsksForCoordinateMethod() && !warm {
		solver, _ = AutoSolver(prob, opt)
	}
	if solver != SolverNewton || !newton.SharesProducts(prob.X) {
		return nil
	}
	return newton.NewProducts(prob.X, budget, opt.Deterministic)
}

// againstTheRest returns the targets of class label against the rest: +1
// where y is label, −1 elsewhere.
func againstTheRest(y []float64, label float64) []float64 {
	b := make([]float64, len(y))
	for i, v := range y {
		b[i] = -1
		if v == label {
			b[i] = 1
		}
	}
	return b
}

func rowsOf(prob Problem) int {
	if prob.X == nil {
		return 0
	}
	return prob.X.Rows
}
