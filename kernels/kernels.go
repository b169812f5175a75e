package kernels

import (
	"fmt"
	"os"
	"unsafe"
)

// Dot returns Σ x[i]*y[i] for i < len(x).
//
// Dot panics if len(y) < len(x), which is a programming error.
func Dot(x, y []float64) float64 {
	if len(y) < len(x) {
		panic(errShortY)
	}
	return dotKernel(x, y)
}

// Axpy sets y[i] += alpha*x[i] for i < len(x).
//
// Axpy panics if len(y) < len(x), or if x and y overlap without starting at
// the same element (y[i] += alpha*y[i] is fine; a shifted view is not,
// because the vectorised loop would read elements it has already updated
// in a different order than a sequential loop).
func Axpy(alpha float64, x, y []float64) {
	if len(y) < len(x) {
		panic(errShortY)
	}
	if overlapShifted(x, y[:len(x)]) {
		panic(errOverlap)
	}
	axpyKernel(alpha, x, y)
}

// SparseDot returns Σ_k val[k]*x[idx[k]], the dot product of the sparse
// vector (val, idx) with the dense vector x.
//
// The indices are 0-based, need not be sorted and may repeat. SparseDot
// panics if len(val) != len(idx) or if some idx[k] is outside [0, len(x)):
// every implementation checks every index before it reads x.
func SparseDot(val []float64, idx []int32, x []float64) float64 {
	if len(val) != len(idx) {
		panic(errLength)
	}
	sum, ok := sparseDotKernel(val, idx, x)
	if !ok {
		panicIndex(idx, len(x))
	}
	return sum
}

// SparseAxpy sets y[idx[k]] += alpha*val[k] for every k, in order of k, so
// that repeated indices accumulate.
//
// SparseAxpy panics if len(val) != len(idx) or if some idx[k] is outside
// [0, len(y)). Indices are checked before the element they address is
// written, so nothing outside y is ever touched; when SparseAxpy panics, the
// updates of a prefix of the entries may already have been applied.
func SparseAxpy(alpha float64, val []float64, idx []int32, y []float64) {
	if len(val) != len(idx) {
		panic(errLength)
	}
	if !sparseAxpyKernel(alpha, val, idx, y) {
		panicIndex(idx, len(y))
	}
}

// SparseDotAxpy is SparseDot followed by SparseAxpy over the same entries,
// fused into one pass: it returns Σ_k val[k]*x[idx[k]] and sets
// y[idx[k]] += alpha*val[k] for every k.
//
// Because x and y must not overlap, every read of x sees its value from
// before the call. With n = min(len(x), len(y)), SparseDotAxpy panics if
// x[:n] and y[:n] overlap, if
// len(val) != len(idx), or if some idx[k] is outside [0, n),
// in which case the updates of a prefix of the entries may already have
// been applied to y.
func SparseDotAxpy(alpha float64, val []float64, idx []int32, x, y []float64) float64 {
	if len(val) != len(idx) {
		panic(errLength)
	}
	n := min(len(x), len(y))
	if overlap(x[:n], y[:n]) {
		panic(errOverlap)
	}
	sum, ok := sparseDotAxpyKernel(alpha, val, idx, x, y)
	if !ok {
		panicIndex(idx, n)
	}
	return sum
}

// Impl names the implementation chosen at start-up: "avx512", "avx2fma" or
// "generic".
func Impl() string { return implName }

// The kernels in use, chosen once by init. Each is called through its own
// variable so that a kernel costs one indirect call and nothing more.
var (
	implName            string
	dotKernel           func(x, y []float64) float64
	axpyKernel          func(alpha float64, x, y []float64)
	sparseDotKernel     func(val []float64, idx []int32, x []float64) (float64, bool)
	sparseAxpyKernel    func(alpha float64, val []float64, idx []int32, y []float64) bool
	sparseDotAxpyKernel func(alpha float64, val []float64, idx []int32, x, y []float64) (float64, bool)
)

// impl is one complete set of kernels. The wrappers above have checked
// slice lengths and overlap before a kernel runs; the sparse kernels check
// the indices themselves and report a bad one by returning false.
type impl struct {
	name          string
	dot           func(x, y []float64) float64
	axpy          func(alpha float64, x, y []float64)
	sparseDot     func(val []float64, idx []int32, x []float64) (float64, bool)
	sparseAxpy    func(alpha float64, val []float64, idx []int32, y []float64) bool
	sparseDotAxpy func(alpha float64, val []float64, idx []int32, x, y []float64) (float64, bool)
}

var genericImpl = impl{
	name:          "generic",
	dot:           dotGeneric,
	axpy:          axpyGeneric,
	sparseDot:     sparseDotGeneric,
	sparseAxpy:    sparseAxpyGeneric,
	sparseDotAxpy: sparseDotAxpyGeneric,
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

// use makes im the implementation behind the exported functions.
func use(im impl) {
	implName = im.name
	dotKernel = im.dot
	axpyKernel = im.axpy
	sparseDotKernel = im.sparseDot
	sparseAxpyKernel = im.sparseAxpy
	sparseDotAxpyKernel = im.sparseDotAxpy
}

const (
	errShortY  = "kernels: len(y) < len(x)"
	errLength  = "kernels: len(val) != len(idx)"
	errOverlap = "kernels: x and y overlap"
)

// panicIndex panics with the position and value of the first index outside
// [0, n). A kernel has reported that there is one.
func panicIndex(idx []int32, n int) {
	for k, j := range idx {
		if uint(j) >= uint(n) {
			panic(fmt.Sprintf("kernels: idx[%d] = %d out of range [0, %d)", k, j, n))
		}
	}
	panic("kernels: internal error: a kernel rejected valid indices")
}

// overlap reports whether x and y share any element.
func overlap(x, y []float64) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xlo, ylo := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	xhi, yhi := xlo+uintptr(len(x))*8, ylo+uintptr(len(y))*8
	return xlo < yhi && ylo < xhi
}

// overlapShifted reports whether x and y share an element without starting
// at the same one.
func overlapShifted(x, y []float64) bool {
	return overlap(x, y) && &x[0] != &y[0]
}
