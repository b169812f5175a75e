package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
)

// benchCommands are the subcommands of adaspdc-bench.
var benchCommands = map[string]struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}{
	"scale":  {"passes and seconds to each gap over solvers × m × threads; runs.csv, figures, summary.md", runBenchScale},
	"peers":  {"whole-process time to a suboptimality against liblinear-train and scikit-learn, where installed", runBenchPeers},
	"paper":  {"reproduce a paper's figure (zhu-storkey-fig1)", runBenchPaper},
	"family": {"one convergence figure per solver family (suboptimality against passes), CSV, summary.md", runBenchFamily},
}

func benchUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: adaspdc-bench <scale|peers|paper|family> [flags]\n       adaspdc-bench -version\n\n")
	for _, name := range []string{"scale", "peers", "paper", "family"} {
		fmt.Fprintf(w, "  %-7s %s\n", name, benchCommands[name].summary)
	}
	fmt.Fprintf(w, "  %-7s %s\n", "version", "the module's version, the commit the binary was built from (+dirty: with uncommitted changes) and Go's; also -version")
	fmt.Fprintf(w, "\nRun \"adaspdc-bench <subcommand> -h\" for its flags. Every output names the machine it ran on.\n")
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		benchUsage(stderr)
		return cli.UsageError{Err: fmt.Errorf("adaspdc-bench needs a subcommand")}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		benchUsage(stdout)
		return nil
	case "-version", "--version", "version":
		v := cli.Version("adaspdc-bench")
		if _, err := fmt.Fprintln(stdout, v); err != nil {
			return err
		}
		if !strings.Contains(v, " commit ") {
			// Without the toolchain's stamp the line has no commit, but
			// the files a benchmark writes still name one, asked of git:
			// say which, so that -version and the files agree.
			_, err := fmt.Fprintf(stdout, "no commit stamped in the binary (go run, go test or -buildvcs=false); results will name commit %s, the working directory's\n", harness.SourceCommit())
			return err
		}
		return nil
	}
	sub, ok := benchCommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "adaspdc-bench: unknown subcommand %q\n\n", args[0])
		benchUsage(stderr)
		return cli.UsageError{Err: fmt.Errorf("unknown subcommand %q", args[0])}
	}
	return sub.run(args[1:], stdout, stderr)
}

// isTerminal reports whether w is a character device, where progress can
// be rewritten in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive integer", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseList splits a comma-separated list, dropping empty items.
func parseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// commandLine reconstructs the command for the summaries.
func commandLine(sub string, args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.TrimSpace("adaspdc-bench " + sub + " " + strings.Join(q, " "))
}

// signalContext is cancelled by Ctrl-C (SIGINT) or SIGTERM, so that a
// sweep that is stopped still writes what it measured: SIGTERM is how
// timeout, systemd, Slurm, Kubernetes and docker stop ask a process to end.
// The first signal is announced on stderr and gives the default handling
// back, so that a second one ends the process at once when the writing
// itself hangs.
func signalContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, func() {
		stop()
		// stop itself cancels with context.Canceled; a signal has a
		// cause of its own (which errors.Is still matches to Canceled).
		if cause := context.Cause(ctx); cause != context.Canceled {
			fmt.Fprintf(stderr, "adaspdc-bench: %v: stopping, and writing what was measured; a second signal ends at once\n", cause)
		}
	})
	return ctx, stop
}

