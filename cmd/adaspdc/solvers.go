package main

import (
	"fmt"
	"github.com/adaspdc/adaspdc/internal/cli"
	"io"
	"text/tabwriter"

	"github.com/adaspdc/adaspdc/engine"
)

func init() {
	commands["solvers"] = command{
		summary: "list the solvers, the problems each takes, and whether it is parallel, asynchronous or certified",
		run:     runSolvers,
	}
}

// runSolvers prints one line per solver, in the order train picks them
// when -solver is not given.
func runSolvers(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc", "solvers", stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc solvers\n\nLists every solver train runs, in the order it picks them when -solver is not given.\n")
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOLVER\tLOSSES\tREGULARIZERS\tPARALLEL\tASYNC\tCERTIFIED\tMETHOD")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, s := range engine.Solvers() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Losses, s.Regularizers, yes(s.Parallel), yes(s.Async), yes(s.Certified), s.Summary)
	}
	return tw.Flush()
}
