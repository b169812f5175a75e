package sdca

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// SolverCoCoA is SDCA run by K workers on their own pieces of the samples
// against private replicas of the shared vector, merged once per epoch
// (CoCoA+ with per-coordinate aggregation).
const SolverCoCoA driver.Solver = "cocoa"

func init() {
	driver.Register(&driver.Entry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverCoCoA,
			Reads:        []string{driver.CoordinateFamily, Family},
			Takes:        driver.Takes{L1: true, WarmDuals: true},
			Summary:      "SDCA local solves on thread-private replicas, merged per epoch with per-feature safe weights (CoCoA+, Ma et al. 2015; SySCD, Ioannou et al. 2019)",
			Losses:       "any (squared, logistic, sqhinge, smoothhinge, hinge)",
			Regularizers: "elastic net with λ > 0 on every coordinate, optional centre and weights",
			Parallel:     true,
			Certified:    true,
		},
		Rank:    21,
		Accepts: acceptsSDCAAsync, // one sample at a time per worker, as sdca-async
		Start:   startCoCoA,
		Workers: CoCoAWorkers,
	})
}

// cocoa is CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtárik & Takáč, "Adding vs.
// averaging in distributed primal-dual optimization", ICML 2015) on the
// cores of one machine, with SDCA as the local solver and one local pass
// per round, as SySCD (Ioannou, Mendler-Dünner & Parnell, NeurIPS 2019)
// runs it: every epoch cuts a fresh random permutation of the samples into
// K pieces, worker w runs SDCA's steps (sdcaSolver.step) over piece w
// against its own replica r_w of v, and the K changes are then added into
// v. No worker reads memory another one writes during the epoch, so no
// cache line bounces between cores; the workers meet once per epoch.
//
// Why the sum of the K local changes is safe. Let Δ_w = (1/n) Σ_{k∈piece w}
// δₖaₖ be worker w's change of v and ωⱼ the number of pieces whose rows use
// feature j. The regularizer is separable, and coordinate j of the summed
// change is a convex combination of the ωⱼ scaled changes ωⱼΔ_wj, so by
// convexity of gⱼ*
//
//	gⱼ*(−vⱼ − Σ_w Δ_wj) ≤ Σ_w (1/ωⱼ)·gⱼ*(−vⱼ − ωⱼΔ_wj)   (terms with Δ_wj = 0 drop out).
//
// Hence D(y + Δy) − D(y) ≥ Σ_w L_w(Δy_w), where L_w is the dual of the
// samples of piece w with g*'s coordinate j replaced by u ↦ gⱼ*(−vⱼ −
// ωⱼu)/ωⱼ: each worker maximises its own lower model, independently of the
// others, and D never decreases. That model is SDCA's dual read at the
// replica r_w = v + ω ⊙ Δ_w (its gradient is ∇g* at r_w, so a margin reads
// the replica), with curvature ωⱼ/λⱼ on coordinate j, so the step is
// SDCA's prox with qₖ = Σⱼ ωⱼ·aₖⱼ²/λⱼ (CoCoA+'s σ′ = K, made per
// coordinate: ωⱼ ≤ K, and ωⱼ = 1 for a feature only one piece uses). The
// pieces change every epoch, so ωⱼ = min(K, number of rows using j), which
// bounds the count for every cut. With K = 1 the solver is SDCA.
//
// Each epoch ends with a merge over column ranges, vⱼ += Σ_w (r_wj − vⱼ)/ωⱼ,
// that also resets every replica to the new v. With K > 1 the merge does
// not add the summed change as it is: the dual picks the step in the plane
// of the summed change and the previous merge's step (stepSearch, the same
// search as distCoCoA's over ranks), which is the summed change unless
// another point of the plane has a larger D, so D still never decreases.
// The ωⱼ damping is what the search undoes: where the pieces share the
// features of a direction, each merge moves along it by about 1/ωⱼ of what
// a sequential pass would, and a longer step or the previous step's
// momentum covers the rest. A smaller data-dependent σ′ in the local
// steps (Ma et al.'s σ′_min = max_α ‖Σ_w A_wα_w‖²/Σ_w ‖A_wα_w‖²) would
// need that maximum, a spectral quantity that an estimate from the data
// bounds from below only; ωⱼ is its per-coordinate upper bound (by
// Cauchy–Schwarz over the pieces that share coordinate j), and the search
// takes the longer steps only where D confirms them.
//
// The running v differs from (1/n)Σₖ yₖaₖ by rounding alone, and the
// certificate treats it as sdca's (sdcaCore.certificate), recomputing it
// where a stop depends on it; the replicas are copied from v again after a
// recomputation.
type cocoa struct {
	*sdcaCore
	k      int         // workers K
	pool   *sched.Pool // nil: K = 1, SDCA's sequential epoch
	omega  []uint8     // ωⱼ = min(K, rows using feature j)
	rep    [][]float64 // rep[w] = v + ω ⊙ Δ_w during an epoch, v after the merge
	cols   []int       // worker w merges coordinates cols[w]:cols[w+1]
	perm   []int32
	rng    *rand.Rand
	counts []paddedCounter
	resync bool // v changed outside an epoch: the replicas must copy it
	// search chooses each merge's step in the plane of the summed change
	// and the previous step (see stepSearch; nil: K = 1 or cocoaSearch
	// off); dv holds the summed change.
	search *stepSearch
	dv     []float64
}

