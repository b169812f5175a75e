//go:build !noasm

package kernels

import "unsafe"

// The assembly kernels and the Go functions that check their arguments
// before calling them. The checks stay in Go because only Go can panic.
// The Go functions call the assembly directly, not through a function
// value, so no ABI wrapper intervenes, and pass bare pointers and lengths
// rather than slices, because every argument word of an assembly function
// goes through memory.
//
// The sparse kernels check every index against the bound they are given
// before using it, and return ok == false, without having touched memory
// outside the dense vector, if one is out of range.

//go:noescape
func dotAVX2Asm(x, y *float64, n int) float64

//go:noescape
func axpyAVX2Asm(alpha float64, x, y *float64, n int)

//go:noescape
func dotAVX512Asm(x, y *float64, n int) float64

//go:noescape
func axpyAVX512Asm(alpha float64, x, y *float64, n int)

//go:noescape
func sparseDotAVX2Asm(val *float64, idx *int32, n int, x *float64, xlen int) (sum float64, ok bool)

//go:noescape
func sparseAxpyAVX2Asm(alpha float64, val *float64, idx *int32, n int, y *float64, ylen int) (ok bool)

//go:noescape
func sparseDotAxpyAVX2Asm(alpha float64, val *float64, idx *int32, n int, x, y *float64, bound int) (sum float64, ok bool)

// The pointers below come from unsafe.SliceData, which unlike &s[0] is
// defined for empty slices; the kernels then read nothing.

func dotAVX2(x, y []float64) float64 {
	checkDot(x, y)
	return dotAVX2Asm(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func axpyAVX2(alpha float64, x, y []float64) {
	checkAxpy(x, y)
	axpyAVX2Asm(alpha, unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func dotAVX512(x, y []float64) float64 {
	checkDot(x, y)
	return dotAVX512Asm(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func axpyAVX512(alpha float64, x, y []float64) {
	checkAxpy(x, y)
	axpyAVX512Asm(alpha, unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func sparseDotAVX2(val []float64, idx []int32, x []float64) float64 {
	checkSparse(val, idx)
	sum, ok := sparseDotAVX2Asm(unsafe.SliceData(val), unsafe.SliceData(idx), len(idx), unsafe.SliceData(x), len(x))
	if !ok {
		panic(indexError(idx, len(x)))
	}
	return sum
}

func sparseAxpyAVX2(alpha float64, val []float64, idx []int32, y []float64) {
	checkSparse(val, idx)
	if !sparseAxpyAVX2Asm(alpha, unsafe.SliceData(val), unsafe.SliceData(idx), len(idx), unsafe.SliceData(y), len(y)) {
		panic(indexError(idx, len(y)))
	}
}

func sparseDotAxpyAVX2(alpha float64, val []float64, idx []int32, x, y []float64) float64 {
	n := checkDotAxpy(val, idx, x, y)
	sum, ok := sparseDotAxpyAVX2Asm(alpha, unsafe.SliceData(val), unsafe.SliceData(idx), len(idx), unsafe.SliceData(x), unsafe.SliceData(y), n)
	if !ok {
		panic(indexError(idx, n))
	}
	return sum
}

//go:noescape
func sparseDotLanes1Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)

//go:noescape
func sparseDotLanes2Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)

//go:noescape
func sparseAxpyLanes1Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)

//go:noescape
func sparseAxpyLanes2Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)

//go:noescape
func sparseDotLanes4Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)

//go:noescape
func sparseDotLanes8Asm(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool)

//go:noescape
func sparseAxpyLanes4Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)

//go:noescape
func sparseAxpyLanes8Asm(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool)

// sparseDotLanesAsm and sparseAxpyLanesAsm are the lanes kernels by lane
// count; checkLanes has refused any other.
var (
	sparseDotLanesAsm = [...]func(val *float64, idx *int32, n int, v *float64, rows int, t *float64) (ok bool){
		1: sparseDotLanes1Asm, 2: sparseDotLanes2Asm, 4: sparseDotLanes4Asm, 8: sparseDotLanes8Asm,
	}
	sparseAxpyLanesAsm = [...]func(u, val *float64, idx *int32, n int, o *float64, rows int) (ok bool){
		1: sparseAxpyLanes1Asm, 2: sparseAxpyLanes2Asm, 4: sparseAxpyLanes4Asm, 8: sparseAxpyLanes8Asm,
	}
)

func sparseDotLanesAVX2(val []float64, idx []int32, v, t []float64) {
	rows := checkLanes(val, idx, len(t), len(v))
	if !sparseDotLanesAsm[len(t)](unsafe.SliceData(val), unsafe.SliceData(idx), len(idx), unsafe.SliceData(v), rows, &t[0]) {
		panic(indexError(idx, rows))
	}
}

func sparseAxpyLanesAVX2(u, val []float64, idx []int32, o []float64) {
	rows := checkLanes(val, idx, len(u), len(o))
	if !sparseAxpyLanesAsm[len(u)](&u[0], unsafe.SliceData(val), unsafe.SliceData(idx), len(idx), unsafe.SliceData(o), rows) {
		panic(indexError(idx, rows))
	}
}

//go:noescape
func dotTile4AVX512Asm(dst *[16]float64, a *float64, lda int, b *float64, ldb int, k int)

func dotTile4AVX512(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int) {
	checkTile(a, lda, b, ldb, k)
	dotTile4AVX512Asm(dst, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, k)
}
