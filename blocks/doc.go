// Package blocks partitions the samples of a training set into dual blocks,
// computes the spectral norm of every block, and draws the blocks that each
// iteration of AdaSPDC updates.
//
// # Why blocks have norms
//
// AdaSPDC (Zhu & Storkey, 2015) solves the saddle point problem (Eq. 2)
//
//	min_x max_y g(x) + (1/n) Σ_i (⟨x, A_i y_i⟩ − φ_i*(y_i))
//
// with the dual variables split into n blocks. Block i holds q_i samples, and
// A_i is the d×q_i matrix whose columns are their feature vectors, so A_i is
// the transpose of the rows of X in the block. Each iteration samples m
// blocks S_t and takes the steps
//
//	σ_i = √(nλ/(mγ)) / (2R_i)              (Eq. 10, dual step of block i)
//	τ_t = √(mγ/(nλ)) / (2 max_{i∈S_t} R_i)  (Eq. 12, primal step)
//
// where R_i = ‖A_i‖₂ is the spectral norm (the largest singular value), λ
// and γ are the strong convexity moduli of g and of each φ_i*, and n counts
// blocks. R_i measures how strongly block i is coupled to the primal
// variable: a dual step of length δ in block i moves A_i y_i by at most R_i·δ.
// Weakly coupled blocks can take long steps; SPDC used one global
// R = max_i ‖a_i‖ for every block and so stepped as cautiously as its worst
// sample allowed.
//
// A block's R_i lies between its largest row norm and the square root of the
// sum of its squared row norms. One long row therefore sets R_i for every
// sample it shares a block with, and the primal step uses the largest R_i of
// the sampled blocks, so a long row slows every iteration that draws it.
// ByNorm puts rows of similar norm together, so that long rows share their
// small steps only with other long rows. It is not always a win: rows of
// similar norm may also point the same way, and then R_i approaches the sum
// of their norms rather than the largest. On news20 (blocks of 8, m = 8),
// grouping by norm halves the mean of max_{i∈S_t} R_i against a shuffled
// partition (44 against 96); on w8a, whose binary rows share features, it
// raises it (11.0 against 8.3). Whether it pays off in convergence is for the
// engine to measure; Contiguous and Shuffled are the baselines.
//
// # Algorithms
//
// A block of one row has R_i = ‖a_i‖, the square root of the sum of squares.
// For q > 1 rows, R_i² is the largest eigenvalue μ of the smaller of the two
// Gram matrices: the q×q matrix of row inner products, or the c×c matrix
// A_iA_iᵀ over the c columns the block touches (columns no row touches add
// zero rows and columns). The block is first copied into a small CSR matrix
// over those c columns, so neither Gram product ever touches the full width d.
//
//   - If min(q, c) ≤ 16, the Gram matrix is formed explicitly and reduced
//     with LAPACK's Dsyev (gonum's pure-Go implementation), which is exact to
//     rounding error for any spectrum and, at that size, as cheap as a few
//     iterations.
//   - Otherwise the Lanczos method with full reorthogonalisation runs on the
//     smaller Gram operator, v ↦ A_iᵀ(A_i v) or v ↦ A_i(A_iᵀv), two sparse
//     passes per step. The largest
//     eigenvalue θ of the Lanczos tridiagonal matrix T_k rises monotonically to
//     μ, and β_k·|s_k| (s_k the last component of θ's eigenvector in T_k)
//     bounds the distance from θ to an eigenvalue of the Gram matrix; the
//     iteration stops once that bound is below tol·θ, which leaves R_i within
//     about tol/2. It ends after at most min(q, c, 300) steps.
//
// Lanczos replaces the power method because its worst case is far better.
// The Rayleigh quotient of the power method converges like (μ₂/μ₁)^{2k}, and
// when many eigenvalues crowd the top, as for nearly orthogonal sparse rows of
// similar norm, only like 1/k: on such a 250-row block the power method needs
// 935 steps to reach 1e-6, even stopped by an oracle that knows the answer,
// and Lanczos 65 with its own stopping test. On rcv1-like synthetic blocks,
// dominated by one direction as non-negative text data tends to be, both take
// about five steps.
//
// A block of several rows is first scaled by a power of two, which is exact,
// to a largest magnitude in [½, 1), so no square overflows or underflows and
// LAPACK never applies its own scaling; a single row is scaled only when its
// plain sum of squares overflows or underflows. Every block thus gets the
// same relative accuracy whatever its magnitude.
//
// Everything is deterministic: the Lanczos start vector is 1 plus a hash of
// the coordinate, and no result depends on the number of goroutines.
//
// Uniform sampling (Algorithm 1, line 4: each block with probability m/n)
// is a partial Fisher–Yates shuffle over a permutation kept between draws:
// O(m) per draw and no allocation, every iteration's draw independent of
// the others, as the paper's analysis assumes (an epoch's permutation
// taken m at a time would not be). The swaps' far positions are drawn
// ahead, in the generator's order, and prefetched. Importance draws m
// blocks independently with probability ∝ a weight (SPDC's non-uniform
// baseline uses R_i) through Walker's alias table: O(1) per block after
// O(n) setup.
//
// # Concurrency
//
// SpectralNorms shares the blocks out dynamically (an atomic counter) among
// its goroutines, each with its own workspace; block costs vary with their
// size and spectrum, so a static split would leave goroutines idle.
// Partitions are plain data, safe to read concurrently. Samplers hold a
// generator and, for Uniform, a permutation they modify: a sampler is not
// safe for concurrent use, so give each goroutine its own (with its own seed).
package blocks
