package kernels

import "fmt"

// SparseDotRows sets out[k] to the dot product of row k of a compressed
// sparse row matrix with x, for k < len(out): the matrix-vector product of
// a range of rows. Row k holds the entries ptr[k] ≤ p < ptr[k+1] of val and
// idx, so ptr has len(out)+1 offsets, rising, within [0, len(val)]; for
// rows lo…hi of a CSR matrix, ptr is Indptr[lo:hi+1] and val and idx are
// the whole Values and Indices.
//
// Each out[k] has the same bits as SparseDot(val[ptr[k]:ptr[k+1]],
// idx[ptr[k]:ptr[k+1]], x) in the same implementation. On short rows, one
// call for many rows saves each row a call through the implementation's
// function variable and the checks of its arguments, which cost as much as
// the row's arithmetic where rows hold a dozen entries.
//
// SparseDotRows panics if len(val) != len(idx), if len(ptr) ≤ len(out), if
// the offsets fall or leave [0, len(val)], or if some index of a row is
// outside [0, len(x)); out may then hold some rows' results.
func SparseDotRows(ptr []int64, val []float64, idx []int32, x, out []float64) {
	sparseDotRowsFunc(ptr, val, idx, x, out)
}

// checkRows panics unless val and idx have the same length and ptr holds
// at least rows+1 offsets whose first is at least 0 and whose last is at
// most len(val). That the offsets rise is checked row by row, by the
// kernels; with these bounds, rising offsets stay within val.
func checkRows(ptr []int64, val []float64, idx []int32, rows int) {
	if len(val) != len(idx) {
		panic(errLength)
	}
	if len(ptr) <= rows {
		panic(fmt.Sprintf("kernels: %d row offsets for %d rows", len(ptr), rows))
	}
	if ptr[0] < 0 || ptr[rows] > int64(len(val)) {
		panic(rowsError(ptr[:rows+1], len(val), nil, 0))
	}
}

// rowsError describes the first fault of a rows kernel's arguments: an
// offset that falls or leaves [0, n), or, where idx is given, an index
// outside [0, bound).
func rowsError(ptr []int64, n int, idx []int32, bound int) string {
	for k := range len(ptr) - 1 {
		lo, hi := ptr[k], ptr[k+1]
		if lo < 0 || hi < lo || hi > int64(n) {
			return fmt.Sprintf("kernels: row %d has offsets [%d, %d), outside [0, %d) or falling", k, lo, hi, n)
		}
		if idx == nil {
			continue
		}
		for p, j := range idx[lo:hi] {
			if uint(j) >= uint(bound) {
				return fmt.Sprintf("kernels: row %d: idx[%d] = %d out of range [0, %d)", k, lo+int64(p), j, bound)
			}
		}
	}
	return "kernels: internal error: a kernel rejected valid rows"
}

func sparseDotRowsGeneric(ptr []int64, val []float64, idx []int32, x, out []float64) {
	checkRows(ptr, val, idx, len(out))
	defer func() {
		// sparseDotGeneric's panic names the index within its row.
		if r := recover(); r != nil {
			panic(rowsError(ptr[:len(out)+1], len(val), idx, len(x)))
		}
	}()
	for k := range out {
		lo, hi := ptr[k], ptr[k+1]
		if hi < lo || hi > int64(len(val)) {
			panic(rowsError(ptr[:len(out)+1], len(val), nil, 0))
		}
		out[k] = sparseDotGeneric(val[lo:hi], idx[lo:hi], x)
	}
}

// SparseAxpyRows adds coef[k] times row k of a compressed sparse row matrix
// to y, for every k < len(coef) with coef[k] ≠ 0, in order of k: the
// transposed product y += Aᵀc over a range of rows, the rows of zero
// coefficient skipped (a hinge's inactive rows, a gradient's zero terms).
// ptr, val and idx hold the rows as for SparseDotRows.
//
// y ends with the bits of SparseAxpy(coef[k], row k, y) called for those k
// in order, in the same implementation; repeated indices accumulate.
//
// SparseAxpyRows panics if len(val) != len(idx), if len(ptr) ≤ len(coef),
// if the offsets fall or leave [0, len(val)], or if some index of a row is
// outside [0, len(y)); y may then hold some rows' updates.
func SparseAxpyRows(ptr []int64, coef, val []float64, idx []int32, y []float64) {
	sparseAxpyRowsFunc(ptr, coef, val, idx, y)
}

func sparseAxpyRowsGeneric(ptr []int64, coef, val []float64, idx []int32, y []float64) {
	checkRows(ptr, val, idx, len(coef))
	defer func() {
		// sparseAxpyGeneric's panic names the index within its row.
		if r := recover(); r != nil {
			panic(rowsError(ptr[:len(coef)+1], len(val), idx, len(y)))
		}
	}()
	for k, c := range coef {
		lo, hi := ptr[k], ptr[k+1]
		if hi < lo || hi > int64(len(val)) {
			panic(rowsError(ptr[:len(coef)+1], len(val), nil, 0))
		}
		if c != 0 {
			sparseAxpyGeneric(c, val[lo:hi], idx[lo:hi], y)
		}
	}
}
