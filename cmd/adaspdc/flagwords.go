package main

import (
	"regexp"
	"strings"
)

// engineFlags maps the engine's names for its settings, which its errors,
// stall notes, divergence hints and solver choices use since a program
// that embeds the engine has no flags, to the flags of adaspdc train that
// set them. Every name here is one the engine's messages use; flagWords
// applies the table to those messages before the command line prints them.
var engineFlags = map[string]string{
	"Options.Solver":                             "-solver",
	"ReductionSettings.Inner":                    "-inner",
	"CoordinateSettings.M":                       "-m",
	"CoordinateSettings.BlockSize":               "-block",
	"CoordinateSettings.Partition":               "-partition",
	"CoordinateSettings.Sampling":                "-sampling",
	"Options.Threads":                            "-threads",
	"Options.Seed":                               "-seed",
	"CoordinateSettings.Lazy":                    "-lazy",
	"CoordinateSettings.StepScale":               "-step-scale",
	"CoordinateSettings.Steps":                   "-steps",
	"Options.Deterministic":                      "-deterministic",
	"Options.Tol":                                "-tol",
	"Options.MaxEpochs":                          "-max-epochs",
	"Options.StallEpochs":                        "-stall-epochs",
	"Options.TimeLimit":                          "-time-limit",
	"Options.TargetPrimal":                       "-target-primal",
	"Options.WarmStart":                          "-init",
	"ElasticNet.Lambda":                          "-lambda",
	"ElasticNet.L1":                              "-l1",
	"Problem.Loss":                               "-loss",
	"Problem.SampleWeights":                      "-sample-weights",
	"sparse.CSR.NormalizeRowsUnit":               "-normalize unit",
	"TrainMultinomial":                           "-multiclass multinomial",
	"engine.TrainMultinomial":                    "-multiclass multinomial",
	"Problem.Loss Logistic":                      "-loss logistic",
	"CoordinateSettings.Partition PartitionNorm": "-partition norm",
	"Model.Normalize \"unit\"":                   "-normalize unit",
	"modelio.Save":                               "adaspdc train -model",
	"modelio.SaveLIBLINEAR":                      "adaspdc train -liblinear-model",
}

// engineName matches a setting's name in an engine message, with the value
// that may follow it: quoted (Options.Solver "newton", a solver's name) or
// one of the engine's constants (Problem.Loss Logistic).
var engineName = regexp.MustCompile(`\b(?:engine\.)?(?:Options|ElasticNet|Problem|Model|CoordinateSettings|ReductionSettings|SDCASettings)\.[A-Z][A-Za-z0-9]*(?: "[^"]*"| [A-Z][A-Za-z]+)?|\bsparse\.CSR\.NormalizeRowsUnit\b|\bmodelio\.Save(?:LIBLINEAR)?\b|\b(?:engine\.)?TrainMultinomial\b`)

// flagWords returns an engine message in the command line's words: each
// setting the engine names by its field (CoordinateSettings.M, ElasticNet.Lambda), or
// by the function that does it (sparse.CSR.NormalizeRowsUnit), becomes the
// flag that sets it, with a quoted value unquoted (Options.Solver "newton"
// becomes -solver newton). Names the table does not hold are left alone.
func flagWords(s string) string {
	return engineName.ReplaceAllStringFunc(s, func(m string) string {
		if f, ok := engineFlags[m]; ok {
			return f
		}
		name, value, hasValue := strings.Cut(m, " ")
		f, ok := engineFlags[name]
		if !ok {
			return m
		}
		if !hasValue {
			return f
		}
		if unq := strings.Trim(value, `"`); unq != value {
			return f + " " + unq
		}
		return f + " " + value
	})
}
