package driver

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine/objective"
)

// Partition names how samples are grouped into dual blocks.
type Partition string

// The partitions Train understands.
const (
	PartitionShuffle    Partition = "shuffle"    // seeded random groups
	PartitionContiguous Partition = "contiguous" // rows in file order
	PartitionNorm       Partition = "norm"       // rows of similar norm together
)

// Lazy selects how the primal update touches coordinates.
type Lazy string

// The primal update modes.
const (
	// LazyAuto picks LazyOn when the dimension is large next to the
	// nonzeros of one iteration's batch, LazyOff otherwise.
	LazyAuto Lazy = "auto"
	// LazyOn updates only the coordinates the batch reads; the others are
	// brought up to date from running products when a row next reads them.
	LazyOn Lazy = "on"
	// LazyOff updates every coordinate every iteration: O(d) per iteration.
	LazyOff Lazy = "off"
)

// Solver names a method; each family names its own (spdc.SolverAdaSPDC,
// sdca.SolverSDCA, …), and Solvers lists the registered ones.
type Solver string

// Sampling names how an iteration's blocks are drawn.
type Sampling string

// The samplings Train understands.
const (
	// SamplingUniform draws m distinct blocks uniformly (the paper's).
	SamplingUniform Sampling = "uniform"
	// SamplingImportance draws one block at a time with a probability
	// that grows with its norm, and weighs its update to keep it
	// unbiased: SPDC's non-uniform variant (Zhang & Xiao), and dual-free
	// SDCA's. It needs M = 1 and a solver whose SolverInfo has
	// ImportanceSampling.
	SamplingImportance Sampling = "importance"
)

