package sparse

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
}

// pow10u64 holds the powers of ten that fit in a uint64.
var pow10u64 = [...]uint64{
	1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// quotient returns mant/10ᵏ correctly rounded (to nearest, ties to even),
// for 0 < mant < 2⁶⁴ and 1 ≤ k ≤ 19: the decimals with 16 to 19 digits
// that Clinger's fast path cannot take, such as the 17-digit values that
// printing a float64 in full yields (news20 with unit rows: a third of the
// reading time went to strconv for them).
//
// With D = 10ᵏ < 2⁶⁴, the shift s makes mant·2ˢ/D lie in [2⁶², 2⁶⁴), so
// one 128-by-64-bit division gives its integer part Q, with 63 or 64
// significant bits, and a remainder R. Rounding Q + R/D to 53 bits
// depends only on Q's top bits, the first bit dropped, and whether
// anything below it is nonzero, so Q with its lowest bit set when R ≠ 0
// rounds the same way, and converting that uint64 to float64 rounds
// correctly. Multiplying by 2⁻ˢ (3 ≤ s ≤ 126) is exact.
func quotient(mant uint64, k int) float64 {
	d := pow10u64[k]
	s := 63 - bits.Len64(mant) + bits.Len64(d)
	var hi, lo uint64
	if s >= 64 {
		hi = mant << (s - 64)
	} else {
		hi, lo = mant>>(64-s), mant<<s
	}
	q, r := bits.Div64(hi, lo, d) // hi < d: the quotient is below 2⁶⁴
	if r != 0 {
		q |= 1
	}
	return float64(q) * math.Float64frombits(uint64(1023-s)<<52)
}

// parseFloat parses a decimal number the way strconv.ParseFloat(s, 64) does
// and returns a bit-identical result.
//
// The fast path handles what LIBSVM files are made of: an optional sign,
// digits with an optional point, and an optional exponent, where the digits
// read as an integer are below 2⁵³ and the decimal exponent is in [−22, 22].
// Then the mantissa and the power of ten are both exact float64 values and one IEEE division or
// multiplication rounds the quotient correctly (Clinger's fast path, the same
// one strconv takes first). Mantissas of 16 to 19 digits with a negative
// exponent down to −19 take quotient's exact division. Everything else, including every malformed token,
// goes to strconv.ParseFloat itself, which decides what is valid, so the two
// paths cannot disagree on acceptance either. The byte slice is passed to
// strconv without a copy: the string does not outlive the call, because the
// error it may return is discarded.
func parseFloat(b []byte) (float64, error) {
	if v, end, ok := scanFloat(b, 0); ok && end == len(b) {
		return v, nil
	}
	if len(b) == 0 {
		return strconv.ParseFloat("", 64)
	}
	return strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
}

// scanFloat reads the longest prefix of b[i:] shaped like
// [sign] digits [. digits] [(e|E) [sign] digits] and returns its value and
// the index just past it. It reports ok only when the prefix has a digit,
// is well formed, and takes the exact fast path; the caller must still
// check that the number ends where the token does.
func scanFloat(b []byte, i int) (f float64, end int, ok bool) {
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	// Accumulate every digit, leading zeros included: with at most 19
	// digits mant cannot overflow, and whether it is exact is decided on
	// its value below, not on the digit count.
	var mant uint64
	start := i
	for i < len(b) && b[i]-'0' <= 9 {
		mant = mant*10 + uint64(b[i]-'0')
		i++
	}
	digits := i - start
	exp := 0
	if i < len(b) && b[i] == '.' {
		i++
		frac := i
		for i < len(b) && b[i]-'0' <= 9 {
			mant = mant*10 + uint64(b[i]-'0')
			i++
		}
		digits += i - frac
		exp = frac - i
	}
	if digits == 0 || digits > 19 {
		return 0, i, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		estart := i
		e := 0
		for i < len(b) && b[i]-'0' <= 9 {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == estart {
			return 0, i, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant >= 1<<53 {
		if exp >= 0 || exp < -19 {
			return 0, i, false
		}
		f = quotient(mant, -exp)
		if neg {
			f = -f
		}
		return f, i, true
	}
	// Converting through int64 is one instruction on amd64, where uint64
	// takes a branchy sequence; below 2⁵³ both are exact.
	f = float64(int64(mant))
	switch {
	case exp == 0 || mant == 0:
	case exp < 0 && exp >= -22:
		f /= exactPow10[-exp]
	case exp > 0 && exp <= 22:
		f *= exactPow10[exp]
	default:
		return 0, i, false
	}
	if neg {
		f = -f
	}
	return f, i, true
}
