package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"

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
//
// Each model records its certificate (engine.Model.Certificate). A run
// restarted from its own checkpoint replaces it only with a model of a
// smaller gap (restartFloor).
//
// A method with a dual iterate (the SDCA family, cocoa, spdc) also has
// its duals written beside the model, to path + ".duals"
// (modelio.SaveDuals, tied to the model's weights and to the rows), so
// that a restart from the model by a solver that takes warm duals
// continues from them (warmDuals). Over the ranks, where each rank holds
// its own rows' duals, distDuals gathers cocoa's on rank 0 for it.
type checkpointer struct {
	path  string
	build func(w []float64) *engine.Model
	last  error // the error of the latest write, nil once one succeeds again
	count int   // the writes made
	// The duals of rows rows (0: none are written) of the loss named
	// loss, whose problem's modelio.DataSum is dataSum's (taken once).
	rows    int
	loss    string
	dataSum func() uint64
	// begun is set at the first write, which learns whether path is a
	// device (device: no duals beside it); wroteDuals once the duals file
	// holds this run's duals, or an earlier run's has been removed.
	begun, device, wroteDuals bool
	// floor, where hasFloor, is the gap of the checkpoint that the run
	// restarted from (restartFloor): certificates with a gap as large are
	// not written over it, and withheld counts them.
	floor    float64
	hasFloor bool
	withheld int
}

// newCheckpointer returns the checkpointer of path, which turns a point
// into its model with build; nil for an empty path.
func newCheckpointer(path string, build func(w []float64) *engine.Model) *checkpointer {
	if path == "" {
		return nil
	}
	return &checkpointer{path: path, build: build}
}

// save is the driver's Options.Checkpoint: it writes the model of x,
// after the duals where there are some to write. A failed write does not
// end the run (the final model matters more); the run reports it at the
// end, unless a later write succeeded. The duals go first: a process
// killed between the two writes leaves duals that the older model's
// weights do not match, which a restart then leaves aside.
func (k *checkpointer) save(tp engine.TracePoint, x, duals []float64) {
	k.count++
	if k.hasFloor && !(tp.Gap < k.floor) {
		k.withheld++
		return
	}
	m := k.build(slices.Clone(x))
	m.Certificate = certificateOf(tp)
	if !k.begun {
		// A device or a pipe (-checkpoint /dev/null) is written in place,
		// and has no folder of its own for the duals.
		fi, err := os.Stat(k.path)
		k.device = err == nil && !fi.Mode().IsRegular()
		k.begun = true
	}
	var dualsErr error
	switch {
	case k.device:
	case k.rows > 0 && len(duals) == k.rows:
		dualsErr = modelio.SaveDuals(dualsPath(k.path), &modelio.Duals{
			Loss: k.loss, Data: k.dataSum(), Weights: modelio.WeightsSum(m.Weights), Y: duals})
		k.wroteDuals = true
	case !k.wroteDuals:
		// The duals an earlier run kept beside this path belong to its
		// model, which this write replaces.
		if err := os.Remove(dualsPath(k.path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			dualsErr = err
		}
		k.wroteDuals = true // nothing left to remove
	}
	k.last = cmp.Or(modelio.Save(k.path, m), dualsErr)
}

// restartFloor sets k's floor where the run restarts from its own
// checkpoint (-init and -checkpoint name one file) and that model records
// a certificate of the same objective (loss, λ and l1): the checkpoint
// then holds a model of that gap, and a certificate of this run replaces
// it only with a smaller gap. A dual method restarted without its duals
// (a model without them, or too many rows to gather over the ranks)
// starts from those paired with the weights, whose first certificates can
// be far worse than the checkpoint's; it would otherwise write them over
// the better model.
func (k *checkpointer) restartFloor(initPath string, m *engine.Model, prob engine.Problem) {
	if k == nil || m == nil || m.Certificate == nil {
		return
	}
	a, errA := os.Stat(initPath)
	b, errB := os.Stat(k.path)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return
	}
	lambda, l1 := prob.Reg.Strengths()
	if m.Loss != prob.Loss.Name() || m.Lambda != lambda || m.L1 != l1 {
		return
	}
	k.floor, k.hasFloor = max(m.Certificate.Primal-m.Certificate.Dual, 0), true
}

// keepDuals has k write the duals of a method with a dual iterate over
// prob's rows, all of them, beside the model (one process).
func (k *checkpointer) keepDuals(prob engine.Problem) {
	k.rows, k.loss = prob.X.Rows, prob.Loss.Name()
	k.dataSum = sync.OnceValue(func() uint64 { return modelio.DataSum(prob) })
}

// dualsPath is where the duals of the model at path are kept.
func dualsPath(model string) string { return model + ".duals" }

