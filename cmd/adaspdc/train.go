package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
)

func init() {
	commands["train"] = command{
		summary: "fit a linear model and print its duality gap",
		run:     runTrain,
	}
}

// Exit statuses of adaspdc train, documented in its usage text.
const (
	exitShort = 3 // stopped before -tol or -target-primal was met
)

// runTrain is adaspdc train: its steps are train's, and a mistake in the
// command line that a step finds is said as a usage error.
func runTrain(args []string, stdout, stderr io.Writer) error {
	return reportMistake("train", stderr, train(args, stdout, stderr))
}

// train runs the steps of adaspdc train: the flags, their checks and the
// options they make, all before any data is read; then, in one process,
// the problem, the solver and the run; under mpirun with several ranks,
// the distributed run (CoCoA+ rounds over the ranks) instead.
func train(args []string, stdout, stderr io.Writer) error {
	f, set, err := parseTrainFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := f.validate(set); err != nil {
		return err
	}
	opt, err := f.options()
	if err != nil {
		return err
	}
	if err := f.checkOutputs(); err != nil {
		return err
	}
	c, leave := worldOf()
	defer leave()
	if c != nil {
		if err := distributedRefusals(f, set); err != nil {
			return mistake{err}
		}
		loss, _ := f.lossFunc() // validate has checked it
		return trainDistributed(c, f, opt, loss, f.data, f.features, f.lambdaSet, f.tol > 0, stdout, stderr)
	}
	if f.checkpoint != "" && (f.cv > 0 || f.lambdaAuto || f.l1Auto || f.multiclass == "multinomial") {
		return mistakef("-checkpoint: takes one run of a binary or regression model, not -cv, a search over λ (-lambda auto, -l1 auto) or the multinomial model")
	}
	trace, err := openTrace(f.trace)
	if err != nil {
		return err
	}
	defer trace.close()
	ctx, done := runContext(f.threads)
	defer done()
	tp, err := loadTrainProblem(ctx, &f)
	if err != nil {
		return err
	}
	if opt, err = chooseSolver(tp, f, set, opt, stderr); err != nil {
		return err
	}
	var initModel *engine.Model
	if f.init != "" {
		if opt.WarmStart, initModel, err = initialModel(f.init, tp.dim, f.bias, f.normalize, tp.remap); err != nil {
			return err
		}
		if !tp.multi && f.cv == 0 && !f.lambdaAuto && !f.l1Auto {
			opt = warmDuals(opt, tp.prob, f.init, initModel, stderr)
		}
	}
	if f.cv > 0 || f.lambdaAuto || f.l1Auto {
		if trainAfter, err := crossValidate(ctx, &tp, f, opt, stdout, stderr); !trainAfter || err != nil {
			return err
		}
	}
	if err := sortRows(&tp, f, opt.Solver); err != nil {
		return err
	}
	normHint(tp.prob.X, f, opt, stderr)
	opt.Callback = epochCallback(f.quiet, trace, stderr)
	if tp.multi && f.checkpoint != "" {
		return mistakef("-checkpoint: takes one run of a binary or regression model, not one-vs-rest's runs over the classes of %s", f.data)
	}
	if tp.multi && f.multiclass != "multinomial" {
		return trainOneVsRest(ctx, tp.prob, tp.y, opt, f, tp.remap, tp.dim, stdout, stderr)
	}
	ck := newCheckpointer(f.checkpoint, func(w []float64) *engine.Model {
		m := modelOf(tp.prob, f.normalize, w)
		restoreModel(m, f, tp.remap, tp.dim)
		return m
	})
	if ck != nil {
		ck.keepDuals(tp.prob)
		ck.restartFloor(f.init, initModel, tp.prob)
		opt.Checkpoint = ck.save
	}
	model, res, err := runTraining(ctx, tp, f, opt)
	traceErr := cmp.Or(trace.finish(stderr), ck.report(stderr))
	return reportTraining(model, res, err, traceErr, f, stdout, stderr)
}

