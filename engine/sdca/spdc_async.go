package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
)

// SolverSPDCAsync is SPDC with one sample per step and no barrier between
// steps: PASSCoDe's asynchrony (Hsieh, Yu & Dhillon 2015) applied to the
// primal-dual iteration of Zhang & Xiao (2015), for g = (λ/2)‖x‖².
const SolverSPDCAsync driver.Solver = "spdc-async"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:           SolverSPDCAsync,
			Reads:          []string{driver.CoordinateFamily},
			Summary:        "asynchronous SPDC, one sample per step, atomic adds to a lazily scaled primal, no barrier per step (Zhang & Xiao 2015; Hsieh et al. 2015)",
			Losses:         "smooth (squared, logistic, sqhinge, smoothhinge)",
			Regularizers:   "(λ/2)‖x‖² with λ > 0 (no L1, centre or weights)",
			Parallel:       true,
			Async:          true,
			Certified:      true,
			StageWarmStart: true,
		},
		Rank:    24,
		Accepts: acceptsSPDCAsync,
		Start: func(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
			return startSPDCAsync(prob, opt)
		},
	})
}

func acceptsSPDCAsync(prob objective.Problem, opt driver.Options) error {
	// SDCA's conditions, and SPDC's: a smooth loss (γ > 0), as the
	// primal-dual steps need φ* strongly convex.
	if err := acceptsSDCA(prob, opt); err != nil {
		return err
	}
	if g := prob.Loss.Gamma(); !(g > 0) {
		return fmt.Errorf("engine: the %s loss has γ = %g: %s needs a smooth loss (φ* strongly convex, γ > 0)", prob.Loss.Name(), g, opt.Solver)
	}
	if en, _ := prob.Reg.AsElasticNet(); en.L1 != 0 || !en.Plain() {
		return fmt.Errorf("engine: %s keeps the primal in the closed form of the (λ/2)‖x‖² prox: it takes no L1 term, centre or weights (sdca-async takes all three, spdc the L1 term and a centre)", opt.Solver)
	}
	if opt.Coordinate().M > 1 {
		return fmt.Errorf("engine: %s steps one sample at a time on each worker; m = %d mini-batches are spdc's and adaspdc's", opt.Solver, opt.Coordinate().M)
	}
	return nil
}

