package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

// TestSolversListsEvery: one line per registered solver, each with its
// name first, after a header.
func TestSolversListsEvery(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runSolvers(nil, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	solvers := engine.Solvers()
	if len(lines) != len(solvers)+1 {
		t.Fatalf("%d lines for %d solvers:\n%s", len(lines), len(solvers), out.String())
	}
	for i, s := range solvers {
		if f := strings.Fields(lines[i+1]); len(f) == 0 || f[0] != string(s.Name) {
			t.Errorf("line %d = %q, want it to start with %s", i+1, lines[i+1], s.Name)
		}
	}
	if err := runSolvers([]string{"extra"}, &out, &errOut); err == nil {
		t.Error("a positional argument was accepted")
	}
}
