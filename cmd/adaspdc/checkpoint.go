package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

// What stopping and restarting a distributed run needs: the checkpoint
// that rank 0 keeps of the best certified model (-checkpoint), the start
// from a saved model on any number of ranks (-init), and the context of
// each rank.

// rankContext returns the context of rank c's run: runContext's, which
// SIGINT, SIGTERM and SIGUSR1 cancel. A rank's cancellation reaches the
// others as the flag of its next collective (driver.JoinWorld), so every
// rank stops at the same certificate. Tests replace it to cancel some
// ranks only, which no signal can do to in-process ranks.
var rankContext = func(c comm.Comm, threads int) (context.Context, func()) {
	return runContext(threads)
}

// checkpointer writes -checkpoint: the model of each certificate that
// becomes the run's best, on rank 0, atomically (modelio.Save: a temporary
// file, fsync, rename), so that the file always holds a whole model of a
// certified point, whatever kills the job. It writes between the steps,
// before the next collective: the other ranks wait for it there, and the
// file is never older than the best certificate. A nil checkpointer writes
// nothing.
type checkpointer struct {
	path  string
	build func(w []float64) *engine.Model
	last  error // the error of the latest write, nil once one succeeds again
	count int   // the writes made
}

// newCheckpointer returns the checkpointer of path, which turns a point
// into its model with build; nil for an empty path.
func newCheckpointer(path string, build func(w []float64) *engine.Model) *checkpointer {
	if path == "" {
		return nil
	}
	return &checkpointer{path: path, build: build}
}

// save is the driver's Options.Checkpoint: it writes the model of x. A
// failed write does not end the run (the final model matters more); the
// run reports it at the end, unless a later write succeeded.
func (k *checkpointer) save(_ engine.TracePoint, x []float64) {
	k.count++
	k.last = modelio.Save(k.path, k.build(slices.Clone(x)))
}

// checkpointOn sets opt's Checkpoint to rank 0's checkpointer of
// -checkpoint for prob, and returns it; nil on the other ranks and
// without -checkpoint.
func checkpointOn(lead bool, f trainFlags, prob engine.Problem, opt *engine.Options) *checkpointer {
	if !lead {
		return nil
	}
	k := newCheckpointer(f.checkpoint, func(w []float64) *engine.Model { return modelOf(prob, f.normalize, w) })
	if k != nil {
		opt.Checkpoint = k.save
	}
	return k
}

// report says on stderr why the file does not hold the best certificate's
// model, the latest write having failed, and returns that error, which
// ends the run with status 1 as a trace that could not be written does.
func (k *checkpointer) report(stderr io.Writer) error {
	if k == nil || k.last == nil {
		return nil
	}
	err := fmt.Errorf("writing the checkpoint to %s: %w", k.path, k.last)
	fmt.Fprintf(stderr, "adaspdc train: %v; the run itself went on\n", err)
	return err
}

// modelOf is the model that engine.TrainDistributed returns for the
// weights w of prob, with -normalize's mark: what rank 0 writes to -model
// at the end, and so what a checkpoint holds.
func modelOf(prob engine.Problem, normalize string, w []float64) *engine.Model {
	m := &engine.Model{Loss: prob.Loss.Name(), Dim: len(w), Weights: w, Bias: prob.Bias, Labels: slices.Clone(prob.Classes)}
	if prob.Bias != 0 {
		m.Dim-- // the last column is the bias feature
	}
	if prob.Loss.Classification() && m.Labels == nil {
		m.Labels = []float64{-1, 1}
	}
	m.Lambda, m.L1 = prob.Reg.Strengths()
	if normalize == "unit" {
		m.Normalize = "unit"
	}
	return m
}

// startOverRanks returns the weights of -init for the data's dim columns
// on every rank (initOverRanks), nil without -init. Its error has been
// reported already: the world aborted, or rank 0 said why it could not
// start from the model.
func startOverRanks(c comm.Comm, f trainFlags, dim int, stderr io.Writer) ([]float64, error) {
	if f.init == "" {
		return nil, nil
	}
	w, agreed, err := initOverRanks(c, f, dim)
	if err != nil {
		err = fmt.Errorf("rank %d of %d: %w", c.Rank(), c.Size(), err)
		c.Abort(err)
		return nil, err
	}
	if agreed != nil {
		return nil, agreedFailure(c, agreed, stderr)
	}
	return w, nil
}

// initOverRanks is -init on the ranks of c: rank 0 reads the model and
// checks it against the data's dim columns (before any bias column), as
// one process does (initialWeights), and broadcasts its weights, so that
// the file need only be where rank 0 runs: a checkpoint written by rank 0
// of a run on other nodes, or on another number of ranks. The weights
// are the primal point the solver starts from; cocoa's duals start from
// the optimality relation (engine.Options.WarmStart). It returns the
// weights, or an error that every rank finds alike (agreed), or the error
// of a collective.
func initOverRanks(c comm.Comm, f trainFlags, dim int) (w []float64, agreed, cerr error) {
	head := []float64{0}
	var readErr error
	if c.Rank() == 0 {
		if w, readErr = initialWeights(f.init, dim, f.bias, f.normalize, nil); readErr == nil {
			head[0] = float64(len(w))
		} else {
			head[0] = -1
		}
	}
	if err := c.Broadcast(head, 0); err != nil {
		return nil, nil, err
	}
	if head[0] < 0 {
		if readErr == nil {
			readErr = errors.New("rank 0 could not read -init " + f.init)
		}
		return nil, readErr, nil
	}
	if c.Rank() != 0 {
		w = make([]float64, int(head[0]))
	}
	if err := c.Broadcast(w, 0); err != nil {
		return nil, nil, err
	}
	return w, nil, nil
}
