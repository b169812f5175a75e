package spdc

import "math"

// The lazy primal update.
//
// A coordinate j that no sampled row touches between iterations t₀ and t
// sees δⱼ = 0 and a constant rⱼ, so Eq. 11 reduces to the scalar map
//
//	xⱼ ← prox_{τₛg}(xⱼ − τₛ rⱼ) = soft(xⱼ − τₛ rⱼ, τₛ l1) / (1 + τₛ λ).
//
// With l1 = 0 it is affine, xⱼ ← aₛ xⱼ + bₛ rⱼ with aₛ = 1/(1+τₛλ) and
// bₛ = −τₛ aₛ, and t − t₀ steps compose to
//
//	x_t = (P_t/P_{t₀}) x_{t₀} + rⱼ P_t (S_t − S_{t₀}),
//	P_t = Π_{s<t} aₛ,   S_t = Σ_{s<t} bₛ / P_{s+1},
//
// where P and S are kept per iteration for the current segment. The segment
// ends (every coordinate is brought up to date) at each epoch's certificate
// and whenever P falls below driver.UnderflowFloor.
//
// With l1 > 0 the map is affine on each sign region: x > 0 follows the
// branch with rⱼ + l1, x < 0 the one with rⱼ − l1, and the dead zone maps to
// 0. Each branch moves monotonically towards its fixed point, so the first
// iteration at which a branch leaves its region is found by bisection over
// the segment, and the true map is applied there. A coordinate changes
// region at most twice (+ → − → 0 at worst), so catchUp is O(log t).

// affine replays the branch with constant c from (x0, t0) to t.
func (s *solver) affine(x0 float64, t0, t int32, c float64) float64 {
	pt := s.segP[t]
	return pt/s.segP[t0]*x0 + c*pt*(s.segS[t]-s.segS[t0])
}

// step applies iteration t's untouched-coordinate map once.
func (s *solver) step(x float64, t int32, r float64) float64 {
	tau := s.segTau[t]
	return s.reg.ProxPlain(x-tau*r, tau)
}

// catchUp returns the value at iteration t of a coordinate whose value at
// t0 ≤ t was x0 and whose r stayed constant.
func (s *solver) catchUp(x0 float64, t0, t int32, r float64) float64 {
	if t0 == t {
		return x0
	}
	l1 := s.reg.L1
	if l1 == 0 {
		return s.affine(x0, t0, t, r)
	}
	for t0 < t {
		switch {
		case x0 == 0:
			switch {
			case math.Abs(r) <= l1:
				return 0
			case r > l1: // moves to −(r−l1)/λ < 0 and never returns
				return s.affine(0, t0, t, r-l1)
			default:
				return s.affine(0, t0, t, r+l1)
			}
		case x0 > 0:
			c := r + l1
			if c <= 0 || s.affine(x0, t0, t, c) > 0 {
				return s.affine(x0, t0, t, c)
			}
			lo, hi := t0, t // branch value > 0 at lo, ≤ 0 at hi
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if s.affine(x0, t0, mid, c) > 0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			x0, t0 = s.step(s.affine(x0, t0, lo, c), lo, r), hi
		default:
			c := r - l1
			if c >= 0 || s.affine(x0, t0, t, c) < 0 {
				return s.affine(x0, t0, t, c)
			}
			lo, hi := t0, t
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if s.affine(x0, t0, mid, c) < 0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			x0, t0 = s.step(s.affine(x0, t0, lo, c), lo, r), hi
		}
	}
	return x0
}

// lazyCoord is a coordinate's state in a lazy run: x, x̄ and r are valid
// at iteration last of the segment; stamp is its owner's iteration count
// when the batch last touched it.
type lazyCoord struct {
	x, xbar, r float64
	last       int32
	stamp      uint32
}

// xbarAt returns x̄_j at iteration t (Eq. 14 replayed):
// x̄_t = x_t + θ_{t−1}(x_t − x_{t−1}). It only reads shared state.
func (s *solver) xbarAt(j, t int32) float64 {
	c := &s.lz[j]
	if c.last == t {
		return c.xbar
	}
	xp := s.catchUp(c.x, c.last, t-1, c.r)
	xt := s.step(xp, t-1, c.r)
	return xt + s.segTh[t-1]*(xt-xp)
}

// lazyDot returns aᵀx̄ at the current iteration for one row, computing the
// caught-up x̄ values on the fly without writing them. Only runs with
// l1 > 0 come here; L2 runs use the scaled store of lazyl2.go.
func (s *solver) lazyDot(val []float64, idx []int32, t int32) float64 {
	var sum float64
	for p, j := range idx {
		sum += val[p] * s.xbarAt(j, t)
	}
	return sum
}

// syncRange brings the coordinates [lo, hi) up to the current iteration,
// so that x, x̄ are exact there and a new segment can start, and copies
// them to the arrays that certificates and models read.
func (s *solver) syncRange(lo, hi int32) {
	t := int32(s.segT)
	for j := lo; j < hi; j++ {
		c := &s.lz[j]
		if c.last != t {
			xp := s.catchUp(c.x, c.last, t-1, c.r)
			xt := s.step(xp, t-1, c.r)
			c.xbar = xt + s.segTh[t-1]*(xt-xp)
			c.x = xt
		}
		c.last = 0
		s.xv[j], s.xbar[j], s.r[j] = c.x, c.xbar, c.r
	}
}

func (s *solver) resetSegment() {
	s.segT = 0
	s.segP[0] = 1
	s.segS[0] = 0
}

// advanceSegment records iteration t's steps and extends the running
// product and sum by one factor. Only worker 0 calls it, between barriers.
func (s *solver) advanceSegment(tau, theta float64) {
	t := s.segT
	a := 1 / (1 + tau*s.lam)
	s.segTau[t] = tau
	s.segTh[t] = theta
	s.segP[t+1] = s.segP[t] * a
	s.segS[t+1] = s.segS[t] + (-tau*a)/s.segP[t+1]
	s.segT = t + 1
}
