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
	return finishClasses(f, model, summarizeClasses(results, f), time.Since(start), "", stdout, stderr)
}

// finishClasses ends a one-vs-rest run: the summary line, with ranks (the
// " ranks=R allreduces=N" of a distributed run, or "") before the solver,
// a warning for each class that fell short, the model, and status 3 if
// any did.
func finishClasses(f trainFlags, model *engine.Model, sum classesSummary, took time.Duration, ranks string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "classes=%d epochs=%d passes=%.1f worst_rel_gap=%.3e seconds=%.3f threads=%d%s solver=%s\n",
		sum.classes, sum.epochs, sum.passes, sum.worst, took.Seconds(), sum.threads, ranks, sum.solver)
	for _, s := range sum.short {
		fmt.Fprintf(stderr, "adaspdc train: warning: %s\n", s)
	}
	if err := saveModel(f, model); err != nil {
		return err
	}
	if len(sum.short) > 0 {
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
		note := ""
		if c.Result.Note != "" {
			// The solver's own counts, as a binary run prints them.
			note = ": " + flagWords(c.Result.Note)
		}
		fmt.Fprintf(stderr, "class %-6v epochs %4d  passes %7.1f  primal %.12g  rel_gap %.3e  solver %s%s\n",
			c.Label, c.Result.Final.Epoch, c.Result.Final.Passes, mp.Primal, mp.RelGap, c.Result.Solver, note)
	}
}

// classesSummary is what the summary line of a one-vs-rest run reports:
// the most epochs and threads of a class, the passes of all, the worst
// relative gap, the solver (or "mixed"), and the classes short of -tol.
type classesSummary struct {
	classes         int
	epochs, threads int
	passes, worst   float64
	solver          string
	short           []string
}

func summarizeClasses(results []engine.ClassResult, f trainFlags) classesSummary {
	s := classesSummary{classes: len(results)}
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
