package engine

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/sdca"
)

// TestTakesAgreeWithAccepts holds each solver's declarations to its
// Accepts: Takes.L1 where it accepts an L1 term on some loss, Takes.Groups
// where it accepts the group lasso, Takes.WarmDuals where it reads the
// SDCA family's settings or its method takes warm duals (DualWarmStarter);
// so that validation, the automatic choice and the command line, which
// read the declarations, refuse what Accepts refuses.
func TestTakesAgreeWithAccepts(t *testing.T) {
	x, b := sharedData(t, "heart_scale")
	groups := make([]int32, x.Cols)
	for _, e := range driver.Entries() {
		var l1, gr bool
		for _, loss := range []Loss{Logistic{}, SquaredHinge{}, Hinge{}, Squared{}} {
			opt := Options{Solver: e.Name}.WithDefaults()
			for _, lam := range []float64{0.01, 0} {
				if e.Accepts(Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: lam, L1: 0.01}}, opt) == nil {
					l1 = true
				}
			}
			if e.Accepts(Problem{X: x, B: b, Loss: loss, Reg: &GroupLasso{Lambda: 0.01, Weight: 0.01, Groups: groups}}, opt) == nil {
				gr = true
			}
		}
		if l1 != e.Takes.L1 {
			t.Errorf("%s: Accepts takes an L1 term: %v, Takes.L1 says %v", e.Name, l1, e.Takes.L1)
		}
		if gr != e.Takes.Groups {
			t.Errorf("%s: Accepts takes the group lasso: %v, Takes.Groups says %v", e.Name, gr, e.Takes.Groups)
		}
		if reads := slices.Contains(e.Reads, sdca.Family); reads && !e.Takes.WarmDuals {
			t.Errorf("%s: reads the sdca settings, whose warm duals Takes.WarmDuals says it does not take", e.Name)
		}
		if e.Takes.WarmDuals {
			// Options.WarmDuals go to the method through DualWarmStarter.
			opt := Options{Solver: e.Name, Threads: 1}.WithDefaults()
			prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 0.01}}
			m, err := e.Start(context.Background(), prob, opt)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			if _, ok := m.(driver.DualWarmStarter); !ok {
				t.Errorf("%s: Takes.WarmDuals, but its method has no WarmDuals", e.Name)
			}
			if f, ok := m.(driver.Finisher); ok {
				f.Finish(&driver.Result{})
			}
		}
	}
}

// TestSettingsOfOtherFamiliesRefused: settings of a family that the solver
// named does not read are refused before any data, unless they are at
// their defaults; the settings the solver reads pass.
func TestSettingsOfOtherFamiliesRefused(t *testing.T) {
	cases := []struct {
		opt  Options
		fail bool
	}{
		{Options{Solver: SolverNewton}.With(CoordinateSettings{M: 4}), true},
		{Options{Solver: SolverNewton}.With(CoordinateSettings{M: 1}), false},
		{Options{Solver: SolverAdaSPDC}.With(CoordinateSettings{M: 4}), false},
		{Options{Solver: SolverAdaSPDC}.With(ReductionSettings{Inner: SolverSDCA}), true},
		{Options{Solver: SolverAdaptReg}.With(ReductionSettings{Inner: SolverSDCA}), false},
		{Options{Solver: SolverAdaSPDC}.With(SDCASettings{WarmDuals: []float64{0}}), true},
		{Options{Solver: SolverSDCA}.With(SDCASettings{WarmDuals: []float64{0}}), false},
		{Options{}.With(SDCASettings{WarmDuals: []float64{0}}), true},
		{Options{Solver: SolverAdaSPDC, WarmDuals: []float64{0}}, false},
		{Options{Solver: SolverCoCoA, WarmDuals: []float64{0}}, false},
		{Options{Solver: SolverNewton, WarmDuals: []float64{0}}, true},
		{Options{WarmDuals: []float64{0}}, true},
		{Options{Solver: SolverSDCA, WarmDuals: []float64{math.NaN()}}, true},
		{Options{Solver: SolverAdaSPDC}.With(CoordinateSettings{M: 4}).With(CoordinateSettings{M: 2}), false},
	}
	for i, c := range cases {
		err := c.opt.Validate()
		if (err != nil) != c.fail {
			t.Errorf("case %d (%s, %v): Validate = %v, want failure %v", i, c.opt.Solver, c.opt.Settings, err, c.fail)
		}
	}
	// With replaces the settings of the same family, and copies.
	a := Options{}.With(CoordinateSettings{M: 4})
	b := a.With(CoordinateSettings{M: 8})
	if a.Coordinate().M != 4 || b.Coordinate().M != 8 || len(b.Settings) != 1 {
		t.Errorf("With: %v then %v", a.Settings, b.Settings)
	}
}
