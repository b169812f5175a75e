//go:build unix

package sparse

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

// mappedMinBytes is the size from which ReadFile maps a file instead of
// reading it with pread. Each of the reader's two passes copies the whole
// file out of the page cache; with pread the kernel makes those copies,
// and on the virtual machines measured they took more system time than
// the parsing took user time (bench/RESULTS.md, "Reading a large file").
// From a mapping the copies are the process's own, and the kernel only
// maps the cached pages, many at a fault. Below this size the difference
// is noise, and the mapping's set-up and teardown are not.
const mappedMinBytes = 32 << 20

// mappedFile is a read-only mapping of a file, read by offset.
type mappedFile struct {
	data []byte
	name string
}

// mapFile maps the size bytes of f, or returns nil where it cannot (the
// caller then reads f itself).
func mapFile(f *os.File, size int64) *mappedFile {
	if size < mappedMinBytes {
		return nil
	}
	return mapAny(f, size)
}

// mapAny is mapFile at any size above zero.
func mapAny(f *os.File, size int64) *mappedFile {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return &mappedFile{data: data, name: f.Name()}
}

// ReadAt copies from the mapping. A file cut shorter while it is mapped
// makes the pages past its new end fault (SIGBUS); the fault is turned
// into an error for this read, as a short pread would be, instead of
// ending the process.
func (m *mappedFile) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 || off > int64(len(m.data)) {
		return 0, fmt.Errorf("%s: read at %d, past the mapped %d bytes", m.name, off, len(m.data))
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			n, err = 0, errShorter
		}
	}()
	n = copy(p, m.data[off:])
	if n < len(p) {
		err = errShorter
	}
	m.drop(off, n)
	return n, err
}

// close unmaps the file.
func (m *mappedFile) close() { _ = syscall.Munmap(m.data) }
