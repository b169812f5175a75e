package kernels

// DotTile4 sets dst[4r+c] to the dot product of the k-element rows
// a[r·lda : r·lda+k] and b[c·ldb : c·ldb+k], for r, c = 0, 1, 2, 3: the
// 4×4 block A·Bᵀ of two row-major panels of four rows each, such as the
// products of earlier rows that a blocked Cholesky factor subtracts. One
// pass reads each of the eight rows once for sixteen sums, where sixteen
// calls of Dot would read each row four times.
//
// The sums are associated as the implementation's vector width makes
// them, as Dot's are. DotTile4 panics if k < 0, if lda or ldb is less
// than k, or if a or b is too short for its four rows.
func DotTile4(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int) {
	dotTile4Func(dst, a, lda, b, ldb, k)
}

const errTile = "kernels: DotTile4's panel is shorter than four rows of k, or k < 0"

// checkTile panics unless a and b each hold four rows of k elements at
// strides lda and ldb.
func checkTile(a []float64, lda int, b []float64, ldb int, k int) {
	if k < 0 || lda < k || ldb < k || len(a) < 3*lda+k || len(b) < 3*ldb+k {
		panic(errTile)
	}
}

// dotTile4Generic is DotTile4's pure-Go twin: each of the sixteen sums
// runs over the k elements in order, with one accumulator.
func dotTile4Generic(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int) {
	checkTile(a, lda, b, ldb, k)
	for r := range 4 {
		ar := a[r*lda : r*lda+k]
		for c := range 4 {
			br := b[c*ldb : c*ldb+k]
			br = br[:len(ar)]
			var s float64
			for t, v := range ar {
				s += v * br[t]
			}
			dst[4*r+c] = s
		}
	}
}

// dotTile4Dots is DotTile4 by sixteen calls of an implementation's dot,
// for implementations without a tile kernel of their own.
func dotTile4Dots(dot func(x, y []float64) float64) func(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int) {
	return func(dst *[16]float64, a []float64, lda int, b []float64, ldb int, k int) {
		checkTile(a, lda, b, ldb, k)
		for r := range 4 {
			ar := a[r*lda : r*lda+k]
			for c := range 4 {
				dst[4*r+c] = dot(ar, b[c*ldb:c*ldb+k])
			}
		}
	}
}
