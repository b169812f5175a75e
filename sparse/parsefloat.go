package sparse

import (
	"strconv"
	"unsafe"
)

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
}

// parseFloat parses a decimal number the way strconv.ParseFloat(s, 64) does
// and returns a bit-identical result.
//
// The fast path handles what LIBSVM files are made of: an optional sign,
// digits with an optional point, and an optional exponent, with at most 15
// significant digits and a decimal exponent in [−22, 22]. Then the mantissa
// and the power of ten are both exact float64 values and one IEEE division or
// multiplication rounds the quotient correctly (Clinger's fast path, the same
// one strconv takes first). Everything else, including every malformed token,
// goes to strconv.ParseFloat itself, which decides what is valid, so the two
// paths cannot disagree on acceptance either. The byte slice is passed to
// strconv without a copy: the string does not outlive the call, because the
// error it may return is discarded.
func parseFloat(b []byte) (float64, error) {
	if v, ok := parseFloatFast(b); ok {
		return v, nil
	}
	if len(b) == 0 {
		return strconv.ParseFloat("", 64)
	}
	return strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
}

func parseFloatFast(b []byte) (float64, bool) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	digits := 0 // significant digits accumulated in mant
	anyDigit := false
	exp := 0 // decimal exponent to apply to mant
	sawPoint := false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' {
			if sawPoint {
				return 0, false
			}
			sawPoint = true
			continue
		}
		d := c - '0'
		if d > 9 {
			break
		}
		anyDigit = true
		if mant == 0 && d == 0 {
			// Leading zeros carry no significance; after the point they
			// still shift the exponent.
			if sawPoint {
				exp--
			}
			continue
		}
		if digits == 15 {
			return 0, false
		}
		mant = mant*10 + uint64(d)
		digits++
		if sawPoint {
			exp--
		}
	}
	if !anyDigit {
		return 0, false
	}
	if i < len(b) {
		if b[i] != 'e' && b[i] != 'E' {
			return 0, false
		}
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		if i == len(b) {
			return 0, false
		}
		e := 0
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 || e > 1000 {
				return 0, false
			}
			e = e*10 + int(d)
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	var f float64
	switch {
	case mant == 0:
		f = 0
	case exp < 0 && exp >= -22:
		f = float64(mant) / exactPow10[-exp]
	case exp >= 0 && exp <= 22:
		f = float64(mant) * exactPow10[exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}
