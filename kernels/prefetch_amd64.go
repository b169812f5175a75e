//go:build !noasm

package kernels

import "unsafe"

//go:noescape
func prefetchAsm(p unsafe.Pointer)

//go:noescape
func prefetch2Asm(p, q unsafe.Pointer)

//go:noescape
func prefetchRangeAsm(p unsafe.Pointer, n int)

//go:noescape
func prefetchIndexedAsm(base unsafe.Pointer, idx []int32, size int)

// PrefetchIndexed prefetches the elements idx[k] of the array at base
// whose elements take size bytes each: a gather's addresses, asked for
// before the gather. A prefetch never faults, so indices outside the
// array are harmless.
func PrefetchIndexed(base unsafe.Pointer, idx []int32, size int) { prefetchIndexedAsm(base, idx, size) }

// Prefetch asks the CPU to bring the cache line holding p into all cache
// levels (PREFETCHT0), without waiting for it. It never faults, so p may be
// any address; it is a hint, and a no-op without assembly.
func Prefetch(p unsafe.Pointer) { prefetchAsm(p) }

// Prefetch2 is two Prefetch calls for the price of one.
func Prefetch2(p, q unsafe.Pointer) { prefetch2Asm(p, q) }

// PrefetchRange prefetches every cache line of the n bytes from p (n ≥ 1).
func PrefetchRange(p unsafe.Pointer, n int) {
	if n > 0 {
		prefetchRangeAsm(p, n)
	}
}
