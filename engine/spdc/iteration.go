package spdc

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
)

// One iteration t of AdaSPDC (Zhu & Storkey, Algorithm 1), in the
// per-sample form of stepSizes (s = n_b/n, σᵢ of Eq. 10 per block, and
// Rᵢ the block couplings):
//
//	Sₜ: m distinct blocks drawn uniformly,  Rᵗ_max = max_{i∈Sₜ} Rᵢ
//	τᵗ = tauC/Rᵗ_max,  θᵗ = 1 − 1/(thA + thB·Rᵗ_max)           (Eq. 12, 15)
//	yₖ′ = prox_{σᵢφₖ*}(yₖ + σᵢ aₖᵀx̄),  k in the blocks of Sₜ   (Eq. 9)
//	u = Σ_{k} (yₖ′ − yₖ) aₖ
//	x′ = prox_{τᵗg}(x − τᵗ(r + (s/m)·u))                        (Eq. 11)
//	x̄′ = x′ + θᵗ(x′ − x)                                        (Eq. 14)
//	r′ = r + u/n                                                (Eq. 13)
//
// (Under importance sampling Sₜ is one block i drawn with probability pᵢ,
// and s/m is weighed by wᵢ = 1/(n_b·pᵢ); see importanceSampler.)
//
// It runs in phases on the pool's workers (sched.BatchLoop): sample (worker
// 0 draws the next iteration's batch and sets its τ and θ: drawBatch, in
// sampling.go), read (each worker takes the dual steps of the blocks it
// claims: readPhase), reduce (the owner of each coordinate adds the batch
// rows' entries there, in batch order: updatePhase, ownedBatchRows), and
// the primal step (Eq. 11, 14 and 13 on the owned coordinates: primalStep,
// denseL2Update, or the lazy layouts' own). The functions below follow that
// order: an epoch, the loop, its phases, and the steps each phase takes.

// itersPerEpoch is ⌈n_b/m⌉: the iterations of an epoch, in which each
// block is drawn once in expectation.
func (s *solver) itersPerEpoch() int { return (s.nb + s.set.m - 1) / s.set.m }

// RunEpochs runs k epochs of ⌈n_b/m⌉ iterations inside one pool phase and
// returns how many it started (fewer when the context ends the run). The
// first call of a run with more than one pool thread first calibrates the
// number of workers (calibrateThreads).
func (s *solver) RunEpochs(ctx context.Context, k int) (int, error) {
	iters := s.itersPerEpoch()
	if s.calibrate {
		s.calibrate = false
		if c := iters / calibrationRounds; c > 0 {
			rounds, err := s.calibrateThreads(ctx, c)
			if err != nil {
				return 0, err
			}
			// The rest of the first epoch.
			if _, err := s.iterate(ctx, 1, iters-rounds*c); err != nil {
				return 0, err
			}
			if k == 1 || ctx.Err() != nil {
				return 1, nil
			}
			n, err := s.iterate(ctx, k-1, iters)
			return 1 + n, err
		}
	}
	if s.oneIter == 0 {
		return s.iterate(ctx, k, iters)
	}
	t0 := time.Now()
	n, err := s.iterate(ctx, k, iters)
	if per := time.Since(t0) / time.Duration(max(1, n*iters)); float64(per) > calibrationClear*float64(s.oneIter) {
		// The host changed since calibration (another job took a core):
		// a barrier per phase then waits for a descheduled worker, and
		// one worker is faster. The iterates do not depend on the count.
		s.setWorkers(1)
		s.oneIter = 0
	}
	return n, err
}

// iterate runs k rounds of iters iterations (the maths at the top of this
// file) on the batch loop (package sched: the slots, the barriers, the
// claims and the context), each iteration as the phases Read, Update and
// Settle below, and returns how many rounds it started. At the end x, x̄, r and y are brought up to
// date for the certificate.
func (s *solver) iterate(ctx context.Context, k, iters int) (int, error) {
	started, err := s.loop.Run(ctx, (*spdcIteration)(s), k, iters, func(w int) {
		lo, hi := s.owners.Range(w)
		if s.lazy && !s.fastL2 {
			s.syncRange(lo, hi)
		}
		if s.fastL2 {
			s.syncL2(lo, hi, &s.batches[s.loop.Slot()])
		}
	})
	if s.lazy && !s.fastL2 {
		s.resetSegment()
	}
	if s.one != nil {
		for b, k := range s.part.Order {
			s.y[k] = s.one[b].y
		}
	} else {
		for r, k := range s.part.Order {
			s.y[k] = s.duals[r].y
		}
	}
	if err != nil {
		return started, fmt.Errorf("engine: %w", err)
	}
	return started, nil
}

