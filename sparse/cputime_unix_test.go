//go:build unix

package sparse

import "syscall"

// processCPU returns the user and system CPU time of the process so far,
// in nanoseconds, all threads included (the garbage collector's too).
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
