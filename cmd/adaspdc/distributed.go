package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// distributedRefusals lists what adaspdc train does in one process only,
// each with the flag that asks for it; a distributed run refuses them
// before it reads any data.
func distributedRefusals(f trainFlags, set map[string]bool) error {
	if s := engine.Solver(f.solver); f.multiclass == "multinomial" && s != "" && s != engine.SolverLBFGS {
		return fmt.Errorf("-solver %s: a distributed run (under mpirun) trains -multiclass multinomial with lbfgs (L-BFGS over the ranks); name it or no solver", f.solver)
	} else if s != "" && s != engine.SolverCoCoA && s != engine.SolverNewton && s != engine.SolverOWLQN && f.multiclass != "multinomial" {
		return fmt.Errorf("-solver %s: a distributed run (under mpirun) trains with newton (truncated Newton over the ranks, for a smooth loss with an L2 term), owlqn (OWL-QN over the ranks, for a smooth loss with an L1 term) or cocoa (CoCoA+ rounds over the ranks); name one of them or no solver", f.solver)
	}
	for _, c := range []struct {
		on   bool
		flag string
	}{
		{f.cv > 0 || f.lambdaAuto || f.l1Auto, "-cv, -lambda auto and -l1 auto"},
		{f.groups != "", "-groups"},
		{f.sampleWeights != "" || f.classWeights != "", "-sample-weights and -class-weights"},
		{f.liblinearModel != "", "-liblinear-model"},
		{f.inner != "", "-inner"},
	} {
		if c.on {
			return fmt.Errorf("%s: not supported in a distributed run (under mpirun); run them in one process", c.flag)
		}
	}
	if coord := coordinateFlagsSet(set); len(coord) > 0 {
		return fmt.Errorf("%s: newton and cocoa, which a distributed run trains with, take no coordinate-method settings", coord[0])
	}
	return nil
}

