package driver

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverInfo describes one solver: what `adaspdc solvers` prints and what
// Train checks before it runs one.
type SolverInfo struct {
	Name         Solver
	Summary      string // one line: the method and its paper
	Losses       string // the losses it takes, or "any smooth", "any"
	Regularizers string // the regularizers it takes
	Parallel     bool   // uses more than one core
	Async        bool   // workers run without a barrier per iteration
	Certified    bool   // every trace point carries a duality gap
	// ImportanceSampling reports that the solver draws its samples by
	// importance under CoordinateSettings.Sampling = SamplingImportance.
	ImportanceSampling bool
	// StageWarmStart reports that a reduction's stage can start where the
	// last one ended: the solver takes the last stage's duals
	// (DualWarmStarter) or needs only the primal point.
	StageWarmStart bool
	// Reads lists the families of settings (Settings.Family) that the
	// solver reads; Options.Validate refuses the others' settings unless
	// they are at their defaults.
	Reads []string
	// Takes declares what the solver takes besides its losses and an L2
	// term, so that validation, the automatic choice and a command line
	// can refuse or choose without a list of solver names.
	Takes Takes
}

// Takes is what a solver takes beyond its losses and an L2 term. Each is
// a declaration that the solver's Accepts honours (a test holds the two
// together).
type Takes struct {
	L1            bool // an L1 term (ElasticNet.L1 > 0)
	SampleWeights bool // Problem.SampleWeights
	WarmDuals     bool // a dual starting point: Options.WarmDuals (and sdca.Settings' for the SDCA family)
	Groups        bool // the group lasso (objective.GroupLasso)
}

// Entry is a registered solver: its description, the check of a problem
// against what it can solve, and its constructor.
type Entry struct {
	SolverInfo
	// Rank orders the listing of the solvers: lower first. AdaSPDC is 0
	// and SPDC 10; a method that takes what they refuse (non-smooth
	// losses, no strong convexity) ranks after them. The automatic choice
	// does not read it.
	Rank int
	// Accepts returns why the solver cannot solve prob with opt, or nil.
	Accepts func(prob Problem, opt Options) error
	// CheckInner, for the solvers that run another on each stage
	// (ReductionSettings.Inner: the reductions), returns why the inner solver that opt
	// names cannot run under this solver whatever the data, or nil; it is
	// nil for the other solvers. Options.Validate calls it, so that a
	// combination no problem can make work is refused before any data is
	// read, and not once the run has started.
	CheckInner func(opt Options) error
	// Start builds the method at its starting point; the driver runs it.
	// A method that holds workers or buffers also implements Finisher.
	Start func(ctx context.Context, prob Problem, opt Options) (Method, error)
	// Workers, when not nil, returns how many workers the solver runs on
	// the data x with Options.Threads threads: a solver whose rate depends
	// on its worker count (CoCoA+'s merge damps each step by up to the
	// number of replicas) declares it, so that the automatic choice can
	// predict its cost without knowing its family.
	Workers func(x *sparse.CSR, threads int) int
}

// MultinomialEntry is a registered solver of the multinomial (softmax)
// logistic loss, whose problem (objective.Multinomial) has a vector of K
// weights per feature and a vector dual per row, so that it has a start
// of its own. A solver may be registered for both kinds of loss.
type MultinomialEntry struct {
	SolverInfo
	// Rank orders the solvers: the first is the default.
	Rank int
	// Start builds the method for prob at its starting point.
	Start func(prob objective.Multinomial, opt Options) (Method, error)
}

var multinomialRegistry []*MultinomialEntry

// RegisterMultinomial adds a solver of the multinomial loss, in rank
// order; each family calls it from init.
func RegisterMultinomial(e *MultinomialEntry) {
	for _, o := range multinomialRegistry {
		if o.Name == e.Name {
			panic("engine: multinomial solver " + string(e.Name) + " registered twice")
		}
	}
	multinomialRegistry = append(multinomialRegistry, e)
	slices.SortStableFunc(multinomialRegistry, func(a, b *MultinomialEntry) int { return cmp.Compare(a.Rank, b.Rank) })
}

// MultinomialEntries returns the solvers of the multinomial loss, the
// default first. The slice is the registry's: do not modify it.
func MultinomialEntries() []*MultinomialEntry { return multinomialRegistry }

// LookupMultinomial returns the multinomial solver called name, the
// default one for an empty name, or nil.
func LookupMultinomial(name Solver) *MultinomialEntry {
	for _, e := range multinomialRegistry {
		if e.Name == name || name == "" {
			return e
		}
	}
	return nil
}

// Finisher is implemented by methods that have something to add to the
// Result or to release (a worker pool) when the run ends.
type Finisher interface {
	Finish(res *Result) error
}

// registry lists the solvers in order of preference: with no Solver given,
// Train runs the first that accepts the problem.
var registry []*Entry

// Register adds a solver; each method's file calls it from init. The
// registry stays sorted by rank, then name, whatever the order of the
// files' init functions.
func Register(e *Entry) {
	for _, o := range registry {
		if o.Name == e.Name {
			panic("engine: solver " + string(e.Name) + " registered twice")
		}
	}
	registry = append(registry, e)
	slices.SortStableFunc(registry, func(a, b *Entry) int {
		if a.Rank != b.Rank {
			return cmp.Compare(a.Rank, b.Rank)
		}
		return strings.Compare(string(a.Name), string(b.Name))
	})
}

// Lookup returns the registered solver called name, or nil.
func Lookup(name Solver) *Entry {
	for _, e := range registry {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// Solvers returns every solver Train runs, in order of preference.
func Solvers() []SolverInfo {
	out := make([]SolverInfo, len(registry))
	for i, e := range registry {
		out[i] = e.SolverInfo
	}
	return out
}

// Names returns the registered solvers' names, comma-separated, for
// messages.
func Names() string {
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = string(e.Name)
	}
	return strings.Join(names, ", ")
}

// Entries returns the registered solvers in the order of the listing
// (Rank, then name). The slice is the registry's: do not modify it.
func Entries() []*Entry { return registry }
