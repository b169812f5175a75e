//go:build !noasm

package kernels

// The assembly kernels and the Go functions that check their arguments
// before calling them. The checks stay in Go because only Go can panic;
// calling the assembly directly (not through a function value) costs no
// ABI wrapper. The sparse kernels check every index themselves and return
// ok == false, without having touched memory outside x and y, when one is
// out of range.

//go:noescape
func dotAVX2Asm(x, y []float64) float64

//go:noescape
func axpyAVX2Asm(alpha float64, x, y []float64)

//go:noescape
func dotAVX512Asm(x, y []float64) float64

//go:noescape
func axpyAVX512Asm(alpha float64, x, y []float64)

//go:noescape
func sparseDotAVX2Asm(val []float64, idx []int32, x []float64) (sum float64, ok bool)

//go:noescape
func sparseAxpyAVX2Asm(alpha float64, val []float64, idx []int32, y []float64) (ok bool)

//go:noescape
func sparseDotAxpyAVX2Asm(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool)

func dotAVX2(x, y []float64) float64 {
	checkDot(x, y)
	return dotAVX2Asm(x, y)
}

func axpyAVX2(alpha float64, x, y []float64) {
	checkAxpy(x, y)
	axpyAVX2Asm(alpha, x, y)
}

func dotAVX512(x, y []float64) float64 {
	checkDot(x, y)
	return dotAVX512Asm(x, y)
}

func axpyAVX512(alpha float64, x, y []float64) {
	checkAxpy(x, y)
	axpyAVX512Asm(alpha, x, y)
}

func sparseDotAVX2(val []float64, idx []int32, x []float64) float64 {
	checkSparse(val, idx)
	sum, ok := sparseDotAVX2Asm(val, idx, x)
	if !ok {
		panic(indexError(idx, len(x)))
	}
	return sum
}

func sparseAxpyAVX2(alpha float64, val []float64, idx []int32, y []float64) {
	checkSparse(val, idx)
	if !sparseAxpyAVX2Asm(alpha, val, idx, y) {
		panic(indexError(idx, len(y)))
	}
}

func sparseDotAxpyAVX2(alpha float64, val []float64, idx []int32, x, y []float64) float64 {
	n := checkDotAxpy(val, idx, x, y)
	sum, ok := sparseDotAxpyAVX2Asm(alpha, val, idx, x, y)
	if !ok {
		panic(indexError(idx, n))
	}
	return sum
}
