package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
)

// distCoCoA is CoCoA+ over the ranks of a comm.Comm world, each rank
// running cocoa's local epoch on its own rows with its own workers.
//
// The problem is the global one: with N the rows of all ranks,
//
//	P(x) = (1/N) Σₖ φ(aₖᵀx, bₖ) + g(x),   D(y) = −(1/N) Σₖ φ*(yₖ) − g*(−v),   v = (1/N) Σₖ yₖaₖ,
//
// the sums over every row of every rank. Every rank holds the same v and
// its own duals. A round is cocoa's epoch with the pieces of all ranks:
// rank r cuts a fresh permutation of its n_r rows into K_r pieces, worker
// w steps its piece against a replica r_w = v + ω ⊙ Δ_w, with the dual
// steps of the global problem (the 1/N of v, σₖ = N/qₖ), and the rank
// sums its local change Σ_w Δ_w = Σ_w (r_w − v)/ω on its coordinates.
// One allreduce adds the changes of all ranks, with the samples stepped
// and the ranks' stop flags appended, and every rank adds the sum to v.
//
// The safety argument is cocoa's (see cocoa) with the pieces of all ranks:
// the summed change of coordinate j is a convex combination of the ωⱼ
// scaled changes ωⱼΔ_wj when ωⱼ counts every piece, on every rank, whose
// rows use feature j. Rank r's K_r pieces of a fresh cut can hold feature
// j in at most min(K_r, c_rj) of them, with c_rj the rank's rows that use
// it, so ωⱼ = max(1, Σ_r min(K_r, c_rj)), summed by one allreduce at the
// start, bounds the count for every cut of every round. D then never
// decreases, however many ranks there are. On one rank ωⱼ is cocoa's
// min(K, c_j), and with one worker as well the round is sdca's epoch.
//
// The ranks' rows stay where they are, so the pieces of different ranks
// never mix, where cocoa cuts a fresh permutation of all rows every epoch.
// That costs rounds, far more than the larger ωⱼ alone: with fixed pieces
// the rounds are those of a damped block-Jacobi method, whose rate follows
// the largest eigenvalue of each piece's Gram matrix (CoCoA+'s σ_max, about
// the piece's rows times the rows' mean inner product), not SDCA's
// per-row bound. On a generated sparse set with positive values, one
// process with four fixed pieces needed 297 epochs where four fresh pieces
// a epoch needed 8. Within a rank the pieces are cut afresh every round,
// as cocoa cuts them; across ranks, each round ends with a search for the
// step in the plane of the summed change and the previous round's step
// (chooseStep), which takes a longer step along the directions that the
// fixed pieces leave slow only when the dual says it gains more than the
// summed change, one small allreduce more per round. A per-round count of
// the pieces that actually share feature j would not tighten ωⱼ by more
// than a percent on the data measured (nearly every feature that carries
// nonzeros lies in every piece). Shuffling a file whose rows are sorted
// (by label, say) evens the ranks' label mixes but does not move rows
// between rounds, and changed the rounds to a small gap little either way.
//
// The certificate is sdcaCore's (running v, recomputed exactly at least
// every exactEvery certificates and whenever a stop may depend on it),
// assembled from the ranks' partial sums: each rank evaluates
// objective.Evaluator.PartialAt at its rows, the sums travel in one small
// allreduce with the stop flags, and objective.Assemble forms P, D and the
// gap with At's formulas, so every rank reports the same bits. The exact v
// is the allreduced sum of the ranks' compensated Σ yₖaₖ
// (Evaluator.DualSum) times 1/N. When the last round before a certificate
// already knows that the certificate will recompute v, it sends that sum
// instead of its change, and the recomputation costs no collective of its
// own.
//
// The margins of the certificate need the v after the round's allreduce,
// so a certified round pays a second latency, for four numbers; rounds
// between certificates pay one. On one rank the arithmetic is cocoa's,
// operation for operation, and so is the model.
//
// Every decision of driver.Run is the same on every rank: the
// certificates are the same bits, and a rank's time limit or cancellation
// reaches the driver only through the context the ranks agree on, which
// is cancelled on every rank after the same allreduce, when some rank's
// flag in it is set.
type distCoCoA struct {
	*sdcaCore
	c       comm.Comm
	nGlobal int64
	k       int         // this rank's workers K_r
	pool    *sched.Pool // nil: one worker
	omega   []float64   // ωⱼ over all ranks' pieces
	rep     [][]float64 // rep[w] = v + ω ⊙ Δ_w during a round, v after it
	cols    []int       // worker w sums and applies coordinates cols[w]:cols[w+1]
	perm    []int32
	rng     *rand.Rand
	counts  []paddedCounter
	resync  bool // v changed outside a round: the replicas must copy it
	// sequential holds on one rank with one worker: the round is sdca's
	// epoch on v itself, as cocoa's with K = 1.
	sequential bool
	// buf is the round's allreduce: the change of v (or the exact dual
	// sum), then the samples stepped and the two stop flags.
	buf []float64
	// exactPending holds when the last round set v to the exact dual sum
	// for the certificate that follows it.
	exactPending bool

	// search holds when the rounds choose their step in the plane of the
	// summed change and the previous step (chooseStep, stepSearch): with
	// more than one worker in all and distSearch on.
	search bool
	*stepSearch

	local  context.Context         // this rank's context: its time limit and cancellation
	cancel context.CancelCauseFunc // cancels the context the ranks agree on
}

