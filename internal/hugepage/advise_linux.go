//go:build linux

package hugepage

import "syscall"

// advise asks for huge pages over the n bytes from addr, which is aligned
// to a page. The range may reach past the slice into memory of other
// objects of the Go heap, so it is passed as numbers, not as a Go pointer
// (one outside its object would break unsafe.Pointer's rules). A failure
// (an old kernel, a kernel without transparent huge pages, a range that
// reaches past the heap's mapping) leaves 4 KiB pages, which are correct,
// so it is ignored.
func advise(addr, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE)
}
