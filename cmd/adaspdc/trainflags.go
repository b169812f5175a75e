package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/internal/cli"
)

// trainFlags holds the command line of adaspdc train once parsed.
type trainFlags struct {
	data                             string
	features                         int
	loss, partition, solver, lazy    string
	inner                            string
	sampling, steps                  string
	normalize                        string
	model, liblinearModel, trace     string
	checkpoint                       string
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
	tolSet, lambdaSet                bool
	seed                             uint64
	timeLimit                        time.Duration
	quiet, deterministic             bool
}

// optionFlag is a flag of adaspdc train that sets one engine option. The
// flag's value lives in trainFlags, where the checks of the command line
// read it; apply copies it into the options. When the engine moves an
// option to another place (a family's settings), only apply changes.
type optionFlag struct {
	name string
	// define registers the flag on fs, keeping its value in f.
	define func(fs *flag.FlagSet, f *trainFlags)
	// apply sets the option from the flag's value in f.
	apply func(f *trainFlags, o *engine.Options)
	// coordinate marks the settings that only the coordinate methods read
	// (AdaSPDC and SPDC, and some of them SDCA, the variance-reduced
	// methods and dual-free SDCA). Setting one without -solver asks for a
	// coordinate method, as -m does.
	coordinate bool
}

// flagValue is the types of the values a flag.FlagSet defines.
type flagValue interface {
	int | uint64 | float64 | string | bool | time.Duration
}

// option is the table entry of the flag name, with its default value and
// usage text, kept in the field of trainFlags that field returns, and
// setting the engine option that set sets.
func option[T flagValue](name string, def T, usage string, field func(*trainFlags) *T, set func(*engine.Options, T)) optionFlag {
	return optionFlag{
		name:   name,
		define: func(fs *flag.FlagSet, f *trainFlags) { defineFlag(fs, field(f), name, def, usage) },
		apply:  func(f *trainFlags, o *engine.Options) { set(o, *field(f)) },
	}
}

// coordinate marks an entry of the table as a coordinate method's setting.
func coordinate(o optionFlag) optionFlag {
	o.coordinate = true
	return o
}

// defineFlag registers a flag of p's type on fs.
func defineFlag[T flagValue](fs *flag.FlagSet, p *T, name string, def T, usage string) {
	switch p := any(p).(type) {
	case *int:
		fs.IntVar(p, name, any(def).(int), usage)
	case *uint64:
		fs.Uint64Var(p, name, any(def).(uint64), usage)
	case *float64:
		fs.Float64Var(p, name, any(def).(float64), usage)
	case *string:
		fs.StringVar(p, name, any(def).(string), usage)
	case *bool:
		fs.BoolVar(p, name, any(def).(bool), usage)
	case *time.Duration:
		fs.DurationVar(p, name, any(def).(time.Duration), usage)
	}
}

