// Command adaspdc trains and inspects regularized linear models fitted with
// parallel primal-dual coordinate methods.
//
// Usage:
//
//	adaspdc <command> [flags]
//
// Run "adaspdc" without arguments for the list of commands and
// "adaspdc <command> -h" for a command's flags.
//
// Each command lives in its own file and registers itself in the commands
// table from an init function, so adding a command does not touch this file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/adaspdc/adaspdc/internal/cli"
	"io"
	"os"
	"slices"
	"strings"
)

// command is a subcommand: a one-line summary for the usage listing and the
// function that runs it. run receives the arguments after the command name;
// it writes its results to stdout and its diagnostics to stderr, and returns
// an error to make the process exit with status 1 (or 2 for a cli.UsageError).
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands maps a command name to its command. Files add entries from init.
var commands = map[string]command{}

// exitError ends a command with a status of its own, after the command has
// said on stderr what happened (adaspdc train's status 3).
type exitError struct{ status int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a command and returns the process exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, cli.Version("adaspdc"))
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "adaspdc: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	var ue cli.UsageError
	var ee exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &ee):
		return ee.status
	default:
		// An error of the engine names its settings as a program sets
		// them (CoordinateSettings.M); the command line's user sets them by flags.
		fmt.Fprintf(stderr, "adaspdc %s: %s\n", args[0], flagWords(err.Error()))
		return 1
	}
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("Usage: adaspdc <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", name, commands[name].summary)
	}
	b.WriteString("\nRun \"adaspdc <command> -h\" for the flags of a command, \"adaspdc -version\" for the version.\n")
	io.WriteString(w, b.String())
}
