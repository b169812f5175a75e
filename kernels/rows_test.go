package kernels

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// TestSparseDotRows checks, for every implementation, that each row's
// result has the bits of the same implementation's SparseDot on that row
// and agrees with the plain sum, on rows of every length up to 40 (every
// path through the unrolled loops, and their order), in row ranges that
// start past the first entry, with val, idx and x ending at a guard page.
func TestSparseDotRows(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(8, 9))
		const dim = 97
		var ptr []int64
		var lens []int
		for m := 0; m <= 40; m++ {
			lens = append(lens, m, 40-m, rng.IntN(13))
		}
		ptr = append(ptr, 0)
		for _, m := range lens {
			ptr = append(ptr, ptr[len(ptr)-1]+int64(m))
		}
		nnz := int(ptr[len(ptr)-1])
		val, idx, x := guardedFloat64s(t, nnz), guardedInt32s(t, nnz), guardedFloat64s(t, dim)
		randFloats(rng, val)
		randFloats(rng, x)
		for p := range idx {
			idx[p] = int32(rng.IntN(dim))
		}
		idx[nnz-1] = dim - 1
		for _, first := range []int{0, 1, 5} {
			rows := len(lens) - first
			out := make([]float64, rows+1)
			out[rows] = 42 // past out's length: left alone
			im.sparseDotRows(ptr[first:], val, idx, x, out[:rows])
			for k := range rows {
				lo, hi := ptr[first+k], ptr[first+k+1]
				same := im.sparseDot(val[lo:hi], idx[lo:hi], x)
				want, mag := sparseDotNaive(val[lo:hi], idx[lo:hi], x)
				if out[k] != same || !near(out[k], want, mag) {
					t.Fatalf("rows from %d: row %d (%d entries) = %v, SparseDot %v, plain sum %v", first, k, hi-lo, out[k], same, want)
				}
			}
			if out[rows] != 42 {
				t.Fatalf("rows from %d: wrote past out", first)
			}
		}
		im.sparseDotRows(ptr[:1], val, idx, x, nil) // no rows
	})
}

// TestSparseDotRowsPanics checks that every implementation refuses offsets
// that fall, start below zero or end past the entries, too few offsets,
// and an index outside x, naming the row.
func TestSparseDotRowsPanics(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		x, out := make([]float64, 10), make([]float64, 3)
		val := []float64{1, 2, 3, 4, 5, 6}
		idx := []int32{0, 1, 2, 3, 4, 5}
		SparseDotRows([]int64{0, 2, 4, 6}, val, idx, x, out)
		mustPanic(t, errLength, func() { SparseDotRows([]int64{0, 2, 4, 6}, val, idx[:5], x, out) })
		mustPanic(t, "kernels: 3 row offsets for 3 rows", func() { SparseDotRows([]int64{0, 2, 4}, val, idx, x, out) })
		mustPanic(t, "kernels: row 1 has offsets [4, 2), outside [0, 6) or falling", func() { SparseDotRows([]int64{0, 4, 2, 6}, val, idx, x, out) })
		mustPanic(t, "kernels: row 0 has offsets [-1, 2), outside [0, 6) or falling", func() { SparseDotRows([]int64{-1, 2, 4, 6}, val, idx, x, out) })
		mustPanic(t, "kernels: row 2 has offsets [4, 7), outside [0, 6) or falling", func() { SparseDotRows([]int64{0, 2, 4, 7}, val, idx, x, out) })
		bad := []int32{0, 1, 2, 3, 10, 5}
		mustPanic(t, "kernels: row 2: idx[4] = 10 out of range [0, 10)", func() { SparseDotRows([]int64{0, 2, 4, 6}, val, bad, x, out) })
		bad[4] = -1
		mustPanic(t, "kernels: row 2: idx[4] = -1 out of range [0, 10)", func() { SparseDotRows([]int64{0, 2, 4, 6}, val, bad, x, out) })
	})
}

