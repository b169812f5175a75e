//go:build linux

package hugepage

import "syscall"

// advise asks for huge pages over b. A failure (an old kernel, a kernel
// without transparent huge pages) leaves 4 KiB pages, which are correct,
// so it is ignored.
func advise(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