// spdcAsync is asynchronous SPDC. The iteration (Zhang & Xiao 2015, Alg. 1
// with m = 1; our Eq. 9, 11, 13 and 14 with one sample per block) is, at
// iteration t with sample k drawn,
//
//	yₖ ← prox of σₖφₖ* at aₖᵀx̄ₜ                          (dual step)
//	xₜ₊₁ = a·(xₜ − τ·(rₜ + Δyₖaₖ)),  a = 1/(1+τλ)         (primal prox)
//	rₜ₊₁ = rₜ + Δyₖaₖ/n
//	x̄ₜ₊₁ = xₜ₊₁ + θ·(xₜ₊₁ − xₜ)                           (extrapolation)
//
// with τ = (c/2R)·√(γ/(nλ)), σₖ = c²/(4τRₖ²) and θ = 1 − 1/(n + R√(n/(λγ))),
// R = maxₖ Rₖ, Rₖ = ‖aₖ‖ and c = CoordinateSettings.StepScale: SPDC's steps, with each
// sample's σₖ as large as the condition σₖτRₖ² ≤ c²/4 of its own row allows
// (σₖ ≥ σ, so θ, set by the largest row, is SPDC's).
//
// The closed form. With τ and θ fixed, every coordinate j follows
// xⱼ ← a(xⱼ − τrⱼ) at every iteration, touched or not, and a touch adds a
// kick. With Pₜ = aᵗ and Sₜ = (1 − a⁻ᵗ)/λ (the lazyl2.go scaling, whose
// products and sums have closed forms when the steps are fixed), a
// coordinate stores ξⱼ and rⱼ and
//
//	xⱼ,ₜ = Pₜ(ξⱼ + rⱼSₜ) = Pₜξⱼ + rⱼ(Pₜ − 1)/λ,
//	x̄ⱼ,ₜ = Aₜξⱼ + Bₜrⱼ,  Aₜ = (1+θ)Pₜ − θPₜ₋₁,
//	                      Bₜ = ((1+θ)(Pₜ − 1) − θ(Pₜ₋₁ − 1))/λ.
//
// The step of iteration t on a coordinate of row k, with u = Δyₖaₖⱼ, is
//
//	ξⱼ += u·(−aτ/Pₜ₊₁ − Sₜ₊₁/n),   rⱼ += u/n,
//
// increments that depend on t and u alone, not on the coordinate's value.
// So the steps commute: applied in any order, the stored pair is the one
// the serial iteration reaches, and an atomic add per field (a CAS loop, as
// PASSCoDe-Atomic's) loses none. The prox of every iteration reaches every
// coordinate exactly, through Pₜ, whichever worker ran it.
//
// What asynchrony changes. Iteration t's index is its position in the
// epoch's permutation; workers claim positions spdcAsyncChunk at a time
// from a shared counter and step them in order. A read of x̄ₜ sees the
// steps that have landed: every step of an earlier chunk of its own, and
// whatever the other workers have finished; a step of a later index
// (another worker's chunk ahead) enters multiplied by Pₜ/Pₛ₊₁ ≤ (1+τλ)^δ for
// a lead δ, which is 1 + O(δτλ) with τλ ≈ √(λγ/n)/(2R) (2.5e-5 on news20 at
// λ = 1e-5). The assumption, PASSCoDe's: the delay δ, about the chunk times
// the workers, is small next to n. The serial iteration's extrapolation
// keeps one more term: right after a touch, x̄ also carries θ·(the kick),
// for one iteration. The read here leaves that term out: it belongs to the
// step just before, which under asynchrony is in flight (delay ≥ 1), and on
// one worker it is a one-iteration delay of the extrapolation of the
// previous row's coordinates (on sparse data the next row rarely shares
// them). No proof covers this iteration (PASSCoDe's analysis is for dual
// coordinate descent); every certificate is computed on a consistent state
// between phases, and the driver's divergence and stall guards stand.
//
// A segment of the closed form lasts until P would fall below
// 1/spdcAsyncScaleFloor; a phase ends there, every ξ is rewritten at
// scale 1 (ξ = xₜ) and the clock restarts, which costs the extrapolation of
// one iteration. Certificates rebase the same way, after replacing r by
// (1/n)Σₖ yₖaₖ when sdcaCore's certificate recomputes it.
//
// The certified primal point is x = ∇g*(−r) = −r/λ, read from the duals as
// sdca's: P there and D(y) bound the gap with no term from the iteration's
// xₜ, which converges to the same point.
//
// Race freedom: during a phase the records cs are read and written only
// with atomic loads and CAS loops; a sample's dual and logit belong to the
// worker whose chunk holds its position; between phases (the pool's
// synchronisation) everything is plain.
type spdcAsync struct {
	*sdcaCore
	pool *sched.Pool
	cs   []spdcAsyncCoord
	perm []int32 // this epoch's order of the samples
	rng  *rand.Rand

	tau, theta, a, lam float64
	clock              int64 // iterations since the segment began
	segMax             int64 // iterations per segment (spdcAsyncScaleFloor)
	// A phase steps the positions [phaseLo, phaseHi) of perm; position p
	// is iteration clockBase + p − phaseLo of the segment.
	phaseLo, phaseHi, clockBase int64
	next                        paddedCounter // the next position to claim
	counts                      []paddedCounter
	stopped                     atomic.Bool
	xt                          []float64 // x at a certificate
	// serial holds with one worker, which reads and adds with plain loads
	// and stores: a locked compare-and-swap per entry made one-worker
	// epochs 3.5× slower on news20 and 1.5× on url-shaped data.
	serial bool
}

// spdcAsyncCoord is coordinate j's state in the closed form: a row's read
// touches one 16-byte record per entry.
type spdcAsyncCoord struct{ xi, r float64 }

// spdcAsyncChunk is the number of positions a worker claims at once: one
// atomic add on the shared counter per chunk rather than per step.
const spdcAsyncChunk = 64

// spdcAsyncScaleFloor bounds 1/P in a segment, so that ξ (x/P) stays far
// inside the range of float64.
const spdcAsyncScaleFloor = 1e100

// spdcAsyncMaxSegment caps the iterations of a segment; a variable so that
// a test can make segments end inside epochs on small data.
var spdcAsyncMaxSegment int64 = math.MaxInt64

