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
// y in turn. On the AMD Zen 5 (EPYC, family 1Ah) they were measured on,
// kernels built on VGATHERDPD were 5–35% slower than these, and SparseAxpy
// built on VSCATTERDPD (with VPCONFLICTD to divert blocks with repeated
// indices to a scalar loop) 50–90% slower; 512-bit versions of the
// scalar-load kernels were no faster either. The avx512 implementation
// therefore shares the sparse kernels of avx2fma. (The gather and scatter
// kernels are in commit 15f9a3f.)
//
// Checking the indices costs 1–2% on rcv1- and w8a-like rows, and 10% on a
// 100-entry row whose x fits in L1, against the same kernel without the
// checks.
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
// Measured on an AMD EPYC (Zen 5, 48 KiB L1d and 1 MiB L2 per core) with 2
// cores shared with other jobs, as six interleaved rounds:
//
//	for i in 1 2 3 4 5 6; do go test ./kernels -run '^$' -bench . -benchtime 500ms; done | tee new.txt
//	benchstat -col /impl -filter '.unit:cpu-sec/op' new.txt
//
// Wall time (sec/op) varied by ±100% and more between rounds, because the
// benchmarks waited for a core; the benchmarks therefore also report the
// process CPU time per call (cpu-ns/op), which varied by ±3–10% (±20–30%
// for the rcv1-like rows, which depend on the shared L3). Medians of six,
// in nanoseconds of CPU time per call:
//
//	dense         generic  avx2fma   avx512  gonum floats  SIMD vs gonum
//	Dot 100          25.5      8.0      5.7          13.5  2.3×
//	Dot 1k            245     59.7     33.0           121  3.7×
//	Dot 10k          2331      664      792          1164  1.8× (avx2fma), 1.5× (avx512)
//	Dot 100k        24080    12910    12720         14050  1.1×
//	Axpy 100         36.8     10.3      8.0          16.4  2.0×
//	Axpy 1k           360     72.4     43.7           148  3.4×
//	Axpy 10k         3559      751      807          1450  1.9× (avx2fma), 1.8× (avx512)
//	Axpy 100k       35220    13120    12750         15410  1.2×
//
// gonum's floats.Dot and floats.AddScaled run its SSE2 assembly
// (f64.DotUnitary, f64.AxpyUnitary); blas64 is within a few per cent of
// them. Dot reaches 2× only while the vectors fit in L1: at 10k elements
// (160 KB, in L2) and 100k (1.6 MB, in L3) all the kernels are limited by
// cache bandwidth, which gonum's loop already uses half of (L2) or most of
// (L3). At 10k elements the 256-bit loop of avx2fma beats the 512-bit one
// by 16% on this CPU; at 40k and beyond the 512-bit loop is ahead again,
// so avx512 keeps it throughout.
//
//	sparse (avx2fma and avx512 share these kernels)
//	                        generic    SIMD  speed-up
//	SparseDot 100 nnz          35.6    25.2  1.41×
//	SparseDot 1k nnz            357     260  1.37×
//	SparseDot 10k nnz          4000    2744  1.46×
//	SparseDot 100k nnz        74130   66950  1.11× (not significant)
//	SparseDot rcv1-like        33.0    30.6  1.08× (not significant)
//	SparseDot w8a-like         9.34    9.05  1.03× (not significant)
//	SparseAxpy 100 nnz         39.3    29.8  1.32×
//	SparseAxpy 1k nnz           429     328  1.31×
//	SparseAxpy 10k nnz         4507    3514  1.28×
//	SparseAxpy 100k nnz       79350   70170  1.13× (not significant)
//	SparseAxpy rcv1-like       41.2    36.2  1.14× (not significant)
//	SparseAxpy w8a-like        9.91    9.58  1.03× (not significant)
//	SparseDotAxpy 100 nnz      55.9    44.4  1.26×
//	SparseDotAxpy rcv1-like    63.7    59.9  1.06×
//	SparseDotAxpy w8a-like     13.8    13.1  1.05×
//
// The single rows (n nnz over 10n columns, the same row on every call)
// gain 1.3–1.5× from the SIMD kernels, which load each value and pair of
// indices once per vector rather than once per entry. The rcv1-like rows
// (75 sorted entries over 47,236 columns, 8,192 rows cycled) do not: their
// time goes to fetching x[idx[k]] from L2 and the rows from L3, which no
// instruction set changes. The w8a-like rows (12 entries of 1.0 over 300
// columns, 16,384 rows cycled) do not either: an empty row already costs
// 2.8 ns through SparseDot with the generic kernels and 3.3 ns with the
// assembly (one more call: the checking Go function), a third of the 9 ns
// of a w8a-like row, and twelve entries are too few for the vector loop to
// win back much more than that half nanosecond. The target of 1.3× on these
// two shapes is not met.
package kernels
