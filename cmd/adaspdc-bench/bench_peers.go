package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
)

func runBenchPeers(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc-bench", "peers", stderr)
	cfg := harness.PeersConfig{}
	var data, objectives, tasks, ms, solvers, normalize, out string
	fs.StringVar(&data, "data", "", "comma-separated LIBSVM `files` or synth:rcv1:ROWS / synth:url:ROWS specs")
	fs.StringVar(&objectives, "objectives", "logistic:1e-5,sqhinge:1e-5", "comma-separated loss:λ pairs (logistic, sqhinge, squared; multinomial: the softmax model of all classes, ours -multiclass multinomial against scikit-learn's lbfgs; ovr: the logistic loss one class against the rest on several classes, ours -multiclass ovr against LIBLINEAR's -s 0 and -s 7, every 7th row held out for the accuracy), or loss:l1=X for the L1 problem at strength X (λ = 0: LIBLINEAR -s 6 and -s 5, scikit-learn's L1 penalties and Lasso)")
	fs.StringVar(&tasks, "tasks", "", "comma-separated tasks timed on each data set after the objectives, logistic loss with an intercept: cv (ours -cv 5 against liblinear-train -s 0 -v 5 at C = 1) and lambda-auto (ours -lambda auto against -s 0 -C -v 5); give -objectives '' to time only them")
	fs.StringVar(&ms, "m", "1,4,16,64", "our -m values; the fastest is kept")
	fs.StringVar(&solvers, "solvers", "auto", "comma-separated solvers of ours to time (auto: train's own choice, given no -m when m = 1); the fastest is kept")
	fs.IntVar(&cfg.Threads, "threads", 0, "our -threads; 0: all cores")
	fs.IntVar(&cfg.Runs, "runs", 3, "timed runs per configuration (the median is kept)")
	fs.IntVar(&cfg.RefEpochs, "ref-epochs", 20000, "epochs allowed to the reference run (relative gap 1e-10)")
	fs.DurationVar(&cfg.Timeout, "timeout", time.Minute, "longest a single tool process may run")
	fs.StringVar(&cfg.Self, "adaspdc", "", "the adaspdc `binary` to time; empty: built from this module's source (go build, from the module's directory)")
	fs.StringVar(&normalize, "normalize", "none", "scale rows first: none, or unit (each row to norm 1; a scaled copy is written for every tool)")
	fs.StringVar(&cfg.Python, "python", "", "a python3 with scikit-learn; empty: python3 on PATH, then /usr/bin/python3")
	fs.StringVar(&out, "out", "bench-peers", "write peers.md and the figures to this `directory`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc-bench peers -data FILES [flags]\n\n"+
			"Times whole processes of adaspdc train, liblinear-train (-s 0,7 logistic, also one class against the rest;\n"+
			"-s 1,2 squared hinge; -s 11,12 squared; -s 0 -v 5 and -C for -tasks) and scikit-learn (LogisticRegression saga, lbfgs, liblinear, and lbfgs multinomial for -objectives\n"+
			"multinomial:λ; LinearSVC; Ridge sag) to relative\n"+
			"suboptimalities 1e-2, 1e-4, 1e-6 against an optimum our engine certifies, where the peers are installed\n"+
			"(%s).\n\n", harness.InstallHint)
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	switch normalize {
	case "none":
	case "unit":
		cfg.NormalizeUnit = true
	default:
		return cli.UsageErrorf(fs, "-normalize must be none or unit, not %q", normalize)
	}
	cfg.Data = parseList(data)
	cfg.Solvers = parseList(solvers)
	for _, t := range parseList(tasks) {
		if t != harness.TaskCV && t != harness.TaskLambdaAuto {
			return cli.UsageErrorf(fs, "-tasks: %q is not %s or %s", t, harness.TaskCV, harness.TaskLambdaAuto)
		}
		cfg.Tasks = append(cfg.Tasks, t)
	}
	if len(cfg.Data) == 0 {
		return cli.UsageErrorf(fs, "-data: give at least one file")
	}
	for _, o := range parseList(objectives) {
		loss, lam, ok := strings.Cut(o, ":")
		// loss:l1=X asks for the L1 problem (λ = 0) at strength X.
		l1 := strings.HasPrefix(lam, "l1=")
		l, err := strconv.ParseFloat(strings.TrimPrefix(lam, "l1="), 64)
		if !ok || err != nil || !(l > 0) || math.IsInf(l, 0) {
			return cli.UsageErrorf(fs, "-objectives: %q is not loss:λ or loss:l1=X with λ, X > 0", o)
		}
		switch loss {
		case "logistic", "sqhinge", "squared":
		case harness.LossMultinomial, harness.LossOneVsRest:
			if l1 {
				return cli.UsageErrorf(fs, "-objectives: %q: the %s objective takes λ, not l1", o, loss)
			}
		default:
			return cli.UsageErrorf(fs, "-objectives: %q: the loss must be logistic, sqhinge, squared, multinomial or ovr", o)
		}
		if l1 {
			cfg.Objectives = append(cfg.Objectives, harness.Objective{Loss: loss, L1: l})
		} else {
			cfg.Objectives = append(cfg.Objectives, harness.Objective{Loss: loss, Lambda: l})
		}
	}
	var err error
	if cfg.Ms, err = parseInts("m", ms); err != nil {
		return cli.UsageErrorf(fs, "%v", err)
	}
	if len(cfg.Objectives)+len(cfg.Tasks) == 0 {
		return cli.UsageErrorf(fs, "give -objectives or -tasks")
	}
	if cfg.Runs < 1 || cfg.RefEpochs < 1 || cfg.Timeout <= 0 {
		return cli.UsageErrorf(fs, "-runs and -ref-epochs must be at least 1 and -timeout positive")
	}
	cfg.Command = commandLine("peers", args)
	// The output folder is checked before the first run, so that a sweep
	// of hours cannot end in a write error.
	undo, err := checkOutDir(fs, out)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(stderr)
	defer stop()
	res, err := harness.Peers(ctx, cfg, stderr)
	if res != nil && len(res.Missing) > 0 {
		fmt.Fprintf(stderr, "adaspdc-bench peers: not installed: %s\nInstall them with: %s\n", strings.Join(res.Missing, "; "), harness.InstallHint)
	}
	if err != nil && (res == nil || res.Interrupted == "") {
		undo()
		return err
	}
	if werr := res.Write(out); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		// An interrupted comparison is written, and still fails, so that
		// a script does not take it for a finished one.
		return fmt.Errorf("%w; wrote the %d problems and tasks that finished to %s", err, len(res.Problems)+len(res.Tasks), out)
	}
	fmt.Fprintf(stdout, "adaspdc-bench peers: %d problems and %d tasks in %v on %s\nwrote %s/peers.md and peers_*.png\n", len(res.Problems), len(res.Tasks), res.Duration.Round(time.Second), res.Machine.Short(), out)
	return nil
}
