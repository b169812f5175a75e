package spdc

import (
	"slices"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/sched"
)

// The lazy primal update for g = (λ/2)‖x‖², in scaled form.
//
// A coordinate j that no sampled row touches sees Eq. 11 as the affine map
// xⱼ ← aₛ(xⱼ − τₛrⱼ), aₛ = 1/(1+τₛλ). With the running product and sum of
// the current segment,
//
//	P_t = Π_{s<t} aₛ,   S_t = Σ_{s<t} bₛ/P_{s+1},   bₛ = −τₛaₛ,
//
// t − t₀ such steps compose to x_t = P_t(ξⱼ + rⱼS_t), where the scaled value
// ξⱼ = x_{t₀}/P_{t₀} − rⱼS_{t₀} is fixed between touches. So a coordinate
// stores ξⱼ instead of x and an iteration stamp, and the extrapolated point
// of Eq. 14 is linear in the stored numbers with coefficients common to all
// coordinates:
//
//	x̄_t = (1+θ)x_t − θx_{t−1} = A_t ξⱼ + B_t rⱼ + cⱼ,
//	A_t = (1+θ)P_t − θP_{t−1},   B_t = (1+θ)P_tS_t − θP_{t−1}S_{t−1},
//
// with θ = θ_{t−1}. The correction cⱼ is zero except just after a touch,
// where x_{t−1} did not follow the affine map: the update that touched j at
// iteration t−1 sets cⱼ to x̄_t minus the formula, and the next update phase
// sets it back to zero. A row's read of x̄ is then three fused dot products
// over one 32-byte record per coordinate, with no branch and no lookup of the
// iteration at which j was last touched; the per-iteration work is O(1).
//
// A touch is cheaper still in this form. With batch sum u, Eq. 11 gives
// x_{t+1} = aₜ(x_t − τ(rⱼ + s·u)) (s the batch scale), Eq. 13
// r′ = rⱼ + u/n, and since S_{t+1} = S_t − τ/P_t, the new scaled value
// ξ′ = x_{t+1}/P_{t+1} − r′S_{t+1} is
//
//	ξ′ = ξ − κ·u,   κ = τs/P_t + S_{t+1}/n,
//
// and the correction, x̄_{t+1} minus the formula's A_{t+1}ξ′ + B_{t+1}r′,
// which takes x_t to be P_t(ξ′ + r′S_t), is θ(P_t(ξ′ + r′S_t) − x_t) =
// θP_t(S_t/n − κ)·u, that is
//
//	cⱼ = μ·u,   μ = θτ(1/n − s):
//
// three multiply-adds per touched coordinate, with κ and μ common to all
// (l2Scalars). The
// scale P falls geometrically, so when P_{t+1} would drop below
// driver.UnderflowFloor every ξⱼ is rewritten at scale P_t = 1 (O(d), rare), which
// leaves x and x̄ unchanged.

// coordL2 is one coordinate's state in a scaled lazy run: ξ, r, the
// extrapolation correction c and the batch sum u (zero between iterations).
type coordL2 struct {
	xi, r, corr, u float64
}

// l2Scalars are an iteration's coefficients of the scaled lazy update,
// common to every coordinate; drawBatch sets them.
type l2Scalars struct {
	pt, st   float64 // P_t, S_t
	a, b     float64 // read: x̄_t = a·ξ + b·r + c (A_t, B_t above)
	pt1, st1 float64 // P_{t+1}, S_{t+1}
	ipt1     float64 // 1/P_{t+1}
	aStep    float64 // aₜ = 1/(1+τλ)
	kappa    float64 // a touch with batch sum u: ξ −= κu …
	mu       float64 // … and c = μu
	renorm   bool    // rewrite every ξ at scale 1 before this iteration
	oldP     float64 // ... from the scale P_t = oldP, S_t = oldS
	oldS     float64
}

// l2Segment is the drawer's running state of the scaled form: P and S at
// the next iteration to draw and at the one before, and θ of the one before.
type l2Segment struct {
	p, s, pPrev, sPrev, theta float64
}

// reset starts a segment at scale 1 whose previous step is the identity, so
// that A = 1 and B = 0: x̄ is then ξ plus the correction.
func (g *l2Segment) reset() { *g = l2Segment{p: 1, pPrev: 1} }