// optionFlags maps the flags that set engine options to the options, in
// one place. The coordinate methods' settings come first, in the order in
// which messages list them.
var optionFlags = []optionFlag{
	coordinate(option("m", 1, "dual blocks updated per iteration",
		func(f *trainFlags) *int { return &f.m },
		func(o *engine.Options, v int) { *o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.M = v }) })),
	coordinate(option("block", 1, "samples per dual block",
		func(f *trainFlags) *int { return &f.block },
		func(o *engine.Options, v int) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.BlockSize = v })
		})),
	coordinate(option("partition", "shuffle", "how samples form blocks: shuffle, contiguous or norm",
		func(f *trainFlags) *string { return &f.partition },
		func(o *engine.Options, v string) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.Partition = engine.Partition(v) })
		})),
	coordinate(option("lazy", "auto", "lazy primal updates: auto, on or off",
		func(f *trainFlags) *string { return &f.lazy },
		func(o *engine.Options, v string) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.Lazy = engine.Lazy(v) })
		})),
	coordinate(option("steps", "eso", "step rule of adaspdc and spdc for -m > 1: eso (shrink the steps only as much as a batch's rows share features; Quartz's expected separable over-approximation) or paper (Zhu & Storkey's, as printed); equal at -m 1",
		func(f *trainFlags) *string { return &f.steps },
		func(o *engine.Options, v string) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.Steps = engine.Steps(v) })
		})),
	coordinate(option("step-scale", 1.0, "multiply the paper's steps σ and τ by this `factor` in (0, 2]; 2 is often faster but outside the paper's proof",
		func(f *trainFlags) *float64 { return &f.stepScale },
		func(o *engine.Options, v float64) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.StepScale = v })
		})),
	coordinate(option("sampling", "uniform", "uniform, or importance (spdc with -m 1: blocks drawn ∝ ½ uniform + ½ norm; dfsdca: samples ∝ Lᵢ + L̄)",
		func(f *trainFlags) *string { return &f.sampling },
		func(o *engine.Options, v string) {
			*o = o.WithCoordinate(func(c *engine.CoordinateSettings) { c.Sampling = engine.Sampling(v) })
		})),
	option("solver", "", "the `name` of the solver (adaspdc solvers lists them); empty: picked for time to accuracy from the data's shape, the loss and the threads, and named on stderr (with -m or -block: the first mini-batch method that takes the loss and regularizer)",
		func(f *trainFlags) *string { return &f.solver },
		func(o *engine.Options, v string) { o.Solver = engine.Solver(v) }),
	option("inner", "", "the `solver` that the reductions (adaptreg, adaptsmooth, jointadapt) run on each stage; empty: adaspdc",
		func(f *trainFlags) *string { return &f.inner },
		func(o *engine.Options, v string) { *o = o.With(engine.ReductionSettings{Inner: engine.Solver(v)}) }),
	option("deterministic", false, "bit-identical models for any -threads (ordered reduction; lazy runs always are)",
		func(f *trainFlags) *bool { return &f.deterministic },
		func(o *engine.Options, v bool) { o.Deterministic = v }),
	option("threads", 0, "at most this many threads for the whole process (reading the data, the solver's workers and the garbage collector); the solver uses one per 1000 nonzeros of a batch (-m), and one instead of several when the first epoch times one faster; 0: the cores",
		func(f *trainFlags) *int { return &f.threads },
		func(o *engine.Options, v int) { o.Threads = v }),
	option("seed", uint64(1), "random seed for the partition and the sampler",
		func(f *trainFlags) *uint64 { return &f.seed },
		func(o *engine.Options, v uint64) { o.Seed = v }),
	option("tol", engine.DefaultOptions().Tol, "stop at this relative duality gap (P−D)/max(1,|P|), as Options.Tol; 0: only at a zero gap, the optimum to rounding, else after -max-epochs epochs; negative (-1): no gap test, run -max-epochs epochs (0 meant no gap test before)",
		func(f *trainFlags) *float64 { return &f.tol },
		func(o *engine.Options, v float64) { o.Tol = v }),
	option("max-epochs", engine.DefaultOptions().MaxEpochs, "stop after this many epochs; 0: run none, only certify the starting point (0, or the -init model), as Options.MaxEpochs",
		func(f *trainFlags) *int { return &f.maxEpochs },
		func(o *engine.Options, v int) { o.MaxEpochs = v }),
	// The same values as Options.StallEpochs, meaning the same.
	option("stall-epochs", 0, "stop a run whose duality gaps over this many epochs have a geometric mean less than 1% below the window's before; 0: the default, 200 epochs, 2000 for the non-smooth losses, whose gaps rest on plateaus; negative (-1): never, as Options.StallEpochs (0 meant never before; it is now the default)",
		func(f *trainFlags) *int { return &f.stallEpochs },
		func(o *engine.Options, v int) { o.StallEpochs = v }),
	option("time-limit", time.Duration(0), "stop after this long, set-up included (e.g. 30s); 0: no limit",
		func(f *trainFlags) *time.Duration { return &f.timeLimit },
		func(o *engine.Options, v time.Duration) { o.TimeLimit = v }),
	option("target-primal", 0.0, "also stop once the primal objective is at or below this `value` (for benchmarks)",
		func(f *trainFlags) *float64 { return &f.targetPrimal },
		func(o *engine.Options, v float64) { o.TargetPrimal = v }),
}

