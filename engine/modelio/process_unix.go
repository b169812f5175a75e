//go:build unix

package modelio

import (
	"errors"
	"syscall"
)

// processRuns reports whether a process with this pid exists (one of
// another user's counts: signal 0 is then refused with EPERM).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