// next fills sc for an iteration with steps τ, θ, a = 1/(1+τλ), batch
// scale s (Eq. 11's) and rScale = 1/n (Eq. 13's), and advances the segment.
func (g *l2Segment) next(sc *l2Scalars, tau, theta, a, scale, rScale float64) {
	sc.renorm = false
	if g.p*a < driver.UnderflowFloor {
		// x_s = (P_s/P_t)(ξ' + r·P_t(S_s − S_t)) with ξ' = P_t(ξ + rS_t) = x_t.
		sc.renorm, sc.oldP, sc.oldS = true, g.p, g.s
		g.pPrev, g.sPrev = g.pPrev/g.p, g.p*(g.sPrev-g.s)
		g.p, g.s = 1, 0
	}
	sc.pt, sc.st = g.p, g.s
	sc.a = (1+g.theta)*g.p - g.theta*g.pPrev
	sc.b = (1+g.theta)*g.p*g.s - g.theta*g.pPrev*g.sPrev
	sc.aStep = a
	sc.pt1 = g.p * a
	sc.ipt1 = 1 / sc.pt1
	sc.st1 = g.s + (-tau*a)*sc.ipt1
	sc.kappa = tau*scale/g.p + rScale*sc.st1
	sc.mu = theta * tau * (rScale - scale)
	g.pPrev, g.sPrev = g.p, g.s
	g.p, g.s, g.theta = sc.pt1, sc.st1, theta
}

// dotL2 returns aᵀx̄ for one row: Σ vₚ(A ξⱼ + B rⱼ + cⱼ), formed as three
// sums so that each entry costs three multiply-adds on one record.
func dotL2(cs []coordL2, val []float64, idx []int32, a, b float64) float64 {
	var sx0, sr0, sc0, sx1, sr1, sc1 float64
	val = val[:len(idx)]
	p := 0
	for ; p+1 < len(idx); p += 2 {
		c0, c1 := &cs[idx[p]], &cs[idx[p+1]]
		v0, v1 := val[p], val[p+1]
		sx0 += v0 * c0.xi
		sr0 += v0 * c0.r
		sc0 += v0 * c0.corr
		sx1 += v1 * c1.xi
		sr1 += v1 * c1.r
		sc1 += v1 * c1.corr
	}
	if p < len(idx) {
		c, v := &cs[idx[p]], val[p]
		sx0 += v * c.xi
		sr0 += v * c.r
		sc0 += v * c.corr
	}
	return a*(sx0+sx1) + b*(sr0+sr1) + (sc0 + sc1)
}

// stepL2 applies Eq. 11, 14 and 13 to a touched coordinate with batch sum
// u, in scaled form for iteration t+1 (see the top of this file).
func (s *solver) stepL2(c *coordL2, u float64, sc *l2Scalars) {
	c.xi -= sc.kappa * u
	c.r += s.rScale * u
	c.corr = sc.mu * u
}

// renormL2 rewrites the coordinates [lo, hi) at scale 1 (see l2Segment.next).
func (s *solver) renormL2(lo, hi int32, sc *l2Scalars) {
	cs := s.cs[lo:hi]
	for j := range cs {
		c := &cs[j]
		c.xi = sc.oldP * (c.xi + c.r*sc.oldS)
	}
}

