package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
)

func paperUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: adaspdc-bench paper NAME [flags]\n\nReproductions:\n")
	for _, p := range harness.Papers {
		status := "runs"
		if p.Needs != "" {
			status = "needs " + p.Needs + ", not yet available"
		}
		fmt.Fprintf(w, "  %-20s %s (%s)\n", p.Name, p.About, status)
	}
	fmt.Fprintf(w, "\nRun \"adaspdc-bench paper NAME -h\" for its flags.\n")
}

func runBenchPaper(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			paperUsage(stdout)
			return nil
		}
		paperUsage(stderr)
		return cli.UsageError{Err: fmt.Errorf("adaspdc-bench paper needs a NAME")}
	}
	name := args[0]
	for _, p := range harness.Papers {
		if p.Name == name && p.Needs != "" {
			return fmt.Errorf("adaspdc-bench paper %s needs %s, not yet available", name, p.Needs)
		}
	}
	if realPapers[name] {
		return runRealPaper(name, args[1:], stdout, stderr)
	}
	if name != "zhu-storkey-fig1" {
		fmt.Fprintf(stderr, "adaspdc-bench paper: unknown paper %q\n\n", name)
		paperUsage(stderr)
		return cli.UsageError{Err: fmt.Errorf("unknown paper %q", name)}
	}
	fs := cli.NewFlagSet("adaspdc-bench", "paper "+name, stderr)
	cfg := harness.DefaultFig1()
	lambdas := "1e-3,1e-4,1e-5,1e-6"
	out := "bench-fig1"
	fs.IntVar(&cfg.N, "n", cfg.N, "rows")
	fs.IntVar(&cfg.D, "d", cfg.D, "columns")
	fs.StringVar(&lambdas, "lambdas", lambdas, "comma-separated λ values, one panel each")
	fs.IntVar(&cfg.Passes, "passes", cfg.Passes, "passes (epochs of n single-sample iterations)")
	fs.IntVar(&cfg.Seeds, "seeds", cfg.Seeds, "solver seeds 1…N averaged")
	fs.Uint64Var(&cfg.DataSeed, "data-seed", cfg.DataSeed, "seed of the data")
	fs.StringVar(&out, "out", out, "write fig1.png, fig1.svg, fig1.csv and fig1.md to this `directory`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc-bench paper zhu-storkey-fig1 [flags]\n\n"+
			"Ridge regression on Zhang & Xiao's synthetic data (Σⱼⱼ = j⁻², x⋄ = 1, N(0,1) noise): J(xᵗ) − J(x*) against\n"+
			"passes for AdaSPDC, SPDC, SPDC with non-uniform sampling, and SDCA and SAG when registered.\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	cfg.Lambdas = nil
	for _, s := range parseList(lambdas) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) {
			return cli.UsageErrorf(fs, "-lambdas: %q is not a positive number", s)
		}
		cfg.Lambdas = append(cfg.Lambdas, v)
	}
	if cfg.N < 1 || cfg.D < 1 || cfg.Passes < 1 || cfg.Seeds < 1 || len(cfg.Lambdas) == 0 {
		return cli.UsageErrorf(fs, "-n, -d, -passes and -seeds must be at least 1, and -lambdas not empty")
	}
	cfg.Command = commandLine("paper", args)
	// The output folder is checked before the first run, so that a sweep
	// of hours cannot end in a write error.
	undo, err := checkOutDir(fs, out)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(stderr)
	defer stop()
	res, err := harness.Fig1(ctx, cfg, stderr, isTerminal(stderr))
	if res == nil {
		undo()
		return err
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stderr, "note: %s\n", s)
	}
	if werr := res.Write(out); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		// An interrupted experiment is written, and still fails, so that
		// a script does not take it for a finished one.
		return fmt.Errorf("%w; wrote the λ values that finished to %s", err, out)
	}
	for li, lam := range res.Config.Lambdas {
		fmt.Fprintf(stdout, "λ=%g: AdaSPDC is %.3g× better than SPDC after %d passes\n", lam, res.Factor(li, "AdaSPDC", "SPDC"), cfg.Passes)
	}
	fmt.Fprintf(stdout, "adaspdc-bench paper %s: %v on %s\nwrote %s/fig1.{png,svg,csv,md}\n", name, res.Duration.Round(time.Second), res.Machine.Short(), out)
	return nil
}
