// Package hugepage allocates the engine's large arrays so that the kernel
// may back them with huge pages (2 MiB on amd64) instead of 4 KiB ones.
//
// Why: every first touch of a 4 KiB page of fresh memory is a page fault.
// On the virtual machines this project is measured on, a fault costs about
// 6 µs: reading ijcnn1 (7.7 MB of text) spent 35 of its 55 ms in the
// kernel, and on url-shaped data (200k rows) a run took 124,000 faults.
// `go test -bench Fill ./internal/hugepage` fills 64 MiB of fresh memory at
// 3.7 GB/s with make and 6.6 GB/s with Make there. Linux backs a range with
// huge pages on fault only where the process asked for them with
// madvise(MADV_HUGEPAGE) when transparent huge pages are in "madvise" mode,
// the default of many distributions; in "always" mode the advice changes
// nothing, in "never" mode it is ignored.
//
// Make allocates with the Go allocator, exactly as make does, and for
// slices of at least Threshold bytes gives the advice over every huge page
// that the slice overlaps, reaching past its ends into the neighbouring
// memory of the Go heap. The advice only sets a flag on the mapping, so
// the neighbours lose nothing: a huge page is zeroed when first touched,
// as fresh 4 KiB pages are, and one whose 4 KiB pages are already in use
// stays as it is. Advising only the huge pages wholly inside the slice, as
// Make did at first, left up to a huge page at each end in 4 KiB pages: of
// a news20 run's 2400–3100 faults, 1300–1900 went (bench/README.md,
// "Fresh memory"). The memory stays the garbage collector's. On other
// systems Make is make.
package hugepage

import "unsafe"

// Size is the huge page size of amd64, and of arm64 with 4 KiB base pages.
const Size = 2 << 20

// Threshold is the size in bytes from which Make gives the advice. Below
// it a slice is too small for the system call to pay: 64 KiB is 16 faults
// of 4 KiB, about 0.2 ms on the measuring VM, against a microsecond.
const Threshold = 64 << 10

// Make returns a zeroed slice of length n, backed by huge pages where the
// system gives them and n elements take at least Threshold bytes.
func Make[T any](n int) []T {
	s := make([]T, n)
	var zero T
	if size := uintptr(n) * unsafe.Sizeof(zero); n > 0 && size >= Threshold {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		lo, hi := start/Size*Size, (start+size+Size-1)/Size*Size
		advise(lo, hi-lo)
	}
	return s
}
