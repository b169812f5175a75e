package newton

import (
	"math"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// The parallel coordinate descent on the quadratic model, for the path on
// A's columns (PCDN: Bian, Li, Cao, Yu and Yao, "Parallel coordinate
// descent Newton method for efficient L1-regularized minimization", IEEE
// TNNLS 2019).
//
// A pass over the inner active set, in the random order of the serial
// path, cuts it into bundles B of consecutive features holding about
// glmnetBundleNNZ of A's entries. For each bundle, at the model's point d,
// every coordinate j ∈ B takes its one-dimensional step on q from the
// same d (Eq. 17 with ∂q/∂dⱼ = ∇ⱼL + (Aᵀ diag(φ″/n) A d)ⱼ + (λ + ν) dⱼ),
// so the steps Δⱼ are independent and the bundle's direction is
// Δ = Σⱼ∈B Δⱼeⱼ. Each Δⱼ decreases q along eⱼ, but the sum may not, the
// columns being correlated; PCDN's Armijo rule (its Eq. 9, here on q, of
// which F's step is the model) takes the largest α ∈ {1, ½, …} with
//
//	q(d + αΔ) − q(d) = α∇q(d)ᵀΔ + ½α²ΔᵀHΔ + l1(‖w + d + αΔ‖₁ − ‖w + d‖₁)
//	                 ≤ σα(∇q(d)ᵀΔ + l1(‖w + d + Δ‖₁ − ‖w + d‖₁)),
//
// ΔᵀHΔ = (1/n) Σₖ φ″ₖ (AΔ)ₖ² + (λ + ν)‖Δ‖², so q decreases at every
// bundle (PCDN's Theorem 1: the bound on the step's descent holds for any
// bundle size, the line search paying for the correlation). A bundle of
// one coordinate is the serial step: its Δ minimises q along eⱼ and α = 1.
//
// The work of a bundle is three phases over the rows, cut into
// glmnetBundleChunks ranges of about equal entries, each range owned by
// one worker: (1) the partial sums of (Aᵀ diag(φ″/n) A d)ⱼ over the range,
// for every j ∈ B; (2) after the steps, u = AΔ on the range's rows and
// its share of Σφ″u²; (3) after α, A·d += αu there. The ranges' partial
// sums are added in range order, and a row's entries in bundle order,
// whichever worker made them, so that the steps, and the model, are the
// same bit for bit at any number of workers: the number of ranges is a
// constant, not the workers'.
const (
	glmnetBundleNNZ    = 1 << 15 // entries of A per bundle: the work that pays for three hand-offs to the workers
	glmnetBundleChunks = 8       // row ranges of a bundle's phases, a constant so that its sums do not depend on the workers
	glmnetBundleWork   = 1 << 13 // entries of a bundle per worker below which another worker costs more than it saves
	// glmnetBundleMaxCols bounds PCDN's bundle size P: the bound on a
	// bundle's descent (PCDN's Lemma 2) weakens as P times the largest
	// eigenvalue of the bundle's block of H grows, and on a narrow problem
	// one bundle of every feature is a Jacobi step that the line search
	// damps to a crawl.
	glmnetBundleMaxCols = 8
)

// glmnetBundleMinColumn is the mean entries of a column below which the
// serial path is kept: a bundle's three hand-offs to the workers, and the
// eight row ranges each of its columns is read in, cost more than the
// second core saves on short columns (news20's 20 entries a column).
const glmnetBundleMinColumn = 1024

// bundlesPay reports whether x's columns are long enough for the parallel
// coordinate descent (glmnetBundleMinColumn).
func bundlesPay(x *sparse.CSR) bool {
	return x.NNZ() >= glmnetBundleMinColumn*int64(x.Cols)
}

// bundleCD is the state of the parallel coordinate descent.
type bundleCD struct {
	pool    *sched.Pool
	threads int                           // Options.Threads, for driver.WorkersFor
	workers int                           // tests: this many workers at every bundle, if > 0
	bounds  [glmnetBundleChunks + 1]int32 // row range c is bounds[c]:bounds[c+1]
	cols    []int32                       // the bundle's features
	dz, g   []float64                     // their steps and ∂q/∂dⱼ at the bundle's start
	split   []int32                       // split[j·(K+1) + c]: column j's first entry in row range c, counted from its start (K = glmnetBundleChunks)
	part    []float64                     // part[c·|B| + i]: range c's share of (Aᵀ diag(φ″/n) A d)ⱼ
	quad    [glmnetBundleChunks]float64   // range c's share of Σ φ″u²/n
	u       []float64                     // AΔ, zero outside a bundle
	touched [glmnetBundleChunks][]int32   // the rows of range c where u was written
	mark    []bool                        // the rows in touched
}

func newBundleCD(s *glmnet, pool *sched.Pool, threads int) *bundleCD {
	b := &bundleCD{pool: pool, threads: threads, u: make([]float64, s.n), mark: make([]bool, s.n)}
	nnz := s.x.NNZ()
	for c := 1; c < glmnetBundleChunks; c++ {
		target := nnz * int64(c) / glmnetBundleChunks
		k := int(b.bounds[c-1])
		for k < s.n && s.x.Indptr[k+1] <= target {
			k++
		}
		b.bounds[c] = int32(k)
	}
	b.bounds[glmnetBundleChunks] = int32(s.n)
	const k = glmnetBundleChunks + 1
	b.split = make([]int32, s.d*k)
	for j := range s.d {
		rows := s.csc.Indices[s.csc.Indptr[j]:s.csc.Indptr[j+1]]
		p := 0
		for c := 0; c <= glmnetBundleChunks; c++ {
			for p < len(rows) && rows[p] < b.bounds[c] {
				p++
			}
			b.split[j*k+c] = int32(p)
		}
	}
	return b
}

// run calls phase(c) for every row range c on w workers, range c on
// worker c mod w.
func (b *bundleCD) run(w int, phase func(c int)) error {
	if w <= 1 {
		for c := range glmnetBundleChunks {
			phase(c)
		}
		return nil
	}
	return b.pool.Run(func(worker int) {
		if worker >= w {
			return
		}
		for c := worker; c < glmnetBundleChunks; c += w {
			phase(c)
		}
	})
}

// descendBundles runs the parallel coordinate descent on q reading A's
// columns, with the serial path's inner shrinking and stopping rule, and
// returns the passes it made. A·d is kept in ad.
func (s *glmnet) descendBundles() (int, error) {
	b := s.bundles
	clear(s.ad)
	s.inner = append(s.inner[:0], s.active...)
	innerMax := math.Inf(1)
	passes := 0
	for passes < glmnetMaxInner {
		passes++
		var qMax, qSum float64
		s.rng.Shuffle(len(s.inner), func(a, b int) { s.inner[a], s.inner[b] = s.inner[b], s.inner[a] })
		keep := s.inner[:0]
		for start := 0; start < len(s.inner); {
			end, nnz := start, int64(0)
			for end < len(s.inner) && (end == start || nnz < glmnetBundleNNZ && end-start < glmnetBundleMaxCols) {
				j := s.inner[end]
				nnz += s.csc.Indptr[j+1] - s.csc.Indptr[j]
				end++
			}
			// keep may overwrite s.inner[:start] only: the bundle is copied first.
			b.cols = append(b.cols[:0], s.inner[start:end]...)
			start = end
			workers := min(b.workers, glmnetBundleChunks, b.pool.Threads())
			if workers <= 0 {
				workers = driver.WorkersFor(b.threads, float64(nnz), glmnetBundleWork, min(glmnetBundleChunks, b.pool.Threads()))
			}
			var err error
			if keep, err = s.bundleStep(workers, innerMax, keep, &qMax, &qSum); err != nil {
				return passes, err
			}
		}
		s.inner = keep
		s.visits += 2 * float64(s.activeNNZ(s.inner))
		innerMax = qMax
		if qSum <= math.Min(s.innerTol*s.violFirst, glmnetForcing*s.violNow) {
			break
		}
	}
	return passes, nil
}

// bundleStep takes the steps of the bundle b.cols on workers, appends the
// features not shrunk to keep and adds their violations to qMax and qSum.
func (s *glmnet) bundleStep(workers int, innerMax float64, keep []int32, qMax, qSum *float64) ([]int32, error) {
	b := s.bundles
	l1, lam := s.reg.L1, s.reg.Lambda
	m := len(b.cols)
	if cap(b.part) < glmnetBundleChunks*m {
		size := glmnetBundleChunks * max(m, 2*cap(b.part)/glmnetBundleChunks)
		b.part = make([]float64, size)
	}
	if cap(b.dz) < m {
		b.dz, b.g = make([]float64, m, 2*m), make([]float64, m, 2*m)
	}
	b.dz, b.g = b.dz[:m], b.g[:m]
	clear(b.dz)
	// (1) Each range's share of (Aᵀ diag(φ″/n) A d)ⱼ.
	const k = glmnetBundleChunks + 1
	err := b.run(workers, func(c int) {
		for i, j := range b.cols {
			base := s.csc.Indptr[j]
			p0, p1 := base+int64(b.split[int(j)*k+c]), base+int64(b.split[int(j)*k+c+1])
			rows, vals := s.csc.Indices[p0:p1], s.csc.Values[p0:p1]
			var hd float64
			for p, r := range rows {
				hd += s.curv[r] * vals[p] * s.ad[r]
			}
			b.part[c*m+i] = hd
		}
	})
	if err != nil {
		return keep, err
	}
	// The steps, each from the model at the bundle's start.
	var gd, l1New, sq float64
	moved := false
	for i, j := range b.cols {
		var hd float64
		for c := range glmnetBundleChunks {
			hd += b.part[c*m+i]
		}
		g := s.grad[j] + hd + (lam+glmnetNu)*s.step[j]
		x := s.w[j] + s.step[j]
		dz, v, out := coordinateStep(g, s.hdiag[j]+lam+glmnetNu, x, l1, innerMax/float64(s.n), s.maxMove)
		if out {
			continue
		}
		keep = append(keep, j)
		*qMax, *qSum = math.Max(*qMax, v), *qSum+v
		b.dz[i], b.g[i] = dz, g
		if dz != 0 {
			moved = true
			gd += g * dz
			l1New += math.Abs(x+dz) - math.Abs(x) // per coordinate: no cancellation between large |x|
			sq += dz * dz
		}
	}
	if !moved {
		return keep, nil
	}
	// (2) u = AΔ and Σ φ″u²/n, by ranges of rows.
	err = b.run(workers, func(c int) {
		t := b.touched[c][:0]
		for i, j := range b.cols {
			dz := b.dz[i]
			if dz == 0 {
				continue
			}
			base := s.csc.Indptr[j]
			p0, p1 := base+int64(b.split[int(j)*k+c]), base+int64(b.split[int(j)*k+c+1])
			vals := s.csc.Values[p0:p1]
			for p, r := range s.csc.Indices[p0:p1] {
				if !b.mark[r] {
					b.mark[r] = true
					t = append(t, r)
				}
				b.u[r] += dz * vals[p]
			}
		}
		var q float64
		for _, k := range t {
			q += s.curv[k] * b.u[k] * b.u[k]
		}
		b.touched[c], b.quad[c] = t, q
	})
	if err != nil {
		return keep, err
	}
	var quad float64
	for c := range glmnetBundleChunks {
		quad += b.quad[c]
	}
	quad += (lam + glmnetNu) * sq
	// PCDN's Armijo rule on q along Δ.
	delta := gd + l1*l1New
	alpha := 0.0
	if delta < 0 {
		for beta, t := 1.0, 0; t < glmnetMaxLine; beta, t = beta*0.5, t+1 {
			l1b := 0.0
			if beta == 1 {
				l1b = l1New
			} else {
				for i, j := range b.cols {
					if dz := b.dz[i]; dz != 0 {
						x := s.w[j] + s.step[j]
						l1b += math.Abs(x+beta*dz) - math.Abs(x)
					}
				}
			}
			if beta*gd+0.5*beta*beta*quad+l1*l1b <= glmnetSigma*beta*delta {
				alpha = beta
				break
			}
		}
	}
	for i, j := range b.cols {
		s.step[j] += alpha * b.dz[i]
	}
	// (3) A·d += αu, and u back to zero.
	return keep, b.run(workers, func(c int) {
		for _, k := range b.touched[c] {
			s.ad[k] += alpha * b.u[k]
			b.u[k], b.mark[k] = 0, false
		}
	})
}