// The stop flags a rank sends in every collective of a round.
const (
	flagTime     = iota // its time limit ran out
	flagCanceled        // its context was cancelled otherwise
	flagCount
)

// TrainDistributed solves the problem whose rows are spread over the ranks
// of c, rank by rank in local, with CoCoA+ rounds (see distCoCoA), and
// returns on every rank the same model (the point driver.Result.ModelPoint
// picks), the result and an error. Every rank of c must call it, with the
// same options; local holds the rank's rows, any number of them (none
// too), with the labels mapped the same way on every rank (±1 for a
// classification loss, with the same Classes) and the same loss and
// regularizer. The ranks agree by allreduce on the columns (the largest
// of the ranks' X.Cols; each local X is widened to it), on the rows and on
// the per-feature piece counts ωⱼ, and check that the Classes and the
// elastic net's strengths agree.
//
// Options are those of cocoa (Solver empty or "cocoa"): Threads bounds
// this rank's workers, Seed seeds each rank's permutations (rank r uses
// Seed + r, so that the ranks' orders are independent; rank 0's is
// cocoa's), and the stopping rules are the driver's. TimeLimit and ctx
// are each rank's own; a rank whose limit runs out or whose ctx is done
// stops every rank after the same round. Callback and StopRule see the
// same certificates on every rank (only the times differ) and must decide
// the same on every rank; WarmDuals are refused.
//
// A rank that fails, by an error of its own or a panic, aborts the world
// (comm.Comm.Abort), so that every rank returns an error and none waits
// in a collective; errors that every rank finds in the same round (a
// mismatch of the problems, divergence) are returned by every rank
// without an abort.
func TrainDistributed(ctx context.Context, c comm.Comm, local objective.Problem, opt driver.Options) (w []float64, res *driver.Result, err error) {
	agreed := false // err is one every rank returns in the same round
	defer func() {
		if r := recover(); r != nil {
			w, agreed = nil, false
			err = fmt.Errorf("engine: cocoa: rank %d panicked: %v\n\n%s", c.Rank(), r, debug.Stack())
		}
		if err != nil && !agreed {
			c.Abort(err)
		}
	}()
	tc := &timedComm{Comm: c}
	c = tc
	prob, nGlobal, err := agreeProblem(c, local, opt)
	if err != nil {
		return nil, nil, err
	}
	tc.large = prob.X.Cols + 2 + flagCount
	if nGlobal == 0 {
		return nil, nil, driver.Agreed("engine: cocoa: no rank has any rows")
	}
	opt.StallHint = "a loss that is not smooth converges sublinearly, and its gap rests on plateaus before falling again: allow a longer plateau with a larger Options.StallEpochs (negative: never stall), or use a smooth loss (sqhinge, smoothhinge)"
	if prob.Loss.Gamma() == 0 {
		if opt.StallEpochs == 0 {
			opt.StallEpochs = driver.NonSmoothStallEpochs
		}
	} else {
		opt.StallHint = "scale the features, or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), or allow a longer plateau with a larger Options.StallEpochs"
	}
	opt = opt.WithDefaults()
	opt.Solver = SolverCoCoA
	localCtx := ctx
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		localCtx, cancel = context.WithTimeoutCause(ctx, opt.TimeLimit, driver.ErrTimeLimit)
		defer cancel()
	}
	agreedCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	m, err := startDistCoCoA(c, prob, nGlobal, opt, localCtx, cancel)
	if err != nil {
		agreed = driver.IsAgreed(err)
		return nil, nil, err
	}
	res, err = driver.Run(agreedCtx, m, opt)
	res.Solver = SolverCoCoA
	res.Note = tc.note()
	if m.search {
		res.AddNote(fmt.Sprintf("the step search moved off the summed change in %d rounds", m.moved))
	}
	if ferr := m.Finish(res); err == nil {
		err = ferr
	}
	agreed = err != nil && res.Stop == "diverged"
	return res.ModelPoint(m.Point(), err), res, err
}

