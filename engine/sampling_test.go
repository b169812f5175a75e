package engine

import (
	"strings"
	"testing"
)

// TestImportanceSamplingNeedsSPDCAndOneBlock: the variant is defined for
// SPDC drawing one block, with replacement.
func TestImportanceSamplingNeedsSPDCAndOneBlock(t *testing.T) {
	for _, o := range []Options{
		Options{Solver: SolverAdaSPDC}.With(CoordinateSettings{Sampling: SamplingImportance}),
		Options{Solver: SolverSPDC}.With(CoordinateSettings{Sampling: SamplingImportance, M: 4}),
		Options{}.With(CoordinateSettings{Sampling: "weighted"}),
	} {
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), "sampling") {
			t.Errorf("%+v: error %v, want one about sampling", o, err)
		}
	}
}
