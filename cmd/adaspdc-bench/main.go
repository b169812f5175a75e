// Command adaspdc-bench runs the project's benchmarks: scaling studies over
// m and threads, paper reproductions, one convergence figure per solver
// family, and whole-process comparisons with LIBLINEAR and scikit-learn.
// Each writes CSV, figures and a summary that names the machine it ran on.
//
// Usage:
//
//	adaspdc-bench <scale|peers|paper|family> [flags]
//	adaspdc-bench -version
//
// It is a command of its own, not a subcommand of adaspdc, so that adaspdc
// does not link the plotting packages: their initialisation, parsing the
// fonts above all, runs in every process that links them, and would be paid
// by every training run, whose whole-process time the peer comparisons
// measure (`hyperfine -N --ignore-failure './adaspdc -version'
// './adaspdc-bench -h'` shows the difference).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/adaspdc/adaspdc/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the process exit status:
// 0, 1 for a failure, 2 for a mistake in the command line.
func run(args []string, stdout, stderr io.Writer) int {
	err := runBench(args, stdout, stderr)
	var ue cli.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		fmt.Fprintf(stderr, "adaspdc-bench: %v\n", err)
		return 1
	}
}
