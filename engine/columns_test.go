package engine

import (
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
)

// TestColumnTiers: no grouping for a model that fits in the level-2
// cache, and for a wider one ascending tiers, the last of them as many
// columns as that cache holds float64s.
func TestColumnTiers(t *testing.T) {
	l2 := kernels.L2Bytes() / 8
	if b := ColumnTiers(l2); b != nil {
		t.Errorf("ColumnTiers(%d) = %v for a model that fits in the cache", l2, b)
	}
	b := ColumnTiers(4 * l2)
	if len(b) == 0 || !slices.IsSorted(b) || b[len(b)-1] != l2 || b[0] <= 0 {
		t.Errorf("ColumnTiers(%d) = %v, want ascending tiers ending at %d", 4*l2, b, l2)
	}
	for k := 1; k < len(b); k++ {
		if b[k] == b[k-1] {
			t.Errorf("ColumnTiers(%d) = %v: a tier repeats", 4*l2, b)
		}
	}
}
