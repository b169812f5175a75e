package main

import (
	"fmt"
	"io"

	"github.com/adaspdc/adaspdc/internal/cli"
)

// The benchmarks are a command of their own, adaspdc-bench, which links the
// plotting packages that adaspdc leaves out; this entry says where they went.
func init() {
	commands["bench"] = command{
		summary: "moved to its own command: go run ./cmd/adaspdc-bench <scale|peers|paper|family>",
		run: func(args []string, _, stderr io.Writer) error {
			fmt.Fprintf(stderr, "adaspdc bench: the benchmarks are the command adaspdc-bench now; from the repository:\n\n"+
				"\tgo run ./cmd/adaspdc-bench <scale|peers|paper|family> [flags]\n")
			return cli.UsageError{Err: fmt.Errorf("bench moved to adaspdc-bench")}
		},
	}
}
