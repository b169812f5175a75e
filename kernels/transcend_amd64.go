//go:build !noasm

package kernels

import (
	"math"
	"unsafe"
)

// The AVX-512 forms of ExpNeg and Log1pUnit. They compute every lane by
// the fast path and report, by ok == false, a lane outside its range
// (x < −708 or x > 0 for the exponential, x outside [0, 1] for the
// logarithm, NaN for both); the Go side then puts math.Exp's or
// math.Log1p's value there.

//go:noescape
func expNegAVX512Asm(dst, x *float64, n int, table *[16]float64, c *[13]float64) (ok bool)

//go:noescape
func log1pUnitAVX512Asm(dst, x *float64, n int, c *[14]float64) (ok bool)

// The constants of the assembly, broadcast from these arrays, which hold
// exactly the Go constants of the pure-Go forms.
var (
	expConsts   = [13]float64{expInv, expShift, expLn2Hi, expLn2Lo, expMin, 0, expC7, expC6, expC5, expC4, expC3, expC2, 1}
	log1pConsts = [14]float64{1, 2, 0.5, sqrtTwo, ln2Hi, ln2Lo, lg1, lg2, lg3, lg4, lg5, lg6, lg7, 0}
)

func expNegAVX512(dst, x []float64) {
	checkUnary(dst, x)
	if !expNegAVX512Asm(unsafe.SliceData(dst), unsafe.SliceData(x), len(x), &expTable, &expConsts) {
		for i, v := range x {
			if !(v >= expMin && v <= 0) {
				dst[i] = math.Exp(v)
			}
		}
	}
}

func log1pUnitAVX512(dst, x []float64) {
	checkUnary(dst, x)
	if !log1pUnitAVX512Asm(unsafe.SliceData(dst), unsafe.SliceData(x), len(x), &log1pConsts) {
		for i, v := range x {
			if !(v >= 0 && v <= 1) {
				dst[i] = math.Log1p(v)
			}
		}
	}
}