// agreeProblem is driver.AgreeProblem with cocoa's checks: the solver
// named, and what cocoa's local solves take. Warm duals (sdca.Settings)
// are the rank's own rows' (newDistCore checks them).
func agreeProblem(c comm.Comm, local objective.Problem, opt driver.Options) (objective.Problem, int64, error) {
	return driver.AgreeProblem(c, local, opt, string(SolverCoCoA), func(local objective.Problem, opt driver.Options) error {
		if opt.Solver != "" && opt.Solver != SolverCoCoA {
			return fmt.Errorf("engine: distributed training runs cocoa (CoCoA+ rounds over the ranks) or newton, not %s", opt.Solver)
		}
		o := opt
		o.Solver = SolverCoCoA
		return acceptsSDCAAsync(local, o.WithDefaults())
	})
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// startDistCoCoA builds the rank's method: cocoa's start with N for n in
// the steps and in v, and the piece counts ωⱼ of all ranks.
func startDistCoCoA(c comm.Comm, prob objective.Problem, nGlobal int64, opt driver.Options, local context.Context, cancel context.CancelCauseFunc) (*distCoCoA, error) {
	x := prob.X
	k := CoCoAWorkers(x, opt.Threads)
	if x.Rows == 0 {
		k = 1
	}
	colNNZ := x.ColumnCounts()
	omega := hugepage.Make[float64](x.Cols)
	for j, cnt := range colNNZ {
		omega[j] = float64(min(int64(k), cnt))
	}
	if err := c.AllreduceSum(omega); err != nil {
		return nil, err
	}
	for j := range omega {
		omega[j] = max(1, omega[j])
	}
	sequential := c.Size() == 1 && k == 1
	var beta []float64
	if !sequential {
		beta = omega
	}
	opt.Threads = k // the certificate's pool is the rounds' pool
	core, err := newDistCore(c, prob, nGlobal, opt, beta, colNNZ)
	if err != nil {
		return nil, err
	}
	s := &distCoCoA{sdcaCore: core, c: c, nGlobal: nGlobal, k: k, omega: omega, resync: true,
		sequential: sequential, local: local, cancel: cancel}
	s.perm = hugepage.Make[int32](x.Rows)
	for i := range s.perm {
		s.perm[i] = int32(i)
	}
	// sdca's stream on rank 0, so that one rank is cocoa step for step.
	s.rng = rand.New(rand.NewPCG(opt.Seed+uint64(c.Rank()), 0x5dca))
	s.buf = make([]float64, core.d+2+flagCount)
	if (c.Size() > 1 || k > 1) && distSearch {
		s.search = true
		s.stepSearch = newStepSearch(prob.Reg, nGlobal, core.n, core.d, k, flagCount)
	}
	s.counts = make([]paddedCounter, k)
	if !sequential {
		if k > 1 {
			if core.cert == nil {
				return nil, errors.New("engine: cocoa: no worker pool for K > 1 (a bug)")
			}
			s.pool = core.cert.Pool()
		}
		s.rep, s.cols = replicas(k, core.d)
	}
	return s, nil
}

// newDistCore is newSDCACore for the rank's rows of a problem of nGlobal
// rows: v carries 1/N, the steps are σₖ = N/qₖ, and a warm start's exact v
// is summed over all ranks. The checks that can fail on one rank alone
// (a non-finite row, a warm start) end in one collective that tells every
// rank; the rows of all ranks being zero is an error of all.
func newDistCore(c comm.Comm, prob objective.Problem, nGlobal int64, opt driver.Options, beta []float64, colNNZ []int64) (*sdcaCore, error) {
	x := prob.X
	core := allocCore(prob, opt, int(nGlobal)) // agreeProblem checked the regularizer
	var localErr error
	nonzero := false
	core.sigma = hugepage.Make[float64](core.n)
	for k := 0; k < core.n; k++ {
		q := core.rowCurvature(k, beta)
		if math.IsNaN(q) || math.IsInf(q, 0) {
			localErr = fmt.Errorf("engine: cocoa: row %d of rank %d has non-finite values or a squared norm beyond float64", k+1, c.Rank())
			break
		}
		core.sigma[k] = float64(nGlobal) / q // +Inf for q = 0
		nonzero = nonzero || q > 0
	}
	warm, _ := driver.SettingsOf[Settings](opt)
	switch {
	case localErr != nil:
	case warm.WarmDuals != nil:
		// The rank's rows' duals, as sdca takes them (checkDuals).
		if localErr = core.checkDuals(warm.WarmDuals); localErr == nil {
			copy(core.y, warm.WarmDuals)
		}
	case opt.WarmStart != nil:
		loss := prob.Loss
		for k := 0; k < core.n; k++ {
			val, idx := x.Row(k)
			z := kernels.SparseDot(val, idx, opt.WarmStart)
			core.y[k] = loss.DualFeasible(loss.Deriv(z, prob.B[k]), prob.B[k])
		}
	}
	// Whether some rank starts warm, from weights or duals: then every
	// rank takes part in recomputing v.
	mx := []float64{b2f(localErr != nil), b2f(nonzero), b2f(opt.WarmStart != nil || warm.WarmDuals != nil)}
	if err := c.AllreduceMax(mx); err != nil {
		return nil, err
	}
	switch {
	case localErr != nil:
		return nil, driver.AgreedError{Msg: localErr.Error()}
	case mx[0] != 0:
		return nil, driver.Agreed("engine: cocoa: another rank's rows were refused (its error says why)")
	case mx[1] == 0:
		return nil, driver.Agreed("engine: every row of the data is zero, on every rank")
	}
	threads := driver.ThreadBudget(opt.Threads)
	if threads = min(threads, int(x.NNZ()/driver.SweepMinNNZ)); threads > 1 {
		core.cert = driver.NewRowSweep(x, threads, false)
	}
	core.eval.UseColumnCounts(colNNZ)
	if mx[2] != 0 {
		s := &distCoCoA{sdcaCore: core, c: c}
		if err := s.recompute(); err != nil {
			core.closeCert()
			return nil, err
		}
	}
	return core, nil
}

// recompute sets v to the exact (1/N) Σₖ yₖaₖ over all ranks: each rank's
// compensated sum (Evaluator.DualSum), added by one allreduce, times 1/N,
// which on one rank is sdcaCore.recomputeV to the bit.
func (s *distCoCoA) recompute() error {
	s.wFresh = false
	buf := s.v // the sum is formed in place: v is replaced whole
	if err := s.eval.DualSum(s.y, buf); err != nil {
		return err
	}
	if err := s.c.AllreduceSum(buf); err != nil {
		return err
	}
	for j := range buf {
		buf[j] *= s.invN
	}
	return nil
}

// flags sets the rank's stop flags into f (flagCount values).
func (s *distCoCoA) flags(f []float64) {
	clear(f)
	if s.local.Err() != nil {
		if errors.Is(context.Cause(s.local), driver.ErrTimeLimit) {
			f[flagTime] = 1
		} else {
			f[flagCanceled] = 1
		}
	}
}

// observe cancels the agreed context when some rank's flag in the summed
// f is set: with the time limit as its cause unless some rank was
// cancelled otherwise. Every rank sees the same sums, so every rank's
// driver sees the context done after the same collective.
func (s *distCoCoA) observe(f []float64) {
	switch {
	case f[flagCanceled] > 0:
		s.cancel(context.Canceled)
	case f[flagTime] > 0:
		s.cancel(driver.ErrTimeLimit)
	}
}

// wantExact reports whether a certificate taken after `sampled` samples
// recomputes v first (sdcaCore.certificate's rule).
func (s *distCoCoA) wantExact(sampled float64) bool {
	return !s.runningExact || s.sinceExact+1 >= exactEvery || s.predictGapAt(sampled) <= 2*s.tol
}

// predictGapAt is sdcaCore.predictGap at `sampled` samples stepped.
func (s *distCoCoA) predictGapAt(sampled float64) float64 {
	s0, g0 := s.gaps[0][0], s.gaps[0][1]
	s1, g1 := s.gaps[1][0], s.gaps[1][1]
	if !(g1 > 0 && g1 < g0 && s1 > s0) {
		return math.Inf(1)
	}
	return g1 * math.Pow(g1/g0, (sampled-s1)/(s1-s0))
}

// Certify is sdcaCore.certificate over the ranks.
func (s *distCoCoA) Certify() (driver.TracePoint, error) {
	exact := s.exactPending
	s.exactPending = false
	if !exact && s.wantExact(float64(s.sampled)) {
		if err := s.recompute(); err != nil {
			return driver.TracePoint{}, err
		}
		exact = true
	}
	tp, err := s.evaluateAll()
	if err != nil {
		return tp, err
	}
	if !exact && tp.RelGap <= 2*s.tol {
		if err := s.recompute(); err != nil {
			return driver.TracePoint{}, err
		}
		if tp, err = s.evaluateAll(); err != nil {
			return tp, err
		}
		exact = true
	}
	s.sinceExact++
	if exact {
		s.sinceExact = 0
	}
	s.gaps[0], s.gaps[1] = s.gaps[1], [2]float64{float64(s.sampled), tp.RelGap}
	// A recomputed v differs from the replicas by rounding.
	s.resync = s.resync || s.sinceExact == 0
	return tp, nil
}

// evaluateAll is sdcaCore.evaluate over the ranks: w = ∇g*(−v), the same
// on every rank, the rank's partial sums at its rows, one allreduce of
// them with the stop flags, and the certificate assembled from the sums.
func (s *distCoCoA) evaluateAll() (driver.TracePoint, error) {
	s.setPrimal()
	part, err := s.eval.PartialAt(s.w, s.y)
	if err != nil {
		return driver.TracePoint{}, err
	}
	var sums [2 + flagCount]float64
	sums[0], sums[1] = part.Loss, part.Conj
	s.flags(sums[2:])
	if err := s.c.AllreduceSum(sums[:]); err != nil {
		return driver.TracePoint{}, err
	}
	s.observe(sums[2:])
	cert, err := objective.Assemble(s.prob.Reg, s.w, s.v, objective.Partial{Loss: sums[0], Conj: sums[1]}, int(s.nGlobal))
	if err != nil {
		return driver.TracePoint{}, err
	}
	return driver.TracePointOf(cert), nil
}

func (s *distCoCoA) Threads() int { return s.certThreads() }

func (s *distCoCoA) Finish(res *driver.Result) error {
	res.Duals = s.y
	return s.closeCert()
}

// RunEpochs runs k rounds. ctx is the context the ranks agree on; the
// local solves stop early on the rank's own context, whose state reaches
// the others through the round's flags.
func (s *distCoCoA) RunEpochs(ctx context.Context, k int) (int, error) {
	s.wFresh = false
	d := s.d
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		if s.sequential {
			// One rank, one worker: sdca's epoch, as cocoa's K = 1.
			(&sdcaSolver{sdcaCore: s.sdcaCore, m: 1, perm: s.perm}).epochSequential(s.local)
			f := s.buf[d+1:]
			s.flags(f)
			if err := s.c.AllreduceSum(f); err != nil {
				return e + 1, err
			}
			s.observe(f)
			continue
		}
		// The certificate after the last round recomputes v: send the
		// exact sum instead of the change (a full round's samples are
		// what the rule extrapolates to).
		exact := e == k-1 && s.wantExact(float64(s.sampled+s.nGlobal))
		resync := s.resync
		s.resync = false
		run := s.run
		search := s.search && !exact
		if search {
			copy(s.y0, s.y)
		}
		err := run(func(w int) {
			if resync {
				copy(s.rep[w], s.v)
			}
			s.counts[w].n = s.localPass(w)
		})
		if err == nil {
			if exact {
				err = s.eval.DualSum(s.y, s.buf[:d])
			} else {
				err = run(s.change)
			}
		}
		if err != nil {
			return e + 1, fmt.Errorf("engine: cocoa: %w", err)
		}
		var stepped int64
		for w := range s.counts {
			stepped += s.counts[w].n
		}
		s.buf[d] = float64(stepped)
		s.flags(s.buf[d+1:])
		if err := s.c.AllreduceSum(s.buf); err != nil {
			return e + 1, err
		}
		s.sampled += int64(s.buf[d])
		if exact {
			for j, t := range s.buf[:d] {
				s.v[j] = t * s.invN
			}
			if s.search {
				// The step since the last round is not known as a
				// combination of the duals' steps: no previous step.
				clear(s.py)
				clear(s.pv)
			}
			s.resync, s.exactPending = true, true
		} else {
			if search {
				if err := s.chooseStep(); err != nil {
					return e + 1, err
				}
			}
			if err := run(s.apply); err != nil {
				return e + 1, fmt.Errorf("engine: cocoa: %w", err)
			}
		}
		s.observe(s.buf[d+1:])
	}
	return k, nil
}

