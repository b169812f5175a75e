//go:build !linux

package hugepage

// advise does nothing: madvise(MADV_HUGEPAGE) is Linux's.
func advise(addr, n uintptr) {}
