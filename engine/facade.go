package engine

import (
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/reduce"
	"github.com/adaspdc/adaspdc/engine/sdca"
)

// The driver's settings and results live in package driver, the method
// contract; these names keep them reachable as engine.X.
type (
	Options    = driver.Options
	Result     = driver.Result
	TracePoint = driver.TracePoint
	StopRule   = driver.StopRule
	SolverInfo = driver.SolverInfo
	Solver     = driver.Solver
	Partition  = driver.Partition
	Lazy       = driver.Lazy
	Sampling   = driver.Sampling
	Steps      = driver.Steps
	// Settings are the settings of one family of methods, which
	// Options.Settings carries (Options.With adds them).
	Settings = driver.Settings
	// CoordinateSettings are the coordinate methods' settings: AdaSPDC's
	// and SPDC's batch, blocks, partition, sampling, lazy updates and
	// steps, of which SDCA, the variance-reduced methods, Wang & Xiao's
	// and Pdprox read some.
	CoordinateSettings = driver.Coordinate
	// ReductionSettings are the reductions' settings: the inner solver
	// and the scale of the added regularization and smoothing.
	ReductionSettings = reduce.Settings
	// SDCASettings are the SDCA solvers' settings: warm duals.
	SDCASettings = sdca.Settings
)

// The names of driver's constants, as engine.X.
const (
	PartitionShuffle    = driver.PartitionShuffle
	PartitionContiguous = driver.PartitionContiguous
	PartitionNorm       = driver.PartitionNorm
	LazyAuto            = driver.LazyAuto
	LazyOn              = driver.LazyOn
	LazyOff             = driver.LazyOff
	SamplingUniform     = driver.SamplingUniform
	SamplingImportance  = driver.SamplingImportance
	StepsPaper          = driver.StepsPaper
	StepsESO            = driver.StepsESO
)

// Never, given to Options.StallEpochs or Options.Tol, switches the stall
// rule or the gap test off (driver.Never).
const Never = driver.Never

// CoordinateFamily is the family name of CoordinateSettings, as
// SolverInfo.Reads lists it.
const CoordinateFamily = driver.CoordinateFamily

// ErrStop is returned by a Callback to end a run early without error.
var ErrStop = driver.ErrStop

// DefaultOptions returns the options Train is meant to start from: a
// relative gap of 1e-6, at most 1000 epochs, and no solver named, so that
// Train picks one from the problem (AutoSolver), as adaspdc train does.
func DefaultOptions() Options { return driver.DefaultOptions() }

// Solvers returns every solver Train runs, in the order of the listing.
func Solvers() []SolverInfo { return driver.Solvers() }
