package engine

import (
	"strings"
	"testing"
)

// TestImportanceSamplingNeedsSPDCAndOneBlock: the variant is defined for
// SPDC drawing one block, with replacement.
func TestImportanceSamplingNeedsSPDCAndOneBlock(t *testing.T) {
	for _, o := range []Options{
		{Solver: SolverAdaSPDC, Sampling: SamplingImportance},
		{Solver: SolverSPDC, Sampling: SamplingImportance, M: 4},
		{Sampling: "weighted"},
	} {
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), "sampling") {
			t.Errorf("%+v: error %v, want one about sampling", o, err)
		}
	}
}
