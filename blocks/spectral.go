package blocks

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/adaspdc/adaspdc/sparse"
)

// DefaultTolerance is the relative accuracy of SpectralNorms meant for
// training: the step sizes of Eq. 10 and 12 inherit the same relative error,
// negligible next to their other constants, and it is cheap to reach (a
// handful of Lanczos steps on text-like blocks).
const DefaultTolerance = 1e-6

const (
	// denseLimit is the largest Gram matrix order solved directly, which is
	// exact to rounding error whatever the spectrum. On rcv1-like blocks
	// (BenchmarkBlockMethods, on a shared and noisy machine) the dense
	// method is 2–3× faster than Lanczos at order 8, breaks even somewhere
	// between 16 and 32 depending on the run, and is about 2× slower at 32
	// and 4× slower at 64, its cost growing like q·nnz + q³.
	denseLimit = 16

	// maxLanczosSteps caps the Lanczos iteration. The basis is kept for full
	// reorthogonalisation, so the cap also bounds the workspace at
	// maxLanczosSteps vectors per worker.
	maxLanczosSteps = 300

	// minTolerance is the smallest relative residual the Lanczos test asks
	// for: below it the residual is made of rounding error and cannot shrink.
	minTolerance = 1e-13
)

// SpectralNorms returns R_b = ‖A_b‖₂, the largest singular value of the rows
// of x in block b of p, for every block, to relative accuracy tol.
//
// A block of one row gets exactly its Euclidean norm (the square root of the
// sum of squares). Otherwise the largest eigenvalue μ of the smaller Gram
// matrix, A_bᵀA_b (q×q) or A_bA_bᵀ restricted to the columns the block
// touches, gives R_b = √μ: directly (Dsyev) when that order is at most 16,
// else by Lanczos with full reorthogonalisation, stopped when the residual
// bound of the top Ritz value falls below tol·μ, or after 300 steps. The
// bound is pessimistic (the Ritz value's error is nearer its square over the
// spectral gap), and the cap only binds for blocks with thousands of rows
// and columns and a crowded top spectrum: a 3000-row block of nearly
// orthogonal rows needs 208 steps, and its Ritz value is then already
// accurate to 1e-11. At the cap the result is the Ritz value, a lower
// bound. See the package documentation for why Lanczos and not the power
// method.
//
// The blocks are shared out dynamically among threads goroutines (threads ≤ 0
// means GOMAXPROCS); the result does not depend on threads. tol must lie in
// (0, 1); DefaultTolerance is the usual choice, and values below 1e-13,
// which rounding error cannot honour, act as 1e-13. It returns an error if x or p
// is nil or malformed, p does not partition the rows of x, tol is out of
// range, x holds a NaN or infinite value, or a norm exceeds the float64 range.
func SpectralNorms(x *sparse.CSR, p *Partition, tol float64, threads int) ([]float64, error) {
	return SpectralNormsContext(context.Background(), x, p, tol, threads)
}

