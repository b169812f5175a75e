package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"

	"github.com/adaspdc/adaspdc/engine"
)

// What a run of adaspdc train does alike in one process and on the ranks
// of a distributed run: the signals that end it, the trace it writes, the
// progress it shows, and the summary and warnings it prints at the end.

// runContext returns the context of a run, which the stop signals
// (SIGINT, SIGTERM, SIGUSR1: stopSignals) cancel, and bounds the process
// to threads (when > 0) until done is called. Like an interrupt, each ends
// the run with the model of its best certificate written and status 3.
// -threads bounds the whole process, so that -threads 1 measures one core:
// the parser and the garbage collector too, not the solver alone.
func runContext(threads int) (ctx context.Context, done func()) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	if threads <= 0 {
		return ctx, stop
	}
	prev := runtime.GOMAXPROCS(threads)
	return ctx, func() {
		runtime.GOMAXPROCS(prev)
		stop()
	}
}

// traceFile is -trace: one CSV line per certificate. A nil traceFile
// writes nothing, so that a run without -trace needs no test.
type traceFile struct {
	path string
	f    *os.File
	w    *csv.Writer
}

// openTrace creates the trace file at path and writes its header; with an
// empty path it returns nil.
func openTrace(path string) (*traceFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t := &traceFile{path: path, f: f, w: csv.NewWriter(f)}
	t.w.Write([]string{"epoch", "passes", "primal", "dual", "gap", "rel_gap", "seconds", "iter_seconds", "threads"})
	return t, nil
}

// write adds a certificate's line; csv.Writer keeps the first error for
// finish to report.
func (t *traceFile) write(tp engine.TracePoint) {
	if t == nil {
		return
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	t.w.Write([]string{strconv.Itoa(tp.Epoch), g(tp.Passes), g(tp.Primal), g(tp.Dual), g(tp.Gap), g(tp.RelGap),
		g(tp.Seconds), g(tp.IterSeconds), strconv.Itoa(tp.Threads)})
}

// finish flushes the trace and returns why it could not be written, after
// saying so on stderr. A trace that could not be written does not make the
// run a failure: the summary and the model still come, and the caller
// exits with status 1 at the end.
func (t *traceFile) finish(stderr io.Writer) error {
	if t == nil {
		return nil
	}
	t.w.Flush()
	if err := t.w.Error(); err != nil {
		err = fmt.Errorf("writing the trace to %s: %w", t.path, err)
		fmt.Fprintf(stderr, "adaspdc train: %v; the run itself went on\n", err)
		return err
	}
	return nil
}

// close closes the trace file; what finish has not flushed is dropped.
func (t *traceFile) close() {
	if t != nil {
		t.f.Close()
	}
}

// epochCallback returns the engine's callback of a run: the progress line
// on stderr unless quiet, and the trace's line.
func epochCallback(quiet bool, trace *traceFile, stderr io.Writer) func(engine.TracePoint) error {
	return func(tp engine.TracePoint) error {
		if !quiet {
			fmt.Fprintf(stderr, "epoch %4d  passes %7.1f  primal %.12g  rel_gap %.3e  elapsed %.3fs\n",
				tp.Epoch, tp.Passes, tp.Primal, tp.RelGap, tp.Seconds)
		}
		trace.write(tp)
		return nil
	}
}

// reportRun prints what a run that ended without error says: the summary
// line on stdout, with ranks=P and allreduces=N (the collective calls of
// the whole run) for a distributed run (ranks > 0), and on
// stderr the solver's note (unless -quiet), whether the model is the best
// certificate's rather than the last's, and by how much the run fell short
// of its goal. The numbers printed are those of the model written: after a
// run cut short, its best certificate, not the last. It returns the
// shortfall, "" when the run met its goal.
func reportRun(res *engine.Result, f trainFlags, gapTest bool, ranks int, allreduces int64, stdout, stderr io.Writer) string {
	fp, mp := res.Final, res.Model
	solver, ranksField := string(res.Solver), ""
	if ranks > 0 {
		solver += fmt.Sprintf(" over %d ranks", ranks)
		ranksField = fmt.Sprintf(" ranks=%d allreduces=%d", ranks, allreduces)
	}
	if res.Note != "" && !f.quiet {
		fmt.Fprintf(stderr, "adaspdc train: %s: %s\n", solver, flagWords(res.Note))
	}
	fmt.Fprintf(stdout, "epochs=%d passes=%.1f primal=%.12g dual=%.12g gap=%.3e rel_gap=%.3e seconds=%.3f threads=%d%s solver=%s\n",
		fp.Epoch, fp.Passes, mp.Primal, mp.Dual, mp.Gap, mp.RelGap, fp.Seconds, res.Threads, ranksField, res.Solver)
	if mp.Gap < fp.Gap {
		fmt.Fprintf(stderr, "adaspdc train: the model is that of the best certificate (epoch %d, relative gap %.3g), not the last (epoch %d, relative gap %.3g)\n",
			mp.Epoch, mp.RelGap, fp.Epoch, fp.RelGap)
	}
	short := shortfall(res, f, gapTest)
	if short != "" {
		fmt.Fprintf(stderr, "adaspdc train: warning: stopped (%s) after %d epochs short of the goal: %s\n", stopReason(res.Stop, f), fp.Epoch, short)
		if res.Stop == "stalled" {
			fmt.Fprintf(stderr, "adaspdc train: %s\n", flagWords(res.StallNote))
		}
	}
	return short
}

// runStatus is the end of a run whose summary is out and whose model is
// written: status 1 when the trace could not be written (said already),
// 3 when the run fell short of its goal, else success.
func runStatus(traceErr error, short string) error {
	if traceErr != nil {
		return exitError{1}
	}
	if short != "" {
		return exitError{exitShort}
	}
	return nil
}
