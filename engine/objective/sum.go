package objective

import "math"

// Sum is a compensated sum (Neumaier's variant of Kahan's: the running
// sum and, beside it, the sum of every addition's exact rounding error):
// its error is a few ulps of the result rather than of the largest partial
// sum.
type Sum struct{ s, c float64 }

// Add adds v to the sum. The rounding error of s + v comes from Knuth's
// TwoSum, which gives exactly the error of Neumaier's comparison of the two
// addends, (s − t) + v or (v − t) + s, without its branch: both are the
// exact error, so the bits are the same.
func (n *Sum) Add(v float64) {
	// v is rounded first: where the caller's product is inlined, a fused
	// multiply-add (GOAMD64=v3) would otherwise give other bits than the
	// sum of the rounded product, which the sums over ranks add.
	v = float64(v)
	s := n.s
	t := s + v
	bt := t - s
	n.c += (s - (t - bt)) + (v - bt)
	n.s = t
}

// Sum returns the sum of the values added so far.
func (n *Sum) Sum() float64 { return n.s + n.c }

// AddProduct returns the compensated sum (s, c) with the product y·a
// added: s is the rounded running sum and c carries every rounding error
// so far, the product's from an FMA and the addition's from Knuth's
// TwoSum, so that s + c is the sum of the exact products to within a few
// ulps however much the terms cancel. TwoSum gives the same error term as
// Neumaier's comparison of the two addends (Sum.Add) without its branch:
// where s is loaded from a random column of wide data, that branch waits
// on the load, and each time it is mispredicted the loads of the entries
// after it, issued meanwhile, are thrown away.
func AddProduct(s, c, y, a float64) (float64, float64) {
	t := float64(y * a) // rounded here: a fused y·a + s would lose the error
	e := math.FMA(y, a, -t)
	u := s + t
	bt := u - s
	return u, c + (((s - (u - bt)) + (t - bt)) + e)
}
