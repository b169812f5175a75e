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
	model, results, err := engine.TrainOneVsRest(ctx, prob, y, opt, classProgress(f, stderr))
	if err != nil {
		return err
	}
	restoreModel(model, f, remap, dim)
	sum := summarizeClasses(results, f)
	fmt.Fprintf(stdout, "classes=%d epochs=%d passes=%.1f worst_rel_gap=%.3e seconds=%.3f threads=%d solver=%s\n",
		len(results), sum.epochs, sum.passes, sum.worst, time.Since(start).Seconds(), sum.threads, sum.solver)
	short := sum.short
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

// classProgress returns the callback that prints each class's line as it
// finishes, unless -quiet.
func classProgress(f trainFlags, stderr io.Writer) func(engine.ClassResult) {
	return func(c engine.ClassResult) {
		if f.quiet {
			return
		}
		mp := c.Result.Model
		fmt.Fprintf(stderr, "class %-6v epochs %4d  passes %7.1f  primal %.12g  rel_gap %.3e  solver %s\n",
			c.Label, c.Result.Final.Epoch, c.Result.Final.Passes, mp.Primal, mp.RelGap, c.Result.Solver)
	}
}

// classesSummary is what the summary line of a one-vs-rest run reports:
// the most epochs and threads of a class, the passes of all, the worst
// relative gap, the solver (or "mixed"), and the classes short of -tol.
type classesSummary struct {
	epochs, threads int
	passes, worst   float64
	solver          string
	short           []string
}

func summarizeClasses(results []engine.ClassResult, f trainFlags) classesSummary {
	var s classesSummary
	for _, c := range results {
		r := c.Result
		s.epochs, s.threads = max(s.epochs, r.Final.Epoch), max(s.threads, r.Threads)
		s.passes += r.Final.Passes
		s.worst = math.Max(s.worst, r.Model.RelGap)
		switch {
		case s.solver == "":
			s.solver = string(r.Solver)
		case s.solver != string(r.Solver):
			s.solver = "mixed"
		}
		if msg := shortfall(r, f, f.tol > 0); msg != "" {
			s.short = append(s.short, fmt.Sprintf("class %v (stopped: %s): %s", c.Label, stopReason(r.Stop, f), msg))
		}
	}
	return s
}
