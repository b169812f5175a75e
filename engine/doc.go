// Package engine trains regularized linear models with certified
// primal-dual methods: AdaSPDC, the adaptive stochastic primal-dual
// coordinate method of Zhu & Storkey (ECML-PKDD 2015), its relatives SPDC
// and asynchronous SPDC, SDCA and its parallel forms, a truncated Newton
// method, variance-reduced methods, Wang & Xiao's, Pdprox, and the
// reductions of Allen-Zhu & Hazan. Every run is certified by a duality gap.
//
// # Embedding
//
// NewProblem turns a sparse.Dataset into a Problem (raw labels mapped to
// ±1 and kept, an optional bias column), and Train with DefaultOptions
// picks the solver from the problem (AutoSolver, the choice adaspdc train
// makes) and returns a Model whose Predict gives raw labels on raw rows.
// A cancelled context or Options.TimeLimit ends a run with the model of
// its best certificate; Options.Callback sees every certificate. The
// Example functions show each in a few lines.
//
// # Problem
//
// Train minimises P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x). The loss φ is a Loss
// and g a Regularizer (regularizer.go): an interface with its value,
// conjugate, prox and strong-convexity modulus, of which ElasticNet,
// l1‖x‖₁ + (λ/2)‖x − c‖² with an optional centre c (for the AdaptReg
// reduction) and per-coordinate weights, is the main one. AdaSPDC needs
// λ > 0 and works through the saddle form
//
//	min_x max_y  g(x) + (1/n) Σₖ (yₖ aₖᵀx − φ*(yₖ)).
//
// The losses are the squared loss, the logistic loss, the squared hinge and
// the smoothed hinge, defined as in LIBLINEAR so that objectives compare:
// LIBLINEAR's C is 1/(nλ) for the logistic loss and the squared hinge, and
// 1/(2nλ) for the squared loss, which LIBLINEAR writes without the ½.
//
// # Algorithm
//
// Samples are grouped into n_b dual blocks (package blocks). Iteration t
// draws m distinct blocks Sₜ uniformly and
//
//  1. updates each sampled block's duals by the prox of φ* at the margins
//     aₖᵀx̄, with the block's own step σᵢ ∝ 1/‖Aᵢ‖₂ (Eq. 9, 10);
//  2. updates the primal with the batch change rescaled to an unbiased
//     full-change estimate, x ← prox_{τg}(x − τ(r + (1/m)Σ ÃⱼΔyⱼ)), with
//     τ ∝ 1/max_{i∈Sₜ} Rᵢ (Eq. 11, 12);
//  3. extrapolates x̄ = x⁺ + θ(x⁺ − x) (Eq. 14, 15) and keeps
//     r = (1/n) Σ yₖaₖ up to date (Eq. 13).
//
// How the paper's block formulas become per-sample steps is derived on
// stepSizes. Solver SPDC is the same loop with every Rᵢ replaced by the
// largest, which is Zhang & Xiao's constant-step SPDC.
//
// # Batch steps
//
// The paper's steps (Options.Steps "paper") keep its matrix (17) positive
// semidefinite for every batch by assuming the worst: that the m blocks of
// a batch share all their features, so that ‖Σ_{i∈S} Aᵢᵀhᵢ‖ can reach
// Σ Rᵢ‖hᵢ‖. Hence τ ∝ √m/R_max and σᵢ ∝ 1/(Rᵢ√m), and on sparse data the
// passes grow with m. The default, "eso", follows Quartz (Qu, Richtárik &
// Zhang 2015) and the expected separable over-approximation of Richtárik &
// Takáč for τ-nice sampling: with ωⱼ the number of blocks that use feature
// j and βⱼ = 1 + (m−1)(ωⱼ−1)/(n_b−1) (the factor mini-batch SDCA uses),
//
//	E‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ (m/n_b) Σᵢ vᵢ‖hᵢ‖²,   vᵢ = ‖diag(√β)Aᵢᵀ‖₂²
//
// (vᵢ = Σⱼ βⱼaᵢⱼ² for a one-row block). The steps are Eq. 10, 12 and 15
// with every Rᵢ replaced by ρᵢ = √(vᵢ/m), which satisfy
// 4·τ(ρᵢ)·σᵢ·vᵢ ≤ m for every block: the condition under which the
// inequality Young's bound draws from (17) holds in expectation over the
// batch (the derivation is on esoCouplings). ρᵢ lies between Rᵢ/√m, when no
// feature of block i occurs in another block, and Rᵢ, when all occur in
// all: the steps equal the paper's at m = 1 and on dense data, and for
// disjoint rows a batch of m is worth m single steps. θ is Eq. 15 with the
// same substitution. The rows of news20 with unit norm share little
// (the mean of vᵢ/Rᵢ² is 1.5 at m = 16, 9 at m = 256), a9a's share much
// (7.7 at m = 16); the lab notebook (git show c876b51:bench/README.md) ("ESO steps") has passes against m.
//
// # Lazy updates
//
// On sparse high-dimensional data most coordinates are untouched by an
// iteration's batch; for them steps 2 and 3 are scalar recurrences whose
// coefficients depend only on τᵗ and θᵗ. With Options.Lazy on (chosen
// automatically when d exceeds the batch's nonzeros, where the dense
// update's O(d) per iteration would dominate), an iteration costs the
// nonzeros of its rows rather than O(d). For g = (λ/2)‖x‖² (lazyl2.go) each
// coordinate keeps one 32-byte record in scaled form, ξⱼ = x/P − rⱼS with
// the segment's running product P and sum S, so that x̄ⱼ is A·ξⱼ + B·rⱼ + cⱼ
// with A and B common to all coordinates: a row's margin is three fused dot
// products with no branch, and an iteration's own bookkeeping is O(1). With
// l1 > 0 the map is piecewise affine and lazy.go replays it per coordinate
// from per-iteration step arrays, with a bisection for sign changes.
//
// # Concurrency
//
// An epoch runs as one phase of a persistent sched.Pool, with at most m
// workers (more would only wait), through sched.BatchLoop, which owns the
// batch slots, the barriers, the block claims and the context polling; the
// method supplies the phases (spdcIteration: Read, Update, Settle). The
// batches are double-buffered: while
// the workers process iteration t's blocks, worker 0 draws iteration t+1's
// from the one seeded sampler, so the sequence of batches does not depend on
// the thread count. Each iteration has two phases separated by a
// sched.Barrier:
//
//   - the read phase: workers claim sampled blocks from an atomic counter
//     (worker 0 joins after drawing the next batch), compute margins
//     (reading x̄, computing lazily caught-up values on the fly without
//     writing them) and update the duals of their blocks, which no one else
//     touches;
//   - the update phase: the coordinates are cut into contiguous ranges with
//     equal column nonzero counts (sched.Owners); each worker adds the batch
//     rows' entries that fall in its range, in batch order, and applies the
//     primal update to the coordinates it touched.
//
// No location is written by two workers and no location is written while
// another worker reads it, so the reducer needs neither locks nor atomics,
// and each coordinate's sum is formed in the same order whatever the thread
// count: the same seed and data give bit-identical models with 1, 2 or 64
// threads. The certificates sum fixed-size chunks in chunk order for the same
// reason, and the certificate schedule depends only on certificate values.
//
// Lazy runs always reduce that way. Dense runs (small d) by default fuse the
// reduction into the read phase instead: each worker scatters the rows it
// just updated into a private dense buffer while they are in cache, and in
// the update phase the owner of a coordinate range adds up the workers'
// buffers there. That halves the update phase's work on two cores but sums
// in an order that depends on which worker claimed which block, so
// Options.Deterministic switches it off.
//
// # A caveat on row norms
//
// AdaSPDC's primal step τᵗ ∝ 1/Rᵗ_max follows the sampled blocks. On data
// whose row norms spread over orders of magnitude (raw counts) and with
// small m, short rows then take very long primal steps with a noisy batch
// estimate, and the gap can stall far above the tolerance; the measurements
// are in the lab notebook (git show c876b51:bench/README.md). Rows scaled to unit norm (as in the paper's
// experiments), or blocks grouped by norm, avoid it.
//
// # Certificates and stopping
//
// After every epoch all coordinates are synchronised. The duality gap
// P(x) − D(y), which costs about a third of an epoch, is computed in
// parallel after every epoch while the run is young and then, once the
// gap's linear rate is known, about halfway to the predicted end (at most 8
// epochs apart); the schedule depends only on certificate values, so it is
// the same for every thread count. The dual value is that of the current
// y: r = (1/n) Σₖ yₖaₖ, which the iteration keeps incrementally and which
// drifts by rounding, is recomputed from y (with compensated sums) for
// every certificate, and the iteration goes on from the exact value. SDCA's
// v is recomputed only where it matters, since there the recomputation
// costs more than an epoch on wide data: in its wild mode, every 8th
// certificate, and whenever the gap is within twice Tol, so that no run
// stops on a gap the duals do not back (sdcaCore.certificate).
//
// The run stops when (P − D)/max(1, |P|) ≤ Tol, when the primal reaches
// TargetPrimal, at MaxEpochs (zero: certify the start point only), at the
// time limit, when the context is cancelled, or when the callback returns
// ErrStop. The divergence guard (guard.go) ends it with an error that says
// what to change when a certificate is not finite, or when five
// certificates in a row have a gap a thousandfold above the best one
// (gaps within 1e-12·|P| of zero count as that floor, the rounding of
// P − D) or a primal a thousandfold above the first certificate's. A run
// that ends in an error after its first certificate returns the model of
// its best certificate beside the error. A λ so small that
// R²_max/(λγ) > 1e16 is refused before the run.
//
// Workers that panic (a bug in a user's Loss, say) do not take the process
// down: the pool recovers the panic, breaks the barrier so that the other
// workers unwind, and Train returns the panic as an error.
//
// # How many workers
//
// Options.Threads (or GOMAXPROCS) is an upper bound: a worker is added per
// 1000 nonzeros of a batch, and no more than m run. When that leaves more
// than one, the first epoch measures instead of guessing (calibrateThreads):
// it runs a fifth of the epoch on all workers to warm up, then alternates
// fifths on one worker and on all, and keeps the faster. How much a second
// core gains depends on how often the cores hand coordinates to each other,
// which depends on the data and the host, and no nonzero count predicts it:
// on two cores, news20 ran at half speed on two workers where url-shaped
// data ran 1.2–1.8× faster. The rounds are ordinary iterations, so the
// iterates do not depend on the choice. The count kept is in Result.Threads
// and each trace point.
//
// # One worker
//
// One worker skips the barriers and the block claims, and in a lazy run it
// forms the batch sums u while each row is still in L1, in the same batch
// order as the owners would, so the model is bit-identical to a
// multi-worker run. Each sample's label, step and row extent sit in one
// read-only record (sampleRow) and its dual and (logistic) last logit in
// another (sampleDual), both in block order: apart, the read-only half stays
// in every core's cache while the duals move to the core that drew them.
// drawBatch prefetches the records of the next batch, and the read phase
// prefetches rows two blocks ahead.
//
// # Where things live
//
//	problem.go      Problem, Options, TracePoint, Result
//	solvers.go      the solver registry (SolverInfo, accepts, start) and
//	                Train, which picks a solver and hands it to the driver
//	loss.go         losses: φ, φ', φ*, γ and the dual prox (logistic: Eq. 9 by
//	                a bracketed quartic Newton iteration in the logit);
//	                loss_hinge.go the hinge (γ = 0)
//	regularizer.go  the Regularizer and Separable interfaces; ElasticNet
//	                with centre and weights: value, conjugate, prox
//	driver.go       the run: certificate schedule, stopping (tolerance, target,
//	                epochs, time, context, callback, StopRule), divergence
//	                guard (guard.go), stall rule, trace, best model; drives
//	                a method
//	adaspdc.go      the AdaSPDC/SPDC method: steps (Eq. 10, 12, 15 in
//	                stepSizes), batches, read phase (Eq. 9), update phase
//	                (Eq. 11, 13, 14), as phases of sched.BatchLoop
//	eso.go          the ESO batch steps (Rᵢ → √(vᵢ/m), the default; see
//	                "Batch steps")
//	newton.go       truncated Newton on the primal: diagonally
//	                preconditioned CG (steps invariant to feature scale),
//	                on the formed d×d Hessian where d is small, a line
//	                search on the derivative, parallel row sweeps
//	                (rowSweep) that also yield each certificate;
//	                AutoSolver, the CLI's automatic choice;
//	                loss_curvature.go the losses' second derivatives
//	lazyl2.go       the scaled lazy store for L2 (Eq. 11, 13, 14 per touched
//	                coordinate, x̄ for untouched ones)
//	lazy.go         the lazy replay for l1 > 0
//	certificate.go  P, D and the gap in parallel, r recomputed exactly
//	coordstore.go   the coordinate store: xⱼ ← prox_{ηg}(xⱼ − ηcⱼ) for every
//	                coordinate every iteration, dense or lazy (scaled for L2,
//	                stamped with a closed-form catch-up for l1 > 0)
//	vr.go           what SAG, SAGA and SVRG share: steps in units of
//	                L = max‖aₖ‖²/γ, the certificate (lasso: dual scaled into
//	                dom g*); sag.go, saga.go, svrg.go the methods
//	sdca.go         Prox-SDCA (and mini-batch); sdca_async.go PASSCoDe-style
//	                asynchronous SDCA; cocoa.go SDCA on thread-private
//	                replicas merged per epoch (CoCoA+, SySCD); dfsdca.go
//	                dual-free SDCA
//	spdc_async.go   asynchronous SPDC: one sample per step on each worker,
//	                the L2 prox in closed form (xⱼ = Pₜξⱼ + rⱼ(Pₜ − 1)/λ,
//	                Pₜ = aᵗ), so that a step's change to ξⱼ and rⱼ depends
//	                on t and Δy alone and lands with an atomic add
//	wx_*.go         Wang & Xiao: BPD, Ada-BPD, Ada-SPDC, DF-SPDC, ADF-SPDC
//	                and the robust adaptation rule
//	pdprox.go       Pdprox for the losses with a bilinear dual
//	                (loss_linear.go: absolute, ε-insensitive, quantile) with
//	                L1, L2 or the group lasso (grouplasso.go, groupsfile.go)
//	reduction.go    AdaptReg, AdaptSmooth, JointAdaptRegSmooth over any solver
//	certify.go      Certify: the gap of any weights, in parallel; the
//	                certificate of methods that keep no duals
//	modelio/        model files (JSON, LIBLINEAR's format)
//
// # Adding a method
//
// A method is one file. It implements the small interface the driver
// calls (driver.go): runEpochs(ctx, k) runs k epochs, certify returns P, D
// and the gap at the current point, point returns x, and passes, threads
// and divergenceHint report on it; a method holding workers also
// implements finisher. Everything else, stopping, the trace, the best
// model, divergence, a user's StopRule, is the driver's. The file
// registers the method from init (solvers.go): its SolverInfo for
// `adaspdc solvers`, a rank (its preference when no solver is named), an
// accepts function that refuses the problems it cannot solve, and a start
// function that builds it. A method with no dual iterate of its own
// certifies with the dual point of its x, yₖ = φ'(aₖᵀx) projected into
// dom φ* (Certify does exactly that, in parallel). A mini-batch method
// runs its iterations on a sched.BatchLoop, supplying the read, update and
// settle phases. For example, plain proximal SGD would be
//
//	// sgd.go
//	type sgd struct{ prob Problem; x []float64; eta float64; seen int64 }
//
//	// runEpochs: for each of n random k, z = aₖᵀx, then
//	// x ← prox_{ηg}(x − η·φ'(z, bₖ)·aₖ) (one sparse axpy and a dense prox,
//	// or a lazy store for sparse data).
//	func (m *sgd) certify() (TracePoint, error) { return Certify(m.prob, m.x) }
//	func (m *sgd) point() []float64             { return m.x }
//	func (m *sgd) passes() float64              { return float64(m.seen) / float64(m.prob.X.Rows) }
//	...
//	func init() {
//		register(&solverEntry{
//			SolverInfo: SolverInfo{Name: "sgd", Summary: "proximal SGD", ...},
//			rank:       90,
//			accepts:    func(p Problem, o Options) error { ... },
//			start:      func(ctx context.Context, p Problem, o Options) (method, error) { ... },
//		})
//	}
package engine
