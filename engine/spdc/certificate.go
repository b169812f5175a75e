package spdc

import (
	"fmt"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// certificate returns the certificate at the current (synchronised) iterate
// and the method's duals (objective.Evaluator):
//
//	P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x)
//	D(y) = −(1/n) Σₖ φ*(yₖ, bₖ) − g*(−r),   r = (1/n) Σₖ yₖaₖ.
//
// The iteration keeps r incrementally (Eq. 13), which drifts from
// (1/n) Σₖ yₖaₖ by rounding: on data with a wide range of values by 1e-14
// per coordinate within 200 epochs, enough to move D by 5e-12 of its
// value. The certificate computes r from y itself, each coordinate summed
// over the rows in order (so the result does not depend on the thread
// count), and the iteration continues from that exact r.
func (s *solver) certificate() (driver.TracePoint, error) {
	c, err := s.eval.At(s.xv, s.y, objective.OwnDuals)
	if err != nil {
		return driver.TracePoint{}, fmt.Errorf("engine: certificate: %w", err)
	}
	copy(s.r, s.eval.DualVector())
	if s.shift != nil {
		// The iteration keeps r − λc (the centre's shift of the prox).
		for j, sh := range s.shift {
			s.r[j] -= sh
		}
	}
	switch {
	case s.fastL2:
		s.rebaseL2(0, int32(s.d))
		// rebaseL2 restarted every coordinate at scale 1 with the exact r:
		// restart the segment and the pending batch's coefficients to match.
		s.clearCorr = true
		s.seg.reset()
		bt := &s.batches[s.loop.Slot()]
		s.seg.next(&bt.l2, bt.tau, bt.theta, 1/(1+bt.tau*s.lam), bt.scale, s.rScale)
	case s.lazy:
		for j := range s.lz {
			s.lz[j].r = s.r[j]
		}
	}
	return driver.TracePointOf(c), nil
}
