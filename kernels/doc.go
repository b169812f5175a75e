// Package kernels provides the vector kernels of the solver: dense and sparse
// dot products and axpy updates, in pure Go and in AVX2/FMA and AVX-512
// assembly for amd64, one implementation chosen at start-up.
//
// # What the kernels compute
//
//	Dot(x, y)                         Σ_i x[i]·y[i]            for i < len(x)
//	Axpy(α, x, y)                     y[i] += α·x[i]            for i < len(x)
//	SparseDot(val, idx, x)            Σ_k val[k]·x[idx[k]]
//	SparseAxpy(α, val, idx, y)        y[idx[k]] += α·val[k]     for each k, in order
//	SparseDotAxpy(α, val, idx, x, y)  both of the above, in one pass over val and idx
//
// A sparse vector is a pair (val, idx) of equal length, such as a row of a
// CSR matrix: entry k has value val[k] in column idx[k]. Indices are 0-based
// int32; they need not be sorted and may repeat. In SparseAxpy repeated
// indices accumulate, exactly as in the sequential loop. In a dual
// coordinate method SparseDot gives a sample's margin a·w and SparseAxpy
// applies the primal update w += δ·a; SparseDotAxpy fuses the two when the
// step is known beforehand and x and y are different vectors.
//
// Sums are reassociated: every implementation keeps several partial sums
// (scalar accumulators or vector lanes) and adds them at the end, and the
// assembly uses fused multiply-adds. The results therefore differ from the
// sequential definition, and between implementations, by rounding only: the
// tests require agreement within 1e-12 relative to Σ|terms|. For a given
// implementation and length the order of operations is fixed, so results
// are reproducible from run to run and do not depend on alignment.
//
// # Checks
//
// Wrong lengths and bad indices are programming errors, and the kernels
// panic on them, as gonum does: Dot and Axpy if len(y) < len(x), Axpy if x
// and y overlap other than exactly, the sparse kernels if
// len(val) != len(idx), SparseDotAxpy if the reachable parts of x and y
// overlap. Every implementation also checks every index against the length
// of the dense vector before using it, and panics with the position and
// value of the first bad one, so that no kernel ever reads or writes outside
// x and y. In the assembly this costs a sign extension and one fused
// compare-and-branch per index, against three loads per entry; trusting
// the caller instead would save little and turn a caller's bug into memory
// corruption. The solver passes CSR rows whose indices were validated
// against the number of columns, so the panics never fire there.
//
// # Choosing an implementation
//
// At init the package asks github.com/klauspost/cpuid/v2 what the CPU and
// the operating system support, and installs the best of:
//
//	avx512   AVX-512F (with AVX2 and FMA3): 512-bit dense kernels with masked tails
//	avx2fma  AVX2 and FMA3: 256-bit dense kernels and the sparse kernels
//	generic  pure Go, unrolled by four with four accumulators
//
// The environment variable ADASPDC_KERNELS, read once at init, selects an
// implementation by name ("generic", "avx2fma" or "avx512") if the CPU
// supports it; any other value, or one the CPU cannot run, leaves the best
// supported implementation in place. Impl reports the choice. Building with
// the tag noasm, or for another architecture, leaves only generic.
//
// Each exported function is a one-line call through a function variable
// (one per kernel), which the compiler inlines into the caller; the function
// behind it checks the arguments and calls its kernel directly. The tests
// and benchmarks run every implementation the CPU supports in one process.
//
// The sparse kernels use no gather or scatter instructions. Values, and
// four elements of x assembled from scalar loads, meet in one 256-bit FMA;
// SparseAxpy scales four values by α in one multiply and adds each lane to
// y in turn. On the AMD Zen 5 (EPYC, family 1Ah) these were measured on,
// VGATHERDPD and VSCATTERDPD kernels (with VPCONFLICTD to handle repeated
// indices; commit 15f9a3f) were 10–50% slower than scalar loads, and
// 512-bit versions of the scalar-load kernels were no faster, so the avx512
// implementation shares the sparse kernels of avx2fma.
//
// # Concurrency
//
// The kernels keep no state: any number of goroutines may call them at
// once, provided that no two concurrent calls write the same elements (or
// one writes what another reads), as for any Go slice. The implementation
// is chosen before main runs and never changes afterwards.
//
// # Performance
//
// Measured on an AMD EPYC (Zen 5, 2 cores shared with other jobs, so the
// figures are noisy) with
//
//	go test ./kernels -run '^$' -bench . -count 6 | tee new.txt
//	benchstat -col /impl new.txt
//
// Time per call, and the speed-up of the SIMD kernels over gonum's
// floats.Dot and floats.AddScaled (dense) or over the pure-Go twin (sparse):
//
// FIGURES
package kernels
