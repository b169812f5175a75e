package kernels

import (
	"fmt"
	"os"
	"unsafe"
)

// Dot returns Σ x[i]*y[i] for i < len(x).
//
// Dot panics if len(y) < len(x), which is a programming error.
func Dot(x, y []float64) float64 { return dotFunc(x, y) }

// Axpy sets y[i] += alpha*x[i] for i < len(x).
//
// Axpy panics if len(y) < len(x), or if x and y overlap without starting at
// the same element: y[i] += alpha*y[i] is fine, but with a shifted view the
// vectorised loops would read elements in a different state than a
// sequential loop does.
func Axpy(alpha float64, x, y []float64) { axpyFunc(alpha, x, y) }

// SparseDot returns Σ_k val[k]*x[idx[k]], the dot product of the sparse
// vector (val, idx) with the dense vector x.
//
// The indices are 0-based, need not be sorted and may repeat. SparseDot
// panics if len(val) != len(idx) or if some idx[k] is outside [0, len(x));
// every implementation checks each index before it reads x.
func SparseDot(val []float64, idx []int32, x []float64) float64 {
	return sparseDotFunc(val, idx, x)
}

// SparseAxpy sets y[idx[k]] += alpha*val[k] for every k, in order of k, so
// that repeated indices accumulate.
//
// SparseAxpy panics if len(val) != len(idx) or if some idx[k] is outside
// [0, len(y)). Each index is checked before the element it addresses is
// written, so nothing outside y is ever touched; when SparseAxpy panics, the
// updates of a prefix of the entries may already have been applied.
func SparseAxpy(alpha float64, val []float64, idx []int32, y []float64) {
	sparseAxpyFunc(alpha, val, idx, y)
}

// SparseDotAxpy is SparseDot followed by SparseAxpy over the same entries,
// fused into one pass: it returns Σ_k val[k]*x[idx[k]] and sets
// y[idx[k]] += alpha*val[k] for every k.
//
// Because x and y must not overlap, every read of x sees its value from
// before the call. With n = min(len(x), len(y)), SparseDotAxpy panics if
// x[:n] and y[:n] overlap, if len(val) != len(idx), or if some idx[k] is
// outside [0, n), in which case the updates of a prefix of the entries may
// already have been applied to y.
func SparseDotAxpy(alpha float64, val []float64, idx []int32, x, y []float64) float64 {
	return sparseDotAxpyFunc(alpha, val, idx, x, y)
}

// Impl names the implementation chosen at start-up: "avx512", "avx2fma" or
// "generic".
func Impl() string { return implName }

// The implementation in use, one variable per kernel, set once by init.
// Each exported function is a one-line call through its variable, so that
// the compiler inlines it and a call costs one indirect call; the functions
// behind the variables check their arguments and then call their kernel
// directly.
var (
	implName           string
	dotFunc            func(x, y []float64) float64
	axpyFunc           func(alpha float64, x, y []float64)
	sparseDotFunc      func(val []float64, idx []int32, x []float64) float64
	sparseAxpyFunc     func(alpha float64, val []float64, idx []int32, y []float64)
	sparseDotAxpyFunc  func(alpha float64, val []float64, idx []int32, x, y []float64) float64
	sparseDotRowsFunc  func(ptr []int64, val []float64, idx []int32, x, out []float64)
	sparseAxpyRowsFunc func(ptr []int64, coef, val []float64, idx []int32, y []float64)
	expNegFunc         func(dst, x []float64)
	log1pUnitFunc      func(dst, x []float64)

	sparseDotLanesFunc  func(val []float64, idx []int32, v, t []float64)
	sparseAxpyLanesFunc func(u, val []float64, idx []int32, o []float64)

	dotTile4Func func(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int)
)

// impl is one complete implementation of the exported functions, with
// their contracts, checks and panics included.
type impl struct {
	name           string
	dot            func(x, y []float64) float64
	axpy           func(alpha float64, x, y []float64)
	sparseDot      func(val []float64, idx []int32, x []float64) float64
	sparseAxpy     func(alpha float64, val []float64, idx []int32, y []float64)
	sparseDotAxpy  func(alpha float64, val []float64, idx []int32, x, y []float64) float64
	sparseDotRows  func(ptr []int64, val []float64, idx []int32, x, out []float64)
	sparseAxpyRows func(ptr []int64, coef, val []float64, idx []int32, y []float64)
	expNeg         func(dst, x []float64)
	log1pUnit      func(dst, x []float64)

	sparseDotLanes  func(val []float64, idx []int32, v, t []float64)
	sparseAxpyLanes func(u, val []float64, idx []int32, o []float64)

	dotTile4 func(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int)
}

