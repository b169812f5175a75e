package modelio

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// WriteFileAtomic writes path through write, atomically: to a temporary
// file in the directory of path's target, which is synced, closed and
// renamed over the target. Readers see the old file or the whole new one,
// never a part, even if the process dies or the disk fills up midway.
//
//   - A path that is a symbolic link is written through: the link stays,
//     and its target gets the new content.
//   - The file keeps the mode of the file it replaces; a new file gets
//     0666 less the process's umask, as os.Create gives, so that
//     teammates on a shared cluster can read a model their umask lets
//     them read.
//   - A path that is not a regular file or a folder (/dev/null, a named
//     pipe, /dev/stdout on a terminal or in a pipeline) is written in
//     place: replacing a device or a pipe with a file would break it for
//     others, and such files have no old content to keep.
//   - The temporary file is named .NAME.tmp-PID-HOST-RAND, HOST a hash of
//     the host's name. On an error it is removed and the target is left as
//     it was; temporary files for NAME that processes of this host no
//     longer running left behind (a crash, a kill -9) are removed before
//     writing. Another host's are left alone: its process ids mean nothing
//     here, and on a folder shared over the network its writer may still
//     be at work.
//
// The error, an *os.PathError, names path and the step that failed.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeInPlace(path, write)
	}
	target, err := resolveLink(path)
	if err != nil {
		return pathError("resolve", path, err)
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	removeStaleTemps(dir, base)
	mode := os.FileMode(0o666) // less the umask, by the kernel
	keepMode := false
	if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
		mode, keepMode = fi.Mode().Perm(), true
	}
	var f *os.File
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%s-%d", base, os.Getpid(), hostTag(), rand.Uint32()))
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return pathError("create", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if keepMode {
		// The umask applied to the new file; the old file's mode stands.
		if err = f.Chmod(mode); err != nil {
			return pathError("chmod", path, err)
		}
	}
	if err = write(f); err != nil {
		return pathError("write", path, err)
	}
	if err = f.Sync(); err != nil {
		return pathError("sync", path, err)
	}
	if err = f.Close(); err != nil {
		return pathError("close", path, err)
	}
	if err = os.Rename(f.Name(), target); err != nil {
		return pathError("rename", path, err)
	}
	// The rename is an entry in the folder: sync the folder too, so that
	// the new name, not only the new content, survives a power cut. It is
	// best effort, as not every system can sync a folder.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeInPlace writes path, a device, a pipe or a socket, by opening it
// and writing: renaming a file over /dev/null would replace the device for
// every process, and a pipe (/dev/stdout in a pipeline) has no folder to
// put a temporary file in. Such files have no old content to keep, so
// atomicity does not apply.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return pathError("open", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return pathError("write", path, err)
	}
	if err := f.Close(); err != nil {
		return pathError("close", path, err)
	}
	return nil
}

// writeAtomic is WriteFileAtomic, for the package's own writers.
func writeAtomic(path string, write func(io.Writer) error) error {
	return WriteFileAtomic(path, write)
}

// resolveLink returns the file that writing path should replace: path
// itself, or, where path is a symbolic link (to a file that may not exist
// yet), the end of its chain of links.
func resolveLink(path string) (string, error) {
	for range 40 { // as the kernel's limit on nested links
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

// removeStaleTemps removes the temporary files .base.tmp-PID-HOST-RAND in
// dir that this host's processes left and that no longer run.
func removeStaleTemps(dir, base string) {
	prefix := "." + base + ".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		f := strings.Split(rest, "-")
		if len(f) != 3 || f[1] != hostTag() {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// hostTag returns 8 hexadecimal digits that stand for this host (a hash of
// its name, short and free of the dashes that separate the temporary
// files' fields), so that a process id in a temporary file's name is only
// looked up on the host that wrote it.
var hostTag = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
})

// pathError returns err as an *os.PathError for path. An error that names
// the temporary file instead is replaced by its cause, so that the message
// names the file the caller asked for, once.
func pathError(op, path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}
