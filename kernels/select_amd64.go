//go:build !noasm

package kernels

import "github.com/klauspost/cpuid/v2"

// supportedImpls returns the implementations this CPU (and its operating
// system, which must save the wider registers) can run, generic first and
// best last.
func supportedImpls() []impl {
	impls := []impl{genericImpl}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3) {
		impls = append(impls, impl{
			name:          "avx2fma",
			dot:           dotAVX2,
			axpy:          axpyAVX2,
			sparseDot:     sparseDotFMA,
			sparseAxpy:    sparseAxpyFMA,
			sparseDotAxpy: sparseDotAxpyFMA,
		})
	}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.AVX512F, cpuid.AVX512VL, cpuid.AVX512DQ, cpuid.AVX512CD) {
		impls = append(impls, impl{
			name:          "avx512",
			dot:           dotAVX512,
			axpy:          axpyAVX512,
			sparseDot:     sparseDotAVX512,
			sparseAxpy:    sparseAxpyAVX512,
			sparseDotAxpy: sparseDotAxpyAVX512,
		})
	}
	return impls
}
