package kernels

import "math"

// ExpNeg sets dst[i] = e^x[i] for i < len(x), within 2 ulp of math.Exp
// (TestExpNeg), for the x ≤ 0 that logistic losses exponentiate
// (x = −|z|); other x (positive, NaN) get math.Exp's value. ExpNeg panics
// if len(dst) < len(x) or if dst[:len(x)] and x overlap: the fast path
// writes every lane before the values outside its range are put right
// from x.
//
// With n the nearest integer to 16x/log 2, x = (k + j/16)·log 2 + r for
// k = ⌊n/16⌋, j = n mod 16 and |r| ≤ log 2/32, and
//
//	eˣ = 2ᵏ · 2^(j/16) · (1 + p(r)),   p(r) = r + r²/2! + … + r⁷/7!,
//
// whose truncation error is below 2e-18: a table of sixteen entries fits
// two AVX-512 registers, so the avx512 kernel looks it up with one
// permutation instead of a gather. Below −708, where eˣ is subnormal, the
// value is math.Exp's. Every implementation computes the same bits: the
// polynomial's steps are fused multiply-adds in each (math.FMA in Go), the
// other steps single roundings.
func ExpNeg(dst, x []float64) { expNegFunc(dst, x) }

// Log1pUnit sets dst[i] = log(1 + x[i]) for i < len(x), within 1 ulp
// (TestLog1pUnit), for x in [0, 1], the range of e^(−|z|) that logistic
// losses take the logarithm of; other x get math.Log1p's value. It panics
// as ExpNeg does.
//
// It is fdlibm's log1p (as Go's math.Log1p) without its branches: with
// u = fl(1 + x), c = x − (u − 1) the rounding error of u, and u = 2ᵏ(1 + f)
// for k ∈ {0, 1} with 1 + f in [√2/2, √2), s = f/(2 + f),
//
//	log(1 + x) = k·log 2 + log(1 + f) + c/u,
//	log(1 + f) = f − (f²/2 − s·(f²/2 + R(s²))),
//
// R the degree-7 minimax polynomial of fdlibm in s² (error below
// 2^−58.45). As for ExpNeg, every implementation computes the same bits.
func Log1pUnit(dst, x []float64) { log1pUnitFunc(dst, x) }

// checkUnary panics unless dst has room for len(x) results and
// dst[:len(x)] does not overlap x.
func checkUnary(dst, x []float64) {
	if len(dst) < len(x) {
		panic(errLength)
	}
	if n := len(x); n > 0 {
		if d := distance(dst, x); d < uintptr(8*n) || -d < uintptr(8*n) {
			panic(errOverlap)
		}
	}
}

const (
	expInv   = 16 / math.Ln2
	expShift = 0x1.8p52 // adding it rounds to an integer in the low bits
	// log 2/16 = expLn2Hi + expLn2Lo; expLn2Hi has 32 significant bits,
	// so that kf·expLn2Hi is exact for |kf| < 2²⁰.
	expLn2Hi = 0x1.62e42fefp-5
	expLn2Lo = 0x1.473de6af278edp-38
	expMin   = -708 // below it eˣ is subnormal
)

// expTable holds 2^(j/16), j = 0 … 15.
var expTable = func() (t [16]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 16)
	}
	return t
}()

// The coefficients of eʳ's Taylor polynomial, 1/k!.
const (
	expC2 = 1.0 / 2
	expC3 = 1.0 / 6
	expC4 = 1.0 / 24
	expC5 = 1.0 / 120
	expC6 = 1.0 / 720
	expC7 = 1.0 / 5040
)

// ExpNegOf returns ExpNeg's value for one x, with the bits of every
// implementation of ExpNeg: for code that takes its exponentials one at a
// time and must agree with a block's.
func ExpNegOf(x float64) float64 {
	if !(x >= expMin && x <= 0) {
		return math.Exp(x)
	}
	// Conversions keep each product rounded on its own, as the assembly
	// does: Go may otherwise fuse a multiply and an add.
	kf := float64(x*expInv) + expShift
	n := int64(math.Float64bits(kf))
	kf -= expShift
	r := x - kf*expLn2Hi // exact product
	r -= float64(kf * expLn2Lo)
	q := math.FMA(expC7, r, expC6)
	q = math.FMA(q, r, expC5)
	q = math.FMA(q, r, expC4)
	q = math.FMA(q, r, expC3)
	q = math.FMA(q, r, expC2)
	q = math.FMA(q, r, 1)
	p := q * r
	t := math.Float64frombits(math.Float64bits(expTable[n&15]) + uint64(n>>4)<<52)
	return math.FMA(t, p, t)
}

func expNegGeneric(dst, x []float64) {
	checkUnary(dst, x)
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = ExpNegOf(v)
	}
}

// fdlibm's coefficients of R and the split of log 2.
const (
	lg1     = 6.666666666666735130e-01
	lg2     = 3.999999999940941908e-01
	lg3     = 2.857142874366239149e-01
	lg4     = 2.222219843214978396e-01
	lg5     = 1.818357216161805012e-01
	lg6     = 1.531383769920937332e-01
	lg7     = 1.479819860511658591e-01
	ln2Hi   = 6.93147180369123816490e-01
	ln2Lo   = 1.90821492927058770002e-10
	sqrtTwo = math.Sqrt2
)

// Log1pUnitOf returns Log1pUnit's value for one x, with the bits of every
// implementation of Log1pUnit.
func Log1pUnitOf(x float64) float64 {
	if !(x >= 0 && x <= 1) {
		return math.Log1p(x)
	}
	u := 1 + x
	c := x - (u - 1) // exact: u − 1 is, and so is what it misses of x
	f, k := u-1, 0.0
	if u >= sqrtTwo {
		f, k = float64(u*0.5)-1, 1
	}
	c /= u
	s := f / (2 + f)
	z := s * s
	w := z * z
	r1 := float64(math.FMA(math.FMA(lg6, w, lg4), w, lg2) * w)
	r2 := float64(math.FMA(math.FMA(math.FMA(lg7, w, lg5), w, lg3), w, lg1) * z)
	hfsq := float64(float64(0.5*f) * f)
	t := float64(s*(hfsq+(r2+r1))) + (float64(k*ln2Lo) + c)
	return float64(k*ln2Hi) - ((hfsq - t) - f)
}

func log1pUnitGeneric(dst, x []float64) {
	checkUnary(dst, x)
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = Log1pUnitOf(v)
	}
}