// trainUsage is the head of adaspdc train -h, before the flags.
const trainUsage = "Usage: adaspdc train [flags]\n\n" +
	"Minimises (1/n) Σ loss(aᵢᵀx, bᵢ) + (λ/2)‖x‖² + l1‖x‖₁ and prints\n" +
	"epochs=… passes=… primal=P dual=D gap=P−D rel_gap=(P−D)/max(1,|P|) seconds=…\n" +
	"threads=N (the workers used: -threads is an upper bound) solver=NAME on stdout.\n\n" +
	"Exit status:\n" +
	"  0  the run met -tol (or -target-primal), or ran the -max-epochs asked for with -tol ≤ 0\n" +
	"  1  an error; a run that fails after its first certificate still writes the\n" +
	"     model of its best certificate to -model, and says so\n" +
	"  2  a mistake in the command line, found before any data is read\n" +
	"  3  stopped short of -tol or -target-primal (at -max-epochs, -time-limit, an\n" +
	"     interrupt (SIGINT, SIGTERM or SIGUSR1), or a stall: -stall-epochs); with -tol 0, any\n" +
	"     stop before -max-epochs but the optimum itself; the model of the best\n" +
	"     certificate is written and stderr says by how much the run fell short\n\n"

// parseTrainFlags parses adaspdc train's command line and returns the
// flags and which of them were given.
func parseTrainFlags(args []string, stderr io.Writer) (trainFlags, map[string]bool, error) {
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
	fs.StringVar(&f.init, "init", "", "start from the weights of this saved `model` (same features, bias and normalisation), and, for the solvers that take warm duals (sdca, sdca-async, cocoa, also under mpirun, adaspdc and spdc), from the duals that -checkpoint kept beside it (model.duals, where they are of this model and these rows)")
	fs.Var(lambdaValue{&f.l1, &f.l1Auto}, "l1", "L1 strength of the elastic net, ≥ 0, or auto: chosen by cross-validation over a geometric grid from l1_max (where every weight is zero) down to l1_max/10⁴, printing the nonzero weights along the path (-cv folds, default 5; -lambda-grid)")
	fs.StringVar(&f.normalize, "normalize", "none", "scale rows before training: none, or unit (each row to norm 1; the model applies it when predicting)")
	fs.Float64Var(&f.bias, "bias", 0, "append a constant feature of this `value` (as LIBLINEAR's -B); 0: none")
	fs.Float64Var(&f.smoothing, "smoothing", 1, "parameter of the smoothed hinge")
	fs.Float64Var(&f.epsilon, "epsilon", engine.DefaultEpsilon, "width ε ≥ 0 of the epsinsensitive loss's tube (LIBLINEAR's -p)")
	fs.Float64Var(&f.quantile, "quantile", 0.5, "level q in (0, 1) of the quantile loss")
	fs.StringVar(&f.groups, "groups", "", "group lasso: read the feature groups from this `file` (lines \"feature group\", 1-based features, '#' comments; see engine.ReadGroups) and penalise Σ w·√|G|·‖x_G‖₂ + (λ/2)‖x‖²")
	fs.Float64Var(&f.groupWeight, "group-weight", 0, "the group lasso's weight w ≥ 0 (with -groups)")
	for _, o := range optionFlags {
		o.define(fs, &f)
	}
	fs.StringVar(&f.model, "model", "", "write the model as JSON to this `file`")
	fs.StringVar(&f.liblinearModel, "liblinear-model", "", "write the model in LIBLINEAR's format to this `file`")
	fs.StringVar(&f.trace, "trace", "", "write the per-epoch trace as CSV to this `file`")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "after every certificate that improves on the best so far, write that model as JSON to this `file`, atomically (under mpirun, rank 0 writes it), so that a run killed outright still leaves its best certified model; restart from it with -init (on any number of ranks); a method with duals (sdca, cocoa, spdc; under mpirun cocoa, up to 2²⁰ rows or four times the features) also writes them to file.duals; a run restarted from its own checkpoint (-init the same file) replaces it only with a model of a smaller gap; one run of a binary or regression model only")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-epoch progress on stderr (warnings and errors still appear)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), trainUsage)
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return f, nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f.data, f.features = *dataPath, *features
	f.lambdaSet = set["lambda"] && !f.lambdaAuto
	f.tolSet = set["tol"]
	return f, set, nil
}

