package kernels

import (
	"math"
	"testing"
	"unsafe"
)

// TestPrefetchIndexed checks that PrefetchIndexed, a hint, neither faults
// nor writes: indices far outside the array (negative, up to the int32
// extremes), element sizes from 1 to 8, and an empty index slice leave
// the array as it was.
func TestPrefetchIndexed(t *testing.T) {
	x := make([]float64, 100)
	for i := range x {
		x[i] = float64(i)
	}
	idx := []int32{0, 99, 50, -1, 1 << 20, math.MaxInt32, math.MinInt32}
	for _, size := range []int{1, 2, 4, 8} {
		PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(x)), idx, size)
		PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(x)), idx[:0], size)
		PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(x)), nil, size)
	}
	for i, v := range x {
		if v != float64(i) {
			t.Fatalf("x[%d] = %g after the prefetches, want %d", i, v, i)
		}
	}
}
