package blocks

import (
	"math"

	"gonum.org/v1/gonum/lapack/gonum"
)

// tridiagScratch holds the buffers of topEigenpair so that Lanczos steps do
// not allocate.
type tridiagScratch struct {
	sub, diag, super, rhs []float64
}

// topEigenpair returns the largest eigenvalue θ of the symmetric tridiagonal
// matrix T with diagonal alpha and off-diagonal beta (len(beta) =
// len(alpha)-1), and the absolute value of the last component of a unit
// eigenvector of T for θ.
//
// θ comes from bisection on Sturm counts, which is accurate to a few ulps of
// ‖T‖ and costs O(k) per halving; the eigenvector from two steps of inverse
// iteration (tridiagonal LU with partial pivoting), as in LAPACK's Dstein.
// Lanczos needs only this one component: β_k·|s_k| bounds the residual of the
// top Ritz pair.
func (s *tridiagScratch) topEigenpair(alpha, beta []float64) (theta, last float64) {
	k := len(alpha)
	if k == 1 {
		return alpha[0], 1
	}
	theta = largestEigenvalue(alpha, beta)

	s.sub = resize(s.sub, k-1)
	s.super = resize(s.super, k-1)
	s.diag = resize(s.diag, k)
	s.rhs = resize(s.rhs, k)
	for i := range s.rhs {
		s.rhs[i] = 1
	}
	var impl gonum.Implementation
	shift := theta
	// An exactly singular T−θI means θ is exact to the last bit. Moving the
	// shift off θ by a few ulps lets the solve go through and still amplifies
	// the eigenvector by ~1/ulp; the nudge doubles on each failure, so the
	// shift soon leaves the finitely many singular points.
	nudge := 4*epsilon*math.Abs(theta) + 0x1p-1022
	for range 2 {
		for {
			copy(s.sub, beta)
			copy(s.super, beta)
			for i := range s.diag {
				s.diag[i] = alpha[i] - shift
			}
			if impl.Dgtsv(k, 1, s.sub, s.diag, s.super, s.rhs, 1) {
				break
			}
			shift = theta + nudge
			nudge *= 2
			for i := range s.rhs {
				s.rhs[i] = 1
			}
		}
		// Divide by the largest magnitude before taking the norm: the
		// amplification by ~1/ulp could otherwise overflow the squares
		// when T's entries are large.
		maxAbs := 0.0
		for _, v := range s.rhs {
			maxAbs = max(maxAbs, math.Abs(v))
		}
		scaleTo(s.rhs, 1/maxAbs)
		scaleTo(s.rhs, 1/norm2(s.rhs))
	}
	return theta, math.Abs(s.rhs[k-1])
}

// epsilon is the unit roundoff of float64 (half the gap from 1 to the next
// float64).
const epsilon = 0x1p-53

// largestEigenvalue returns the largest eigenvalue of the symmetric
// tridiagonal matrix with diagonal alpha and off-diagonal beta, by bisection
// on the Gershgorin interval. The Sturm count is the number of negative
// pivots of the LDLᵀ factorisation of T−xI, with tiny pivots replaced by
// −pivmin as in LAPACK's Dlaebz, which makes the count monotone in x.
func largestEigenvalue(alpha, beta []float64) float64 {
	k := len(alpha)
	lo, hi := math.Inf(1), math.Inf(-1)
	maxBetaSq := 0.0
	for i, a := range alpha {
		r := 0.0
		if i > 0 {
			r += math.Abs(beta[i-1])
		}
		if i < k-1 {
			r += math.Abs(beta[i])
			maxBetaSq = max(maxBetaSq, beta[i]*beta[i])
		}
		lo = min(lo, a-r)
		hi = max(hi, a+r)
	}
	pivmin := 0x1p-1022 * max(1, maxBetaSq) // smallest normal × max(1, β²)
	// Widen the interval so rounding in the Gershgorin sums cannot exclude
	// the eigenvalue.
	width := 2*epsilon*max(math.Abs(lo), math.Abs(hi)) + pivmin
	lo -= width
	hi += width
	below := func(x float64) int {
		count := 0
		d := 1.0
		for i, a := range alpha {
			if i == 0 {
				d = a - x
			} else {
				d = a - x - beta[i-1]*beta[i-1]/d
			}
			if math.Abs(d) < pivmin {
				d = -pivmin
			}
			if d < 0 {
				count++
			}
		}
		return count
	}
	for iter := 0; iter < 128; iter++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi || hi-lo <= 2*epsilon*max(math.Abs(lo), math.Abs(hi))+pivmin {
			break
		}
		if below(mid) == k {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo + (hi-lo)/2
}

// resize returns s with length n, reusing its storage when it is large
// enough. The contents are not preserved.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// norm2 returns the Euclidean norm of v. The vectors it sees are Lanczos
// vectors of blocks scaled to a safe range, or inverse-iteration solutions
// scaled to a largest entry of 1, so the plain sum of squares cannot
// overflow.
func norm2(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x * x
	}
	return math.Sqrt(sum)
}