// validate refuses, before any data is read, every mistake in the command
// line that the flags alone show, in the order of the checks below; the
// options' own checks follow in options, and the outputs' in checkOutputs.
func (f trainFlags) validate(set map[string]bool) error {
	if err := f.validateSearch(set); err != nil {
		return err
	}
	if err := f.validateNumbers(); err != nil {
		return err
	}
	if f.groups != "" && f.l1 != 0 {
		return mistakef("-groups with -l1: the sparse group lasso is not implemented; use one or the other")
	}
	if !(f.groupWeight >= 0) || math.IsInf(f.groupWeight, 0) {
		return mistakef("-group-weight %v: must be a finite value ≥ 0", f.groupWeight)
	}
	loss, err := f.lossFunc()
	if err != nil {
		return mistakef("-loss: %s", flagWords(err.Error()))
	}
	if f.classWeights != "" {
		// The flag's syntax, and whether the loss has classes at all, are
		// known before the data: a mistake there is the command line's.
		if _, err := parseClassWeights(f.classWeights); err != nil {
			return mistakef("%v", err)
		}
		if !loss.Classification() {
			return mistakef("-class-weights: the %s loss is a regression, whose rows have no class to weigh", loss.Name())
		}
	}
	return f.validateSolver(set)
}

// validateSearch checks the strengths, the cross-validation and the
// multinomial loss's flags, which limit one another.
func (f trainFlags) validateSearch(set map[string]bool) error {
	if f.lambdaSet && (!(f.lambda >= 0) || math.IsInf(f.lambda, 0)) {
		return mistakef("-lambda %v: must be a finite value ≥ 0 (0: no L2 term, for the lasso with -l1, which needs a solver that takes it; adaspdc solvers lists them)", f.lambda)
	}
	if !(f.l1 >= 0) || math.IsInf(f.l1, 0) {
		return mistakef("-l1 %v: must be a finite value ≥ 0", f.l1)
	}
	if f.cv < 0 || f.cv == 1 {
		return mistakef("-cv %d: want 0 (none) or at least 2 folds", f.cv)
	}
	if f.lambdaAuto && f.l1Auto {
		return mistakef("-lambda auto with -l1 auto: search one at a time")
	}
	search := f.lambdaAuto || f.l1Auto
	if err := f.validateMulticlass(set); err != nil {
		return err
	}
	if f.cv > 0 && !search {
		for _, o := range []string{"model", "liblinear-model", "trace", "init", "checkpoint"} {
			if set[o] {
				return mistakef("-cv %d with -%s: cross-validation alone trains no model (as LIBLINEAR's -v); add -lambda auto to search λ and train the model at the best", f.cv, o)
			}
		}
	}
	if f.lambdaGrid != "" {
		if !search {
			return mistakef("-lambda-grid goes with -lambda auto or -l1 auto")
		}
		if _, err := parseGrid(f.lambdaGrid); err != nil {
			return mistakef("-lambda-grid %s: %v", f.lambdaGrid, err)
		}
	}
	if search && f.groups != "" {
		return mistakef("-lambda auto with -groups: the search runs over the elastic net's λ only")
	}
	return nil
}