// trainProblem is what the load step hands to the run: the problem the
// solver sees, and what maps its model back to the data.
type trainProblem struct {
	prob  engine.Problem
	y     []float64 // the raw labels, which the multi-class runs read
	multi bool      // three classes or more
	remap []int32   // the data's column of each of the solver's, when it dropped or renumbered columns
	dim   int       // the data's columns, before any bias column
}

// loadTrainProblem reads the data and makes the problem: the targets, the
// normalised rows, the columns used, the bias column, the row weights and
// the groups. Without -lambda, it sets f.lambda to its default, 1/n, which
// the cross-validation reads too.
func loadTrainProblem(ctx context.Context, f *trainFlags) (trainProblem, error) {
	var tp trainProblem
	loss, _ := f.lossFunc() // validate has checked it
	ds, err := loadData(f.data, sparse.ReadOptions{NumFeatures: f.features, Threads: f.threads})
	if err != nil {
		return tp, err
	}
	if ctx.Err() != nil {
		return tp, errors.New("interrupted while reading the data")
	}
	b, labels, multi, err := multiTargets(ds, loss, *f)
	if err != nil {
		return tp, err
	}
	tp.y, tp.multi, tp.dim = ds.Y, multi, ds.X.Cols
	x, err := trainColumns(ds, *f, &tp)
	if err != nil {
		return tp, err
	}
	if !f.lambdaSet {
		f.lambda = 1 / float64(x.Rows)
	}
	tp.prob = engine.Problem{X: x, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: f.lambda, L1: f.l1}, Classes: labels, Bias: f.bias}
	if multi {
		tp.prob.Classes = nil
	}
	if f.sampleWeights != "" || f.classWeights != "" {
		if tp.prob.SampleWeights, err = rowWeights(f.sampleWeights, f.classWeights, ds.Y, loss); err != nil {
			return tp, err
		}
	}
	if f.groups != "" {
		groups, err := engine.ReadGroupsFile(f.groups, tp.dim)
		if err != nil {
			return tp, err
		}
		// A bias column, appended after the file's features, is unpenalised.
		for len(groups) < x.Cols {
			groups = append(groups, -1)
		}
		tp.prob.Reg = &engine.GroupLasso{Lambda: f.lambda, Weight: f.groupWeight, Groups: groups}
	}
	if err := tp.prob.Reg.Validate(x.Cols); err != nil {
		return tp, err
	}
	if f.l1Auto {
		// The solver is chosen for an L1 term; the path sets its strength.
		tp.prob.Reg = engine.ElasticNet{Lambda: f.lambda, L1: engine.L1Max(tp.prob)}
	}
	return tp, nil
}

// sortRows sorts the rows of the problem by their number of entries within
// windows where the engine says that pays for the solver
// (engine.RowWindow), with the labels, the raw labels and the sample
// weights alike. Only the row order changes, so the model is the same up
// to rounding. The problem is validated first, so that an error names the
// data's rows. The cross-validation and the searches over λ keep the
// data's order, which their folds follow.
func sortRows(tp *trainProblem, f trainFlags, solver engine.Solver) error {
	window := engine.RowWindow(tp.prob, solver)
	if window == 0 || f.cv > 0 || f.lambdaAuto || f.l1Auto {
		return nil
	}
	if err := tp.prob.Validate(); err != nil {
		return err
	}
	o := tp.prob.X.SortRowsByLength(window)
	o.Apply(tp.prob.B)
	o.Apply(tp.prob.SampleWeights)
	if len(tp.y) > 0 && (len(tp.prob.B) == 0 || &tp.y[0] != &tp.prob.B[0]) {
		o.Apply(tp.y) // the raw labels, where they are not the targets themselves
	}
	return nil
}

// multiTargets is targets, with the flags that several classes do not
// take refused; for several classes, the targets returned are the first
// class against the rest, which the automatic choice and the checks before
// the run see (the multinomial loss reads the raw labels).
func multiTargets(ds *sparse.Dataset, loss engine.Loss, f trainFlags) (b, labels []float64, multi bool, err error) {
	b, labels, multi, err = targets(ds, loss)
	if err != nil || !multi {
		return b, labels, multi, err
	}
	for _, o := range []struct {
		on   bool
		what string
	}{{f.trace != "" && f.multiclass == "ovr", "-trace"}, {f.init != "", "-init"}, {f.groups != "", "-groups"}} {
		if o.on {
			return nil, nil, false, mistakef("%s: %d classes: %s are not supported with several classes yet", ds.Name, len(labels), o.what)
		}
	}
	b = make([]float64, len(ds.Y))
	for i, y := range ds.Y {
		b[i] = -1
		if y == labels[0] {
			b[i] = 1
		}
	}
	return b, labels, true, nil
}

