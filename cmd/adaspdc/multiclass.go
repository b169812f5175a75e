package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/adaspdc/adaspdc/engine"
)

// trainOneVsRest trains a problem of three classes or more, one class
// against the rest each (engine.TrainOneVsRest), prints a line per class
// on stderr and a summary on stdout,
//
//	classes=K epochs=E passes=P worst_rel_gap=G seconds=S threads=T solver=NAME
//
// (E the most epochs of a class, P the passes of all, G the largest final
// relative gap), writes the model, and exits as train does: 3 when a class
// stopped short of its goal.
func trainOneVsRest(ctx context.Context, prob engine.Problem, y []float64, opt engine.Options, f trainFlags, remap []int32, dim int,
	stdout, stderr io.Writer) error {
	opt.Callback = nil
	start := time.Now()
	model, results, err := engine.TrainOneVsRest(ctx, prob, y, opt, func(c engine.ClassResult) {
		if f.quiet {
			return
		}
		mp := c.Result.Model
		fmt.Fprintf(stderr, "class %-6v epochs %4d  passes %7.1f  primal %.12g  rel_gap %.3e  solver %s\n",
			c.Label, c.Result.Final.Epoch, c.Result.Final.Passes, mp.Primal, mp.RelGap, c.Result.Solver)
	})
	if err != nil {
		return err
	}
	restoreModel(model, f, remap, dim)
	var epochs, threads int
	var passes, worst float64
	solver := ""
	var short []string
	gapTest := f.tol > 0
	for _, c := range results {
		r := c.Result
		epochs, threads = max(epochs, r.Final.Epoch), max(threads, r.Threads)
		passes += r.Final.Passes
		worst = math.Max(worst, r.Model.RelGap)
		switch {
		case solver == "":
			solver = string(r.Solver)
		case solver != string(r.Solver):
			solver = "mixed"
		}
		if s := shortfall(r, f, gapTest); s != "" {
			short = append(short, fmt.Sprintf("class %v (stopped: %s): %s", c.Label, stopReason(r.Stop, f), s))
		}
	}
	fmt.Fprintf(stdout, "classes=%d epochs=%d passes=%.1f worst_rel_gap=%.3e seconds=%.3f threads=%d solver=%s\n",
		len(results), epochs, passes, worst, time.Since(start).Seconds(), threads, solver)
	for _, s := range short {
		fmt.Fprintf(stderr, "adaspdc train: warning: %s\n", s)
	}
	if err := saveModel(f, model); err != nil {
		return err
	}
	if len(short) > 0 {
		return exitError{exitShort}
	}
	return nil
}