// Options controls Train. Start from DefaultOptions and change what you
// need. Each field's zero value has one meaning, noted on the field, and a
// command line that sets the field from a flag gives the flag's values the
// very same meanings. Tol and MaxEpochs take their zero values literally
// (stop at a zero gap; run no epoch, which certifies the starting point),
// so that every value can be asked for, and DefaultOptions sets both; the
// other fields treat their zero value as their default. "Never" is said
// with a negative value (Never), not with zero.
//
// Options holds the run alone: which solver, how many threads, the seed,
// when to stop, where to start and who watches. What one family of methods
// reads (a batch size, a step rule, a reduction's inner solver) is that
// family's settings, declared in its package or, for the coordinate
// methods' that several families read, here (Coordinate), and carried in
// Settings to the method that reads them, as gonum's optimize keeps a
// method's parameters on the method and the run's in its Settings.
type Options struct {
	Solver Solver // zero: the automatic choice (engine.Train), or the first of Solvers() that takes the problem
	// Threads bounds the workers; ≤ 0: GOMAXPROCS. Fewer run when a batch
	// is too small to share: one worker per 1000 nonzeros of a batch, and
	// never more than M; and when that leaves several, the first epoch
	// times one worker against them all and keeps the faster. Result.Threads
	// and TracePoint.Threads say how many ran.
	Threads int
	Seed    uint64 // seeds the partition, the samplers and the shuffles

	// Deterministic makes the model bit-identical for a given seed and data
	// whatever the thread count: the batch is reduced by coordinate owners in
	// batch order (sched.Owners). Lazy runs always reduce that way. Dense
	// runs without it fuse the reduction into the read phase, each worker
	// scattering its own rows into a private buffer, which scales better
	// with threads but sums in an order that depends on who took which block.
	// Newton's sweeps sum per worker, so its model depends on the thread
	// count whatever this says; with it, each worker sweeps a fixed range
	// of rows, and the model is the same bit for bit from run to run at a
	// given thread count; without it, workers take chunks of rows as they
	// go, which keeps a slowed worker from holding the others.
	Deterministic bool

	// Tol stops the run once a certificate's relative gap
	// (P−D)/max(1,|P|) is at most Tol. Zero asks for a gap of zero: the
	// run ends once a certificate's dual bound meets its primal to
	// rounding, or at the optimum to rounding (Result.Stop "optimal"),
	// else on MaxEpochs, TargetPrimal, the time limit, a stall or a
	// callback; it is the most a run can be asked for, not a default. A
	// negative value (Never) switches the test off, so that the run ends
	// on those other rules alone. DefaultOptions sets 1e-6.
	Tol float64

	// MaxEpochs is the number of epochs after which the run stops, ≥ 0; an
	// epoch is ⌈blocks/M⌉ iterations. Zero runs no epoch: Train then only
	// certifies the starting point (a warm start, or 0), which is how a
	// caller measures where a run starts. There is no "no limit": a
	// negative value is refused. DefaultOptions sets 1000.
	MaxEpochs int

	// StallEpochs ends a run whose gap has stopped falling, with
	// Result.Stop "stalled": one whose duality gaps over the last
	// StallEpochs epochs have a geometric mean less than 1% below that of
	// the StallEpochs epochs before, each window holding at least five
	// certificates. A run whose best gap is within the rounding of P
	// (a relative 1e-10) is never stalled. Zero selects the default: 200
	// epochs, or 2000 for a loss that is not smooth (γ = 0, such as the
	// hinge), whose gaps rest on plateaus for hundreds of epochs before
	// falling again. A negative value (Never) switches the rule off.
	StallEpochs int

	// TimeLimit bounds the whole run, set-up included; 0: none. A run that
	// reaches it after its first certificate returns the model with
	// Result.Stop "time"; one that reaches it before returns an error.
	TimeLimit time.Duration

	// TargetPrimal, when positive, also stops the run once the primal
	// objective is at or below it. Benchmarks use it to time a run to a
	// given suboptimality against a known optimum.
	TargetPrimal float64

	// WarmStart, when non-nil, is the initial primal point (length X.Cols).
	// The duals start at yₖ = φ'(aₖᵀx), the optimality relation.
	WarmStart []float64

	// WarmDuals, when non-nil, are the initial duals yₖ (length X.Rows) of
	// a solver that takes them (SolverInfo.Takes.WarmDuals), each finite
	// and projected into the domain of φ*(·, bₖ); they replace the duals
	// that WarmStart would give. A dual method (the SDCA family, cocoa)
	// reads its primal point from them; a primal-dual one (AdaSPDC, SPDC)
	// keeps WarmStart's. The pair of a checkpoint (Checkpoint's x and
	// duals) restarts a run where it stopped.
	WarmDuals []float64

	// StopRule, when non-nil, sees the trace after every certificate and
	// ends the run (Result.Stop "rule") when it returns true. With a rule,
	// every epoch is certified.
	StopRule StopRule

	// Callback, when non-nil, is called after every epoch's certificate.
	// Returning ErrStop ends the run without error; any other error ends it
	// with that error.
	Callback func(TracePoint) error

	// Checkpoint, when non-nil, is called with each certificate that
	// becomes the run's best (Result.Best) and its point, before
	// Callback: what a caller saves so that a run killed later can
	// restart from it (WarmStart). x is the driver's copy, valid until
	// the call returns; over the ranks every rank makes the same calls.
	// duals is the method's dual iterate at that certificate (a
	// DualIterate's DualPoint, one value per row of this process), or nil
	// for a method without one; it is the method's own, valid until the
	// call returns. A dual method restarted from x alone starts from the
	// duals paired with x, which can certify far worse than the duals it
	// had; WarmDuals takes them back.
	Checkpoint func(best TracePoint, x, duals []float64)

	// Settings are the settings of the methods' families, at most one of
	// each (Options.With adds or replaces one): Coordinate, and those that
	// the families declare (reduce.Settings, sdca.Settings). A solver
	// refuses the settings of a family it does not read
	// (SolverInfo.Reads), unless they are all at their defaults.
	Settings []Settings

	// StallHint is what the stall note advises; Train sets it from the
	// loss, since a plateau has other causes than a divergence.
	StallHint string
}

// Never, given to StallEpochs or Tol, switches the stall rule or the gap
// test off. Any negative value does the same; zero means the field's
// default (StallEpochs) or a zero gap (Tol), never "never" by accident.
const Never = -1

// DefaultOptions returns the options Train is meant to start from: a
// relative gap of 1e-6, at most 1000 epochs, and no solver named, so that
// Train picks one from the problem (AutoSolver), as adaspdc train does.
func DefaultOptions() Options {
	return Options{Tol: 1e-6, MaxEpochs: 1000}
}

// AsksForCoordinateMethod reports whether o carries coordinate settings
// away from their defaults: a batch (M, BlockSize), a partition, the lazy
// mode, a step rule or scale, or a sampling. Like naming AdaSPDC, that
// turns the automatic choice off; Train then runs the first registered
// solver that takes the problem.
func (o Options) AsksForCoordinateMethod() bool {
	c, ok := SettingsOf[Coordinate](o)
	return ok && c != Coordinate{}
}

