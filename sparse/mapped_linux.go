package sparse

import (
	"os"
	"syscall"
)

// drop unmaps the whole pages of the n bytes from off, which the reader
// has copied: the page cache keeps them, and a later read maps them again,
// but the process's resident memory does not grow by the file's size.
func (m *mappedFile) drop(off int64, n int) {
	page := int64(os.Getpagesize())
	lo, hi := (off+page-1)/page*page, (off+int64(n))/page*page
	if hi > lo {
		_ = syscall.Madvise(m.data[lo:hi], syscall.MADV_DONTNEED)
	}
}
