package spdc

import (
	"math"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// The storage layouts (the package doc's "Storage layouts" says which
// serves which case). Per coordinate, x, x̄ and r live in the solver's
// dense arrays, in lazyCoord records (lazy.go) or in the scaled coordL2
// records (lazyl2.go); per sample, the label, step, dual and row extent
// live in sampleRow, sampleDual and blockInfo records, or in one sampleOne
// record when every batch is one sample.

// chooseLayout picks the per-coordinate storage: lazy records when the
// O(d) dense update would outweigh a batch's nonzeros, in the scaled form
// of lazyl2.go when g has no l1 term; and, for dense runs, whether the
// reduction is fused into the read phase (not under
// Options.Deterministic, since it sums in the order the workers claim
// blocks).
func (s *solver) chooseLayout(batchNNZ float64) {
	// Lazy pays once the O(d) dense update outweighs the batch's nonzeros:
	// the break-even is driver.LazyBreakEven (d = batch nnz), where the
	// lazy record's extra reads per nonzero cost about what the dense
	// sweep of d coordinates does.
	switch s.set.lazy {
	case driver.LazyOn:
		s.lazy = true
	case driver.LazyOff:
		s.lazy = false
	default:
		s.lazy = float64(s.d) > driver.LazyBreakEven*batchNNZ
	}
	s.fastL2 = s.lazy && s.reg.L1 == 0
	s.fused = !s.lazy && !s.set.deterministic
}

// buildRecords lays out the per-sample state in block order, with each
// block's steps (Eq. 10, 12, 15) precomputed, and draws the first batch:
// one sampleOne record per sample when every batch is one sample of a
// scaled lazy run on one worker (oneIteration), and otherwise sampleRow,
// sampleDual and blockInfo records. impW are the importance weights wᵢ
// (nil under uniform sampling).
func (s *solver) buildRecords(impW []float64) {
	x := s.x
	if oneSampleLoop && s.fastL2 && s.set.m == 1 && s.maxQ == 1 && !s.importance {
		// One sample per block: block b is sample Order[b].
		s.one = make([]sampleOne, s.n)
		for b, k := range s.part.Order {
			tau := s.tauC / s.norms[b]
			s.one[b] = sampleOne{lo: x.Indptr[k], hi: x.Indptr[k+1], tau: tau, theta: 1 - 1/(s.thA+s.thB*s.norms[b]),
				b: s.prob.B[k], sigma: s.sigma[b], y: s.y[k], aux: dualLogit(s.y[k], s.prob.B[k])}
		}
		s.newAhead()
		s.drawOne(&s.batches[0])
		return
	}
	s.rows = make([]sampleRow, s.n)
	s.duals = make([]sampleDual, s.n)
	for b := 0; b < s.nb; b++ {
		for r := s.part.Start[b]; r < s.part.Start[b+1]; r++ {
			k := s.part.Order[r]
			s.rows[r] = sampleRow{b: s.prob.B[k], sigma: s.sigma[b], lo: x.Indptr[k], hi: x.Indptr[k+1]}
			s.duals[r] = sampleDual{y: s.y[k], aux: dualLogit(s.y[k], s.prob.B[k])}
		}
	}
	s.binfo = make([]blockInfo, s.nb)
	for b, rb := range s.norms {
		tau := s.tauC / rb
		s.binfo[b] = blockInfo{norm: rb, tau: tau, theta: 1 - 1/(s.thA+s.thB*rb), a: 1 / (1 + tau*s.lam), w: 1,
			lo: uint32(s.part.Start[b]), hi: uint32(s.part.Start[b+1])}
		if s.importance {
			s.binfo[b].w = impW[b]
		}
	}
	s.newAhead()
	s.drawBatch(&s.batches[0])
}

// sampleRow is what the loop reads of one sample: its label bₖ, the dual
// step σ of its block and its row's extent in the CSR arrays.
type sampleRow struct {
	b, sigma float64
	lo, hi   int64
}

// sampleDual is what the loop writes of one sample: its dual yₖ and aux,
// what a loss's prox carries from one visit to the next (for the logistic
// loss the logit of −b·y; NaN: none yet).
type sampleDual struct {
	y, aux float64
}

// dualLogit returns the logit of u = −b·y, the logistic prox's warm start
// for a dual y (NaN at an end of the domain, where it has none): computed
// once here, it spares the first prox of every sample its logarithm and its
// cold start.
func dualLogit(y, b float64) float64 {
	u := -b * y
	if !(u > 0 && u < 1) {
		return math.NaN()
	}
	return math.Log(u / (1 - u))
}

// blockInfo is what drawing block b needs: its samples are rows[lo:hi]
// and duals[lo:hi]; norm is Rᵢ as the steps use it; tau, theta and a are
// τ, θ (Eq. 12, 15) and 1/(1+τλ) for an iteration whose largest norm is
// norm; w is 1/(n_b·pᵢ) under importance sampling and 1 otherwise. It fills
// a cache line, so that one prefetch brings all of it.
type blockInfo struct {
	norm, tau, theta, a, w float64
	lo, hi                 uint32 // up to 2³¹ samples (blocks.Partition's limit)
	_                      [16]byte
}

// oneSampleLoop lets batches of one sample run as oneIteration; tests turn
// it off to compare with the general loop.
var oneSampleLoop = true

// sampleOne is a sample's whole record when a batch is that one sample
// (solver.one): its row's extent, τ and θ of an iteration that draws it
// (Eq. 12, 15), its label bₖ, dual step σ, dual yₖ and the prox's aux. It
// fills a cache line.
type sampleOne struct {
	lo, hi                  int64
	tau, theta, b, sigma, y float64
	aux                     float64
}