// spdcIteration is the solver seen as a sched.Iteration: the phases of one
// AdaSPDC iteration.
type spdcIteration solver

// Read: the renormalisation a lazy segment may need, worker 0's draw of
// the next batch (Eq. 12, 15 for its steps), and the dual steps (Eq. 9).
// The segment position t is read here, before the barrier: worker 0
// advances it in its update phase.
func (p *spdcIteration) Read(w, slot int, claims *sched.Claims, sync func()) {
	s := (*solver)(p)
	ws := &s.workers[w]
	ws.t = int32(s.segT)
	bt := &s.batches[slot]
	if s.fastL2 && bt.l2.renorm {
		lo, hi := s.owners.Range(w)
		s.renormL2(lo, hi, &bt.l2)
		sync()
	}
	if s.one != nil {
		s.oneIteration(ws, bt, &s.batches[slot^1])
		return
	}
	if w == 0 {
		s.drawBatch(&s.batches[slot^1])
	}
	s.readPhase(ws, bt, ws.t, claims)
}

// Update: the reduction and the primal step on this worker's coordinates
// (Eq. 11, 13, 14); worker 0 also asks for the next batch's rows and
// advances the lazy segment.
func (p *spdcIteration) Update(w, slot int) {
	s := (*solver)(p)
	ws := &s.workers[w]
	bt := &s.batches[slot]
	if w == 0 && !s.ahead.rows {
		nb := &s.batches[slot^1]
		s.prefetchRows(nb.blocks, 0, min(prefetchAhead, len(nb.blocks)))
	}
	lo, hi := s.owners.Range(w)
	s.updatePhase(ws, bt, lo, hi, ws.t)
	if w == 0 {
		if s.lazy && !s.fastL2 {
			s.advanceSegment(bt.tau, bt.theta)
		}
		s.sampled += int64(bt.offset[len(bt.blocks)])
	}
}

// Settle: after every worker's update phase the rebase flag can go, and a
// lazy (L1) segment that ends, at the epoch's end or before its running
// product underflows, brings every coordinate up to date.
func (p *spdcIteration) Settle(w int, last bool, sync func()) {
	s := (*solver)(p)
	if w == 0 && s.clearCorr {
		s.clearCorr = false
	}
	if s.lazy && !s.fastL2 && (s.segP[s.segT] < driver.UnderflowFloor || last) {
		lo, hi := s.owners.Range(w)
		s.syncRange(lo, hi)
		sync()
		if w == 0 {
			s.resetSegment()
		}
		sync()
	}
}

// readPhase is Eq. 9 for the blocks this worker claims: yₖ ← prox of φₖ* at
// the margin aₖᵀx̄. It writes only yₖ and Δyₖ of its own blocks.
func (s *solver) readPhase(ws *workerState, bt *batch, t int32, claims *sched.Claims) {
	m := int64(len(bt.blocks))
	if len(s.workers) == 1 {
		s.readBlocks(ws, bt, 0, m, t)
		return
	}
	// Guided self-scheduling (sched.Claims): claims shrink as the batch
	// runs out, so that the workers finish together when rows differ in
	// length, and the last claims do not leave one worker alone at the end.
	for {
		first, end, ok := claims.Next(m, len(s.workers))
		if !ok {
			return
		}
		s.readBlocks(ws, bt, first, end, t)
	}
}