// trainColumns returns the rows the solver sees: normalised (-normalize
// unit), without the columns that hold no entry where they are more than
// half, or with the most frequent columns first where the model is wider
// than the cache (engine.ColumnTiers; tp.remap maps the columns back
// either way), checked against the memory, and with the bias column. Columns with no entry have weight 0 at the
// optimum, so that a file naming feature 30000000 costs vectors of its
// used width, and the model gets its full width back at the end. The group
// lasso's groups are by original column, so it keeps them all.
func trainColumns(ds *sparse.Dataset, f trainFlags, tp *trainProblem) (*sparse.CSR, error) {
	x := ds.X
	if f.normalize == "unit" {
		x.NormalizeRowsUnit()
	}
	var used int
	switch {
	case f.groups != "":
		used = x.UsedColumns()
	case engine.ColumnTiers(x.Cols) != nil:
		// The data are ours: renumbered in place, the most frequent
		// columns first, the empty ones dropped, which tells the used
		// columns without a pass of their own. A width that comes from a
		// few stray indices is grouped too, to the same effect as
		// compacting.
		tp.remap = x.GroupColumnsByCount(engine.ColumnTiers(x.Cols))
		used = x.Cols
	default:
		if used = x.UsedColumns(); used < x.Cols/2 {
			x, tp.remap = x.CompactColumns()
		}
	}
	threads := f.threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if err := checkMemory(ds.Name, x.Rows, x.Cols, tp.dim, used, threads, availableMemory()); err != nil {
		return nil, err
	}
	if f.bias != 0 {
		x = x.WithBias(f.bias)
	}
	return x, nil
}

// chooseSolver makes the automatic choice of the solver, and names it on
// stderr, where neither -solver nor a coordinate method's flag asks for
// one (they are obeyed as given; the multinomial loss has its own
// default); then it refuses -inner when the choice is no reduction.
func chooseSolver(tp trainProblem, f trainFlags, set map[string]bool, opt engine.Options, stderr io.Writer) (engine.Options, error) {
	if opt.Solver == "" && len(coordinateFlagsSet(set)) == 0 && f.multiclass != "multinomial" {
		if s, why := engine.AutoSolver(tp.prob, opt); s != "" {
			opt.Solver = s
			if !f.quiet {
				fmt.Fprintf(stderr, "adaspdc train: picked %s: %s\n", s, flagWords(why))
			}
		}
	}
	if set["inner"] && opt.Solver != "" && !engine.IsReduction(opt.Solver) {
		return opt, mistakef("-inner %s: only the reductions (%s) run an inner solver, and train picked %s for this problem; name a reduction with -solver", f.inner, reductionNames(), opt.Solver)
	}
	return opt, nil
}

// crossValidate runs -cv alone, which prints the held-out score and trains
// no model, or the search of -lambda auto and -l1 auto, which sets the
// problem's strength to the best found; it reports whether a model is to
// be trained after it.
func crossValidate(ctx context.Context, tp *trainProblem, f trainFlags, opt engine.Options, stdout, stderr io.Writer) (trainAfter bool, err error) {
	var grid []float64
	if f.lambdaGrid != "" {
		grid, _ = parseGrid(f.lambdaGrid) // validate has checked it
	}
	var classesY []float64
	if tp.multi {
		classesY = tp.y
	}
	best, err := searchLambda(ctx, tp.prob, classesY, opt, f, grid, stdout, stderr)
	if err != nil || !(f.lambdaAuto || f.l1Auto) {
		return false, err
	}
	if f.l1Auto {
		f.l1 = best
	} else {
		f.lambda = best
	}
	tp.prob.Reg = engine.ElasticNet{Lambda: f.lambda, L1: f.l1}
	return true, nil
}