var genericImpl = impl{
	name:           "generic",
	dot:            dotGeneric,
	axpy:           axpyGeneric,
	sparseDot:      sparseDotGeneric,
	sparseAxpy:     sparseAxpyGeneric,
	sparseDotAxpy:  sparseDotAxpyGeneric,
	sparseDotRows:  sparseDotRowsGeneric,
	sparseAxpyRows: sparseAxpyRowsGeneric,
	expNeg:         expNegGeneric,
	log1pUnit:      log1pUnitGeneric,

	sparseDotLanes:  sparseDotLanesGeneric,
	sparseAxpyLanes: sparseAxpyLanesGeneric,

	dotTile4: dotTile4Generic,
}

// envVar names the environment variable that overrides the choice of
// implementation; see the package documentation.
const envVar = "ADASPDC_KERNELS"

func init() {
	use(choose(os.Getenv(envVar), supportedImpls()))
}

// choose returns the implementation named by request if it is supported,
// and otherwise the best supported one. supported is ordered from the
// generic kernels to the best ones.
func choose(request string, supported []impl) impl {
	for _, im := range supported {
		if im.name == request {
			return im
		}
	}
	return supported[len(supported)-1]
}

// use puts im behind the exported functions.
func use(im impl) {
	implName = im.name
	dotFunc = im.dot
	axpyFunc = im.axpy
	sparseDotFunc = im.sparseDot
	sparseAxpyFunc = im.sparseAxpy
	sparseDotAxpyFunc = im.sparseDotAxpy
	sparseDotRowsFunc = im.sparseDotRows
	sparseAxpyRowsFunc = im.sparseAxpyRows
	expNegFunc = im.expNeg
	log1pUnitFunc = im.log1pUnit
	sparseDotLanesFunc = im.sparseDotLanes
	sparseAxpyLanesFunc = im.sparseAxpyLanes
	dotTile4Func = im.dotTile4
}

// Panic messages for programming errors.
const (
	errShortY  = "kernels: len(y) < len(x)"
	errLength  = "kernels: len(val) != len(idx)"
	errOverlap = "kernels: x and y overlap"
)

// checkDot panics unless y is long enough for x.
func checkDot(x, y []float64) {
	if len(y) < len(x) {
		panic(errShortY)
	}
}

// checkAxpy panics unless y is long enough for x and the two do not
// overlap with a shift.
func checkAxpy(x, y []float64) {
	if len(y) < len(x) {
		panic(errShortY)
	}
	if len(x) > 1 {
		d := distance(x, y)
		if d != 0 && (d < uintptr(len(x))*8 || -d < uintptr(len(x))*8) {
			panic(errOverlap)
		}
	}
}

// checkSparse panics unless val and idx have the same length.
func checkSparse(val []float64, idx []int32) {
	if len(val) != len(idx) {
		panic(errLength)
	}
}

// checkDotAxpy panics unless val and idx have the same length and the parts
// of x and y that indices can reach do not overlap. It returns the bound on
// the indices, min(len(x), len(y)).
func checkDotAxpy(val []float64, idx []int32, x, y []float64) int {
	if len(val) != len(idx) {
		panic(errLength)
	}
	n := min(len(x), len(y))
	if n > 0 {
		d := distance(x, y)
		if d < uintptr(n)*8 || -d < uintptr(n)*8 {
			panic(errOverlap)
		}
	}
	return n
}

// indexError describes the first index outside [0, n), for a kernel that
// has found that there is one to panic with.
func indexError(idx []int32, n int) string {
	for k, j := range idx {
		if uint(j) >= uint(n) {
			return fmt.Sprintf("kernels: idx[%d] = %d out of range [0, %d)", k, j, n)
		}
	}
	return "kernels: internal error: a kernel rejected valid indices"
}

// distance returns the address of x[0] minus that of y[0], modulo 2⁶⁴. The
// elements x[:n] and y[:n] overlap exactly when distance or its negation is
// below 8n. Both slices must be non-empty.
func distance(x, y []float64) uintptr {
	return uintptr(unsafe.Pointer(&x[0])) - uintptr(unsafe.Pointer(&y[0]))
}