// readBlocks runs the read phase for the batch's blocks [first, end).
func (s *solver) readBlocks(ws *workerState, bt *batch, first, end int64, t int32) {
	loss := s.prob.Loss
	// With one worker in a scaled lazy run of more than one row, the
	// batch sum u is formed here, while the row is in L1, rather than in a
	// second pass over the rows in the update phase: u is not read in this
	// phase, and one worker adds the rows in batch order, as the owners do.
	fuseU := s.fastL2 && len(s.workers) == 1 && bt.offset[len(bt.blocks)] > 1
	// With one worker and one row, the row is the batch: its primal step
	// (stepRowL2) follows its dual step here, and the update phase has
	// nothing left to do.
	oneRow := s.fastL2 && len(s.workers) == 1 && bt.offset[len(bt.blocks)] == 1
	touched := ws.touched[:0]
	// One worker reading a larger batch asks for the sample records of the
	// next batch, drawn at the start of this read phase, block by block.
	var next []int32
	if len(s.workers) == 1 && !s.ahead.rows {
		next = s.batches[s.loop.Slot()^1].blocks
	}
	// Several workers: drawBatch brought the batch's records to worker 0's
	// cache, so each worker asks for the records of the blocks it claimed
	// a stage before it asks for their rows (prefetchRows reads them).
	many := len(s.workers) > 1
	for i := first; i < end; i++ {
		if a := int(i) + 2*prefetchAhead; many && a < int(end) {
			b := bt.blocks[a]
			kernels.Prefetch(unsafe.Pointer(&s.binfo[b]))
			if s.maxQ == 1 {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[b]), unsafe.Pointer(&s.duals[b]))
			}
		}
		if a := int(i) + prefetchAhead; a < int(end) {
			s.prefetchRows(bt.blocks, a, a+1)
		}
		if int(i) < len(next) {
			lo := s.binfo[next[i]].lo
			kernels.Prefetch2(unsafe.Pointer(&s.rows[lo]), unsafe.Pointer(&s.duals[lo]))
		}
		b := bt.blocks[i]
		slot := bt.offset[i]
		bi := &s.binfo[b]
		recs := s.rows[bi.lo:bi.hi]
		duals := s.duals[bi.lo:bi.hi]
		for r := range recs {
			rec, dual := &recs[r], &duals[r]
			val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
			var z float64
			switch {
			case s.fastL2:
				z = dotL2(s.cs, val, idx, bt.l2.a, bt.l2.b)
			case s.lazy:
				z = s.lazyDot(val, idx, t)
			default:
				z = kernels.SparseDot(val, idx, s.xbar)
			}
			var yn float64
			if s.logistic {
				var e int
				yn, dual.aux, e = objective.LogisticProxWarmExps(dual.y, dual.aux, z, rec.sigma, rec.b)
				ws.exps += int64(e)
			} else {
				yn = loss.DualProx(dual.y, z, rec.sigma, rec.b)
			}
			dy := yn - dual.y
			s.dy[slot+r] = dy
			dual.y = yn
			if s.fused && dy != 0 {
				kernels.SparseAxpy(dy, val, idx, ws.buf)
			}
			if fuseU && dy != 0 {
				touched = s.accumulateL2(touched, dy, val, idx)
			}
			if oneRow {
				s.stepRowL2(ws, &bt.l2, dy, val, idx)
			}
		}
	}
	ws.touched = touched
}

// updatePhase merges the batch into the coordinates worker w owns (the
// lock-free reducer: each coordinate has one writer, and its sum is formed
// in batch order, so the result does not depend on the thread count) and
// then applies Eq. 11, 14 and 13 to them.
func (s *solver) updatePhase(ws *workerState, bt *batch, lo, hi, t int32) {
	tau, theta := bt.tau, bt.theta
	if s.fastL2 {
		s.updateL2(ws, bt, lo, hi)
		return
	}
	if s.lazy {
		ws.stamp++
		if ws.stamp == 0 { // wrapped after 2³² iterations: forget old stamps
			for j := lo; j < hi; j++ {
				s.lz[j].stamp = 0
			}
			ws.stamp = 1
		}
		stamp := ws.stamp
		ws.touched = ws.touched[:0]
		s.ownedBatchRows(bt, lo, hi, func(dy float64, val []float64, idx []int32) {
			for p, j := range idx {
				if c := &s.lz[j]; c.stamp != stamp {
					c.stamp = stamp
					ws.touched = append(ws.touched, j)
				}
				s.u[j] += dy * val[p]
			}
		})
		for _, j := range ws.touched {
			c := &s.lz[j]
			xt := s.catchUp(c.x, c.last, t, c.r)
			uj := s.u[j]
			s.u[j] = 0
			xn := s.reg.ProxPlain(xt-tau*(c.r+bt.scale*uj), tau) // Eq. 11
			c.xbar = xn + theta*(xn-xt)                          // Eq. 14
			c.x = xn
			c.r += s.rScale * uj // Eq. 13
			c.last = t + 1
		}
		return
	}
	if s.fused {
		for w := range s.workers {
			buf := s.workers[w].buf[lo:hi]
			kernels.Axpy(1, buf, s.u[lo:hi])
			clear(buf)
		}
	} else {
		s.ownedBatchRows(bt, lo, hi, func(dy float64, val []float64, idx []int32) {
			kernels.SparseAxpy(dy, val, idx, s.u)
		})
	}
	if s.reg.L1 == 0 {
		s.denseL2Update(lo, hi, tau, theta, bt.scale)
		return
	}
	for j := lo; j < hi; j++ {
		s.primalStep(j, s.xv[j], tau, theta, bt.scale)
	}
}