// normHint advises -normalize unit or -partition norm where the rows'
// norms spread widely and a coordinate method runs: AdaSPDC's primal step
// follows 1/R of the sampled rows, and with m = 1 on data whose row norms
// spread widely (raw counts) it can stall at a gap of 1e-4..1e-3 (news20).
// The norms cost a pass over the data, so only a run that may print the
// hint computes them.
func normHint(x *sparse.CSR, f trainFlags, opt engine.Options, stderr io.Writer) {
	if f.normalize == "unit" || f.quiet || noCoordinateFlags(opt.Solver) {
		return
	}
	if lo, hi := normRange(x); hi > 10*lo {
		fmt.Fprintf(stderr, "adaspdc train: row norms range from %.3g to %.3g; if the gap stalls, try -normalize unit or -partition norm with -block > 1\n", lo, hi)
	}
}

// runTraining trains one model, binary or multinomial, and gives it the
// data's full width and normalisation back.
func runTraining(ctx context.Context, tp trainProblem, f trainFlags, opt engine.Options) (*engine.Model, *engine.Result, error) {
	var model *engine.Model
	var res *engine.Result
	var err error
	if f.multiclass == "multinomial" {
		model, res, err = engine.TrainMultinomial(ctx, tp.prob, tp.y, opt)
	} else {
		model, res, err = engine.Train(ctx, tp.prob, opt)
	}
	if model != nil {
		restoreModel(model, f, tp.remap, tp.dim)
		if res != nil {
			model.Certificate = certificateOf(res.Model)
		}
	}
	return model, res, err
}

// certificateOf is the model's record of its certificate tp; nil where P
// or D is not finite (a loss that overflowed, a dual out of its domain),
// which JSON cannot hold and no restart could beat.
func certificateOf(tp engine.TracePoint) *engine.ModelCertificate {
	if math.IsNaN(tp.Primal) || math.IsInf(tp.Primal, 0) || math.IsNaN(tp.Dual) || math.IsInf(tp.Dual, 0) {
		return nil
	}
	return &engine.ModelCertificate{Primal: tp.Primal, Dual: tp.Dual}
}

// restoreModel gives each of the model's vectors (one per class of a
// multi-class model) the data's full width back, where the solver left out
// empty columns (remap), and records -normalize unit.
func restoreModel(model *engine.Model, f trainFlags, remap []int32, dim int) {
	if remap != nil {
		w := model.Dim
		if model.Bias != 0 {
			w++
		}
		vectors := 1
		if model.Classes() > 2 {
			vectors = model.Classes()
		}
		var full []float64
		for k := range vectors {
			full = append(full, expandWeights(model.Weights[k*w:(k+1)*w], remap, dim)...)
		}
		model.Weights, model.Dim = full, dim
	}
	if f.normalize == "unit" {
		model.Normalize = "unit"
	}
}

// reportTraining ends a one-process run: after a failure, the model of its
// best certificate is written and the error returned; otherwise the
// summary and the warnings (reportRun), the notes of a run that stopped at
// the optimum or at the epochs asked for, the model, and the exit status.
func reportTraining(model *engine.Model, res *engine.Result, err, traceErr error, f trainFlags, stdout, stderr io.Writer) error {
	if err != nil {
		if model != nil && f.model != "" {
			if serr := modelio.Save(f.model, model); serr != nil {
				fmt.Fprintf(stderr, "adaspdc train: could not write the best certified model to %s: %v\n", f.model, serr)
			} else {
				fmt.Fprintf(stderr, "adaspdc train: the run failed at epoch %d; wrote the model of its best certificate (epoch %d, relative gap %.3g) to %s\n",
					res.Final.Epoch, res.Best.Epoch, res.Best.RelGap, f.model)
			}
		}
		return err
	}
	gapTest := f.tol > 0
	short := reportRun(res, f, gapTest, 0, 0, stdout, stderr)
	switch {
	case short != "", f.quiet:
	case res.Stop == "optimal" || !gapTest && res.Stop == "tol":
		// -tol 0 asks for a zero gap: reaching it is the optimum too.
		fmt.Fprintf(stderr, "adaspdc train: stopped at epoch %d at the optimum to rounding (relative gap %.3g): no further step can change the model in double precision\n", res.Final.Epoch, res.Model.RelGap)
	case !gapTest && res.Stop == "max-epochs":
		fmt.Fprintf(stderr, "adaspdc train: ran the %d epochs asked for (-tol %g: no gap test)\n", res.Final.Epoch, f.tol)
	}
	if err := saveModel(f, model); err != nil {
		return err
	}
	return runStatus(traceErr, short)
}