// validateMulticlass checks -multiclass, and what the multinomial loss
// does not take.
func (f trainFlags) validateMulticlass(set map[string]bool) error {
	switch f.multiclass {
	case "ovr":
	case "multinomial":
		switch {
		case f.loss != "logistic":
			return mistakef("-multiclass multinomial is the softmax generalisation of the logistic loss: it needs -loss logistic (got %s)", f.loss)
		case f.l1 != 0 || f.l1Auto:
			return mistakef("-multiclass multinomial takes no -l1 yet (L-BFGS needs a smooth objective)")
		case f.lambdaSet && f.lambda == 0:
			return mistakef("-multiclass multinomial needs λ > 0 (-lambda 0): its solvers, lbfgs and sdca, need the L2 term's strong convexity")
		case f.cv > 0 || f.lambdaAuto || f.l1Auto:
			return mistakef("-multiclass multinomial with -cv or -lambda auto: the search runs one against the rest only, for now")
		case f.init != "" || f.groups != "" || set["sampling"]:
			return mistakef("-multiclass multinomial takes none of -init, -groups or -sampling")
		case f.solver != "" && !isMultinomialSolver(engine.Solver(f.solver)):
			return mistakef("-multiclass multinomial runs on -solver lbfgs (the default) or sdca, not %s", f.solver)
		}
	default:
		return mistakef("-multiclass %s: want ovr or multinomial", f.multiclass)
	}
	return nil
}

// validateNumbers checks the numeric flags' ranges and the choices among
// words that the engine does not check.
func (f trainFlags) validateNumbers() error {
	if f.features < 0 || f.features >= math.MaxInt32 {
		return mistakef("-features %d: must be 0 (the largest index in the data) or more, and below 2³¹ − 1", f.features)
	}
	if f.threads < 0 {
		return mistakef("-threads %d: must be 0 (automatic) or more", f.threads)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"m", f.m}, {"block", f.block}} {
		if c.v < 1 {
			return mistakef("-%s %d: must be at least 1", c.name, c.v)
		}
	}
	if f.maxEpochs < 0 {
		return mistakef("-max-epochs %d: must be 0 (certify the starting point only) or more", f.maxEpochs)
	}
	if math.IsNaN(f.tol) || math.IsInf(f.tol, 0) {
		return mistakef("-tol %v: must be a finite number", f.tol)
	}
	if math.IsNaN(f.bias) || math.IsInf(f.bias, 0) || f.bias < 0 {
		return mistakef("-bias %v: must be a finite value ≥ 0", f.bias)
	}
	if f.normalize != "none" && f.normalize != "unit" {
		return mistakef("-normalize %q: want none or unit", f.normalize)
	}
	if f.timeLimit < 0 {
		return mistakef("-time-limit %v: must be ≥ 0", f.timeLimit)
	}
	return nil
}

// validateSolver checks the named solver against the flags that it does
// not read (the coordinate methods' settings, -inner) and the L1 term that
// it does not take.
func (f trainFlags) validateSolver(set map[string]bool) error {
	solver, inner := engine.Solver(f.solver), engine.Solver(f.inner)
	if coord := coordinateFlagsSet(set); len(coord) > 0 && noCoordinateFlags(solver) {
		return mistakef("%s: solver %s takes no coordinate-method settings; drop them, or name a coordinate method (%s)", strings.Join(coord, ", "), f.solver, coordinateSolvers())
	}
	if set["inner"] && f.solver != "" && !engine.IsReduction(solver) {
		return mistakef("-inner %s: only the reductions (%s) run an inner solver, not %s", f.inner, reductionNames(), f.solver)
	}
	if f.l1 > 0 && noL1(solver) {
		return mistakef("-l1 %g: solver %s takes no L1 term (%s take the elastic net)", f.l1, f.solver, l1Takers())
	}
	if f.l1 > 0 && engine.IsReduction(solver) && noL1(inner) {
		return mistakef("-l1 %g: the inner solver %s takes no L1 term, and %s's stages keep the problem's (%s take the elastic net)", f.l1, f.inner, f.solver, l1Takers())
	}
	return nil
}

