//go:build !noasm

package kernels

// The assembly kernels. Their contracts are those of the impl fields they
// fill: the exported wrappers have checked slice lengths and overlap, and
// the sparse kernels check every index before using it.

//go:noescape
func dotAVX2(x, y []float64) float64

//go:noescape
func axpyAVX2(alpha float64, x, y []float64)

//go:noescape
func dotAVX512(x, y []float64) float64

//go:noescape
func axpyAVX512(alpha float64, x, y []float64)

//go:noescape
func sparseDotFMA(val []float64, idx []int32, x []float64) (sum float64, ok bool)

//go:noescape
func sparseAxpyFMA(alpha float64, val []float64, idx []int32, y []float64) bool

//go:noescape
func sparseDotAxpyFMA(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool)

//go:noescape
func sparseDotAVX512(val []float64, idx []int32, x []float64) (sum float64, ok bool)

//go:noescape
func sparseAxpyAVX512(alpha float64, val []float64, idx []int32, y []float64) bool

//go:noescape
func sparseDotAxpyAVX512(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool)
