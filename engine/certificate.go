package engine

import (
	"math"

	"github.com/adaspdc/adaspdc/kernels"
)

// certChunk is the number of rows (or coordinates) summed together before
// the partial sums are added in chunk order. The chunks do not depend on the
// number of workers, so neither do the certificate's last bits.
const certChunk = 4096

// certificate computes P(x), D(y) and the gap at the current (synchronised)
// iterate, in parallel over rows and coordinates:
//
//	P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x)
//	D(y) = −(1/n) Σₖ φ*(yₖ, bₖ) − g*(−r),   r = (1/n) Σₖ yₖaₖ.
//
// Weak duality gives P(x) ≥ D(y) for any x and feasible y, so P − D bounds
// the suboptimality of x.
func (s *solver) certificate() TracePoint {
	nr := (s.n + certChunk - 1) / certChunk
	nd := (s.d + certChunk - 1) / certChunk
	loss, b := s.prob.Loss, s.prob.B
	primal := make([]float64, nr+nd)
	dual := make([]float64, nr+nd)
	threads := s.pool.Threads()
	s.pool.Run(func(w int) {
		for c := w; c < nr+nd; c += threads {
			var sp, sd float64
			if c < nr {
				for k := c * certChunk; k < min((c+1)*certChunk, s.n); k++ {
					val, idx := s.x.Row(k)
					sp += loss.Value(kernels.SparseDot(val, idx, s.xv), b[k])
					sd += loss.Conj(s.y[k], b[k])
				}
				sp /= float64(s.n)
				sd /= float64(s.n)
			} else {
				lo, hi := (c-nr)*certChunk, min((c-nr+1)*certChunk, s.d)
				sp = s.reg.Value(s.xv[lo:hi])
				sd = s.reg.ConjNeg(s.r[lo:hi])
			}
			primal[c], dual[c] = sp, sd
		}
	})
	var p, d float64
	for c := range primal {
		p += primal[c]
		d -= dual[c]
	}
	gap := p - d
	return TracePoint{Primal: p, Dual: d, Gap: gap, RelGap: gap / math.Max(1, math.Abs(p))}
}
