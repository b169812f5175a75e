package objective

import "math"

// Sum is a compensated sum (Neumaier's variant of Kahan's): its error
// is a few ulps of the result rather than of the largest partial sum.
type Sum struct{ s, c float64 }

// Add adds v to the sum.
func (n *Sum) Add(v float64) {
	t := n.s + v
	if math.Abs(n.s) >= math.Abs(v) {
		n.c += (n.s - t) + v
	} else {
		n.c += (v - t) + n.s
	}
	n.s = t
}

// Sum returns the sum of the values added so far.
func (n *Sum) Sum() float64 { return n.s + n.c }