// cocoaSearch switches the merges' step search (stepSearch) on; tests
// switch it off to compare with the plain CoCoA+ merge.
var cocoaSearch = true

// CoCoAWorkers returns K for data x and Options.Threads threads (0: the
// cores): one worker per driver.SweepMinNNZ nonzeros, as for the certificate
// whose pool the epochs share, and at most 255, so that ωⱼ fits a byte (the
// epoch reads it at random beside the replica, and a byte array stays in
// cache).
func CoCoAWorkers(x *sparse.CSR, threads int) int {
	return driver.WorkersFor(threads, float64(x.NNZ()), driver.SweepMinNNZ, min(x.Rows, 255))
}

// replicas returns k private replicas of a d-vector and the coordinate
// ranges the workers merge them by, cols[w]:cols[w+1].
func replicas(k, d int) ([][]float64, []int) {
	rep := make([][]float64, k)
	for w := range rep {
		rep[w] = hugepage.Make[float64](d)
	}
	cols := make([]int, k+1)
	for w := 1; w <= k; w++ {
		cols[w] = d * w / k
	}
	return rep, cols
}

func startCoCoA(ctx context.Context, prob objective.Problem, opt driver.Options) (driver.Method, error) {
	n := prob.X.Rows
	k := CoCoAWorkers(prob.X, opt.Threads)
	var beta []float64
	var omega []uint8
	var colNNZ []int64
	if k > 1 {
		colNNZ = prob.X.ColumnCounts()
		beta = hugepage.Make[float64](prob.X.Cols)
		omega = hugepage.Make[uint8](prob.X.Cols)
		for j, c := range colNNZ {
			omega[j] = uint8(max(1, min(int64(k), c)))
			beta[j] = float64(omega[j])
		}
	}
	opt.Threads = k // the certificate's pool is the epochs' pool
	core, err := newSDCACore(prob, opt, beta, colNNZ)
	if err != nil {
		return nil, err
	}
	s := &cocoa{sdcaCore: core, k: k, omega: omega, resync: true}
	s.perm = hugepage.Make[int32](n)
	for i := range s.perm {
		s.perm[i] = int32(i)
	}
	s.rng = rand.New(rand.NewPCG(opt.Seed, 0x5dca)) // sdca's stream: K = 1 is sdca, step for step
	if k > 1 {
		if core.cert == nil {
			return nil, errors.New("engine: cocoa: no worker pool for K > 1 (a bug)")
		}
		s.pool = core.cert.Pool()
		s.rep, s.cols = replicas(k, core.d)
		s.counts = make([]paddedCounter, k)
		if cocoaSearch {
			s.search = newStepSearch(prob.Reg, int64(n), n, core.d, k, 0)
			s.dv = hugepage.Make[float64](core.d)
		}
	}
	return s, nil
}

func (s *cocoa) Certify() (driver.TracePoint, error) {
	tp, err := s.certificate()
	// A recomputed v (sinceExact = 0) differs from the replicas by rounding.
	s.resync = s.resync || s.sinceExact == 0
	return tp, err
}

func (s *cocoa) Threads() int { return s.certThreads() }

func (s *cocoa) Finish(res *driver.Result) error {
	res.Duals = s.y
	if s.search != nil && s.search.moved > 0 {
		res.AddNote(fmt.Sprintf("the step search moved off the summed change in %d merges", s.search.moved))
	}
	return s.closeCert()
}

