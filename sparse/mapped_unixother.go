//go:build unix && !linux

package sparse

// drop does nothing where the syscall package has no madvise: the pages
// copied stay mapped until the file is unmapped.
func (m *mappedFile) drop(off int64, n int) {}
