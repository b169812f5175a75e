package engine

import "math"

// neumaier is a compensated sum (Neumaier's variant of Kahan's): its error
// is a few ulps of the result rather than of the largest partial sum.
type neumaier struct{ s, c float64 }

func (n *neumaier) add(v float64) {
	t := n.s + v
	if math.Abs(n.s) >= math.Abs(v) {
		n.c += (n.s - t) + v
	} else {
		n.c += (v - t) + n.s
	}
	n.s = t
}

func (n *neumaier) sum() float64 { return n.s + n.c }
