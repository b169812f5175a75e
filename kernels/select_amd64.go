//go:build !noasm

package kernels

import "github.com/klauspost/cpuid/v2"

// supportedImpls returns the implementations this CPU (and its operating
// system, which must save the wider registers) can run, generic first and
// best last.
//
// The avx512 implementation shares the sparse kernels of avx2fma: 8-wide
// variants of them, with gathers, scatters or AVX-512 index checks, were
// all slower on the Zen 5 they were measured on (see doc.go).
func supportedImpls() []impl {
	impls := []impl{genericImpl}
	if !cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3) {
		return impls
	}
	impls = append(impls, impl{
		name:           "avx2fma",
		dot:            dotAVX2,
		axpy:           axpyAVX2,
		sparseDot:      sparseDotAVX2,
		sparseAxpy:     sparseAxpyAVX2,
		sparseDotAxpy:  sparseDotAxpyAVX2,
		sparseDotRows:  sparseDotRowsAVX2,
		sparseAxpyRows: sparseAxpyRowsAVX2,
		expNeg:         expNegGeneric,
		log1pUnit:      log1pUnitGeneric,

		sparseDotLanes:  sparseDotLanesAVX2,
		sparseAxpyLanes: sparseAxpyLanesAVX2,

		dotTile4: dotTile4Dots(dotAVX2),
	})
	if cpuid.CPU.Supports(cpuid.AVX512F) {
		impls = append(impls, impl{
			name:           "avx512",
			dot:            dotAVX512,
			axpy:           axpyAVX512,
			sparseDot:      sparseDotAVX2,
			sparseAxpy:     sparseAxpyAVX2,
			sparseDotAxpy:  sparseDotAxpyAVX2,
			sparseDotRows:  sparseDotRowsAVX2,
			sparseAxpyRows: sparseAxpyRowsAVX2,
			expNeg:         expNegAVX512,
			log1pUnit:      log1pUnitAVX512,

			sparseDotLanes:  sparseDotLanesAVX2,
			sparseAxpyLanes: sparseAxpyLanesAVX2,

			dotTile4: dotTile4AVX512,
		})
	}
	return impls
}
