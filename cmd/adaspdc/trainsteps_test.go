package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

// TestOptionFlagsTable: every flag of the table sets its engine option:
// given a value other than its default, the options differ from those of
// the defaults; and no flag appears twice.
func TestOptionFlagsTable(t *testing.T) {
	values := map[string]string{
		"m": "3", "block": "2", "partition": "norm", "lazy": "on", "steps": "paper",
		"step-scale": "1.5", "sampling": "importance", "solver": "sdca", "inner": "sdca",
		"deterministic": "true", "threads": "2", "seed": "9", "tol": "1e-3",
		"max-epochs": "7", "stall-epochs": "5", "time-limit": "3s", "target-primal": "0.5",
	}
	apply := func(f trainFlags) engine.Options {
		var o engine.Options
		for _, e := range optionFlags {
			e.apply(&f, &o)
		}
		return o
	}
	def, _, err := parseTrainFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range optionFlags {
		if seen[e.name] {
			t.Errorf("-%s is in the table twice", e.name)
		}
		seen[e.name] = true
		v, ok := values[e.name]
		if !ok {
			t.Errorf("-%s: no test value", e.name)
			continue
		}
		f, set, err := parseTrainFlags([]string{"-" + e.name + "=" + v}, io.Discard)
		if err != nil || !set[e.name] {
			t.Fatalf("-%s=%s: %v", e.name, v, err)
		}
		if reflect.DeepEqual(apply(f), apply(def)) {
			t.Errorf("-%s=%s sets no option", e.name, v)
		}
	}
}

// TestCoordinateFlagsOrder: the coordinate methods' settings are listed in
// messages in the table's order, whatever the order on the command line.
func TestCoordinateFlagsOrder(t *testing.T) {
	status, _, errOut := runCmd("train", "-solver", "newton", "-sampling", "uniform", "-m", "2", "-data", "/nonexistent")
	if status != 2 || !strings.Contains(errOut, "-m, -sampling: solver newton takes no coordinate-method settings") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestMultinomialLambdaZeroBeforeData: -multiclass multinomial with
// -lambda 0 is a mistake in the command line, refused before the data.
func TestMultinomialLambdaZeroBeforeData(t *testing.T) {
	status, _, errOut := runCmd("train", "-multiclass", "multinomial", "-lambda", "0", "-data", "/nonexistent")
	if status != 2 || !strings.Contains(errOut, "needs λ > 0") || strings.Contains(errOut, "nonexistent") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestSolverNamesFromRegistry: what train reads from the registry is what
// its messages and defaults have said by name.
func TestSolverNamesFromRegistry(t *testing.T) {
	if got := reductionNames(); got != "adaptreg, adaptsmooth, jointadapt" {
		t.Errorf("reductionNames() = %q", got)
	}
	if got := importanceSolver(); got != engine.SolverSPDC {
		t.Errorf("importanceSolver() = %q, want spdc", got)
	}
	if got := defaultMultinomialSolver(); got != "lbfgs" {
		t.Errorf("defaultMultinomialSolver() = %q, want lbfgs", got)
	}
	for _, s := range []engine.Solver{"lbfgs", "sdca"} {
		if !isMultinomialSolver(s) {
			t.Errorf("isMultinomialSolver(%s) = false", s)
		}
	}
	if isMultinomialSolver(engine.SolverNewton) {
		t.Error("isMultinomialSolver(newton) = true")
	}
}