// shortfall says how a run that ended without error fell short of its
// goal, or returns "" when it met it. The goal is -tol's relative gap and
// -target-primal's objective; with neither (-tol ≤ 0), it is to run the
// -max-epochs asked for, so a time limit, an interrupt or a stall falls
// short of it too. A run at the optimum to rounding (Stop "optimal", or
// a zero gap under -tol 0) met
// any -tol, since no tolerance can ask for more; a -target-primal below
// its dual bound is out of reach of every model.
func shortfall(res *engine.Result, f trainFlags, gapTest bool) string {
	mp := res.Model
	// -tol 0 asks for a zero gap, which is the optimum to rounding too.
	optimal := res.Stop == "optimal" || !gapTest && res.Stop == "tol"
	switch {
	case res.Converged && !(f.targetPrimal > 0 && optimal && mp.Primal > f.targetPrimal):
		return ""
	case res.Stop == "target":
		return ""
	case f.targetPrimal > 0 && optimal:
		return fmt.Sprintf("the primal %.12g is at the optimum to rounding, and -target-primal %g is below the dual bound %.12g ≤ P*: no model reaches it", mp.Primal, f.targetPrimal, mp.Dual)
	case f.targetPrimal > 0:
		return fmt.Sprintf("the primal %.12g is %.3g above -target-primal %g", mp.Primal, mp.Primal-f.targetPrimal, f.targetPrimal)
	case gapTest:
		return fmt.Sprintf("the relative gap %.3g is %.3g times -tol %g", mp.RelGap, mp.RelGap/f.tol, f.tol)
	case res.Stop != "max-epochs":
		return fmt.Sprintf("-tol %g asked for %d epochs and the run ran %d (relative gap %.3g)", f.tol, f.maxEpochs, res.Final.Epoch, mp.RelGap)
	}
	return ""
}

// stopReason says in the command line's words why a run ended.
func stopReason(stop string, f trainFlags) string {
	switch stop {
	case "max-epochs":
		return fmt.Sprintf("-max-epochs %d", f.maxEpochs)
	case "time":
		return fmt.Sprintf("-time-limit %v", f.timeLimit)
	case "context":
		return "interrupted by a signal"
	case "optimal":
		return "at the optimum to rounding"
	case "callback", "rule":
		return "by the caller"
	case "stalled":
		if f.stallEpochs <= 0 {
			return "stalled"
		}
		return fmt.Sprintf("stalled: -stall-epochs %d", f.stallEpochs)
	}
	return stop
}

