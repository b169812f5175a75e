package main

import (
	"slices"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
)

// What adaspdc train asks about the solvers, answered by engine's registry
// (the solvers' declarations in engine.SolverInfo, engine.IsReduction and
// the multinomial loss's solvers), so that no list of names is kept here.

// solverInfo returns the registry's description of the solver called
// name, and whether there is one.
func solverInfo(name engine.Solver) (engine.SolverInfo, bool) {
	for _, s := range engine.Solvers() {
		if s.Name == name {
			return s, true
		}
	}
	return engine.SolverInfo{}, false
}

// noL1 reports whether the solver called name takes no L1 term whatever
// the data (SolverInfo.Takes.L1), so that -l1 with it is refused before
// the data is read; its Accepts gives the same refusal.
func noL1(name engine.Solver) bool {
	s, ok := solverInfo(name)
	return ok && !s.Takes.L1
}

// noCoordinateFlags reports whether the solver called name reads none of
// the coordinate methods' settings (the entries of optionFlags marked
// coordinate; SolverInfo.Reads): naming it with such a flag is a mistake
// in the command line, and the hint to try those flags is not given.
func noCoordinateFlags(name engine.Solver) bool {
	s, ok := solverInfo(name)
	return ok && !slices.Contains(s.Reads, engine.CoordinateFamily)
}

// l1Takers names the solvers that take an L1 term, for messages.
func l1Takers() string {
	var names []string
	for _, s := range engine.Solvers() {
		if s.Takes.L1 && !engine.IsReduction(s.Name) {
			names = append(names, string(s.Name))
		}
	}
	if len(names) > 3 {
		// The first three in the order of preference; the listing has the rest.
		return strings.Join(names[:3], ", ") + " and the others that adaspdc solvers lists"
	}
	return strings.Join(names, ", ")
}

// isMultinomialSolver reports whether -multiclass multinomial runs on
// solver: whether it is registered for the multinomial loss.
func isMultinomialSolver(solver engine.Solver) bool {
	return engine.IsMultinomialSolver(solver)
}

// defaultMultinomialSolver is the solver engine.TrainMultinomial runs when
// none is named: the first of engine.MultinomialSolvers.
func defaultMultinomialSolver() engine.Solver {
	return engine.MultinomialSolvers()[0].Name
}

// importanceSolver returns the first solver, in the registry's order of
// preference, that samples by importance under -sampling importance.
func importanceSolver() engine.Solver {
	for _, s := range engine.Solvers() {
		if s.ImportanceSampling {
			return s.Name
		}
	}
	return ""
}

// reductionNames lists the reductions, which run an inner solver on each
// stage (-inner), for messages.
func reductionNames() string {
	var names []string
	for _, s := range engine.Solvers() {
		if engine.IsReduction(s.Name) {
			names = append(names, string(s.Name))
		}
	}
	return strings.Join(names, ", ")
}

// coordinateSolvers names the first two solvers, in the registry's order
// of preference, that read the coordinate settings, for messages.
func coordinateSolvers() string {
	var names []string
	for _, s := range engine.Solvers() {
		if slices.Contains(s.Reads, engine.CoordinateFamily) && len(names) < 2 {
			names = append(names, string(s.Name))
		}
	}
	return strings.Join(names, ", ")
}