func startSPDCAsync(prob objective.Problem, opt driver.Options) (driver.Method, error) {
	threads := driver.WorkersFor(opt.Threads, float64(prob.X.Rows), 1, driver.NoLimit) // at most a worker per sample
	core, err := newSDCACore(prob, opt, nil, nil)
	if err != nil {
		return nil, err
	}
	s := &spdcAsync{sdcaCore: core, lam: core.en.Lambda}
	// The steps: newSDCACore set SDCA's σₖ = nλ/Rₖ², from which Rₖ² reads.
	n, gam, c := float64(core.n), prob.Loss.Gamma(), opt.Coordinate().StepScale
	var rMax float64
	for _, sg := range core.sigma {
		if !math.IsInf(sg, 1) {
			rMax = max(rMax, math.Sqrt(n*s.lam/sg))
		}
	}
	s.tau = c / (2 * rMax) * math.Sqrt(gam/(n*s.lam))
	s.theta = 1 - 1/(n+rMax*math.Sqrt(n/(s.lam*gam)))
	s.a = 1 / (1 + s.tau*s.lam)
	for k, sg := range core.sigma {
		if !math.IsInf(sg, 1) { // an empty row keeps +Inf: its step is exact
			r2 := n * s.lam / sg
			core.sigma[k] = c * c / (4 * s.tau * r2)
		}
	}
	s.segMax = max(1, min(spdcAsyncMaxSegment, int64(math.Log(spdcAsyncScaleFloor)/math.Log1p(s.tau*s.lam))))
	s.cs = hugepage.Make[spdcAsyncCoord](core.d)
	// The start: x⁰ is the warm start, or with warm duals their primal
	// point −v/λ, or 0; r⁰ = v = (1/n)Σₖ yₖaₖ for the starting duals.
	for j := range s.cs {
		c := &s.cs[j]
		c.r = core.v[j]
		switch {
		case opt.WarmStart != nil:
			c.xi = opt.WarmStart[j]
		case warmDuals(opt):
			c.xi = -core.v[j] / s.lam
		}
	}
	s.xt = hugepage.Make[float64](core.d)
	s.perm = hugepage.Make[int32](core.n)
	for k := range s.perm {
		s.perm[k] = int32(k)
	}
	s.rng = rand.New(rand.NewPCG(opt.Seed, 0x5bdc))
	s.counts = make([]paddedCounter, threads)
	s.pool = sched.NewPool(threads)
	s.serial = threads == 1
	return s, nil
}

func (s *spdcAsync) Threads() int { return max(s.pool.Threads(), s.certThreads()) }

func (s *spdcAsync) Finish(res *driver.Result) error {
	res.Duals = s.y
	return errors.Join(s.closeCert(), s.pool.Close())
}

func (s *spdcAsync) DivergenceHint() string {
	return "asynchronous SPDC assumes small delays: try fewer Options.Threads, or Options.Solver \"spdc\" or Options.Solver \"sdca-async\""
}

// scale returns Pₜ = aᵗ.
func (s *spdcAsync) scale(t int64) float64 { return math.Pow(s.a, float64(t)) }

// Certify evaluates sdcaCore's certificate at r and rebases the segment:
// ξ = xₜ at scale 1, with the r the certificate used (exact when it was
// recomputed from the duals).
func (s *spdcAsync) Certify() (driver.TracePoint, error) {
	s.primalNow()
	for j := range s.cs {
		s.v[j] = s.cs[j].r
	}
	s.wFresh = false
	tp, err := s.certificate()
	s.restart()
	return tp, err
}

// WarmDuals sets the duals to y (projected into dom φ*) between epochs, as
// the reductions do at a new stage, and restarts the closed form from the
// current x with r = (1/n)Σₖ yₖaₖ for those duals. (The method sdcaCore's
// would leave the records behind.)
func (s *spdcAsync) WarmDuals(y []float64) error {
	s.primalNow()
	if err := s.sdcaCore.WarmDuals(y); err != nil {
		return err
	}
	s.restart()
	return nil
}

// Point returns ∇g*(−r) = −r/λ for the r at hand.
func (s *spdcAsync) Point() []float64 {
	if !s.wFresh {
		for j := range s.cs {
			s.v[j] = s.cs[j].r
		}
	}
	return s.sdcaCore.Point()
}

// primalNow sets xt to x at the current clock: xⱼ = Pξⱼ + rⱼ(P − 1)/λ.
func (s *spdcAsync) primalNow() {
	p := s.scale(s.clock)
	q := (p - 1) / s.lam
	for j, c := range s.cs {
		s.xt[j] = p*c.xi + c.r*q
	}
}

// restart starts a segment at scale 1 from x = xt and r = v.
func (s *spdcAsync) restart() {
	for j := range s.cs {
		s.cs[j] = spdcAsyncCoord{xi: s.xt[j], r: s.v[j]}
	}
	s.clock = 0
}

// rebase rewrites every ξ at scale 1 (ξ = x) and restarts the clock.
func (s *spdcAsync) rebase() {
	s.primalNow()
	for j := range s.cs {
		s.cs[j].xi = s.xt[j]
	}
	s.clock = 0
}

// RunEpochs runs k epochs, each a fresh permutation of the samples stepped
// in one pool phase, or more where a segment ends inside the epoch.
func (s *spdcAsync) RunEpochs(ctx context.Context, k int) (int, error) {
	s.wFresh = false
	n := int64(s.n)
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		s.stopped.Store(false)
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		for lo := int64(0); lo < n; {
			if s.clock >= s.segMax {
				s.rebase()
			}
			hi := min(n, lo+s.segMax-s.clock)
			s.phaseLo, s.phaseHi, s.clockBase = lo, hi, s.clock
			s.next.n = lo
			err := s.pool.Run(func(w int) { s.counts[w].n = s.work(ctx, w) })
			for w := range s.counts {
				s.sampled += s.counts[w].n
			}
			// Positions a stopped run did not step are iterations whose
			// dual step was zero: the prox still ran, through the clock.
			s.clock += hi - lo
			lo = hi
			if err != nil {
				return e + 1, fmt.Errorf("engine: %s: %w", SolverSPDCAsync, err)
			}
			if s.stopped.Load() {
				return e + 1, nil
			}
		}
	}
	return k, nil
}