// TestSparseAxpyRows checks, for every implementation, that y ends with
// the bits of the same implementation's SparseAxpy applied row by row to
// the rows of nonzero coefficient, and near the plain sums, on rows of
// every length up to 40 with repeated indices, coefficients ±0 skipped
// (a skipped row of NaN values leaves y alone), and row ranges that start
// past the first entry.
func TestSparseAxpyRows(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(10, 11))
		const dim = 53
		var lens []int
		for m := 0; m <= 40; m++ {
			lens = append(lens, m, 40-m, rng.IntN(13))
		}
		ptr := []int64{0}
		for _, m := range lens {
			ptr = append(ptr, ptr[len(ptr)-1]+int64(m))
		}
		nnz := int(ptr[len(ptr)-1])
		val, idx := guardedFloat64s(t, nnz), guardedInt32s(t, nnz)
		randFloats(rng, val)
		for p := range idx {
			idx[p] = int32(rng.IntN(dim)) // repeats within rows
		}
		idx[nnz-1] = dim - 1
		coef := make([]float64, len(lens))
		randFloats(rng, coef)
		for k := range coef {
			switch k % 5 {
			case 1:
				coef[k] = 0
				lo, hi := ptr[k], ptr[k+1]
				for p := lo; p < hi; p++ {
					val[p] = math.NaN() // must not be read into y
				}
			case 3:
				coef[k] = math.Copysign(0, -1)
			}
		}
		for _, first := range []int{0, 1, 5} {
			rows := len(lens) - first
			y := guardedFloat64s(t, dim)
			same := make([]float64, dim)
			plain := make([]float64, dim)
			mag := make([]float64, dim)
			randFloats(rng, y)
			copy(same, y)
			copy(plain, y)
			im.sparseAxpyRows(ptr[first:], coef[first:], val, idx, y)
			for k := range rows {
				c := coef[first+k]
				if c == 0 {
					continue
				}
				lo, hi := ptr[first+k], ptr[first+k+1]
				im.sparseAxpy(c, val[lo:hi], idx[lo:hi], same)
				for p := lo; p < hi; p++ {
					plain[idx[p]] += c * val[p]
					mag[idx[p]] += math.Abs(c * val[p])
				}
			}
			for j := range y {
				if y[j] != same[j] || !near(y[j], plain[j], mag[j]+math.Abs(plain[j])) {
					t.Fatalf("rows from %d: y[%d] = %v, SparseAxpy row by row %v, plain sum %v", first, j, y[j], same[j], plain[j])
				}
			}
		}
		im.sparseAxpyRows(ptr[:1], nil, val, idx, nil) // no rows
	})
}

// TestSparseAxpyRowsPanics checks the refusals of TestSparseDotRowsPanics
// for SparseAxpyRows, with the offsets of a row of zero coefficient
// checked too.
func TestSparseAxpyRowsPanics(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		y := make([]float64, 10)
		coef := []float64{1, 0, 2}
		val := []float64{1, 2, 3, 4, 5, 6}
		idx := []int32{0, 1, 2, 3, 4, 5}
		SparseAxpyRows([]int64{0, 2, 4, 6}, coef, val, idx, y)
		mustPanic(t, errLength, func() { SparseAxpyRows([]int64{0, 2, 4, 6}, coef, val, idx[:5], y) })
		mustPanic(t, "kernels: 3 row offsets for 3 rows", func() { SparseAxpyRows([]int64{0, 2, 4}, coef, val, idx, y) })
		mustPanic(t, "kernels: row 1 has offsets [4, 2), outside [0, 6) or falling", func() { SparseAxpyRows([]int64{0, 4, 2, 6}, coef, val, idx, y) })
		mustPanic(t, "kernels: row 2 has offsets [4, 7), outside [0, 6) or falling", func() { SparseAxpyRows([]int64{0, 2, 4, 7}, coef, val, idx, y) })
		bad := []int32{0, 1, 2, 3, 10, 5}
		mustPanic(t, "kernels: row 2: idx[4] = 10 out of range [0, 10)", func() { SparseAxpyRows([]int64{0, 2, 4, 6}, coef, val, bad, y) })
		bad[4] = -1
		mustPanic(t, "kernels: row 2: idx[4] = -1 out of range [0, 10)", func() { SparseAxpyRows([]int64{0, 2, 4, 6}, coef, val, bad, y) })
	})
}