// localPass runs worker w's piece of this round's permutation against its
// replica (cocoa.local with the ωⱼ of all ranks) and returns the samples
// it stepped.
func (s *distCoCoA) localPass(w int) int64 {
	order := s.perm[s.n*w/s.k : s.n*(w+1)/s.k]
	r, omega := s.rep[w], s.omega
	indptr, values, indices := s.x.Indptr, s.x.Values, s.x.Indices
	for i, k32 := range order {
		if i&4095 == 4095 && s.local.Err() != nil {
			return int64(i)
		}
		if next := i + prefetchAhead; next < len(order) {
			s.prefetchSample(int(order[next]))
		}
		k := int(k32)
		lo, hi := indptr[k], indptr[k+1]
		val, idx := values[lo:hi], indices[lo:hi]
		z := s.margin(val, idx, r)
		yn := s.dualStep(k, z, s.sigma[k])
		if d := yn - s.y[k]; d != 0 {
			s.y[k] = yn
			a := d * s.invN
			for p, j := range idx {
				r[j] += a * val[p] * omega[j]
			}
		}
	}
	return int64(len(order))
}

// run calls fn for each of the rank's k workers: on the pool, or in turn
// where the rank has one thread.
func (s *distCoCoA) run(fn func(w int)) error {
	if s.pool == nil {
		for w := range s.k {
			fn(w)
		}
		return nil
	}
	return s.pool.Run(fn)
}