// updateL2 is the update phase of a scaled lazy run for the coordinates
// [lo, hi) that worker ws owns: it clears the corrections of the previous
// iteration's touches, sums the batch into u in batch order (the result does
// not depend on the thread count) and steps each touched coordinate once.
func (s *solver) updateL2(ws *workerState, bt *batch, lo, hi int32) {
	sc := &bt.l2
	if len(s.workers) == 1 && len(bt.blocks) == 1 && bt.offset[1] == 1 {
		return // stepRowL2 took the step in the read phase
	}
	if s.clearCorr {
		for j := lo; j < hi; j++ {
			s.cs[j].corr = 0
		}
	} else {
		for _, j := range ws.prev {
			s.cs[j].corr = 0
		}
	}
	if len(bt.blocks) == 1 && bt.offset[1] == 1 {
		// One row: its columns are distinct, so each entry is its
		// coordinate's whole batch sum.
		ws.prev = ws.prev[:0]
		dy := s.dy[0]
		if dy == 0 {
			return
		}
		rec := &s.rows[s.binfo[bt.blocks[0]].lo]
		val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
		if lo != 0 || int(hi) != s.d {
			a, e := sched.Clip(idx, lo, hi)
			val, idx = val[a:e], idx[a:e]
		}
		val = val[:len(idx)]
		for p, j := range idx {
			s.stepL2(&s.cs[j], dy*val[p], sc)
		}
		ws.prev = append(ws.prev, idx...)
		return
	}
	touched := ws.touched // one worker: the read phase formed u
	if len(s.workers) > 1 {
		touched = touched[:0]
		s.ownedBatchRows(bt, lo, hi, func(dy float64, val []float64, idx []int32) {
			touched = s.accumulateL2(touched, dy, val, idx)
		})
	}
	// A coordinate whose sum returned to exactly zero was listed twice or
	// needs no step (u = 0 is the untouched map); skip it either way.
	kept := touched[:0]
	for _, j := range touched {
		c := &s.cs[j]
		if u := c.u; u != 0 {
			c.u = 0
			s.stepL2(c, u, sc)
			kept = append(kept, j)
		}
	}
	ws.touched = ws.prev
	ws.prev = kept
}

// stepRowL2 is the update phase of a one-row batch on one worker, which
// the read phase runs as soon as the row's dual has changed by dy, while the
// row is in L1: it clears the previous touches' corrections and steps the
// row's coordinates (its columns are distinct, so each entry is its
// coordinate's whole batch sum).
func (s *solver) stepRowL2(ws *workerState, sc *l2Scalars, dy float64, val []float64, idx []int32) {
	if s.clearCorr {
		for j := range s.cs {
			s.cs[j].corr = 0
		}
	} else {
		for _, j := range ws.prev {
			s.cs[j].corr = 0
		}
	}
	ws.prev = ws.prev[:0]
	if dy == 0 {
		return
	}
	val = val[:len(idx)]
	kappa, rs, mu := sc.kappa, s.rScale, sc.mu
	for p, j := range idx {
		c := &s.cs[j]
		u := dy * val[p]
		c.xi -= kappa * u
		c.r += rs * u
		c.corr = mu * u
	}
	ws.prev = append(ws.prev, idx...)
}

// accumulateL2 adds dy times a row into the batch sums u, and appends to
// touched each coordinate whose sum was zero. Whether a sum was zero is a
// coin toss on sparse rows, so the append is unconditional and the length
// advances by the test's outcome, without a branch to mispredict.
func (s *solver) accumulateL2(touched []int32, dy float64, val []float64, idx []int32) []int32 {
	n := len(touched)
	touched = slices.Grow(touched, len(idx))[:n+len(idx)]
	val = val[:len(idx)]
	for p, j := range idx {
		c := &s.cs[j]
		touched[n] = j
		n += isZero(c.u)
		c.u += dy * val[p]
	}
	return touched[:n]
}

// isZero returns 1 if u is zero and 0 otherwise (a set-on-condition, not a
// branch).
func isZero(u float64) int {
	var z int
	if u == 0 {
		z = 1
	}
	return z
}

// syncL2 brings the coordinates [lo, hi) to the arrays that certificates
// and models read: x_t, x̄_t and r at the iteration bt is about to run.
func (s *solver) syncL2(lo, hi int32, bt *batch) {
	sc := &bt.l2
	for j := lo; j < hi; j++ {
		c := &s.cs[j]
		xi := c.xi
		if sc.renorm {
			xi = sc.oldP * (xi + c.r*sc.oldS)
		}
		s.xv[j] = sc.pt * (xi + c.r*sc.st)
		s.xbar[j] = sc.a*xi + sc.b*c.r + c.corr
		s.r[j] = c.r
	}
}

// rebaseL2 restarts the scaled form from the arrays, after a certificate
// replaced r by its exact value: ξ = x at scale 1, and the correction
// carries x̄ − x until the next update phase, which clears every one.
func (s *solver) rebaseL2(lo, hi int32) {
	for j := lo; j < hi; j++ {
		s.cs[j] = coordL2{xi: s.xv[j], r: s.r[j], corr: s.xbar[j] - s.xv[j]}
	}
}
