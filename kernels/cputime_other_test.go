//go:build !unix

package kernels

// processCPUNanos is not available here; the benchmarks then report wall
// time only.
func processCPUNanos() int64 { return 0 }
