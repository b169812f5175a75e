package engine

import (
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
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
// the suboptimality of x. The iteration keeps r incrementally (Eq. 13),
// which drifts from (1/n) Σₖ yₖaₖ by rounding: on data with a wide range of
// values by 1e-14 per coordinate within 200 epochs, enough to move D by
// 5e-12 of its value. A dual value must belong to an actual y for the
// bound to hold, so r is recomputed from y here, each coordinate by its
// owner with the rows summed in order (the result does not depend on the
// thread count), and the iteration continues from the exact r.
func (s *solver) certificate() (TracePoint, error) {
	nr := (s.n + certChunk - 1) / certChunk
	nd := (s.d + certChunk - 1) / certChunk
	loss, b := s.prob.Loss, s.prob.B
	primal := make([]float64, nr+nd)
	dual := make([]float64, nr+nd)
	threads := s.pool.Threads()
	err := s.pool.Run(func(w int) {
		lo, hi := s.certOwners.Range(w)
		s.recomputeR(lo, hi)
		s.bar.Wait()
		for c := w; c < nr+nd; c += threads {
			var sp, sd float64
			if c < nr {
				// Compensated: P and D are often far smaller than the
				// terms (the logistic conjugates are near −0.69 where D is
				// 0.05), and plain sums left D 1e-14 off D(y).
				var p, d objective.Sum
				for k := c * certChunk; k < min((c+1)*certChunk, s.n); k++ {
					val, idx := s.x.Row(k)
					p.Add(loss.Value(kernels.SparseDot(val, idx, s.xv), b[k]))
					d.Add(loss.Conj(s.y[k], b[k]))
				}
				sp = p.Sum() / float64(s.n)
				sd = d.Sum() / float64(s.n)
			} else {
				lo, hi := (c-nr)*certChunk, min((c-nr+1)*certChunk, s.d)
				sp = s.reg.Value(s.xv[lo:hi])
				sd = s.reg.ConjNeg(s.r[lo:hi])
				if s.shift != nil {
					// g(x) = g₀(x) − λcᵀx + λ‖c‖²/2 and
					// g*(−r) = g₀*(−(r − λc)) − λ‖c‖²/2; s.r holds r − λc.
					sp += centreTerms(s.xv[lo:hi], s.centre[lo:hi], s.shift[lo:hi])
					sd -= 0.5 * kernels.Dot(s.shift[lo:hi], s.centre[lo:hi])
				}
			}
			primal[c], dual[c] = sp, sd
		}
	})
	if err != nil {
		return TracePoint{}, fmt.Errorf("engine: certificate: %w", err)
	}
	if s.fastL2 {
		// rebaseL2 restarted every coordinate at scale 1 with the exact r:
		// restart the segment and the pending batch's coefficients to match.
		s.clearCorr = true
		s.seg.reset()
		bt := &s.batches[s.loop.Slot()]
		s.seg.next(&bt.l2, bt.tau, bt.theta, 1/(1+bt.tau*s.lam))
	}
	var ps, ds objective.Sum
	for c := range primal {
		ps.Add(primal[c])
		ds.Add(-dual[c])
	}
	p, d := ps.Sum(), ds.Sum()
	gap := p - d
	return TracePoint{Primal: p, Dual: d, Gap: gap, RelGap: gap / math.Max(1, math.Abs(p))}, nil
}

// recomputeR sets r = (1/n) Σₖ yₖaₖ on the coordinates [lo, hi), summing
// the rows in order with Neumaier's compensation, and hands the values to
// the lazy records; each product yₖaₖⱼ enters with its rounding error
// (FMA), and the sum is divided by n once. (The same compensation as the
// neumaier type, with the compensation terms kept per coordinate.)
// Compensation matters on data whose values span orders of magnitude: the
// terms then cancel to an r far smaller than they are,
// and a plain sum left D off by 2e-14 where the compensated one is exact
// to the last bit or two. The compensation terms live in u, the batch
// scratch, which is zero between iterations and is left zero.
func (s *solver) recomputeR(lo, hi int32) {
	r, comp := s.r[lo:hi], s.u[lo:hi]
	clear(r)
	inv := 1 / float64(s.n)
	full := lo == 0 && int(hi) == s.d
	for k := 0; k < s.n; k++ {
		yk := s.y[k]
		if yk == 0 {
			continue
		}
		val, idx := s.x.Row(k)
		if !full {
			a, e := sched.Clip(idx, lo, hi)
			val, idx = val[a:e], idx[a:e]
		}
		for p, j := range idx {
			// The product's rounding error, exact by FMA, joins the
			// compensation: with terms 1e4 times the sum, rounded products
			// alone left r 1e-11 off.
			v := yk * val[p]
			e := math.FMA(yk, val[p], -v)
			sum := s.r[j]
			t := sum + v
			if math.Abs(sum) >= math.Abs(v) {
				s.u[j] += ((sum - t) + v) + e
			} else {
				s.u[j] += ((v - t) + sum) + e
			}
			s.r[j] = t
		}
	}
	for j := range r {
		r[j] = (r[j] + comp[j]) * inv
	}
	if s.shift != nil {
		// The iteration keeps r − λc (the centre's shift of the prox).
		for j, sh := range s.shift[lo:hi] {
			r[j] -= sh
		}
	}
	clear(comp)
	switch {
	case s.fastL2:
		s.rebaseL2(lo, hi)
	case s.lazy:
		for j := lo; j < hi; j++ {
			s.lz[j].r = s.r[j]
		}
	}
}

// centreTerms returns −λcᵀx + λ‖c‖²/2 over a chunk, with shift = λc: what
// a centre adds to the plain elastic net's value.
func centreTerms(x, c, shift []float64) float64 {
	var sum float64
	for j, sh := range shift {
		sum += sh * (0.5*c[j] - x[j])
	}
	return sum
}