// ErrStop is returned by a Callback to end a run early without error.
var ErrStop = errors.New("engine: stopped by callback")

// WithDefaults returns o with every zero that stands for a default filled
// in: the stall window here, and the coordinate settings' defaults where
// o carries them (Coordinate.WithDefaults).
func (o Options) WithDefaults() Options {
	if o.StallEpochs == 0 {
		o.StallEpochs = DefaultStallEpochs
	}
	if c, ok := SettingsOf[Coordinate](o); ok {
		o = o.With(c.WithDefaults())
	}
	return o
}

// Validate reports the first option that no data could make valid: an
// unknown solver, partition or lazy mode, a step scale outside (0, 2], a
// block size or m below 1, a tolerance that is not a number, negative
// epochs or time limit. Train calls it; a command line calls it before
// reading data, so that a typo costs no load. Zero values that stand for
// defaults are accepted.
func (o Options) Validate() error {
	o = o.WithDefaults()
	if o.Solver != "" && Lookup(o.Solver) == nil {
		return fmt.Errorf("engine: unknown solver %q (want one of %s)", o.Solver, Names())
	}
	if err := o.validateSettings(); err != nil {
		return err
	}
	if math.IsNaN(o.Tol) || math.IsInf(o.Tol, 0) {
		return fmt.Errorf("engine: tolerance %v: must be a finite number", o.Tol)
	}
	if o.MaxEpochs < 0 {
		return fmt.Errorf("engine: max epochs %d: must be ≥ 0", o.MaxEpochs)
	}
	if o.TimeLimit < 0 {
		return fmt.Errorf("engine: time limit %v: must be ≥ 0", o.TimeLimit)
	}
	if err := o.checkInner(); err != nil {
		return err
	}
	if math.IsNaN(o.TargetPrimal) || math.IsInf(o.TargetPrimal, 0) {
		return fmt.Errorf("engine: target primal %v: must be a finite number", o.TargetPrimal)
	}
	if o.WarmDuals != nil {
		if e := Lookup(o.Solver); e == nil || !e.Takes.WarmDuals {
			return fmt.Errorf("engine: warm duals (Options.WarmDuals) are taken by %s; name one of them in Options.Solver", o.warmDualsTakers())
		}
		for k, y := range o.WarmDuals {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				return fmt.Errorf("engine: warm dual %d is %v", k, y)
			}
		}
	}
	return nil
}

// warmDualsTakers lists the solvers that take warm duals.
func (o Options) warmDualsTakers() string {
	var names []string
	for _, e := range registry {
		if e.Takes.WarmDuals {
			names = append(names, string(e.Name))
		}
	}
	return strings.Join(names, ", ")
}