// readShare reads this rank's rows: the file that the pattern names for
// the rank (comm.SharePath), or the rank's byte range of the one file that
// the ranks share (comm.ShareRange); of the bundled data, the rank's share
// of the rows. Errors name the file and the line of the whole file at
// which the rank's share starts.
func readShare(c comm.Comm, pattern string, opt sparse.ReadOptions) (*sparse.Dataset, error) {
	defer pauseGC()()
	if pattern == "" {
		ds, err := loadData("", opt)
		if err != nil {
			return nil, err
		}
		lo, hi := ds.X.Rows*c.Rank()/c.Size(), ds.X.Rows*(c.Rank()+1)/c.Size()
		a, b := ds.X.Indptr[lo], ds.X.Indptr[hi]
		indptr := make([]int64, hi-lo+1)
		for k := range indptr {
			indptr[k] = ds.X.Indptr[lo+k] - a
		}
		ds.X = &sparse.CSR{Rows: hi - lo, Cols: ds.X.Cols, Indptr: indptr, Indices: ds.X.Indices[a:b], Values: ds.X.Values[a:b]}
		ds.Y = ds.Y[lo:hi]
		return ds, nil
	}
	path, split := comm.SharePath(pattern, c.Rank())
	if !split {
		ds, err := sparse.ReadFile(path, opt)
		if errors.Is(err, sparse.ErrNoDataLines) {
			return emptyShare(path, opt), nil
		}
		return ds, err
	}
	start, end, line, err := comm.ShareRange(path, c.Rank(), c.Size())
	if err != nil {
		return nil, err
	}
	if start == end {
		// More ranks than lines: this rank's range holds none.
		return emptyShare(path, opt), nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	ds, err := sparse.ReadLIBSVM(io.NewSectionReader(file, start, end-start), path, opt)
	if errors.Is(err, sparse.ErrNoDataLines) {
		return emptyShare(path, opt), nil // only blank and comment lines
	}
	if err != nil {
		return nil, fmt.Errorf("rank %d's share of %s, which starts at line %d (add %d to the line numbers below): %w", c.Rank(), path, line, line-1, err)
	}
	return ds, nil
}

// agreedFailure ends a run on an error that every rank has found alike:
// rank 0 reports it, and the ranks meet once more before they return, so
// that none ends the job before the report is out.
func agreedFailure(c comm.Comm, err error, stderr io.Writer) error {
	if c.Rank() == 0 {
		fmt.Fprintf(stderr, "adaspdc train: %s\n", flagWords(err.Error()))
	}
	if berr := c.Barrier(); berr != nil {
		return berr
	}
	return exitError{1}
}

// emptyShare is the share of a rank that holds no row: valid, as long as
// the ranks together hold some (trainDistributed checks that).
func emptyShare(path string, opt sparse.ReadOptions) *sparse.Dataset {
	return &sparse.Dataset{Name: path, X: &sparse.CSR{Cols: max(opt.NumFeatures, 0), Indptr: []int64{0}}, Y: []float64{}}
}

// agreeLabels maps the rank's raw labels y to what the loss needs, the
// same way on every rank: for a classification loss the ranks agree on the
// smallest and largest label by one allreduce, and every label must be one
// of the two (the larger is +1, as sparse.BinaryLabels maps them). It
// returns the labels, the two classes (nil for a regression) and an error
// that every rank finds alike.
func agreeLabels(c comm.Comm, y []float64, loss engine.Loss) ([]float64, []float64, error) {
	if !loss.Classification() {
		return y, nil, nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range y {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	mx := []float64{hi, -lo}
	if err := c.AllreduceMax(mx); err != nil {
		return nil, nil, err
	}
	hi, lo = mx[0], -mx[1]
	bad := 0.0
	b := make([]float64, len(y))
	for k, v := range y {
		switch v {
		case hi:
			b[k] = 1
		case lo:
			b[k] = -1
		default:
			bad = 1
		}
	}
	flag := []float64{bad}
	if err := c.AllreduceMax(flag); err != nil {
		return nil, nil, err
	}
	switch {
	case flag[0] != 0:
		return nil, nil, errManyLabels
	case !(lo < hi):
		return nil, nil, fmt.Errorf("the ranks' data hold one label (%v): the %s loss needs two", hi, loss.Name())
	}
	return b, []float64{lo, hi}, nil
}

// errManyLabels says that the ranks' labels hold more than two classes:
// the run trains one class against the rest each.
var errManyLabels = errors.New("the ranks' data hold more than two labels")

// trainDistributed is adaspdc train on the ranks of c: each rank reads its
// share of the data, the ranks agree on the columns, the rows and the
// labels, and engine.TrainDistributed runs the solver named, or the one
// it picks (newton for a smooth loss with an L2 term, cocoa otherwise,
// said on stderr). Rank 0 alone prints the progress and the summary line
// (with ranks=P and allreduces=N, the collectives of the whole run) and
// writes the trace and the model; every rank returns the same exit
// status. A rank that fails on its own (a missing file, a malformed line)
// aborts the world, which ends every rank with status 1.
func trainDistributed(c comm.Comm, f trainFlags, opt engine.Options, loss engine.Loss, dataPath string, features int, lambdaSet, gapTest bool, stdout, stderr io.Writer) error {
	counter := comm.Counted(c)
	c = counter
	rank, size := c.Rank(), c.Size()
	lead := rank == 0
	fail := func(err error) error {
		err = fmt.Errorf("rank %d of %d: %w", rank, size, err)
		c.Abort(err)
		return err
	}
	ctx, done := rankContext(c, f.threads)
	defer done()
	ds, err := readShare(c, dataPath, sparse.ReadOptions{NumFeatures: features, Threads: f.threads})
	if err != nil {
		return fail(err)
	}
	rows := []float64{float64(ds.X.Rows)}
	if err := c.AllreduceSum(rows); err != nil {
		return fail(err)
	}
	if rows[0] == 0 {
		return agreedFailure(c, fmt.Errorf("%s: no data lines on any of the %d ranks", dataPath, size), stderr)
	}
	var b, classes []float64
	multi := f.multiclass == "multinomial" // the ranks agree on the classes in the engine
	if !multi {
		b, classes, err = agreeLabels(c, ds.Y, loss)
		multi = errors.Is(err, errManyLabels) // one against the rest
	}
	if err != nil && !multi {
		var ae *comm.AbortError
		if errors.As(err, &ae) {
			return fail(err)
		}
		return agreedFailure(c, err, stderr)
	}
	agree := []float64{float64(ds.X.Cols)}
	if err := c.AllreduceMax(agree); err != nil {
		return fail(err)
	}
	x := ds.X
	x.Cols = max(int(agree[0]), features)
	if f.init != "" || f.checkpoint != "" {
		if multi {
			return agreedFailure(c, errors.New("-init and -checkpoint: a distributed run takes them for a binary or regression model, not several classes"), stderr)
		}
		if opt.WarmStart, err = startOverRanks(c, f, x.Cols, stderr); err != nil {
			return err
		}
	}
	if f.normalize == "unit" {
		x.NormalizeRowsUnit()
	}
	if f.bias != 0 {
		x = x.WithBias(f.bias)
	}
	if !lambdaSet {
		f.lambda = 1 / rows[0]
	}
	prob := engine.Problem{X: x, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: f.lambda, L1: f.l1}, Classes: classes, Bias: f.bias}
	opt.Solver = engine.Solver(f.solver)

	var trace *traceFile
	if lead {
		if trace, err = openTrace(f.trace); err != nil {
			return fail(err)
		}
		defer trace.close()
	}
	opt.Callback = epochCallback(f.quiet || !lead, trace, stderr)
	if lead && opt.Solver == "" && !f.quiet && !multi {
		s, why := engine.DistributedSolver(prob, opt)
		fmt.Fprintf(stderr, "adaspdc train: picked %s: %s\n", s, flagWords(why))
	}
	// cocoa's duals, kept beside the checkpoint and taken back by a
	// restart (distDuals).
	var dd *distDuals
	if (f.init != "" || f.checkpoint != "") && !multi && f.multiclass != "multinomial" {
		solver := opt.Solver
		if solver == "" {
			solver, _ = engine.DistributedSolver(prob, opt)
		}
		if solver == "cocoa" {
			if dd, err = newDistDuals(c, prob, int(rows[0])); err != nil {
				return fail(err)
			}
			if f.init != "" {
				// Warm duals are read by a solver named (sdca.Settings).
				opt.Solver = engine.Solver(solver)
				if opt, err = dd.warm(c, opt, prob, f.init, stderr); err != nil {
					return fail(err)
				}
			}
		}
	}
	var (
		model *engine.Model
		res   *engine.Result
	)
	var ck *checkpointer
	switch {
	case f.multiclass == "multinomial":
		model, res, err = engine.TrainMultinomialDistributed(ctx, c, prob, ds.Y, opt)
	case multi:
		return trainOneVsRestDistributed(ctx, c, counter, prob, ds.Y, opt, f, trace, stdout, stderr)
	default:
		ck = checkpointOn(lead, f, prob, &opt)
		if dd != nil && f.checkpoint != "" {
			dd.checkpoint(c, ck, &opt)
		}
		model, res, err = engine.TrainDistributed(ctx, c, prob, opt)
	}
	traceErr := cmp.Or(trace.finish(stderr), ck.report(stderr))
	if model != nil && f.normalize == "unit" {
		model.Normalize = "unit"
	}
	if model != nil && res != nil {
		model.Certificate = certificateOf(res.Model)
	}
	if err != nil {
		if lead && model != nil && f.model != "" {
			if serr := saveModel(f, model); serr == nil {
				fmt.Fprintf(stderr, "adaspdc train: the run failed at epoch %d; wrote the model of its best certificate (epoch %d, relative gap %.3g) to %s\n",
					res.Final.Epoch, res.Best.Epoch, res.Best.RelGap, f.model)
			}
		}
		c.Barrier() // as below; in an aborted world it returns at once
		return err
	}
	var short string
	var saveErr error
	if lead {
		short = reportRun(res, f, gapTest, size, counter.Stats().Calls, stdout, stderr)
		saveErr = saveModel(f, model)
	} else {
		short = shortfall(res, f, gapTest)
	}
	// The ranks meet once more before any returns: a rank that exits with
	// a status other than 0 makes mpirun end the others, rank 0 among
	// them, perhaps before it has written the model.
	if err := c.Barrier(); err != nil {
		return err
	}
	if saveErr != nil {
		return saveErr
	}
	return runStatus(traceErr, short)
}

// worldOf returns the communicator of this process when it is a rank of
// an MPI job (several ranks, or one that a launcher started: comm.Launched),
// and nil otherwise; close leaves the world.
func worldOf() (c comm.Comm, close func()) {
	w, err := comm.World()
	if err != nil || w.Size() < 2 && !comm.Launched() {
		return nil, func() {
			if w != nil {
				w.Close()
			}
		}
	}
	return w, func() { w.Close() }
}