// change sets the rank's change of v on worker w's coordinates into buf:
// Σ_w (r_wj − vⱼ)/ωⱼ, cocoa's merge before it is added.
func (s *distCoCoA) change(w int) {
	lo, hi := s.cols[w], s.cols[w+1]
	for j := lo; j < hi; j++ {
		vj := s.v[j]
		var sum float64
		for _, r := range s.rep {
			sum += r[j] - vj
		}
		s.buf[j] = sum / s.omega[j]
	}
}

// apply adds the summed change of all ranks into v on worker w's
// coordinates and resets the replicas there to the new v.
func (s *distCoCoA) apply(w int) {
	lo, hi := s.cols[w], s.cols[w+1]
	v := s.v[lo:hi]
	step := s.buf[lo:hi]
	if s.search {
		step = s.pv[lo:hi]
	}
	for j := range v {
		v[j] = v[j] + step[j]
	}
	for _, r := range s.rep {
		copy(r[lo:hi], v)
	}
}

// timedComm is a comm.Comm that counts the allreduces that pass through it
// and the time spent in them, separately for the rounds' large ones (of
// `large` values: the change of v and what rides with it) and the rest
// (the certificates' sums, the step search's sums, the agreements). The
// time is the wall time of the call: the transfer, and the wait for the
// slowest rank.
type timedComm struct {
	comm.Comm
	large                int
	nLarge, nSmall       int64
	valsLarge, valsSmall int64
	secLarge, secSmall   float64
}