// ownedBatchRows calls f, in batch order, for every sampled row whose dual
// changed, with its Δy and just the entries in the owned columns [lo, hi).
func (s *solver) ownedBatchRows(bt *batch, lo, hi int32, f func(dy float64, val []float64, idx []int32)) {
	full := lo == 0 && int(hi) == s.d
	for i, b := range bt.blocks {
		slot := bt.offset[i]
		bi := &s.binfo[b]
		recs := s.rows[bi.lo:bi.hi]
		for r := range recs {
			dy := s.dy[slot+r]
			if dy == 0 {
				continue
			}
			rec := &recs[r]
			val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
			if full {
				f(dy, val, idx)
			} else if a, e := sched.Clip(idx, lo, hi); a < e {
				f(dy, val[a:e], idx[a:e])
			}
		}
	}
}

// primalStep applies Eq. 11, 14 and 13 to coordinate j of a dense run,
// whose value at this iteration is xt, and consumes its batch sum u[j].
func (s *solver) primalStep(j int32, xt, tau, theta, scale float64) {
	uj := s.u[j]
	s.u[j] = 0
	xn := s.reg.ProxPlain(xt-tau*(s.r[j]+scale*uj), tau) // Eq. 11
	s.xbar[j] = xn + theta*(xn-xt)                       // Eq. 14
	s.xv[j] = xn
	s.r[j] += s.rScale * uj // Eq. 13
}

// denseL2Update is the dense update's loop for g = (λ/2)‖x‖², where the
// prox is a multiplication: Eq. 11, 14 and 13 with the slices resliced to
// one length so that the compiler drops the bounds checks.
func (s *solver) denseL2Update(lo, hi int32, tau, theta, scale float64) {
	a := 1 / (1 + tau*s.lam)
	ta, sc, rs := tau*a, scale, s.rScale
	xv := s.xv[lo:hi]
	xbar := s.xbar[lo:hi:hi][:len(xv)]
	r := s.r[lo:hi:hi][:len(xv)]
	u := s.u[lo:hi:hi][:len(xv)]
	for j, xt := range xv {
		uj := u[j]
		u[j] = 0
		xn := a*xt - ta*(r[j]+sc*uj)
		xbar[j] = xn + theta*(xn-xt)
		xv[j] = xn
		r[j] += rs * uj
	}
}

// oneIteration is the whole of an iteration whose batch is one sample k
// (m = 1, blocks of one sample) on one worker, in a scaled lazy run: it
// draws the batch after next (drawOne), and then
//
//	z = aₖᵀx̄ = A·Σ vₚξⱼ + B·Σ vₚrⱼ + Σ vₚcⱼ           (margin at x̄, dotL2)
//	yₖ′ = prox_{σφₖ*}(yₖ + σz),  Δy = yₖ′ − yₖ         (Eq. 9)
//	ξⱼ −= κ·Δy·vₚ,  rⱼ += Δy·vₚ/n,  cⱼ = μ·Δy·vₚ        (Eq. 11, 13, 14; stepRowL2)
//
// while the row is in L1: the steps the general loop takes in a read and
// an update phase, in the same order and with the same arithmetic, so the
// iterates are those of the general loop. Its sample's label, step, dual
// and row extent are one record (sampleOne), one cache line where the
// general loop reads three (blockInfo, sampleRow, sampleDual).
func (s *solver) oneIteration(ws *workerState, bt, next *batch) {
	s.drawOne(next)
	rec := &s.one[bt.blocks[0]]
	val, idx := s.x.Values[rec.lo:rec.hi], s.x.Indices[rec.lo:rec.hi]
	z := dotL2(s.cs, val, idx, bt.l2.a, bt.l2.b)
	var yn float64
	if s.logistic {
		var e int
		yn, rec.aux, e = objective.LogisticProxWarmExps(rec.y, rec.aux, z, rec.sigma, rec.b)
		ws.exps += int64(e)
	} else {
		yn = s.prob.Loss.DualProx(rec.y, z, rec.sigma, rec.b)
	}
	dy := yn - rec.y
	s.dy[0] = dy
	rec.y = yn
	s.stepRowL2(ws, &bt.l2, dy, val, idx)
}