// RunEpochs runs k epochs of K local passes and a merge each.
func (s *cocoa) RunEpochs(ctx context.Context, k int) (int, error) {
	s.wFresh = false
	for e := 0; e < k; e++ {
		if ctx.Err() != nil {
			return e, nil
		}
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		if s.pool == nil {
			(&sdcaSolver{sdcaCore: s.sdcaCore, m: 1, perm: s.perm}).epochSequential(ctx)
			continue
		}
		resync := s.resync
		s.resync = false
		// An epoch after which the certificate recomputes v merges by the
		// summed change and forgets the previous step, as distCoCoA's
		// round that sends the exact sum: so one rank of distCoCoA is cocoa.
		search := s.search != nil && !(e == k-1 && s.exactNext())
		if search {
			copy(s.search.y0, s.y)
		}
		err := s.pool.Run(func(w int) {
			if resync {
				copy(s.rep[w], s.v)
			}
			s.counts[w].n = s.local(ctx, w)
		})
		if err == nil {
			// Always merge, even after a cancelled epoch: the duals have moved.
			if search {
				err = s.searchMerge()
			} else {
				err = s.pool.Run(s.merge)
				if s.search != nil {
					s.search.forget()
				}
			}
		}
		for w := range s.counts {
			s.sampled += s.counts[w].n
		}
		if err != nil {
			return e + 1, fmt.Errorf("engine: cocoa: %w", err)
		}
	}
	return k, nil
}

// local runs worker w's piece of this epoch's permutation against its
// replica and returns the samples it stepped.
func (s *cocoa) local(ctx context.Context, w int) int64 {
	order := s.perm[s.n*w/s.k : s.n*(w+1)/s.k]
	r, omega := s.rep[w], s.omega
	indptr, values, indices := s.x.Indptr, s.x.Values, s.x.Indices
	for i, k32 := range order {
		if i&4095 == 4095 && ctx.Err() != nil {
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
				// The product is rounded on its own: fused into the add
				// (GOAMD64=v3) it would give other bits than the
				// distributed CoCoA+'s rank, which must train this model.
				r[j] += float64(a * val[p] * float64(omega[j]))
			}
		}
	}
	return int64(len(order))
}

// merge adds the K changes into v on worker w's coordinates and resets
// the replicas there to the new v.
func (s *cocoa) merge(w int) {
	lo, hi := s.cols[w], s.cols[w+1]
	v := s.v[lo:hi]
	omega := s.omega[lo:hi]
	for j := range v {
		vj := v[j]
		var sum float64
		for _, r := range s.rep {
			sum += r[lo+j] - vj
		}
		v[j] = vj + sum/float64(omega[j])
	}
	for _, r := range s.rep {
		copy(r[lo:hi], v)
	}
}

// exactNext reports whether the certificate after an epoch from now
// will recompute v (sdcaCore.certificate's rule, its gaps extrapolated to
// a full epoch more), as distCoCoA.wantExact.
func (s *cocoa) exactNext() bool {
	if !s.runningExact || s.sinceExact+1 >= exactEvery {
		return true
	}
	s0, g0 := s.gaps[0][0], s.gaps[0][1]
	s1, g1 := s.gaps[1][0], s.gaps[1][1]
	if !(g1 > 0 && g1 < g0 && s1 > s0) {
		return false
	}
	return g1*math.Pow(g1/g0, (float64(s.sampled+int64(s.n))-s1)/(s1-s0)) <= 2*s.tol
}

// searchMerge is merge with the step chosen by s.search: the workers sum
// the change on their coordinates, the search sums the conjugate terms
// and picks the step, and the workers add it to v and reset the replicas.
func (s *cocoa) searchMerge() error {
	err := s.pool.Run(func(w int) {
		lo, hi := s.cols[w], s.cols[w+1]
		for j := lo; j < hi; j++ {
			vj := s.v[j]
			var sum float64
			for _, r := range s.rep {
				sum += r[j] - vj
			}
			s.dv[j] = sum / float64(s.omega[j])
		}
	})
	if err == nil {
		err = s.search.conjugates(s.pool.Run, s.prob.Loss, s.prob.B, s.y)
	}
	if err != nil {
		return err
	}
	if err := s.search.take(s.v, s.dv, s.y, s.logit); err != nil {
		return err
	}
	return s.pool.Run(func(w int) {
		lo, hi := s.cols[w], s.cols[w+1]
		v, step := s.v[lo:hi], s.search.pv[lo:hi]
		for j := range v {
			v[j] += step[j]
		}
		for _, r := range s.rep {
			copy(r[lo:hi], v)
		}
	})
}
