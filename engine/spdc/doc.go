// Package spdc is the stochastic primal-dual coordinate family: AdaSPDC,
// the adaptive method of Zhu & Storkey (ECML-PKDD 2015), and SPDC, Zhang &
// Xiao's constant-step method, one loop with per-block or common steps,
// mini-batches with ESO steps, lazy primal updates, and the certificate at
// the exact r = (1/n) Σₖ yₖaₖ from which the iteration continues.
//
// # Saddle form
//
// The methods minimise P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x) (package
// objective) for a smooth loss φ (γ > 0) and the elastic net
// g = l1‖x‖₁ + (λ/2)‖x − c‖² with λ > 0 and an optional centre c (the
// AdaptReg reduction's), through the saddle form
//
//	min_x max_y  g(x) + (1/n) Σₖ (yₖ aₖᵀx − φ*(yₖ)).
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
// The paper's steps (CoordinateSettings.Steps "paper") keep its matrix (17) positive
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
// (7.7 at m = 16); bench/eso-passes.sh measures passes against m, and
// bench/README.md ("ESO steps: passes against m") reads them.
//
// # Lazy updates
//
// On sparse high-dimensional data most coordinates are untouched by an
// iteration's batch; for them steps 2 and 3 are scalar recurrences whose
// coefficients depend only on τᵗ and θᵗ. With CoordinateSettings.Lazy on (chosen
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
// # Storage layouts
//
// The set-up picks once, from the options and the data, where the state
// of steps 1–3 lives (chooseLayout and buildRecords in layout.go); the
// thread count does not enter the choice. Per coordinate j there are three
// forms of xⱼ, x̄ⱼ and rⱼ, and per sample two forms of its label, step, dual
// and row extent; together they make four layouts:
//
//   - Dense: the arrays x, x̄ and r, updated in full every iteration
//     (updatePhase; denseL2Update when l1 = 0, primalStep otherwise), with
//     the samples in sampleRow, sampleDual and blockInfo records. Chosen by
//     CoordinateSettings.Lazy off, or by LazyAuto when d ≤ driver.LazyBreakEven times
//     a batch's mean nonzeros, where the O(d) update costs no more than the
//     rows. Unless Options.Deterministic, its reduction is fused into the
//     read phase (see Concurrency).
//   - Lazy, elastic net (lazy.go): one lazyCoord record per coordinate,
//     caught up on demand through the segment's per-iteration steps, with a
//     bisection for sign changes. Chosen when the run is lazy (CoordinateSettings.Lazy
//     on, or LazyAuto with d above the break-even) and l1 > 0.
//   - Lazy, L2 only (lazyl2.go): one scaled coordL2 record per coordinate,
//     x̄ⱼ = A·ξⱼ + B·rⱼ + cⱼ with A and B common to all. Chosen when the run
//     is lazy and l1 = 0.
//   - Packed one-sample records: the L2-only lazy layout with each sample's
//     label, steps (Eq. 10, 12, 15), dual and row extent in one sampleOne
//     record instead of the three per-sample records, and an iteration
//     that is one function (oneIteration). Chosen when every batch is one
//     sample: m = 1, blocks of one sample, uniform sampling (and hence one
//     worker).
//
// In the first three a sample's read-only record (sampleRow) and its dual
// (sampleDual) are apart, for the reason given under "One worker"; the
// sections below say what each layout buys.
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
// # Several iterations per barrier
//
// At small m an iteration's rows are less work than its two barriers, and
// one might run several iterations between barriers. Iteration t+1's read
// phase may overlap iteration t's update phase only if it reads nothing
// that update writes: no row of S_{t+1} may use a coordinate that a row of
// S_t uses (its x̄ changes with Δy), nor, in the scaled lazy form, one that
// a row of S_{t−1} uses (its correction cⱼ is cleared in update t).
// Coordinates outside both sets are safe, since their x̄ follows from
// scalars common to all coordinates, which the drawer knows ahead. The
// ESO steps do not relax this: they bound the expected coupling of one
// batch, not of consecutive ones. For τ-nice batches the condition holds
// with probability about Πⱼ(1 − pⱼ)^m over features j, pⱼ the chance that
// a batch of m uses j; sampled on the data sets at hand, two consecutive
// batches share a feature with probability 1.0 on a9a already at m = 1,
// 0.44 on w8a and 0.68 on news20 at m = 1, and above 0.99 on all three at
// m = 4. So the loop does not batch iterations; at small m it keeps one
// worker (the worker rule and calibrateThreads), which pays no barrier.
//
// # A caveat on row norms
//
// AdaSPDC's primal step τᵗ ∝ 1/Rᵗ_max follows the sampled blocks. On data
// whose row norms spread over orders of magnitude (raw counts) and with
// small m, short rows then take very long primal steps with a noisy batch
// estimate, and the gap can stall far above the tolerance (`adaspdc train
// -data news20.binary -solver adaspdc -m 1 -lambda 1e-5` on the raw counts,
// against the same with -normalize unit). Rows scaled to unit norm (as in
// the paper's experiments), or blocks grouped by norm, avoid it.
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
// and each trace point. A run that kept all workers watches its epochs: if
// they run slower per iteration than calibration's one worker did by more
// than the calibration's margin (another job took a core, and every
// barrier now waits for a descheduled worker), it goes back to one worker
// for good.
//
// # One worker
//
// One worker skips the barriers and the block claims, and in a lazy run it
// forms the batch sums u while each row is still in L1, in the same batch
// order as the owners would, so the model is bit-identical to a
// multi-worker run; a batch of one row it steps at once, in the read phase.
// Each sample's label, step and row extent sit in one read-only record
// (sampleRow) and its dual and (logistic) last logit in another
// (sampleDual), both in block order: apart, the read-only half stays in
// every core's cache while the duals move to the core that drew them.
// When every batch is one sample (m = 1 with blocks of one sample, which
// never runs more than one worker) in a scaled lazy run, an iteration is
// one function, oneIteration, with the same arithmetic as the general
// loop, and the sample's label, steps, dual and row extent are one record
// of one cache line (sampleOne) instead of three.
//
// # Prefetching
//
// A sampled block's records and rows are random accesses, and an iteration
// of one short row (a9a's has 14 nonzeros) lasts less than one miss to
// memory. So the batches are drawn ahead of time, into a queue of about 16
// samples' worth of batches (ahead), in the one sampler's order, and each
// queued batch is prefetched in stages as it comes closer: when drawn, its
// block records (blockInfo, one cache line each), and with one sample per
// block its sample records too; then, for batches of a few samples, its
// rows, two iterations before it runs. One worker with a larger batch asks
// for the next batch's sample records block by block as it reads (a burst
// of prefetches fills the core's miss buffers and stalls it), and the read
// phase asks for rows two blocks ahead.
//
// # The logistic prox
//
// The logistic dual prox has no closed form. Each sample keeps the logit at
// which its last prox ended (set from the starting dual, so that even the
// first is warm), and objective.LogisticProxWarmExps starts there, where the
// sigmoid is the old dual and the first Halley-type step costs no
// exponential; a converging run takes about one per call
// (TestLogisticProxExps).
package spdc
