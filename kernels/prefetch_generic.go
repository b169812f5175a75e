//go:build noasm || !amd64

package kernels

import "unsafe"

// Prefetch is a hint to bring p's cache line closer; Go has no prefetch
// intrinsic, so without assembly it does nothing.
func Prefetch(p unsafe.Pointer) {}

// Prefetch2 is two Prefetch calls for the price of one.
func Prefetch2(p, q unsafe.Pointer) {}

// PrefetchRange prefetches every cache line of the n bytes from p.
func PrefetchRange(p unsafe.Pointer, n int) {}

// PrefetchIndexed prefetches the elements idx[k] of the array at base
// whose elements take size bytes each.
func PrefetchIndexed(base unsafe.Pointer, idx []int32, size int) {}
