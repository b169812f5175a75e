package modelio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// writeAtomic writes path through write: to a temporary file in path's
// directory, which is synced, closed and renamed over path. On error the
// temporary file is removed, path is left as it was, and the error is an
// *os.PathError that names path and the step that failed.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return pathError("create", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return pathError("write", path, err)
	}
	if err = f.Sync(); err != nil {
		return pathError("sync", path, err)
	}
	if err = f.Close(); err != nil {
		return pathError("close", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return pathError("rename", path, err)
	}
	return nil
}

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