// warmDuals returns opt with the duals kept beside -init's model m
// (checkpointer) as the solver's warm duals, where the solver takes them
// (SolverInfo.Takes.WarmDuals) and keptDuals finds them of this model,
// these rows and this loss; otherwise opt as it is, and where a duals file
// is there but left aside, a warning on stderr says why. The duals file
// of a model is optional: a model written by -model has none.
func warmDuals(opt engine.Options, prob engine.Problem, initPath string, m *engine.Model, stderr io.Writer) engine.Options {
	takes := false
	for _, s := range engine.Solvers() {
		if s.Name == opt.Solver {
			takes = s.Takes.WarmDuals
		}
	}
	if !takes {
		return opt
	}
	y, why := keptDuals(initPath, m, prob.Loss.Name(), prob.X.Rows, func() uint64 { return modelio.DataSum(prob) })
	if why == "" && y != nil {
		if k := outOfDomain(prob, y); k >= 0 {
			why = domainReason(k, y[k], prob.Loss.Name())
		}
	}
	if why != "" {
		warnAside(stderr, initPath, why, string(opt.Solver))
		return opt
	}
	opt.WarmDuals = y
	return opt
}

// keptDuals reads the duals kept beside the model m read from initPath
// and returns them where they are of that model, of n rows whose
// modelio.DataSum is data's and of the loss named loss; otherwise nil and
// why they are left aside ("" where there is no duals file).
func keptDuals(initPath string, m *engine.Model, loss string, n int, data func() uint64) ([]float64, string) {
	d, err := modelio.LoadDuals(dualsPath(initPath))
	switch {
	case errors.Is(err, modelio.ErrNoDuals):
		return nil, ""
	case err != nil:
		return nil, err.Error()
	case d.Loss != loss:
		return nil, fmt.Sprintf("they are duals of the %s loss, and this run's is %s", d.Loss, loss)
	case len(d.Y) != n:
		return nil, fmt.Sprintf("they are %d duals, and the data have %d rows", len(d.Y), n)
	case m == nil || d.Weights != modelio.WeightsSum(m.Weights):
		return nil, "they belong to another model (the model was written after them)"
	case d.Data != data():
		return nil, "they belong to other data (other rows or labels, options that change them: -bias, -normalize, weights, or columns renumbered, as one process does on wide data)"
	}
	return d.Y, ""
}

// outOfDomain returns the first k whose y[k], a dual of prob's row k, is
// not finite or not in the domain of the loss's conjugate; -1 where none.
func outOfDomain(prob engine.Problem, y []float64) int {
	for k, yk := range y {
		if math.IsNaN(yk) || math.IsInf(yk, 0) || prob.Loss.DualFeasible(yk, prob.B[k]) != yk {
			return k
		}
	}
	return -1
}

// domainReason says why dual k (0-based), y, is left aside.
func domainReason(k int, y float64, loss string) string {
	return fmt.Sprintf("dual %d, %v, is not in the domain of the %s loss's conjugate", k+1, y, loss)
}

// warnAside warns that the duals beside -init's model are left aside, and
// why.
func warnAside(stderr io.Writer, initPath, why, solver string) {
	fmt.Fprintf(stderr, "adaspdc train: warning: -init %s: left %s aside: %s; %s starts from the duals paired with the model's weights\n", initPath, dualsPath(initPath), why, solver)
}

// checkpointOn sets opt's Checkpoint to rank 0's checkpointer of
// -checkpoint for prob, and returns it; nil on the other ranks and
// without -checkpoint.
func checkpointOn(lead bool, f trainFlags, prob engine.Problem, opt *engine.Options) *checkpointer {
	if !lead {
		return nil
	}
	k := newCheckpointer(f.checkpoint, func(w []float64) *engine.Model { return modelOf(prob, f.normalize, w) })
	if k != nil { // cocoa's duals: distDuals.checkpoint
		opt.Checkpoint = k.save
		if f.init != "" {
			// Rank 0 has read the model already (initOverRanks), and
			// its errors stopped the run there.
			if m, err := modelio.Load(f.init); err == nil {
				k.restartFloor(f.init, m, prob)
			}
		}
	}
	return k
}

// report says on stderr why the file does not hold the best certificate's
// model, the latest write having failed, and returns that error, which
// ends the run with status 1 as a trace that could not be written does.
func (k *checkpointer) report(stderr io.Writer) error {
	if k != nil && k.hasFloor && k.count > 0 && k.withheld == k.count {
		fmt.Fprintf(stderr, "adaspdc train: %s still holds the model this run restarted from: no certificate of the run had a gap below its %.4g\n", k.path, k.floor)
	}
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
// those kept beside the model where they match (distDuals.warm), and
// otherwise from the optimality relation (engine.Options.WarmStart). It
// returns the
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
