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
//	SparseDotLanes(val, idx, v, t)    t[q] = Σ_k val[k]·v[idx[k]·W+q]     for W = len(t) lanes
//	SparseAxpyLanes(u, val, idx, o)   o[idx[k]·W+q] += val[k]·u[q]        for each k, each lane
//	DotTile4(dst, a, lda, b, ldb, k)  dst[4r+c] = Σ_{t<k} a[r·lda+t]·b[c·ldb+t]   for r, c < 4
//	SparseDotRows(ptr, val, idx, x, out)  out[r] = SparseDot of row r with x   (row r: entries ptr[r]…ptr[r+1]−1)
//	SparseAxpyRows(ptr, c, val, idx, y)   SparseAxpy(c[r], row r, y) for each r with c[r] ≠ 0, in order
//	ExpNeg(dst, x)                        dst[i] = e^x[i]           (fast for x ≤ 0)
//	Log1pUnit(dst, x)                     dst[i] = log(1 + x[i])    (fast for x in [0, 1])
//
// A sparse vector is a pair (val, idx) of equal length, such as a row of a
// CSR matrix: entry k has value val[k] in column idx[k]. Indices are 0-based
// int32; they need not be sorted and may repeat. In SparseAxpy repeated
// indices accumulate, exactly as in the sequential loop. In a dual
// coordinate method SparseDot gives a sample's margin a·w and SparseAxpy
// applies the primal update w += δ·a; SparseDotAxpy fuses the two when the
// step is known beforehand and x and y are different vectors. The lanes
// kernels serve W ∈ {1, 2, 4, 8} vectors interleaved lane by lane, so that
// the runs that share a sweep over the same rows (newton's one-vs-rest
// classes) read each entry once for all of them; their arithmetic is fixed
// lane by lane, one FMA per step into four partial sums, the same bits in
// every implementation and at every W (lanes.go). The rows kernels take a
// range of CSR rows in one call, with the bits of SparseDot and SparseAxpy
// row by row: on rows of a dozen entries, a call a row through the
// implementation's function variable, with its checks, costs as much as
// the row's arithmetic (BenchmarkRows). ExpNeg and Log1pUnit serve the
// logistic loss's terms, e^(−|z|) and log(1 + e^(−|z|)), a block of rows
// at a time; the avx512 implementation computes eight at once, and every
// implementation gives the same bits, within 2 ulp of math.Exp and 1 ulp
// of math.Log1p (transcend.go).
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
//	avx512   AVX-512F (with AVX2 and FMA3): 512-bit dense kernels with masked tails, ExpNeg and Log1pUnit
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
// kernels built on VGATHERDPD were 10–40% slower than these, and SparseAxpy
// built on VSCATTERDPD (with VPCONFLICTD to divert blocks with repeated
// indices to a scalar loop) 50–90% slower; 512-bit versions of the
// scalar-load kernels were no faster either. The avx512 implementation
// therefore shares the sparse kernels of avx2fma. (The gather and scatter
// kernels are in commit 15f9a3f.)
//
// DotTile4 has an AVX-512 kernel only: its sixteen 512-bit sums and eight
// rows in flight need 24 vector registers, which AVX2's sixteen cannot
// hold, so avx2fma makes it of sixteen calls of its Dot.
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
// process CPU time per call (cpu-ns/op), which varied by ±5–15% (up to
// ±23% for the rows cycled through the shared L3). Medians of six, in
// nanoseconds of CPU time per call:
//
//	dense       generic  avx2fma   avx512  gonum floats  SIMD vs gonum
//	Dot 100        25.8     8.05     5.77          13.5  2.3×
//	Dot 1k          246     60.7     33.7           123  3.7×
//	Dot 10k        2334      664      797          1180  1.8× (avx2fma), 1.5× (avx512)
//	Dot 100k      23910    13050    12890         14170  1.1×
//	Axpy 100       28.6     9.37     7.89          16.6  2.1×
//	Axpy 1k         276     70.3     39.0           147  3.8×
//	Axpy 10k       2676      762      805          1463  1.9× (avx2fma), 1.8× (avx512)
//	Axpy 100k     26980    13070    12630         15390  1.2×
//
// gonum's floats.Dot and floats.AddScaled run its SSE2 assembly
// (f64.DotUnitary, f64.AxpyUnitary); blas64 is within a few per cent of
// them. Dot reaches 2× only while the vectors fit in L1: at 10k elements
// (160 KB, in L2) and 100k (1.6 MB, in L3) all the kernels are limited by
// cache bandwidth, which gonum's loop already uses half of (L2) or most of
// (L3). At 10k elements the 256-bit loop of avx2fma beats the 512-bit one
// by 20% on this CPU; at 40k (measured separately) and 100k the two are
// within 6% of each other, the 512-bit loop ahead, so avx512 keeps it
// throughout.
//
//	sparse                  generic  avx2fma   avx512  SIMD vs generic
//	SparseDot 100 nnz          35.7     25.1     25.4  1.4×
//	SparseDot 1k nnz            365      262      266  1.4×
//	SparseDot 10k nnz          4038     2797     2821  1.4×
//	SparseDot 100k nnz        68780    65310    63950  1.05–1.08× (p > 0.1)
//	SparseDot rcv1-like        33.0     30.3     30.3  1.09×
//	SparseDot w8a-like         9.32     8.88     9.03  1.03–1.05×
//	SparseAxpy 100 nnz         40.8     31.2     31.0  1.3×
//	SparseAxpy 1k nnz           447      336      339  1.3×
//	SparseAxpy 10k nnz         4771     3612     3607  1.3×
//	SparseAxpy 100k nnz       71830    68640    68890  1.04× (p > 0.05)
//	SparseAxpy rcv1-like       41.7     37.2     36.8  1.12–1.14×
//	SparseAxpy w8a-like        10.1     9.74     9.81  1.03× (p > 0.3)
//	SparseDotAxpy 100 nnz      53.4     43.0     43.1  1.24×
//	SparseDotAxpy 1k nnz        611      532      530  1.15×
//	SparseDotAxpy 10k nnz     11490    10330    10430  1.10×
//	SparseDotAxpy 100k nnz   151200   134200   134300  1.13×
//	SparseDotAxpy rcv1-like    65.1     61.4     59.6  1.06–1.09× (p > 0.09)
//	SparseDotAxpy w8a-like     12.1     11.8     11.8  1.02× (p > 0.4)
//
// avx2fma and avx512 run the same sparse kernels, so the difference between
// their columns shows the noise.
//
// Single rows of up to 10k entries (over ten times as many columns, the
// same row on every call) gain 1.3–1.4× in SparseDot and SparseAxpy and
// 1.1–1.25× in SparseDotAxpy from the assembly, which loads values four at
// a time and indices two at a time; at 100k entries x (8 MB) no longer fits
// in L2 and the gain of SparseDot and SparseAxpy shrinks to a few per cent.
//
// The rcv1-like rows (75 sorted entries over 47,236 columns, 8,192 rows
// cycled) gain little: their time goes to fetching x[idx[k]] from L2 and
// the rows from L3, which no instruction set changes (with the same rows
// over 3,000 columns, so that x stays in L1, SparseDot gains 1.25×,
// measured separately). The w8a-like rows (12 entries of 1.0 over 300
// columns, 16,384 rows cycled) gain little too: an empty row already costs
// 2.8 ns through SparseDot with the generic kernels and 3.3 ns with the
// assembly (one more call: the checking Go function), a third of the 9 ns
// of a w8a-like row, and twelve entries are too few for the vector loop to
// win back much more than that half nanosecond. The target of 1.3× on these
// two shapes is not met. For rows like w8a's, SparseDotRows and
// SparseAxpyRows take a range of rows in one call, which that per-row call
// no longer weighs on (BenchmarkRows; bench/RESULTS.md, "Short rows and the
// logistic's exponentials").
package kernels
