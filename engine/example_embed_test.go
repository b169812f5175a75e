package engine_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// Example_binaryLogistic trains a logistic regression with an intercept on
// a LIBSVM file and predicts labels as the file writes them (here ±1; 2/4
// or 0/1 come back as such), with the solver Train picks by itself.
func Example_binaryLogistic() {
	train, err := sparse.ReadFile("../testdata/heart_scale", sparse.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	prob, err := engine.NewProblem(train, engine.Logistic{}, engine.ElasticNet{Lambda: 1.0 / float64(train.X.Rows)}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	model, res, err := engine.Train(context.Background(), prob, engine.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	test := train // a held-out file is read the same way
	correct := 0
	for i := range test.X.Rows {
		val, idx := test.X.Row(i)
		if model.Predict(val, idx) == test.Y[i] {
			correct++
		}
	}
	fmt.Printf("solver=%s gap≤1e-6: %v labels=%v dim=%d accuracy=%.1f%%\n",
		res.Solver, res.Final.RelGap <= 1e-6, model.Labels, model.Dim, 100*float64(correct)/float64(test.X.Rows))
	// Output: solver=newton gap≤1e-6: true labels=[-1 1] dim=13 accuracy=84.4%
}

// Example_cancel stops a run from outside: a cancelled context (or
// Options.TimeLimit) ends it after its current epoch, with the model of its
// best certificate and no error, once one certificate exists.
func Example_cancel() {
	train, err := sparse.ReadFile("../testdata/heart_scale", sparse.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	prob, _ := engine.NewProblem(train, engine.Logistic{}, engine.ElasticNet{Lambda: 1e-3}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	opt := engine.DefaultOptions()
	opt.Solver, opt.Tol, opt.MaxEpochs = engine.SolverSDCA, -1, 1_000_000 // run until stopped
	opt.Callback = func(tp engine.TracePoint) error {
		if tp.Epoch >= 5 {
			cancel() // as a signal handler or a deadline would
		}
		return nil
	}
	model, res, err := engine.Train(ctx, prob, opt)
	fmt.Println(res.Stop, err, model != nil, res.Model.Gap == res.Best.Gap)
	// Output: context <nil> true true
}

// Example_progress reports each certificate as it comes, and ends the run
// early with ErrStop once the relative gap is small enough for the caller.
func Example_progress() {
	train, err := sparse.ReadFile("../testdata/heart_scale", sparse.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	prob, _ := engine.NewProblem(train, engine.SquaredHinge{}, engine.ElasticNet{Lambda: 1e-2}, 1)
	opt := engine.DefaultOptions()
	opt.Solver, opt.Threads, opt.TimeLimit = engine.SolverSDCA, 1, time.Minute
	var lines int
	opt.Callback = func(tp engine.TracePoint) error {
		lines++ // e.g. log tp.Epoch, tp.Primal, tp.RelGap
		if tp.RelGap < 1e-4 {
			return engine.ErrStop
		}
		return nil
	}
	_, res, err := engine.Train(context.Background(), prob, opt)
	fmt.Println(res.Stop, errors.Is(err, engine.ErrStop), lines == len(res.Trace), res.Final.RelGap < 1e-4)
	// Output: callback false true true
}
