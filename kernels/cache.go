package kernels

import "github.com/klauspost/cpuid/v2"

// L1DataBytes returns the size in bytes of one core's level-1 data cache
// as CPUID reports it, or 32 KiB where it reports none.
func L1DataBytes() int {
	if c := cpuid.CPU.Cache.L1D; c > 0 {
		return c
	}
	return 32 << 10
}

// L2Bytes returns the size in bytes of one core's level-2 cache as CPUID
// reports it, or 1 MiB where it reports none.
func L2Bytes() int {
	if c := cpuid.CPU.Cache.L2; c > 0 {
		return c
	}
	return 1 << 20
}