func (t *timedComm) count(n int, start time.Time) {
	sec := time.Since(start).Seconds()
	if n == t.large {
		t.nLarge++
		t.valsLarge += int64(n)
		t.secLarge += sec
	} else {
		t.nSmall++
		t.valsSmall += int64(n)
		t.secSmall += sec
	}
}

func (t *timedComm) AllreduceSum(buf []float64) error {
	start := time.Now()
	err := t.Comm.AllreduceSum(buf)
	t.count(len(buf), start)
	return err
}

func (t *timedComm) AllreduceMax(buf []float64) error {
	start := time.Now()
	err := t.Comm.AllreduceMax(buf)
	t.count(len(buf), start)
	return err
}

// note says what the collectives cost, for Result.Note.
func (t *timedComm) note() string {
	per := func(sec float64, n int64) float64 {
		if n == 0 {
			return 0
		}
		return 1e3 * sec / float64(n)
	}
	return fmt.Sprintf("collectives: %d round allreduces of %d doubles (%d bytes), %.4g ms each; %d small allreduces (%d doubles in all), %.4g ms each",
		t.nLarge, t.large, 8*t.large, per(t.secLarge, t.nLarge), t.nSmall, t.valsSmall, per(t.secSmall, t.nSmall))
}

// distSearch switches the step search of the rounds over more than one
// rank (chooseStep) on; tests switch it off to compare.
var distSearch = true

