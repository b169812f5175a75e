package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
)

// trainOneVsRestDistributed is trainOneVsRest on the ranks of c: the ranks
// agree on the classes and train each against the rest over the ranks
// (engine.TrainOneVsRestDistributed). Rank 0 prints a line per class on
// stderr and the summary on stdout,
//
//	classes=K epochs=E passes=P worst_rel_gap=G seconds=S threads=T ranks=R allreduces=N solver=NAME
//
// and writes the model; every rank returns the same status.
func trainOneVsRestDistributed(ctx context.Context, c comm.Comm, counter *comm.Counter, prob engine.Problem, y []float64, opt engine.Options, f trainFlags, trace *traceFile,
	stdout, stderr io.Writer) error {
	lead := c.Rank() == 0
	opt.Callback = nil
	start := time.Now()
	model, results, err := engine.TrainOneVsRestDistributed(ctx, c, prob, y, opt, func(cr engine.ClassResult) {
		if f.quiet || !lead {
			return
		}
		mp := cr.Result.Model
		fmt.Fprintf(stderr, "class %-6v epochs %4d  passes %7.1f  primal %.12g  rel_gap %.3e  solver %s\n",
			cr.Label, cr.Result.Final.Epoch, cr.Result.Final.Passes, mp.Primal, mp.RelGap, cr.Result.Solver)
	})
	traceErr := trace.finish(stderr)
	if err != nil {
		return err
	}
	if f.normalize == "unit" {
		model.Normalize = "unit"
	}
	var epochs, threads int
	var passes, worst float64
	solver := ""
	var short []string
	for _, cr := range results {
		r := cr.Result
		epochs, threads = max(epochs, r.Final.Epoch), max(threads, r.Threads)
		passes += r.Final.Passes
		worst = math.Max(worst, r.Model.RelGap)
		switch {
		case solver == "":
			solver = string(r.Solver)
		case solver != string(r.Solver):
			solver = "mixed"
		}
		if s := shortfall(r, f, f.tol > 0); s != "" {
			short = append(short, fmt.Sprintf("class %v (stopped: %s): %s", cr.Label, stopReason(r.Stop, f), s))
		}
	}
	if !lead {
		if len(short) > 0 {
			return exitError{exitShort}
		}
		return runStatus(traceErr, "")
	}
	fmt.Fprintf(stdout, "classes=%d epochs=%d passes=%.1f worst_rel_gap=%.3e seconds=%.3f threads=%d ranks=%d allreduces=%d solver=%s\n",
		len(results), epochs, passes, worst, time.Since(start).Seconds(), threads, c.Size(), counter.Stats().Calls, solver)
	for _, s := range short {
		fmt.Fprintf(stderr, "adaspdc train: warning: %s\n", s)
	}
	if err := saveModel(f, model); err != nil {
		return err
	}
	if len(short) > 0 {
		return exitError{exitShort}
	}
	return runStatus(traceErr, "")
}