// lossFunc returns the loss that -loss names, with its parameters.
func (f trainFlags) lossFunc() (engine.Loss, error) {
	return engine.LossByNameParams(f.loss, engine.LossParams{Smoothing: f.smoothing, Epsilon: f.epsilon, Quantile: f.quantile})
}

// coordinateFlagsSet returns the coordinate methods' settings given on the
// command line, as flags (-m), in the table's order.
func coordinateFlagsSet(set map[string]bool) []string {
	var names []string
	for _, o := range optionFlags {
		if o.coordinate && set[o.name] {
			names = append(names, "-"+o.name)
		}
	}
	return names
}

// options returns the engine options that the flags set, after the
// engine's own check of them, the inner solver of a reduction included:
// what no data could make valid is refused before any data is read.
func (f trainFlags) options() (engine.Options, error) {
	var opt engine.Options
	for _, o := range optionFlags {
		o.apply(&f, &opt)
	}
	if f.multiclass == "multinomial" && opt.Solver == defaultMultinomialSolver() {
		opt.Solver = "" // the multinomial loss's default; the registry lists the scalar losses' solvers
	}
	if f.solver == "" && f.sampling == string(engine.SamplingImportance) {
		// Importance sampling is a variant of some solvers only: without
		// -solver, the first of them runs.
		opt.Solver = importanceSolver()
	}
	if err := opt.Validate(); err != nil {
		return opt, mistakef("%s", flagWords(err.Error()))
	}
	return opt, nil
}

// checkOutputs refuses, before the data is read, outputs that could not be
// written: a LIBLINEAR model of a problem that format cannot hold, a path
// whose folder is missing or closed, an output that would overwrite an
// input or another output. A typo in a path then costs neither the load
// nor the training.
func (f trainFlags) checkOutputs() error {
	if f.liblinearModel != "" {
		loss, _ := f.lossFunc() // validate has checked it
		stub := engine.Model{Loss: loss.Name(), L1: f.l1}
		if f.normalize == "unit" {
			stub.Normalize = "unit"
		}
		if err := modelio.LIBLINEARCompatible(&stub); err != nil {
			return mistakef("-liblinear-model: %v", err)
		}
	}
	outputs := []namedPath{{"model", f.model}, {"liblinear-model", f.liblinearModel}, {"trace", f.trace}, {"checkpoint", f.checkpoint}}
	for _, o := range outputs {
		if o.path == "" {
			continue
		}
		if err := checkWritable(o.path); err != nil {
			return mistakef("-%s %s: %v", o.flag, o.path, err)
		}
	}
	if f.checkpoint != "" {
		// The duals of a dual method's checkpoint go beside it.
		outputs = append(outputs, namedPath{"checkpoint (its duals, FILE.duals)", dualsPath(f.checkpoint)})
	}
	if err := checkCollisions([]namedPath{{"data", f.data}, {"groups", f.groups}}, outputs); err != nil {
		return mistakef("%v", err)
	}
	return nil
}

// mistake is a mistake in the command line found after the flags were
// parsed: the step that finds it returns it, and reportMistake says it as
// the flag package says a parse error, with status 2.
type mistake struct{ err error }

func (m mistake) Error() string { return m.err.Error() }

// mistakef returns a mistake with a formatted message.
func mistakef(format string, args ...any) error {
	return mistake{fmt.Errorf(format, args...)}
}

// reportMistake prints a mistake on stderr as cli.UsageErrorf does, as
// "adaspdc NAME: message", and returns it as a cli.UsageError (status 2);
// any other error is returned as it is.
func reportMistake(name string, stderr io.Writer, err error) error {
	var m mistake
	if err == nil || !errors.As(err, &m) {
		return err
	}
	return cli.UsageErrorf(cli.NewFlagSet("adaspdc", name, stderr), "%v", m.err)
}