// chooseStep picks the round's step on every rank alike, sets the rank's
// duals to it and leaves its change of v in pv.
//
// The ranks' pieces are fixed, so CoCoA+'s rounds follow a damped
// block-Jacobi iteration whose slow directions are those where the pieces
// of different ranks pull v apart: each piece sees its own change counted
// ωⱼ times, the changes of the ranks largely cancel in v, and each round
// moves the duals along such a direction by a small fraction of what it
// needs, the same direction round after round. A step along the summed
// change Δy = y − y₀ and the previous round's step p, y₀ + γΔy + βp (a
// heavy ball whose two weights are chosen each round), covers that
// ground, and the dual tells which weights are best:
//
//	D(γ, β) = −(1/N) Σₖ φₖ*(y₀ₖ + γΔyₖ + βpₖ) − g*(−(v₀ + γΔv + βp_v)),
//
// with Δv the allreduced summed change and p_v the previous step of v,
// which is p's (1/N) Σ pₖaₖ to rounding. Each rank sums φₖ* over its rows
// at the points of searchGrid (rows where Δyₖ and pₖ are zero add the same
// constant to every point and are left out), one allreduce of those sums
// gives every rank the same values, and objective.DualPlane turns them
// into D at each point with g* at the same v on every rank, so every rank
// picks the same point. These values steer the step only; the
// certificate is Certify's, from PartialAt and Assemble.
//
// Why the step stays safe. grid[0] = (1, 0) is CoCoA+'s summed change,
// which never decreases D (see distCoCoA). Another point is taken only if
// its D exceeds D(1, 0) by more than a relative 1e-14, a margin over the
// rounding of the sums, so D(new) ≥ D(summed change) ≥ D(y₀): the search
// can only add to what a round gains. A point that takes a dual outside
// the domain of φ* has φ* = +∞ and is never taken. The sums and the choice are
// stepSearch's, shared with cocoa: on one rank the round is cocoa's epoch.
func (s *distCoCoA) chooseStep() error {
	run := s.run
	if err := s.conjugates(run, s.prob.Loss, s.prob.B, s.y); err != nil {
		return fmt.Errorf("engine: cocoa: %w", err)
	}
	m := len(s.grid)
	s.flags(s.sums[m:])
	if err := s.c.AllreduceSum(s.sums); err != nil {
		return err
	}
	s.observe(s.sums[m:])
	return s.take(s.v, s.buf[:s.d], s.y, s.logit)
}

// distCoCoA is a driver.Method.
var _ driver.Method = (*distCoCoA)(nil)
