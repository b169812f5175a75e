//go:build !linux

package spdc

// processCPUNanos is 0 where the benchmark does not read CPU time.
func processCPUNanos() int64 { return 0 }
