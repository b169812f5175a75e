// Package cli holds what the project's commands, adaspdc and adaspdc-bench,
// share about their command lines: flag sets that report mistakes instead
// of exiting, and the error that marks a mistake in the command line, which
// exits with status 2.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

// UsageError marks a mistake in the command line itself, which exits with
// status 2 and whose message has already been printed.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// NewFlagSet returns a flag set for the named command of program prog that
// reports errors instead of exiting and prints its usage to stderr.
func NewFlagSet(prog, name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// ParseFlags parses args with fs, refuses positional arguments, and marks
// errors as usage errors. A request for help comes back as flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fs.Arg(0))
		fmt.Fprintf(fs.Output(), "%v\n", err)
		fs.Usage()
		return UsageError{err}
	}
	return nil
}

// UsageErrorf prints a mistake in a flag's value, prefixed with the
// command's name, and returns it as a UsageError.
func UsageErrorf(fs *flag.FlagSet, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
	return UsageError{err}
}

// Version returns prog's version line: the module's version and the commit
// it was built from, as the Go toolchain recorded them in the binary
// ("(devel)" for a build from a work tree; "+dirty" marks uncommitted
// changes; no commit where the build was made with -buildvcs=false), and
// the Go version.
func Version(prog string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return prog + " (no build information)"
	}
	v := prog + " " + bi.Main.Version
	var rev, when string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		v += " commit " + rev
		if dirty {
			v += "+dirty"
		}
		if when != "" {
			v += " (" + when + ")"
		}
	}
	return v + " " + bi.GoVersion
}
