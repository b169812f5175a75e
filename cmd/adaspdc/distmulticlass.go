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
	if !lead {
		if len(sum.short) > 0 {
			return exitError{exitShort}
		}
		return runStatus(traceErr, "")
	}
	ranks := fmt.Sprintf(" ranks=%d allreduces=%d", c.Size(), counter.Stats().Calls)
	if err := finishClasses(f, model, sum, time.Since(start), ranks, stdout, stderr); err != nil {
		return err
	}
	return runStatus(traceErr, "")
}
