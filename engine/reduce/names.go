package reduce

import (
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// Short names for the contract's and the objective's types, which every
// file of the family uses.
type (
	Problem        = objective.Problem
	Loss           = objective.Loss
	Regularizer    = objective.Regularizer
	Separable      = objective.Separable
	ElasticNet     = objective.ElasticNet
	GroupLasso     = objective.GroupLasso
	Squared        = objective.Squared
	Logistic       = objective.Logistic
	SmoothHinge    = objective.SmoothHinge
	SquaredHinge   = objective.SquaredHinge
	Hinge          = objective.Hinge
	Absolute       = objective.Absolute
	EpsInsensitive = objective.EpsInsensitive
	Quantile       = objective.Quantile
	Options        = driver.Options
	Result         = driver.Result
	TracePoint     = driver.TracePoint
	Solver         = driver.Solver
	SolverInfo     = driver.SolverInfo
	Lazy           = driver.Lazy
	Partition      = driver.Partition
	Sampling       = driver.Sampling
	Steps          = driver.Steps
)

// The contract's constants, by their short names.
const (
	LazyAuto            = driver.LazyAuto
	LazyOn              = driver.LazyOn
	LazyOff             = driver.LazyOff
	PartitionShuffle    = driver.PartitionShuffle
	PartitionContiguous = driver.PartitionContiguous
	PartitionNorm       = driver.PartitionNorm
	SamplingUniform     = driver.SamplingUniform
	SamplingImportance  = driver.SamplingImportance
	StepsPaper          = driver.StepsPaper
	StepsESO            = driver.StepsESO
)