// SpectralNormsContext is SpectralNorms that gives up when ctx is done: the
// workers look at ctx before each block, so it returns within one block's
// time, with an error that wraps context.Cause(ctx). Large blocks (Lanczos
// on thousands of rows) and many blocks both take long enough to need it.
func SpectralNormsContext(ctx context.Context, x *sparse.CSR, p *Partition, tol float64, threads int) ([]float64, error) {
	if x == nil {
		return nil, fmt.Errorf("blocks: nil matrix")
	}
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("blocks: invalid matrix: %w", err)
	}
	if err := p.Validate(x.Rows); err != nil {
		return nil, fmt.Errorf("blocks: partition does not fit the %d×%d matrix: %w", x.Rows, x.Cols, err)
	}
	if !(tol > 0 && tol < 1) {
		return nil, fmt.Errorf("blocks: tolerance %v, want a value in (0, 1)", tol)
	}
	numBlocks := p.NumBlocks()
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, numBlocks)

	norms := make([]float64, numBlocks)
	var next atomic.Int64
	var failed atomic.Bool // stops the other workers after an error
	var g errgroup.Group
	for range threads {
		g.Go(func() error {
			ws := newWorkspace(x.Cols)
			for !failed.Load() {
				b := int(next.Add(1) - 1)
				if b >= numBlocks {
					return nil
				}
				if ctx.Err() != nil {
					failed.Store(true)
					return fmt.Errorf("blocks: spectral norms stopped at block %d of %d: %w", b, numBlocks, context.Cause(ctx))
				}
				r, err := ws.blockNorm(x, p.Block(b), tol, methodAuto)
				if err == nil && math.IsInf(r, 1) {
					err = fmt.Errorf("spectral norm exceeds the float64 range")
				}
				if err != nil {
					failed.Store(true)
					return fmt.Errorf("blocks: block %d: %w", b, err)
				}
				norms[b] = r
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return norms, nil
}

// method selects how blockNorm finds the top eigenvalue of a block with more
// than one row. Tests force each method on every block shape.
type method int

const (
	methodAuto    method = iota // dense up to denseLimit, else Lanczos
	methodDense                 // always form the Gram matrix
	methodLanczos               // always iterate
)

// workspace is one worker's scratch memory, reused from block to block so
// that the steady state does not allocate.
type workspace struct {
	// colLocal maps a column of x to its index among the columns the
	// current block touches, or −1. It is restored to all −1 after each block.
	colLocal []int32
	// touched lists the touched columns of x in order of first appearance:
	// touched[l] is the column whose local index is l.
	touched []int32

	// The current block as a CSR matrix over local column indices, scaled
	// by a power of two to a largest magnitude in [½, 1).
	rowStart []int
	cols     []int32
	vals     []float64

	gram, eig, work []float64 // dense path

	basis        []float64 // Lanczos vectors, k×dim, row-major
	w, tmp       []float64 // Lanczos iterate and operator intermediate
	alpha, beta  []float64 // the tridiagonal matrix T_k
	coeffs       []float64 // reorthogonalisation coefficients
	tridiag      tridiagScratch
	lanczosSteps int // steps taken by the last Lanczos run, for tests
}

func newWorkspace(cols int) *workspace {
	colLocal := make([]int32, cols)
	for i := range colLocal {
		colLocal[i] = -1
	}
	return &workspace{colLocal: colLocal}
}

// blockNorm returns the spectral norm of the rows of x listed in rows.
func (ws *workspace) blockNorm(x *sparse.CSR, rows []int32, tol float64, how method) (float64, error) {
	if len(rows) == 1 {
		return rowNorm(x, int(rows[0]))
	}
	maxAbs, err := ws.gather(x, rows)
	if err != nil {
		return 0, err
	}
	if maxAbs == 0 {
		return 0, nil
	}
	// Scale the block to a largest magnitude in [½, 1). Powers of two
	// commute exactly with every rounding below, barring underflow of
	// entries over 2¹⁰²² times smaller than the largest, which cannot
	// matter. Sums of squares then neither overflow nor lose the largest
	// terms to underflow, and LAPACK never needs its own scaling, which in gonum v0.17.0 panics in Dsterf (it
	// passes Dlascl a leading dimension of n for a single column).
	_, exp := math.Frexp(maxAbs)
	scaleBlock(ws.vals, exp)
	q, c := len(rows), len(ws.touched)
	dim := min(q, c)
	if how == methodAuto {
		how = methodLanczos
		if dim <= denseLimit {
			how = methodDense
		}
	}
	var mu float64
	if how == methodDense {
		mu = ws.denseTop(q <= c)
	} else {
		mu = ws.lanczosTop(q <= c, tol)
	}
	return math.Ldexp(math.Sqrt(max(mu, 0)), exp), nil
}

// rowNorm returns the Euclidean norm of row i of x: the square root of the
// plain sum of squares whenever that sum is finite and not tiny. Otherwise
// (a non-finite entry, overflow, or underflow, all rare) it checks the
// entries and sums the row scaled by a power of two.
func rowNorm(x *sparse.CSR, i int) (float64, error) {
	vals, _ := x.Row(i)
	sum := 0.0
	for _, v := range vals {
		sum += v * v
	}
	// Squares that underflowed are below 2⁻¹⁰²², which a sum of 2⁻⁹⁰⁰ or
	// more cannot notice.
	if sum >= 0x1p-900 && sum <= math.MaxFloat64 {
		return math.Sqrt(sum), nil
	}
	maxAbs, err := maxAbsFinite(vals, i)
	if err != nil || maxAbs == 0 {
		return 0, err
	}
	_, exp := math.Frexp(maxAbs)
	sum = 0
	for _, v := range vals {
		s := math.Ldexp(v, -exp)
		sum += s * s
	}
	return math.Ldexp(math.Sqrt(sum), exp), nil
}

// scaleBlock multiplies vals by 2^−exp. When 2^−exp is a normal number one
// multiplication per entry is exact; otherwise math.Ldexp scales each entry.
func scaleBlock(vals []float64, exp int) {
	if exp == 0 {
		return
	}
	if exp >= -1000 && exp <= 1000 {
		factor := math.Ldexp(1, -exp)
		for i := range vals {
			vals[i] *= factor
		}
		return
	}
	for i := range vals {
		vals[i] = math.Ldexp(vals[i], -exp)
	}
}

// maxAbsFinite returns the largest magnitude among the entries of sample i,
// or an error naming the first NaN or infinite one.
func maxAbsFinite(vals []float64, i int) (float64, error) {
	maxAbs := 0.0
	for k, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("sample %d: entry %d is %v", i, k, v)
		}
		maxAbs = max(maxAbs, math.Abs(v))
	}
	return maxAbs, nil
}

// gather copies the rows of x listed in rows into the workspace's local CSR
// matrix, numbering the touched columns in order of first appearance, and
// returns the largest magnitude among the entries.
func (ws *workspace) gather(x *sparse.CSR, rows []int32) (maxAbs float64, err error) {
	ws.touched = ws.touched[:0]
	ws.rowStart = append(ws.rowStart[:0], 0)
	ws.cols = ws.cols[:0]
	ws.vals = ws.vals[:0]
	defer func() {
		for _, j := range ws.touched {
			ws.colLocal[j] = -1
		}
	}()
	for _, r := range rows {
		vals, idx := x.Row(int(r))
		rowMax := 0.0
		for k, v := range vals {
			// The builtin max propagates NaN, and |±Inf| is +Inf, so one
			// test per row catches every non-finite entry.
			rowMax = max(rowMax, math.Abs(v))
			if v == 0 {
				// Stored zeros change no product; dropping them keeps
				// untouched columns out of the local numbering.
				continue
			}
			j := idx[k]
			l := ws.colLocal[j]
			if l < 0 {
				l = int32(len(ws.touched))
				ws.colLocal[j] = l
				ws.touched = append(ws.touched, j)
			}
			ws.cols = append(ws.cols, l)
			ws.vals = append(ws.vals, v)
		}
		if !(rowMax <= math.MaxFloat64) {
			_, err := maxAbsFinite(vals, int(r))
			return 0, err
		}
		maxAbs = max(maxAbs, rowMax)
		ws.rowStart = append(ws.rowStart, len(ws.vals))
	}
	return maxAbs, nil
}

// denseTop returns the largest eigenvalue of the block's Gram matrix formed
// explicitly: A_bᵀA_b (pairwise row products) if rowSide, else A_bA_bᵀ over
// the touched columns (a sum of row outer products).
func (ws *workspace) denseTop(rowSide bool) float64 {
	q := len(ws.rowStart) - 1
	dim := len(ws.touched)
	if rowSide {
		dim = q
	}
	ws.gram = resize(ws.gram, dim*dim)
	clear(ws.gram)
	if rowSide {
		// Scatter row i into a dense vector over the touched columns and
		// take its products with rows i..q−1 (the upper triangle).
		ws.tmp = resize(ws.tmp, len(ws.touched))
		clear(ws.tmp)
		for i := range q {
			lo, hi := ws.rowStart[i], ws.rowStart[i+1]
			for k := lo; k < hi; k++ {
				ws.tmp[ws.cols[k]] = ws.vals[k]
			}
			for j := i; j < q; j++ {
				dot := 0.0
				for k := ws.rowStart[j]; k < ws.rowStart[j+1]; k++ {
					dot += ws.vals[k] * ws.tmp[ws.cols[k]]
				}
				ws.gram[i*dim+j] = dot
			}
			for k := lo; k < hi; k++ {
				ws.tmp[ws.cols[k]] = 0
			}
		}
	} else {
		for i := range q {
			lo, hi := ws.rowStart[i], ws.rowStart[i+1]
			for a := lo; a < hi; a++ {
				for b := a; b < hi; b++ {
					r, c := ws.cols[a], ws.cols[b]
					if r > c {
						r, c = c, r
					}
					ws.gram[int(r)*dim+int(c)] += ws.vals[a] * ws.vals[b]
				}
			}
		}
	}
	var impl gonum.Implementation
	ws.eig = resize(ws.eig, dim)
	ws.work = resize(ws.work, 1)
	impl.Dsyev(lapack.EVNone, blas.Upper, dim, ws.gram, dim, ws.eig, ws.work, -1)
	lwork := int(ws.work[0])
	ws.work = resize(ws.work, lwork)
	if !impl.Dsyev(lapack.EVNone, blas.Upper, dim, ws.gram, dim, ws.eig, ws.work, lwork) {
		// Dsyev reports failure only if the QR iteration does not converge,
		// which does not happen for finite input; fall back to Lanczos
		// rather than return a wrong value.
		return ws.lanczosTop(rowSide, minTolerance)
	}
	return ws.eig[dim-1]
}

// applyGram sets y = A_bᵀA_b v if rowSide (v, y over the block's rows), else
// y = A_bA_bᵀ v (v, y over its touched columns). Both cost two passes over
// the block's entries; ws.tmp holds the intermediate product.
func (ws *workspace) applyGram(rowSide bool, v, y []float64) {
	q := len(ws.rowStart) - 1
	if rowSide {
		ws.tmp = resize(ws.tmp, len(ws.touched))
		clear(ws.tmp)
		for i := range q {
			vi := v[i]
			for k := ws.rowStart[i]; k < ws.rowStart[i+1]; k++ {
				ws.tmp[ws.cols[k]] += ws.vals[k] * vi
			}
		}
		for i := range q {
			dot := 0.0
			for k := ws.rowStart[i]; k < ws.rowStart[i+1]; k++ {
				dot += ws.vals[k] * ws.tmp[ws.cols[k]]
			}
			y[i] = dot
		}
		return
	}
	clear(y)
	for i := range q {
		dot := 0.0
		lo, hi := ws.rowStart[i], ws.rowStart[i+1]
		for k := lo; k < hi; k++ {
			dot += ws.vals[k] * v[ws.cols[k]]
		}
		for k := lo; k < hi; k++ {
			y[ws.cols[k]] += ws.vals[k] * dot
		}
	}
}

// lanczosTop returns the largest eigenvalue of the block's smaller Gram
// matrix B (see applyGram) by the Lanczos method with full
// reorthogonalisation.
//
// Step k extends the orthonormal basis v_1..v_k of the Krylov space with
// B v_k − α_k v_k − β_{k−1} v_{k−1}, orthogonalised twice against the whole
// basis (classical Gram–Schmidt twice), so the tridiagonal T_k stays the
// exact projection of B to rounding error. The largest eigenvalue θ of T_k
// is a lower bound on μ that increases with k, and B has an eigenvalue within
// β_k·|s_k| of θ, s_k being the last component of θ's unit eigenvector in
// T_k. The iteration stops when that bound is at most tol·θ (so √θ is within
// about tol/2 of R_b), at an invariant subspace (β_k = 0), after dim steps
// (where T_k is similar to B), or after maxLanczosSteps.
//
// The start vector is 1 plus a deterministic hash perturbation in ±¼: close
// to the Perron vector of the non-negative data common in practice, and not
// orthogonal to the top eigenvector of a signed block except by design.
func (ws *workspace) lanczosTop(rowSide bool, tol float64) float64 {
	dim := len(ws.touched)
	if rowSide {
		dim = len(ws.rowStart) - 1
	}
	tol = max(tol, minTolerance)
	maxSteps := min(dim, maxLanczosSteps)

	ws.basis = resize(ws.basis, dim)
	v := ws.basis[:dim]
	for i := range v {
		v[i] = 1 + (float64(splitmix64(uint64(i))>>11)*0x1p-53-0.5)/2
	}
	scaleTo(v, 1/norm2(v))
	ws.w = resize(ws.w, dim)
	ws.alpha = ws.alpha[:0]
	ws.beta = ws.beta[:0]
	theta := 0.0
	for k := 1; ; k++ {
		ws.lanczosSteps = k
		v := ws.basis[(k-1)*dim : k*dim]
		w := ws.w
		ws.applyGram(rowSide, v, w)
		if k > 1 {
			axpy(-ws.beta[k-2], ws.basis[(k-2)*dim:(k-1)*dim], w)
		}
		alpha := dot(v, w)
		axpy(-alpha, v, w)
		for range 2 {
			ws.coeffs = resize(ws.coeffs, k)
			for j := range k {
				ws.coeffs[j] = dot(ws.basis[j*dim:(j+1)*dim], w)
			}
			for j := range k {
				axpy(-ws.coeffs[j], ws.basis[j*dim:(j+1)*dim], w)
			}
			alpha += ws.coeffs[k-1]
		}
		ws.alpha = append(ws.alpha, alpha)
		beta := norm2(w)

		var last float64
		theta, last = ws.tridiag.topEigenpair(ws.alpha, ws.beta)
		if beta*last <= tol*theta || k == maxSteps {
			return theta
		}
		ws.beta = append(ws.beta, beta)
		if len(ws.basis) < (k+1)*dim {
			ws.basis = append(ws.basis, make([]float64, dim)...)
		}
		next := ws.basis[k*dim : (k+1)*dim]
		copy(next, w)
		scaleTo(next, 1/beta)
	}
}

// splitmix64 is the SplitMix64 finaliser, used as a stateless hash so that
// the Lanczos start vector depends only on the coordinate.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func dot(a, b []float64) float64 {
	sum := 0.0
	for i, x := range a {
		sum += x * b[i]
	}
	return sum
}

// axpy sets y += alpha·x.
func axpy(alpha float64, x, y []float64) {
	for i, v := range x {
		y[i] += alpha * v
	}
}

func scaleTo(v []float64, s float64) {
	for i := range v {
		v[i] *= s
	}
}
