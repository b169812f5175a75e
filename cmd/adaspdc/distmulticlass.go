package main

import (
	"context"
	"fmt"
	"io"
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
	progress := classProgress(f, stderr)
	model, results, err := engine.TrainOneVsRestDistributed(ctx, c, prob, y, opt, func(cr engine.ClassResult) {
		if lead {
			progress(cr)
		}
	})
	traceErr := trace.finish(stderr)
	if err != nil {
		return err
	}
	if f.normalize == "unit" {
		model.Normalize = "unit"
	}
	sum := summarizeClasses(results, f)
	short := sum.short
	if !lead {
		if len(short) > 0 {
			return exitError{exitShort}
		}
		return runStatus(traceErr, "")
	}
	fmt.Fprintf(stdout, "classes=%d epochs=%d passes=%.1f worst_rel_gap=%.3e seconds=%.3f threads=%d ranks=%d allreduces=%d solver=%s\n",
		len(results), sum.epochs, sum.passes, sum.worst, time.Since(start).Seconds(), sum.threads, c.Size(), counter.Stats().Calls, sum.solver)
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