// checkInner refuses an inner solver that cannot run under the solver
// named (its Entry.CheckInner), whatever the data. With no solver named,
// settings only matter if the choice falls on a solver that reads them, so
// they are refused when no such solver could run them.
func (o Options) checkInner() error {
	if o.Solver != "" {
		if e := Lookup(o.Solver); e != nil && e.CheckInner != nil {
			return e.CheckInner(o)
		}
		return nil
	}
	var first error
	for _, e := range registry {
		if e.CheckInner == nil || o.unread(e) != nil {
			continue
		}
		oo := o
		oo.Solver = e.Name
		err := e.CheckInner(oo)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	if first != nil && !o.readBy(func(e *Entry) bool { return e.CheckInner == nil }) {
		return first
	}
	return nil
}

// readBy reports whether a registered solver for which keep holds reads
// every family of settings o carries away from its defaults.
func (o Options) readBy(keep func(*Entry) bool) bool {
	for _, e := range registry {
		if keep(e) && o.unread(e) == nil {
			return true
		}
	}
	return false
}

// ValidateFor adds the checks that depend on the n samples of the data,
// the settings' own (a SettingsForRows) included.
func (o Options) ValidateFor(n int) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.WarmDuals != nil && len(o.WarmDuals) != n {
		return fmt.Errorf("engine: %d warm duals for %d samples", len(o.WarmDuals), n)
	}
	for _, st := range o.Settings {
		if v, ok := st.(SettingsForRows); ok {
			if err := v.ValidateFor(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// Settings are the settings of one family of methods. A family declares
// its type in its package, with the family's name, and its solvers list
// that name in SolverInfo.Reads; the run carries the value in
// Options.Settings to the method, which reads it with SettingsOf.
type Settings interface {
	// Family names the family that reads the settings.
	Family() string
	// IsDefault reports whether every field is at its default (zero
	// included), so that a solver that does not read them loses nothing.
	IsDefault() bool
	// Validate reports the first field that no data could make valid.
	Validate() error
}

// SettingsForRows is implemented by settings with checks that depend on
// the number n of samples (warm duals, one per sample).
type SettingsForRows interface {
	ValidateFor(n int) error
}

// SettingsOf returns the settings of type T that o carries, and whether it
// carries them; the zero T (the family's defaults) when it does not.
func SettingsOf[T Settings](o Options) (T, bool) {
	for _, st := range o.Settings {
		if t, ok := st.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// With returns o carrying st in place of any settings of st's family. The
// settings are copied, so that o's copies do not share the change.
func (o Options) With(st Settings) Options {
	out := make([]Settings, 0, len(o.Settings)+1)
	for _, have := range o.Settings {
		if have.Family() != st.Family() {
			out = append(out, have)
		}
	}
	o.Settings = append(out, st)
	return o
}

// Without returns o without the settings of the named family.
func (o Options) Without(family string) Options {
	out := make([]Settings, 0, len(o.Settings))
	for _, have := range o.Settings {
		if have.Family() != family {
			out = append(out, have)
		}
	}
	o.Settings = out
	return o
}

// WithCoordinate returns o with its coordinate settings (zero where it
// carries none) changed by set.
func (o Options) WithCoordinate(set func(*Coordinate)) Options {
	c, _ := SettingsOf[Coordinate](o)
	set(&c)
	return o.With(c)
}

// Coordinate returns the coordinate settings that o carries, with their
// defaults filled in: what a coordinate method reads.
func (o Options) Coordinate() Coordinate {
	c, _ := SettingsOf[Coordinate](o)
	return c.WithDefaults()
}

// validateSettings checks each family's settings, one of each family, and
// that the solver named reads every family whose settings are not at
// their defaults.
func (o Options) validateSettings() error {
	seen := map[string]bool{}
	for _, st := range o.Settings {
		if seen[st.Family()] {
			return fmt.Errorf("engine: Options.Settings holds two settings of the %s family", st.Family())
		}
		seen[st.Family()] = true
		if err := st.Validate(); err != nil {
			return err
		}
	}
	if e := Lookup(o.Solver); e != nil {
		if err := o.unread(e); err != nil {
			return err
		}
	}
	for _, st := range o.Settings {
		if n, ok := st.(interface{ NeedsSolver() bool }); ok && n.NeedsSolver() && o.Solver == "" {
			var readers []string
			for _, e := range registry {
				if slices.Contains(e.Reads, st.Family()) {
					readers = append(readers, string(e.Name))
				}
			}
			return fmt.Errorf("engine: %T are read by %s; name one of them in Options.Solver", st, strings.Join(readers, ", "))
		}
	}
	if c := o.Coordinate(); c.Sampling == SamplingImportance {
		// The solvers that draw samples by importance say so in their
		// SolverInfo; each draws one block at a time.
		var takers []string
		for _, e := range registry {
			if e.ImportanceSampling {
				takers = append(takers, string(e.Name))
			}
		}
		if e := Lookup(o.Solver); e == nil || !e.ImportanceSampling || c.M != 1 {
			got := "no solver named"
			if o.Solver != "" {
				got = "solver " + string(o.Solver)
			}
			return fmt.Errorf("engine: importance sampling is a non-uniform variant of %s: it needs Options.Solver %s, and CoordinateSettings.M 1 (got %s, m = %d)", strings.Join(takers, " and "), strings.Join(takers, " or "), got, c.M)
		}
	}
	return nil
}

// unread returns why e does not read one of the families of settings that
// o carries away from their defaults, or nil.
func (o Options) unread(e *Entry) error {
	for _, st := range o.Settings {
		if !st.IsDefault() && !slices.Contains(e.Reads, st.Family()) {
			return fmt.Errorf("engine: %s reads no %s settings (%s); drop them, or name a solver that reads them", e.Name, st.Family(), describe(st))
		}
	}
	return nil
}

// TracePoint is the certificate after one epoch.
type TracePoint struct {
	Epoch   int     `json:"epoch"`
	Passes  float64 `json:"passes"` // data passes by the solver (sampled rows / n)
	Primal  float64 `json:"primal"`
	Dual    float64 `json:"dual"`
	Gap     float64 `json:"gap"`     // max(Primal − Dual, 0): rounding can put D a few ulps above P at the optimum
	RelGap  float64 `json:"rel_gap"` // Gap / max(1, |Primal|)
	Seconds float64 `json:"seconds"`
	// IterSeconds is the part of Seconds spent in iterations, without
	// set-up and certificates: what scaling studies compare.
	IterSeconds float64 `json:"iter_seconds"`
	// Threads is the number of workers the run used, which can be fewer
	// than asked for when a batch is too small to share.
	Threads int `json:"threads"`
}

// Result reports how a run went.
type Result struct {
	Trace []TracePoint
	// Final is the last certificate.
	Final TracePoint
	// Best is the certificate with the smallest gap (of two with the same
	// gap, the one with the lower primal). Every certified point x has
	// P(x) − P* ≤ its gap, so Best's point has the strongest guarantee.
	Best TracePoint
	// Model is the certificate of the point Train returns as the model:
	// Final when the run met its goal or ran its epochs (Stop "tol",
	// "target" or "max-epochs"), Best otherwise, the error paths
	// included, so that a run
	// cut short by a time limit, an interrupt or a stall never hands back
	// a point worse than one it had certified.
	Model TracePoint
	// Converged reports that the relative gap reached Tol, or that the
	// point sits at the optimum to rounding (Stop "optimal").
	Converged bool
	// Stop says why the run ended: "tol", "target", "optimal" (the method
	// can no longer move the point and the gap is within the rounding of
	// P, a relative 1e-10), "max-epochs", "time", "callback", "rule",
	// "stalled", "context", "diverged", "stuck" (the method cannot move
	// but the gap is above rounding: an error) or "panic".
	Stop string
	// StallNote says, when Stop is "stalled", how little the gap moved
	// and what the user can change.
	StallNote string
	// Choice is why Train picked Solver, when Options named none
	// (AutoSolver's reason); empty when the solver was named.
	Choice string
	// Note is what a solver adds about how the run went; the reductions
	// give their stages, final parameters and how the dual was obtained.
	Note    string
	Solver  Solver // the solver that ran
	Lazy    bool   // whether the lazy primal update ran
	Threads int
	Blocks  int

	// Duals are the dual variables yₖ, one per sample, of the final
	// certificate: D = −(1/n)Σₖ φ*(yₖ) − g*(−(1/n)Σₖ yₖaₖ) is Final.Dual.
	Duals []float64

	bestX []float64 // the point of Best
}

// AddNote appends the clause s to the run's Note, after a "; " where the
// note has something already.
func (r *Result) AddNote(s string) {
	if r.Note != "" {
		s = "; " + s
	}
	r.Note += s
}

// Steps names how AdaSPDC and SPDC set their step sizes for a batch of m
// blocks.
type Steps string

// The step rules Train understands (the mathematics is on stepSizes).
const (
	// StepsPaper are Zhu & Storkey's Eq. 10, 12 and 15, which assume that
	// every pair of blocks in a batch overlaps: τ ∝ √m/R_max, σᵢ ∝ 1/(Rᵢ√m).
	StepsPaper Steps = "paper"
	// StepsESO are the paper's formulas with each block norm Rᵢ replaced by
	// the coupling ρᵢ = √(vᵢ/m) of the expected separable over-approximation
	// (Richtárik & Takáč; Quartz), which uses how little the rows of a batch
	// share features. They equal StepsPaper at m = 1 and are never smaller.
	StepsESO Steps = "eso"
)

// Problem is the problem a method solves (objective.Problem).
type Problem = objective.Problem

// LazyBreakEven: LazyAuto picks the lazy update when the dimension is above
// this many times a batch's nonzeros, where the dense update's O(d) per
// iteration would outweigh the rows.
const LazyBreakEven = 1

// UnderflowFloor is where the running product Πₛ 1/(1+τₛλ) of a lazy
// segment is renormalised: every coordinate is brought up to date and a new
// segment starts, long before the product or the running sum Σ bₛ/Pₛ leave
// the range of float64.
const UnderflowFloor = 1e-150
