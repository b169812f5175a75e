//go:build !linux

package kernels

import "testing"

// guardedFloat64s returns a zeroed slice of n float64s. Only on Linux is it
// followed by an inaccessible page; elsewhere out-of-bounds accesses are
// caught by the sentinel checks alone.
func guardedFloat64s(_ testing.TB, n int) []float64 { return make([]float64, n) }

// guardedInt32s is guardedFloat64s for int32.
func guardedInt32s(_ testing.TB, n int) []int32 { return make([]int32, n) }
