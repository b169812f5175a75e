package spdc

import (
	"syscall"
	"unsafe"
)

// processCPUNanos returns the CPU time of the process so far
// (CLOCK_PROCESS_CPUTIME_ID, exact to the scheduler's accounting): on a
// machine shared with other jobs, time spent waiting for a core inflates
// wall time but not this.
func processCPUNanos() int64 {
	var ts syscall.Timespec
	const clockProcessCPUTimeID = 2
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return ts.Nano()
}
