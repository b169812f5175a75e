//go:build unix

package kernels

import "syscall"

// processCPUNanos returns the CPU time this process has used. The
// benchmarks report it per operation alongside wall time: on a machine
// shared with other jobs, time spent waiting for a core inflates the
// latter but not the former.
func processCPUNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)
}
