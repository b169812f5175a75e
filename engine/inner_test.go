package engine

import (
	"context"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// TestValidateRefusesImpossibleInner: for every reduction and every
// registered solver as its inner one, Options.Validate, which needs no
// data, refuses exactly the combinations that the reduction's Accepts
// refuses on a problem made for it (the lasso for AdaptReg, the SVM for
// AdaptSmooth, the L1-SVM for JointAdapt), so that no combination is
// refused only once the data are read, and none that would run is
// refused early.
func TestValidateRefusesImpossibleInner(t *testing.T) {
	x, b := sparseData(80, 10, 3, 4)
	probs := map[Solver]Problem{
		SolverAdaptReg:    {X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: 1e-2}},
		SolverAdaptSmooth: {X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-2}},
		SolverJointAdapt:  {X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{L1: 1e-2}},
	}
	for r, prob := range probs {
		for _, inner := range driver.Entries() {
			opt := Options{Solver: r}.With(ReductionSettings{Inner: inner.Name})
			early := opt.Validate()
			late := driver.Lookup(r).Accepts(prob, opt.WithDefaults())
			if (early == nil) != (late == nil) {
				t.Errorf("%s over %s: Validate says %v, Accepts on data %v", r, inner.Name, early, late)
			}
		}
	}
	// With no solver named, an inner solver that no reduction can run is
	// refused too; one that some can run is not.
	if err := (Options{}.With(ReductionSettings{Inner: SolverNewton})).Validate(); err == nil {
		t.Error("Inner newton with no solver named: accepted")
	}
	if err := (Options{}.With(ReductionSettings{Inner: SolverSPDCAsync})).Validate(); err != nil {
		t.Errorf("Inner spdc-async with no solver named: %v (adaptsmooth runs it)", err)
	}
	// Train refuses before it starts.
	_, res, err := Train(context.Background(), probs[SolverAdaptReg], Options{Solver: SolverAdaptReg, MaxEpochs: 3}.With(ReductionSettings{Inner: SolverSPDCAsync}))
	if err == nil || res != nil {
		t.Errorf("Train adaptreg over spdc-async: err %v, result %v; want a refusal before the run", err, res)
	}
}