func runBenchScale(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc-bench", "scale", stderr)
	var cfg harness.ScaleConfig
	var solvers, ms, threads, out string
	var repeats int
	fs.StringVar(&cfg.Data, "data", "", "a LIBSVM `file`, or a generator: synth:rcv1:ROWS[:SEED] or synth:url:ROWS[:SEED]")
	fs.StringVar(&cfg.Loss, "loss", "logistic", "loss: logistic, squared, smoothhinge or sqhinge")
	fs.Float64Var(&cfg.Lambda, "lambda", 0, "L2 strength λ in (λ/2)‖x‖²; 0: 1/n")
	fs.StringVar(&solvers, "solvers", "adaspdc,spdc", "comma-separated solver `names` (adaspdc solvers lists them)")
	fs.StringVar(&ms, "m", "1,4,16,64,256", "comma-separated blocks per iteration")
	fs.StringVar(&threads, "threads", "", "comma-separated thread counts; empty: powers of two up to the cores")
	fs.IntVar(&repeats, "repeats", 3, "runs per configuration, with seeds -seed, -seed+1, …")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the first repeat")
	fs.Float64Var(&cfg.Tol, "tol", 1e-8, "stop each run at this relative duality gap")
	fs.IntVar(&cfg.MaxEpochs, "max-epochs", 1000, "stop each run after this many epochs")
	fs.DurationVar(&cfg.TimeLimit, "time-limit", 0, "stop each run after this long (e.g. 30s); 0: no limit")
	fs.StringVar(&out, "out", "bench-scale", "write runs.csv, the figures and summary.md to this `directory`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc-bench scale -data FILE|synth:rcv1:ROWS [flags]\n\n"+
			"Runs every solver × m × threads combination -repeats times, certifying every epoch, and records passes\n"+
			"and seconds to relative gaps 1e-2, 1e-4, 1e-6, 1e-8, seconds per pass and the speed-up against the\n"+
			"smallest thread count. Before every run it times the bare sweep (one SparseDot and one SparseAxpy per\n"+
			"row, on one thread and on the run's threads) and records each run's iteration ns per nonzero per epoch\n"+
			"against it (ns_per_nnz, x_sweep, x_sweep_T). Writes runs.csv, suboptimality_vs_passes,\n"+
			"suboptimality_vs_seconds, speedup_vs_threads and passes_to_eps_vs_m (.png and .svg) and summary.md to -out.\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if cfg.Ms, err = parseInts("m", ms); err != nil {
		return cli.UsageErrorf(fs, "%v", err)
	}
	if threads != "" {
		if cfg.Threads, err = parseInts("threads", threads); err != nil {
			return cli.UsageErrorf(fs, "%v", err)
		}
	}
	cfg.Solvers = parseList(solvers)
	cfg.Repeats = repeats
	cfg.Command = commandLine("scale", args)
	if err := cfg.Validate(); err != nil {
		return cli.UsageErrorf(fs, "%v", err)
	}
	// The output folder is checked before the first run, so that a sweep
	// of hours cannot end in a write error.
	undo, err := checkOutDir(fs, out)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(stderr)
	defer stop()
	res, err := harness.Scale(ctx, cfg, stderr, isTerminal(stderr))
	if res == nil {
		undo()
		return err
	}
	if werr := res.Write(out); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		// An interrupted sweep is written, and still fails, so that a
		// script or a scheduler does not take it for a finished one.
		return fmt.Errorf("%w; wrote the %d runs that finished to %s", err, len(res.Runs), out)
	}
	fmt.Fprintf(stdout, "adaspdc-bench scale: %d runs in %v on %s\nwrote %s\n", len(res.Runs), res.TotalDuration.Round(time.Second),
		res.Machine.Short(), filepath.Join(out, "{runs.csv,summary.md,*.png,*.svg}"))
	return nil
}

// checkOutDir creates the -out folder if need be and checks that it takes
// a new file, refusing with a command-line mistake (status 2) otherwise:
// a sweep of hours must not end in a write error that loses it. The
// returned undo removes the folders the check made, for a command that
// fails before it writes anything, so that a mistake elsewhere in the
// command line leaves no empty folder behind.
func checkOutDir(fs *flag.FlagSet, dir string) (undo func(), err error) {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append(made, d)
	}
	undo = func() {
		for _, d := range made {
			os.Remove(d) // only while empty
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return nil, cli.UsageErrorf(fs, "-out %s: %v", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".adaspdc-bench-probe-*")
	if err != nil {
		undo()
		return nil, cli.UsageErrorf(fs, "-out %s: cannot create files there: %v", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return undo, nil
}
