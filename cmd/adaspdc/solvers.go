package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/internal/cli"
)

func init() {
	commands["solvers"] = command{
		summary: "list the solvers, the problems each takes, and whether it is parallel, asynchronous or certified",
		run:     runSolvers,
	}
}

// listingWidth is the width the solver listing fits: a terminal of 100
// columns shows it without wrapping.
const listingWidth = 100

// runSolvers prints one paragraph per solver: its name, then the method,
// the losses and regularizers it takes, and how it runs, wrapped to
// listingWidth columns. The order is the registry's, which is not how
// train chooses: train's choice depends on the data (engine.AutoSolver);
// the multinomial loss's own solvers come last.
func runSolvers(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc", "solvers", stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc solvers\n\nLists every solver train runs with -solver NAME. Without -solver, train picks one\nfrom the data's shape, the loss and the regularizer, and says which and why.\n")
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	const indent = 18
	var b strings.Builder
	for i, s := range append(engine.Solvers(), engine.MultinomialSolvers()...) {
		if i > 0 {
			b.WriteByte('\n')
		}
		var traits []string
		for _, t := range []struct {
			on   bool
			name string
		}{{s.Parallel, "parallel"}, {s.Async, "asynchronous"}, {s.Certified, "certified by a duality gap"}} {
			if t.on {
				traits = append(traits, t.name)
			}
		}
		if len(traits) == 0 {
			traits = append(traits, "one thread")
		}
		name := string(s.Name)
		b.WriteString(name + strings.Repeat(" ", max(1, indent-len(name))))
		lines := []string{
			flagWords(s.Summary),
			"losses: " + flagWords(s.Losses),
			"regularizers: " + flagWords(s.Regularizers),
			strings.Join(traits, ", "),
		}
		for k, l := range lines {
			for j, w := range wrap(l, listingWidth-indent) {
				if k > 0 || j > 0 {
					b.WriteString(strings.Repeat(" ", indent))
				}
				b.WriteString(w + "\n")
			}
		}
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}

// wrap breaks text at spaces into lines of at most width runes (a longer
// word stands alone on its line).
func wrap(text string, width int) []string {
	var lines []string
	var cur []rune
	for _, word := range strings.Fields(text) {
		w := []rune(word)
		if len(cur) > 0 && len(cur)+1+len(w) > width {
			lines = append(lines, string(cur))
			cur = cur[:0]
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		cur = append(cur, w...)
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}
