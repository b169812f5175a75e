package main

import (
	"strings"

	"github.com/adaspdc/adaspdc/engine"
)

// What adaspdc train asks about the solvers. Where engine's registry
// (engine.Solvers, engine.MultinomialSolvers, engine.IsReduction) answers,
// the answer is read from it; the lists below answer what the registry
// does not declare yet, and each says which declaration would replace it.

// noL1 lists the solvers that take no L1 term whatever the data, so that
// -l1 with one of them is refused before the data is read; their accepts
// functions in engine give the same refusal (TestTrainRefusesL1Early).
// A SolverInfo field declaring whether a solver takes an L1 term would
// replace it.
var noL1 = map[engine.Solver]bool{engine.SolverNewton: true, engine.SolverSPDCAsync: true, engine.SolverDFSDCA: true}

// noCoordinateFlags lists the solvers that read none of the coordinate
// methods' settings (the entries of optionFlags marked coordinate): naming
// one of them with such a flag is a mistake in the command line, and the
// hint to try those flags is not given for them. A SolverInfo field
// declaring which settings a solver reads would replace it.
var noCoordinateFlags = map[engine.Solver]bool{engine.SolverNewton: true}

// isMultinomialSolver reports whether -multiclass multinomial runs on
// solver: the solvers of engine.MultinomialSolvers, and sdca, which
// engine.TrainMultinomial runs too but which that list does not declare
// (a SolverInfo field declaring the multinomial loss would).
func isMultinomialSolver(solver engine.Solver) bool {
	if solver == engine.SolverSDCA {
		return true
	}
	for _, s := range engine.MultinomialSolvers() {
		if s.Name == solver {
			return true
		}
	}
	return false
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
