package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/internal/cli"
	"github.com/adaspdc/adaspdc/sparse"
)

func init() {
	commands["train"] = command{
		summary: "fit a linear model and print its duality gap",
		run:     runTrain,
	}
}

type trainFlags struct {
	loss, partition, solver, lazy    string
	inner                            string
	sampling, steps                  string
	normalize                        string
	model, liblinearModel, trace     string
	m, block, threads                int
	maxEpochs                        int
	stallEpochs                      int
	lambda, l1, bias, tol, smoothing float64
	targetPrimal, stepScale          float64
	epsilon, quantile, groupWeight   float64
	groups                           string
	lambdaAuto, l1Auto               bool
	cv                               int
	lambdaGrid, init                 string
	sampleWeights, classWeights      string
	multiclass                       string
	tolSet                           bool
	seed                             uint64
	timeLimit                        time.Duration
	quiet, deterministic             bool
}

// Exit statuses of adaspdc train, documented in its usage text.
const (
	exitShort = 3 // stopped before -tol or -target-primal was met
)

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc", "train", stderr)
	var f trainFlags
	dataPath, features := dataFlags(fs)
	fs.StringVar(&f.loss, "loss", "logistic", "loss: logistic, squared, smoothhinge, sqhinge, or the non-smooth hinge (sdca, adaptsmooth, pdprox-*), absolute, epsinsensitive and quantile (pdprox-*)")
	fs.Var(lambdaValue{&f.lambda, &f.lambdaAuto}, "lambda", "L2 strength λ ≥ 0 in (λ/2)‖x‖² (default 1/n; 0 needs a solver that takes it, such as the lasso's), or auto: chosen by cross-validation over a geometric grid from λ_max down (-cv folds, default 5; -lambda-grid). LIBLINEAR's C is 1/(nλ) for logistic and sqhinge, 1/(2nλ) for squared")
	fs.IntVar(&f.cv, "cv", 0, "K-fold cross-validation (stratified for classes, folds from -seed): print cv_accuracy= or cv_rmse= and train no model, as LIBLINEAR's -v; with -lambda auto, the folds of the search")
	fs.StringVar(&f.lambdaGrid, "lambda-grid", "", "with -lambda auto: the grid `hi:lo:count`, count values from hi down to lo, geometric (default: from λ_max, where LIBLINEAR's search over C starts, halving down to 1/(1024n))")
	fs.StringVar(&f.sampleWeights, "sample-weights", "", "weight each row's loss by the number on its line of this `file` (one finite weight > 0 per row, in order): (1/n) Σ wᵢφᵢ; newton and glmnet take weights")
	fs.StringVar(&f.multiclass, "multiclass", "ovr", "several classes: ovr (one binary problem per class against the rest, as LIBLINEAR) or multinomial (one softmax model of all classes, by L-BFGS or -solver sdca; needs -loss logistic and λ > 0)")
	fs.StringVar(&f.classWeights, "class-weights", "", "weight each row by its class: `LABEL:W,LABEL:W,…` (LIBLINEAR's -wi; classes not listed weigh 1), or balanced (scikit-learn's n/(K·n_k)); multiplies -sample-weights")
	fs.StringVar(&f.init, "init", "", "start from the weights of this saved `model` (same features, bias and normalisation)")
	fs.Var(lambdaValue{&f.l1, &f.l1Auto}, "l1", "L1 strength of the elastic net, ≥ 0, or auto: chosen by cross-validation over a geometric grid from l1_max (where every weight is zero) down to l1_max/10⁴, printing the nonzero weights along the path (-cv folds, default 5; -lambda-grid)")
	fs.StringVar(&f.normalize, "normalize", "none", "scale rows before training: none, or unit (each row to norm 1; the model applies it when predicting)")
	fs.Float64Var(&f.bias, "bias", 0, "append a constant feature of this `value` (as LIBLINEAR's -B); 0: none")
	fs.Float64Var(&f.smoothing, "smoothing", 1, "parameter of the smoothed hinge")
	fs.Float64Var(&f.epsilon, "epsilon", engine.DefaultEpsilon, "width ε ≥ 0 of the epsinsensitive loss's tube (LIBLINEAR's -p)")
	fs.Float64Var(&f.quantile, "quantile", 0.5, "level q in (0, 1) of the quantile loss")
	fs.StringVar(&f.groups, "groups", "", "group lasso: read the feature groups from this `file` (lines \"feature group\", 1-based features, '#' comments; see engine.ReadGroups) and penalise Σ w·√|G|·‖x_G‖₂ + (λ/2)‖x‖²")
	fs.Float64Var(&f.groupWeight, "group-weight", 0, "the group lasso's weight w ≥ 0 (with -groups)")
	fs.IntVar(&f.m, "m", 1, "dual blocks updated per iteration")
	fs.IntVar(&f.block, "block", 1, "samples per dual block")
	fs.StringVar(&f.partition, "partition", "shuffle", "how samples form blocks: shuffle, contiguous or norm")
	fs.IntVar(&f.threads, "threads", 0, "at most this many threads for the whole process (reading the data, the solver's workers and the garbage collector); the solver uses one per 1000 nonzeros of a batch (-m), and one instead of several when the first epoch times one faster; 0: the cores")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed for the partition and the sampler")
	fs.StringVar(&f.inner, "inner", "", "the `solver` that the reductions (adaptreg, adaptsmooth, jointadapt) run on each stage; empty: adaspdc")
	fs.StringVar(&f.solver, "solver", "", "the `name` of the solver (adaspdc solvers lists them); empty: picked for time to accuracy from the data's shape, the loss and the threads, and named on stderr (with -m or -block: the first mini-batch method that takes the loss and regularizer)")
	fs.StringVar(&f.sampling, "sampling", "uniform", "uniform, or importance (spdc with -m 1: blocks drawn ∝ ½ uniform + ½ norm; dfsdca: samples ∝ Lᵢ + L̄)")
	fs.StringVar(&f.lazy, "lazy", "auto", "lazy primal updates: auto, on or off")
	fs.StringVar(&f.steps, "steps", "eso", "step rule of adaspdc and spdc for -m > 1: eso (shrink the steps only as much as a batch's rows share features; Quartz's expected separable over-approximation) or paper (Zhu & Storkey's, as printed); equal at -m 1")
	fs.Float64Var(&f.stepScale, "step-scale", 1, "multiply the paper's steps σ and τ by this `factor` in (0, 2]; 2 is often faster but outside the paper's proof")
	fs.Float64Var(&f.tol, "tol", engine.DefaultOptions().Tol, "stop at this relative duality gap (P−D)/max(1,|P|), as Options.Tol; 0: only at a zero gap, the optimum to rounding, else after -max-epochs epochs; negative (-1): no gap test, run -max-epochs epochs (0 meant no gap test before)")
	fs.Float64Var(&f.targetPrimal, "target-primal", 0, "also stop once the primal objective is at or below this `value` (for benchmarks)")
	fs.IntVar(&f.maxEpochs, "max-epochs", engine.DefaultOptions().MaxEpochs, "stop after this many epochs; 0: run none, only certify the starting point (0, or the -init model), as Options.MaxEpochs")
	fs.IntVar(&f.stallEpochs, "stall-epochs", 0, "stop a run whose duality gaps over this many epochs have a geometric mean less than 1% below the window's before; 0: the default, 200 epochs, 2000 for the non-smooth losses, whose gaps rest on plateaus; negative (-1): never, as Options.StallEpochs (0 meant never before; it is now the default)")
	fs.DurationVar(&f.timeLimit, "time-limit", 0, "stop after this long, set-up included (e.g. 30s); 0: no limit")
	fs.StringVar(&f.model, "model", "", "write the model as JSON to this `file`")
	fs.StringVar(&f.liblinearModel, "liblinear-model", "", "write the model in LIBLINEAR's format to this `file`")
	fs.StringVar(&f.trace, "trace", "", "write the per-epoch trace as CSV to this `file`")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-epoch progress on stderr (warnings and errors still appear)")
	fs.BoolVar(&f.deterministic, "deterministic", false, "bit-identical models for any -threads (ordered reduction; lazy runs always are)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc train [flags]\n\n"+
			"Minimises (1/n) Σ loss(aᵢᵀx, bᵢ) + (λ/2)‖x‖² + l1‖x‖₁ and prints\n"+
			"epochs=… passes=… primal=P dual=D gap=P−D rel_gap=(P−D)/max(1,|P|) seconds=…\n"+
			"threads=N (the workers used: -threads is an upper bound) solver=NAME on stdout.\n\n"+
			"Exit status:\n"+
			"  0  the run met -tol (or -target-primal), or ran the -max-epochs asked for with -tol ≤ 0\n"+
			"  1  an error; a run that fails after its first certificate still writes the\n"+
			"     model of its best certificate to -model, and says so\n"+
			"  2  a mistake in the command line, found before any data is read\n"+
			"  3  stopped short of -tol or -target-primal (at -max-epochs, -time-limit, an\n"+
			"     interrupt (SIGINT or SIGTERM), or a stall: -stall-epochs); with -tol 0, any\n"+
			"     stop before -max-epochs but the optimum itself; the model of the best\n"+
			"     certificate is written and stderr says by how much the run fell short\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	lambdaSet := set["lambda"] && !f.lambdaAuto
	f.tolSet = set["tol"]
	if lambdaSet && (!(f.lambda >= 0) || math.IsInf(f.lambda, 0)) {
		return cli.UsageErrorf(fs, "-lambda %v: must be a finite value ≥ 0 (0: no L2 term, for the lasso with -l1, which needs a solver that takes it; adaspdc solvers lists them)", f.lambda)
	}
	if !(f.l1 >= 0) || math.IsInf(f.l1, 0) {
		return cli.UsageErrorf(fs, "-l1 %v: must be a finite value ≥ 0", f.l1)
	}
	if f.cv < 0 || f.cv == 1 {
		return cli.UsageErrorf(fs, "-cv %d: want 0 (none) or at least 2 folds", f.cv)
	}
	if f.lambdaAuto && f.l1Auto {
		return cli.UsageErrorf(fs, "-lambda auto with -l1 auto: search one at a time")
	}
	search := f.lambdaAuto || f.l1Auto
	switch f.multiclass {
	case "ovr":
	case "multinomial":
		switch {
		case f.loss != "logistic":
			return cli.UsageErrorf(fs, "-multiclass multinomial is the softmax generalisation of the logistic loss: it needs -loss logistic (got %s)", f.loss)
		case f.l1 != 0 || f.l1Auto:
			return cli.UsageErrorf(fs, "-multiclass multinomial takes no -l1 yet (L-BFGS needs a smooth objective)")
		case f.cv > 0 || search:
			return cli.UsageErrorf(fs, "-multiclass multinomial with -cv or -lambda auto: the search runs one against the rest only, for now")
		case f.init != "" || f.groups != "" || set["sampling"]:
			return cli.UsageErrorf(fs, "-multiclass multinomial takes none of -init, -groups or -sampling")
		case f.solver != "" && f.solver != "lbfgs" && f.solver != "sdca":
			return cli.UsageErrorf(fs, "-multiclass multinomial runs on -solver lbfgs (the default) or sdca, not %s", f.solver)
		}
	default:
		return cli.UsageErrorf(fs, "-multiclass %s: want ovr or multinomial", f.multiclass)
	}
	if f.cv > 0 && !search {
		for _, o := range []string{"model", "liblinear-model", "trace", "init"} {
			if set[o] {
				return cli.UsageErrorf(fs, "-cv %d with -%s: cross-validation alone trains no model (as LIBLINEAR's -v); add -lambda auto to search λ and train the model at the best", f.cv, o)
			}
		}
	}
	var grid []float64
	if f.lambdaGrid != "" {
		if !search {
			return cli.UsageErrorf(fs, "-lambda-grid goes with -lambda auto or -l1 auto")
		}
		g, err := parseGrid(f.lambdaGrid)
		if err != nil {
			return cli.UsageErrorf(fs, "-lambda-grid %s: %v", f.lambdaGrid, err)
		}
		grid = g
	}
	if search && f.groups != "" {
		return cli.UsageErrorf(fs, "-lambda auto with -groups: the search runs over the elastic net's λ only")
	}
	if *features < 0 || *features >= math.MaxInt32 {
		return cli.UsageErrorf(fs, "-features %d: must be 0 (the largest index in the data) or more, and below 2³¹ − 1", *features)
	}
	if f.threads < 0 {
		return cli.UsageErrorf(fs, "-threads %d: must be 0 (automatic) or more", f.threads)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"m", f.m}, {"block", f.block}} {
		if c.v < 1 {
			return cli.UsageErrorf(fs, "-%s %d: must be at least 1", c.name, c.v)
		}
	}
	if f.maxEpochs < 0 {
		return cli.UsageErrorf(fs, "-max-epochs %d: must be 0 (certify the starting point only) or more", f.maxEpochs)
	}
	if math.IsNaN(f.tol) || math.IsInf(f.tol, 0) {
		return cli.UsageErrorf(fs, "-tol %v: must be a finite number", f.tol)
	}
	gapTest := f.tol > 0
	if math.IsNaN(f.bias) || math.IsInf(f.bias, 0) || f.bias < 0 {
		return cli.UsageErrorf(fs, "-bias %v: must be a finite value ≥ 0", f.bias)
	}
	if f.normalize != "none" && f.normalize != "unit" {
		return cli.UsageErrorf(fs, "-normalize %q: want none or unit", f.normalize)
	}
	if f.timeLimit < 0 {
		return cli.UsageErrorf(fs, "-time-limit %v: must be ≥ 0", f.timeLimit)
	}
	if f.groups != "" && f.l1 != 0 {
		return cli.UsageErrorf(fs, "-groups with -l1: the sparse group lasso is not implemented; use one or the other")
	}
	if !(f.groupWeight >= 0) || math.IsInf(f.groupWeight, 0) {
		return cli.UsageErrorf(fs, "-group-weight %v: must be a finite value ≥ 0", f.groupWeight)
	}
	loss, err := engine.LossByNameParams(f.loss, engine.LossParams{Smoothing: f.smoothing, Epsilon: f.epsilon, Quantile: f.quantile})
	if err != nil {
		return cli.UsageErrorf(fs, "-loss: %s", flagWords(err.Error()))
	}
	if f.classWeights != "" {
		// The flag's syntax, and whether the loss has classes at all, are
		// known before the data: a mistake there is the command line's.
		if _, err := parseClassWeights(f.classWeights); err != nil {
			return cli.UsageErrorf(fs, "%v", err)
		}
		if !loss.Classification() {
			return cli.UsageErrorf(fs, "-class-weights: the %s loss is a regression, whose rows have no class to weigh", loss.Name())
		}
	}
	solver := engine.Solver(f.solver)
	if f.multiclass == "multinomial" && solver == "lbfgs" {
		solver = "" // the multinomial loss's default; the registry lists the scalar losses' solvers
	}
	opt := engine.Options{Solver: solver, Threads: f.threads, Seed: f.seed, Deterministic: f.deterministic, Tol: f.tol, MaxEpochs: f.maxEpochs, StallEpochs: f.stallEpochs, TimeLimit: f.timeLimit, TargetPrimal: f.targetPrimal}.With(engine.ReductionSettings{Inner: engine.Solver(f.inner)}).With(engine.CoordinateSettings{M: f.m, BlockSize: f.block, Partition: engine.Partition(f.partition), Sampling: engine.Sampling(f.sampling), Lazy: engine.Lazy(f.lazy), StepScale: f.stepScale, Steps: engine.Steps(f.steps)})
	// The flags that only the coordinate methods read are a request for
	// one, like -m: the automatic choice would otherwise drop them in
	// silence when it picks Newton.
	var coordFlags []string
	for _, name := range coordinateFlags {
		if set[name] {
			coordFlags = append(coordFlags, "-"+name)
		}
	}
	if f.solver == "" && f.sampling == string(engine.SamplingImportance) {
		// Importance sampling is SPDC's variant (and dual-free SDCA's).
		opt.Solver = engine.SolverSPDC
	}
	if len(coordFlags) > 0 && noCoordinateFlags[engine.Solver(f.solver)] {
		return cli.UsageErrorf(fs, "%s: solver %s takes no coordinate-method settings; drop them, or name a coordinate method (adaspdc, spdc)", strings.Join(coordFlags, ", "), f.solver)
	}
	if set["inner"] && f.solver != "" && !engine.IsReduction(engine.Solver(f.solver)) {
		return cli.UsageErrorf(fs, "-inner %s: only the reductions (adaptreg, adaptsmooth, jointadapt) run an inner solver, not %s", f.inner, f.solver)
	}
	if f.l1 > 0 && noL1[engine.Solver(f.solver)] {
		return cli.UsageErrorf(fs, "-l1 %g: solver %s takes no L1 term (sdca and adaspdc take the elastic net)", f.l1, f.solver)
	}
	if f.l1 > 0 && engine.IsReduction(engine.Solver(f.solver)) && noL1[engine.Solver(f.inner)] {
		return cli.UsageErrorf(fs, "-l1 %g: the inner solver %s takes no L1 term, and %s's stages keep the problem's (sdca and adaspdc take the elastic net)", f.l1, f.inner, f.solver)
	}
	// The engine's own check of the options, the inner solver of a
	// reduction included, refuses before any data is read what no data
	// could make valid.
	if err := opt.Validate(); err != nil {
		return cli.UsageErrorf(fs, "%s", flagWords(err.Error()))
	}
	if f.liblinearModel != "" {
		stub := engine.Model{Loss: loss.Name(), L1: f.l1}
		if f.normalize == "unit" {
			stub.Normalize = "unit"
		}
		if err := modelio.LIBLINEARCompatible(&stub); err != nil {
			return cli.UsageErrorf(fs, "-liblinear-model: %v", err)
		}
	}
	// Every output is checked before the data is read, so that a typo in a
	// path costs neither the load nor the training.
	outputs := []namedPath{{"model", f.model}, {"liblinear-model", f.liblinearModel}, {"trace", f.trace}}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		if err := checkWritable(o.path); err != nil {
			return cli.UsageErrorf(fs, "-%s %s: %v", o.flag, o.path, err)
		}
	}
	if err := checkCollisions([]namedPath{{"data", *dataPath}, {"groups", f.groups}}, outputs); err != nil {
		return cli.UsageErrorf(fs, "%v", err)
	}
	// Under mpirun with several ranks, the run is distributed (CoCoA+
	// rounds over the ranks); in one process it is as it always was.
	c, leave := worldOf()
	defer leave()
	if c != nil {
		if err := distributedRefusals(f, set); err != nil {
			return cli.UsageErrorf(fs, "%v", err)
		}
		return trainDistributed(c, f, opt, loss, *dataPath, *features, lambdaSet, gapTest, stdout, stderr)
	}
	var trace *csv.Writer
	if f.trace != "" {
		tf, err := os.Create(f.trace)
		if err != nil {
			return err
		}
		defer tf.Close()
		trace = csv.NewWriter(tf)
		trace.Write([]string{"epoch", "passes", "primal", "dual", "gap", "rel_gap", "seconds", "iter_seconds", "threads"})
	}

	// SIGTERM is how timeout, systemd, Slurm, Kubernetes and docker stop
	// ask a process to end: like an interrupt, it ends the run with the
	// model of its best certificate written.
	ctx0, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.threads > 0 {
		// -threads bounds the whole process, so that -threads 1 measures one
		// core: the parser and the garbage collector too, not the solver alone.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.threads))
	}
	ds, err := loadData(*dataPath, sparse.ReadOptions{NumFeatures: *features, Threads: f.threads})
	if err != nil {
		return err
	}
	if ctx0.Err() != nil {
		return errors.New("interrupted while reading the data")
	}
	b, labels, multi, err := targets(ds, loss)
	if err != nil {
		return err
	}
	if multi {
		// The auto choice and the checks below see the first class
		// against the rest; the multinomial loss reads the raw labels.
		for _, o := range []struct {
			on   bool
			what string
		}{{f.trace != "" && f.multiclass == "ovr", "-trace"}, {f.init != "", "-init"}, {f.groups != "", "-groups"}} {
			if o.on {
				return cli.UsageErrorf(fs, "%s: %d classes: %s are not supported with several classes yet", ds.Name, len(labels), o.what)
			}
		}
		b = make([]float64, len(ds.Y))
		for i, y := range ds.Y {
			b[i] = -1
			if y == labels[0] {
				b[i] = 1
			}
		}
	}
	dim := ds.X.Cols
	x := ds.X
	if f.normalize == "unit" {
		x.NormalizeRowsUnit()
	}
	// Columns with no entry have weight 0 at the optimum: the solver
	// trains on the others alone where they are fewer than half, so that
	// a file naming feature 30000000 costs vectors of its used width, and
	// the model gets its full width back at the end. The group lasso's
	// groups are by original column, so it keeps them all.
	used := x.UsedColumns()
	var remap []int32
	if f.groups == "" && used < x.Cols/2 {
		x, remap = x.CompactColumns()
	}
	threads := f.threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if err := checkMemory(ds.Name, x.Rows, x.Cols, dim, used, threads, availableMemory()); err != nil {
		return err
	}
	if f.bias != 0 {
		x = x.WithBias(f.bias)
	}
	if !lambdaSet {
		f.lambda = 1 / float64(x.Rows)
	}
	prob := engine.Problem{X: x, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: f.lambda, L1: f.l1}, Classes: labels, Bias: f.bias}
	if multi {
		prob.Classes = nil
	}
	if f.sampleWeights != "" || f.classWeights != "" {
		w, err := rowWeights(f.sampleWeights, f.classWeights, ds.Y, loss)
		if err != nil {
			return err
		}
		prob.SampleWeights = w
	}
	if f.groups != "" {
		groups, err := engine.ReadGroupsFile(f.groups, dim)
		if err != nil {
			return err
		}
		// A bias column, appended after the file's features, is unpenalised.
		for len(groups) < x.Cols {
			groups = append(groups, -1)
		}
		prob.Reg = &engine.GroupLasso{Lambda: f.lambda, Weight: f.groupWeight, Groups: groups}
	}
	if err := prob.Reg.Validate(x.Cols); err != nil {
		return err
	}
	if f.l1Auto {
		// The solver is chosen for an L1 term; the path sets its strength.
		prob.Reg = engine.ElasticNet{Lambda: f.lambda, L1: engine.L1Max(prob)}
	}
	if opt.Solver == "" && len(coordFlags) == 0 && f.multiclass != "multinomial" {
		// The automatic choice; -solver, and the coordinate methods'
		// flags, are obeyed as given. The multinomial loss has one solver.
		if s, why := engine.AutoSolver(prob, opt); s != "" {
			opt.Solver = s
			if !f.quiet {
				fmt.Fprintf(stderr, "adaspdc train: picked %s: %s\n", s, flagWords(why))
			}
		}
	}
	if f.init != "" {
		w, err := initialWeights(f.init, dim, f.bias, f.normalize, remap)
		if err != nil {
			return err
		}
		opt.WarmStart = w
	}
	if f.cv > 0 || search {
		var classesY []float64
		if multi {
			classesY = ds.Y
		}
		best, err := searchLambda(ctx0, prob, classesY, opt, f, grid, stdout, stderr)
		if err != nil || !search {
			return err
		}
		if f.l1Auto {
			f.l1 = best
		} else {
			f.lambda = best
		}
		prob.Reg = engine.ElasticNet{Lambda: f.lambda, L1: f.l1}
	}
	if set["inner"] && opt.Solver != "" && !engine.IsReduction(opt.Solver) {
		return cli.UsageErrorf(fs, "-inner %s: only the reductions (adaptreg, adaptsmooth, jointadapt) run an inner solver, and train picked %s for this problem; name a reduction with -solver", f.inner, opt.Solver)
	}
	if f.normalize != "unit" && !f.quiet && opt.Solver != engine.SolverNewton {
		// AdaSPDC's primal step follows 1/R of the sampled rows; with m = 1
		// on data whose row norms spread widely (raw counts) it can stall
		// at a gap of 1e-4..1e-3 (news20). The norms cost
		// a pass over the data, so only a run that may print the hint
		// computes them.
		if lo, hi := normRange(x); hi > 10*lo {
			fmt.Fprintf(stderr, "adaspdc train: row norms range from %.3g to %.3g; if the gap stalls, try -normalize unit or -partition norm with -block > 1\n", lo, hi)
		}
	}
	opt.Callback = func(tp engine.TracePoint) error {
		if !f.quiet {
			fmt.Fprintf(stderr, "epoch %4d  passes %7.1f  primal %.12g  rel_gap %.3e  elapsed %.3fs\n",
				tp.Epoch, tp.Passes, tp.Primal, tp.RelGap, tp.Seconds)
		}
		if trace != nil {
			g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
			trace.Write([]string{strconv.Itoa(tp.Epoch), g(tp.Passes), g(tp.Primal), g(tp.Dual), g(tp.Gap), g(tp.RelGap),
				g(tp.Seconds), g(tp.IterSeconds), strconv.Itoa(tp.Threads)})
		}
		return nil
	}
	ctx := ctx0
	multinomial := f.multiclass == "multinomial"
	if multi && !multinomial {
		return trainOneVsRest(ctx, prob, ds.Y, opt, f, remap, dim, stdout, stderr)
	}
	var model *engine.Model
	var res *engine.Result
	if multinomial {
		model, res, err = engine.TrainMultinomial(ctx, prob, ds.Y, opt)
	} else {
		model, res, err = engine.Train(ctx, prob, opt)
	}
	// A trace that could not be written is reported, but it does not
	// make the run a failure: the summary and the model still come.
	var traceErr error
	if trace != nil {
		trace.Flush()
		if terr := trace.Error(); terr != nil {
			traceErr = fmt.Errorf("writing the trace to %s: %w", f.trace, terr)
			fmt.Fprintf(stderr, "adaspdc train: %v; the run itself went on\n", traceErr)
		}
	}
	if model != nil {
		if remap != nil {
			// Each class's vector gets the full width back.
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
	fp, mp := res.Final, res.Model
	if res.Note != "" && !f.quiet {
		fmt.Fprintf(stderr, "adaspdc train: %s: %s\n", res.Solver, flagWords(res.Note))
	}
	// The numbers printed are those of the model written: after a run cut
	// short, its best certificate, not the last.
	fmt.Fprintf(stdout, "epochs=%d passes=%.1f primal=%.12g dual=%.12g gap=%.3e rel_gap=%.3e seconds=%.3f threads=%d solver=%s\n",
		fp.Epoch, fp.Passes, mp.Primal, mp.Dual, mp.Gap, mp.RelGap, fp.Seconds, res.Threads, res.Solver)
	if mp.Gap < fp.Gap {
		fmt.Fprintf(stderr, "adaspdc train: the model is that of the best certificate (epoch %d, relative gap %.3g), not the last (epoch %d, relative gap %.3g)\n",
			mp.Epoch, mp.RelGap, fp.Epoch, fp.RelGap)
	}
	short := shortfall(res, f, gapTest)
	switch {
	case short != "":
		fmt.Fprintf(stderr, "adaspdc train: warning: stopped (%s) after %d epochs short of the goal: %s\n", stopReason(res.Stop, f), fp.Epoch, short)
		if res.Stop == "stalled" {
			fmt.Fprintf(stderr, "adaspdc train: %s\n", flagWords(res.StallNote))
		}
	case f.quiet:
	case res.Stop == "optimal" || !gapTest && res.Stop == "tol":
		// -tol 0 asks for a zero gap: reaching it is the optimum too.
		fmt.Fprintf(stderr, "adaspdc train: stopped at epoch %d at the optimum to rounding (relative gap %.3g): no further step can change the model in double precision\n", fp.Epoch, mp.RelGap)
	case !gapTest && res.Stop == "max-epochs":
		fmt.Fprintf(stderr, "adaspdc train: ran the %d epochs asked for (-tol %g: no gap test)\n", fp.Epoch, f.tol)
	}
	if err := saveModel(f, model); err != nil {
		return err
	}
	if traceErr != nil {
		return exitError{1} // said above, with the summary and the model kept
	}
	if short != "" {
		return exitError{exitShort}
	}
	return nil
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

// coordinateFlags are the flags that only the coordinate methods read
// (AdaSPDC and SPDC, and some of them SDCA, the variance-reduced methods
// and dual-free SDCA). Setting one without -solver asks for a coordinate
// method, as -m does.
var coordinateFlags = []string{"m", "block", "partition", "lazy", "steps", "step-scale", "sampling"}

// noCoordinateFlags lists the solvers that read none of coordinateFlags:
// naming one of them with such a flag is a mistake in the command line.
var noCoordinateFlags = map[engine.Solver]bool{engine.SolverNewton: true}

// noL1 lists the solvers that take no L1 term whatever the data, so that
// -l1 with one of them is refused before the data is read; their accepts
// functions in engine give the same refusal (TestTrainRefusesL1Early).
var noL1 = map[engine.Solver]bool{engine.SolverNewton: true, engine.SolverSPDCAsync: true, "dfsdca": true}

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