// work steps chunks of positions until the phase runs out and returns the
// samples it stepped.
func (s *spdcAsync) work(ctx context.Context, w int) int64 {
	var done int64
	for chunk := 0; ; chunk++ {
		lo := atomic.AddInt64(&s.next.n, spdcAsyncChunk) - spdcAsyncChunk
		if lo >= s.phaseHi {
			return done
		}
		// A cancellable context's Err takes a lock: ask every 16 chunks.
		if chunk&15 == 15 && (s.stopped.Load() || ctx.Err() != nil) {
			s.stopped.Store(true)
			return done
		}
		hi := min(lo+spdcAsyncChunk, s.phaseHi)
		s.stepChunk(lo, hi)
		done += hi - lo
	}
}

// stepChunk steps the positions [lo, hi) of the phase in order.
func (s *spdcAsync) stepChunk(lo, hi int64) {
	t := s.clockBase + lo - s.phaseLo
	pPrev := s.scale(t - 1) // P₋₁ is unused: the segment's first read has A = 1, B = 0
	p := pPrev * s.a
	if t == 0 {
		p = 1
	}
	for pos := lo; pos < hi; pos, t = pos+1, t+1 {
		if next := pos + 2; next < hi {
			s.prefetch(int(s.perm[next]))
		}
		p1 := p * s.a
		s.step(int(s.perm[pos]), t, p, pPrev, p1)
		pPrev, p = p, p1
	}
}

// prefetch asks for sample k's row and dual.
func (s *spdcAsync) prefetch(k int) {
	lo, hi := s.x.Indptr[k], s.x.Indptr[k+1]
	kernels.Prefetch(unsafe.Pointer(&s.y[k]))
	if n := int(min(hi-lo, driver.MaxPrefetchNNZ)); n > 0 {
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Values[lo]), 8*n)
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Indices[lo]), 4*n)
	}
}

// step runs iteration t of the segment on sample k, with Pₜ = p,
// Pₜ₋₁ = pPrev and Pₜ₊₁ = p1 (see spdcAsync).
func (s *spdcAsync) step(k int, t int64, p, pPrev, p1 float64) {
	lo, hi := s.x.Indptr[k], s.x.Indptr[k+1]
	val, idx := s.x.Values[lo:hi], s.x.Indices[lo:hi]
	ca, cb := 1.0, 0.0 // x̄ₜ = ca·ξ + cb·r; at t = 0, x̄ = x = ξ
	if t > 0 {
		th := s.theta
		ca = (1+th)*p - th*pPrev
		cb = ((1+th)*(p-1) - th*(pPrev-1)) / s.lam
	}
	z := s.readBar(val, idx, ca, cb)
	yn := s.dualStep(k, z, s.sigma[k])
	d := yn - s.y[k]
	if d == 0 {
		return
	}
	s.y[k] = yn
	// ξ += u·(−aτ/Pₜ₊₁ − Sₜ₊₁/n), r += u/n, u = Δyₖaₖⱼ.
	invN := s.invN
	cx := d * (-s.a*s.tau/p1 - (1-1/p1)/s.lam*invN)
	cr := d * invN
	cs := s.cs
	val = val[:len(idx)]
	if s.serial {
		for q, j := range idx {
			c := &cs[j]
			c.xi += cx * val[q]
			c.r += cr * val[q]
		}
		return
	}
	for q, j := range idx {
		c := &cs[j]
		addFloat(&c.xi, cx*val[q])
		addFloat(&c.r, cr*val[q])
	}
}

// readBar returns aₖᵀx̄ = Σ vⱼ(ca·ξⱼ + cb·rⱼ) with atomic loads.
func (s *spdcAsync) readBar(val []float64, idx []int32, ca, cb float64) float64 {
	var sx, sr float64
	cs := s.cs
	val = val[:len(idx)]
	if s.serial {
		for q, j := range idx {
			c := &cs[j]
			sx += val[q] * c.xi
			sr += val[q] * c.r
		}
		return ca*sx + cb*sr
	}
	for q, j := range idx {
		c := &cs[j]
		sx += val[q] * loadFloat(&c.xi)
		sr += val[q] * loadFloat(&c.r)
	}
	return ca*sx + cb*sr
}
