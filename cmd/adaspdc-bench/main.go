// Command adaspdc-bench runs the project's benchmarks: scaling studies over
// m and threads, paper reproductions, one convergence figure per solver
// family, and whole-process comparisons with LIBLINEAR and scikit-learn.
// Each writes CSV, figures and a summary that names the machine it ran on.
//
// Usage:
//
//	adaspdc-bench <scale|peers|paper|family> [flags]
//
// It is a command of its own, not a subcommand of adaspdc, so that adaspdc
// does not link the plotting packages: their initialisation (parsing the
// fonts above all) cost every adaspdc process about 4 ms, 12 ms against
// 8 ms for `adaspdc info` on heart_scale, which is 5% of a whole training
// run on w8a (bench/README.md, "Start-up, a Hessian kept between steps, and
// set-up on every core").
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
