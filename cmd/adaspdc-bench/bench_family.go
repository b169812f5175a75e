package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
)

// runBenchFamily draws one convergence figure per solver family.
func runBenchFamily(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc-bench", "family", stderr)
	var cfg harness.FamilyConfig
	var names, out string
	fs.StringVar(&cfg.DataDir, "data-dir", filepath.Join("..", "shared", "data"), "the `folder` holding a9a, a1a and abalone_scale (LIBSVM files)")
	fs.StringVar(&names, "families", "", "comma-separated families to run (sdca, vr, wang-xiao, pdprox, adaptreg, adaptsmooth); empty: all")
	fs.Float64Var(&cfg.PassScale, "pass-scale", 1, "multiply every family's pass budget by this factor")
	fs.IntVar(&cfg.Threads, "threads", 1, "workers of the runs that do not name their own (sdca-async uses 2)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of every run")
	fs.StringVar(&out, "out", "bench-family", "write family-NAME/{NAME.csv,NAME.png,NAME.svg,summary.md} under this `directory`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc-bench family [flags]\n\n"+
			"One convergence figure per solver family: relative suboptimality (P(x) − P*)/max(1, |P*|) against passes,\n"+
			"P* from a reference solve certified to a relative duality gap of 1e-10.\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if !(cfg.PassScale > 0) || cfg.Threads < 1 {
		return cli.UsageErrorf(fs, "-pass-scale must be positive and -threads at least 1")
	}
	if names != "" {
		all := harness.Families()
		for _, n := range parseList(names) {
			found := false
			for _, f := range all {
				if f.Name == n {
					cfg.Families, found = append(cfg.Families, f), true
				}
			}
			if !found {
				var known []string
				for _, f := range all {
					known = append(known, f.Name)
				}
				return cli.UsageErrorf(fs, "-families: unknown family %q (want %s)", n, strings.Join(known, ", "))
			}
		}
	}
	cfg.Command = commandLine("family", args)
	// The output folder is checked before the first run, so that a sweep
	// of hours cannot end in a write error.
	undo, err := checkOutDir(fs, out)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(stderr)
	defer stop()
	start := time.Now()
	results, err := harness.RunFamilies(ctx, cfg, stderr)
	if len(results) == 0 && err != nil {
		undo()
		return err
	}
	mach := harness.ThisMachine()
	// The families that finished are written even when a later one failed
	// or the run was interrupted: each has a folder of its own.
	for _, r := range results {
		if werr := r.Write(filepath.Join(out, "family-"+r.Family.Name), cfg.Command, mach); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		if len(results) > 0 {
			return fmt.Errorf("%w; wrote the %d families that finished under %s", err, len(results), out)
		}
		return err
	}
	fmt.Fprint(stdout, harness.FamilyTable(results))
	fmt.Fprintf(stdout, "adaspdc-bench family: %v on %s\nwrote %s/family-*/\n", time.Since(start).Round(time.Second), mach.Short(), out)
	return nil
}
