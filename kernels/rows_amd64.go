//go:build !noasm

package kernels

import "unsafe"

// func sparseDotRowsAVX2Asm(ptr *int64, rows int, val *float64, idx *int32, x *float64, xlen int, out *float64) (ok bool)
//
//go:noescape
func sparseDotRowsAVX2Asm(ptr *int64, rows int, val *float64, idx *int32, x *float64, xlen int, out *float64) (ok bool)

func sparseDotRowsAVX2(ptr []int64, val []float64, idx []int32, x, out []float64) {
	checkRows(ptr, val, idx, len(out))
	if len(out) == 0 {
		return
	}
	if !sparseDotRowsAVX2Asm(unsafe.SliceData(ptr), len(out), unsafe.SliceData(val), unsafe.SliceData(idx), unsafe.SliceData(x), len(x), unsafe.SliceData(out)) {
		panic(rowsError(ptr[:len(out)+1], len(val), idx, len(x)))
	}
}

// func sparseAxpyRowsAVX2Asm(ptr *int64, rows int, coef, val *float64, idx *int32, y *float64, ylen int) (ok bool)
//
//go:noescape
func sparseAxpyRowsAVX2Asm(ptr *int64, rows int, coef, val *float64, idx *int32, y *float64, ylen int) (ok bool)

func sparseAxpyRowsAVX2(ptr []int64, coef, val []float64, idx []int32, y []float64) {
	checkRows(ptr, val, idx, len(coef))
	if len(coef) == 0 {
		return
	}
	if !sparseAxpyRowsAVX2Asm(unsafe.SliceData(ptr), len(coef), unsafe.SliceData(coef), unsafe.SliceData(val), unsafe.SliceData(idx), unsafe.SliceData(y), len(y)) {
		panic(rowsError(ptr[:len(coef)+1], len(val), idx, len(y)))
	}
}