// checkWritable reports whether a file can be created at path: its folder
// exists and takes a new file, and path is not a folder.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("is a folder")
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("folder %s does not exist", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	probe, err := os.CreateTemp(dir, ".adaspdc-probe-*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %v", dir, errors.Unwrap(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// targets turns the raw labels into what the loss needs: ±1 for the
// classification losses (the larger raw value is +1, and the mapping is kept
// in the model), and the raw targets for the squared loss, which is a
// regression whatever the number of distinct targets. Three classes or
// more (whole numbers, at most maxClasses of them) are a one-vs-rest
// problem: multi is true and labels lists the classes in increasing order.
func targets(ds *sparse.Dataset, loss engine.Loss) (b, labels []float64, multi bool, err error) {
	if !loss.Classification() {
		return ds.Y, nil, false, nil
	}
	b, lm, err := sparse.BinaryLabels(ds.Y)
	if err == nil {
		return b, []float64{lm.Neg, lm.Pos}, false, nil
	}
	if classes := distinctClasses(ds.Y); len(classes) >= 3 {
		return nil, classes, true, nil
	}
	return nil, nil, false, fmt.Errorf("%s: %w%s", ds.Name, err, labelHint(ds.Y, loss))
}

// maxClasses bounds the classes of a one-vs-rest problem: more distinct
// labels than that are taken for regression targets (labelHint says so).
const maxClasses = 100

// distinctClasses returns the distinct labels of y in increasing order
// when they look like classes (whole numbers, 3 to maxClasses of them),
// and nil otherwise.
func distinctClasses(y []float64) []float64 {
	seen := map[float64]bool{}
	for _, v := range y {
		if v != math.Trunc(v) {
			return nil
		}
		if !seen[v] {
			if seen[v] = true; len(seen) > maxClasses {
				return nil
			}
		}
	}
	classes := make([]float64, 0, len(seen))
	for v := range seen {
		classes = append(classes, v)
	}
	slices.Sort(classes)
	return classes
}

// normRange returns the smallest positive and the largest row norm.
func normRange(x *sparse.CSR) (lo, hi float64) {
	lo = math.Inf(1)
	for _, sq := range x.RowSquaredNorms() {
		if sq > 0 {
			lo = math.Min(lo, sq)
			hi = math.Max(hi, sq)
		}
	}
	return math.Sqrt(lo), math.Sqrt(hi)
}

// namedPath is a path given to a flag.
type namedPath struct{ flag, path string }

// checkCollisions refuses outputs that would overwrite an input or each
// other: -model naming the training data, or -model and -trace naming one
// file, would lose one of the two. Paths are compared after resolving
// symbolic links, and files that exist by identity (os.SameFile), so that
// two spellings of one file collide too. A default -data (the bundled
// set) has no path and collides with nothing.
func checkCollisions(inputs, outputs []namedPath) error {
	type resolved struct {
		namedPath
		key string
		fi  os.FileInfo
	}
	resolve := func(p namedPath) resolved {
		r := resolved{namedPath: p, key: p.path}
		if abs, err := filepath.Abs(p.path); err == nil {
			r.key = abs
		}
		if real, err := filepath.EvalSymlinks(p.path); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				r.key = abs
			}
		}
		r.fi, _ = os.Stat(p.path)
		return r
	}
	same := func(a, b resolved) bool {
		if a.fi != nil && b.fi != nil {
			return os.SameFile(a.fi, b.fi)
		}
		return a.key == b.key
	}
	var outs []resolved
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		r := resolve(o)
		for _, prev := range outs {
			if same(prev, r) {
				return fmt.Errorf("-%s and -%s name the same file %s: one would overwrite the other", prev.flag, o.flag, o.path)
			}
		}
		outs = append(outs, r)
	}
	for _, in := range inputs {
		if in.path == "" {
			continue
		}
		r := resolve(in)
		for _, o := range outs {
			if same(r, o) {
				return fmt.Errorf("-%s %s would overwrite the input -%s %s", o.flag, o.path, in.flag, in.path)
			}
		}
	}
	return nil
}

// labelHint says what to do with labels that a binary loss refuses: real
// targets (fractions, or more distinct values than classes usually come
// in) ask for the squared loss, and a few integer classes for one-vs-rest.
func labelHint(y []float64, loss engine.Loss) string {
	distinct := map[float64]bool{}
	integers := true
	for _, v := range y {
		distinct[v] = true
		if v != math.Trunc(v) {
			integers = false
		}
	}
	switch {
	case len(distinct) < 3:
		return ""
	case !integers || len(distinct) > 100:
		return fmt.Sprintf("; these look like regression targets: train them with -loss squared (-loss %s is a classification loss)", loss.Name())
	}
	return ""
}

// saveModel writes the model to -model (JSON) and -liblinear-model, where
// asked.
func saveModel(f trainFlags, model *engine.Model) error {
	if f.model != "" {
		if err := modelio.Save(f.model, model); err != nil {
			return fmt.Errorf("writing the model to %s: %w", f.model, err)
		}
	}
	if f.liblinearModel != "" {
		if err := modelio.SaveLIBLINEAR(f.liblinearModel, model); err != nil {
			return fmt.Errorf("writing the LIBLINEAR model to %s: %w", f.liblinearModel, err)
		}
	}
	return nil
}
