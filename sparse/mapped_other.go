//go:build !unix

package sparse

import "os"

// mappedFile is a mapping of a file; without Unix's mmap there is none.
type mappedFile struct{}

// mapFile returns nil: the caller reads the file itself.
func mapFile(f *os.File, size int64) *mappedFile { return nil }

func (m *mappedFile) ReadAt(p []byte, off int64) (int, error) { panic("sparse: no mapping") }

func (m *mappedFile) close() {}
