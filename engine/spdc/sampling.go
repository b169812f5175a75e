package spdc

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/kernels"
)

// newSampler builds the block sampler: τ-nice batches of m distinct blocks
// drawn uniformly, or under importance sampling (m = 1) block i with
// probability pᵢ from the blocks' own norms raw; it returns the weights
// wᵢ = 1/(n_b·pᵢ) of the latter.
func (s *solver) newSampler(raw []float64) ([]float64, error) {
	var impW []float64
	var err error
	if s.importance {
		s.sampler, impW, err = importanceSampler(raw, s.set.m, s.set.seed)
	} else {
		s.sampler, err = blocks.NewUniform(s.nb, s.set.m, s.set.seed^0x9e3779b97f4a7c15)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: sampler: %w", err)
	}
	return impW, nil
}

// batch is one iteration's sample of blocks and the steps it implies.
type batch struct {
	blocks     []int32 // the m sampled blocks
	offset     []int   // slot of the first sample of blocks[i]; len m+1
	tau, theta float64 // τᵗ and θᵗ (Eq. 12, 15)
	// scale turns the batch sum Σ Δyₖaₖ into Eq. 11's estimate: s/m, times
	// 1/(n_b·pᵢ) under importance sampling, where it keeps it unbiased.
	scale float64
	l2    l2Scalars
}

// ahead is the queue of drawn batches, in the order of the one sampler:
// drawBatch takes the batch of the next iteration from it and draws the
// batch depth iterations later, so the sequence of batches is the
// sampler's whatever the number of workers. The queue's batches are at
// stages of prefetching: the newest's block records, the middle one's
// sample records, and with rows, the next one's rows.
type ahead struct {
	blocks    []int32 // depth batches of m blocks, the next at head
	head      int
	depth     int
	rows      bool // small batches: drawBatch prefetches rows …
	rowsAhead int  // … of the batch rowsAhead+2 iterations on
}

// batch returns the batch i+1 iterations after the next one.
func (q *ahead) batch(i, m int) []int32 {
	j := (q.head + i) % q.depth
	return q.blocks[j*m : (j+1)*m]
}

// newAhead fills the queue: depth batches, enough for about
// aheadSamples samples, and at least two.
func (s *solver) newAhead() {
	m := s.set.m
	q := &s.ahead
	q.depth = max(2, (aheadSamples+m*s.maxQ-1)/(m*s.maxQ))
	q.rows = m*s.maxQ <= aheadRowSamples
	q.rowsAhead = min(aheadRows, q.depth/2-1)
	q.blocks = make([]int32, q.depth*m)
	for i := range q.depth {
		s.sampler.Sample(q.blocks[i*m : (i+1)*m])
	}
}

// aheadSamples is how many samples ahead of the one it runs the iteration
// asks for block records; half-way, for the samples' records; batches of
// at most aheadRowSamples samples ask for the rows of the batch after the
// next.
const (
	aheadSamples    = 16
	aheadRowSamples = 4
	aheadRows       = 2
)

// prefetchAhead is how many blocks ahead of the one it reads the read
// phase asks for rows: a sampled row is a random access (a DRAM miss on
// url-shaped data), and two blocks' work covers its latency. The update
// phase asks for the first blocks of the next batch.
const prefetchAhead = 2

// prefetchRows asks for the rows and duals of the blocks [from, to) of
// blocks, whose sampleRow records drawBatch prefetched earlier.
func (s *solver) prefetchRows(blocks []int32, from, to int) {
	for _, b := range blocks[from:to] {
		bi := &s.binfo[b]
		for r := bi.lo; r < bi.hi; r++ {
			rec := &s.rows[r]
			kernels.Prefetch(unsafe.Pointer(&s.duals[r]))
			if n := int(min(rec.hi-rec.lo, driver.MaxPrefetchNNZ)); n > 0 {
				kernels.PrefetchRange(unsafe.Pointer(&s.x.Values[rec.lo]), 8*n)
				kernels.PrefetchRange(unsafe.Pointer(&s.x.Indices[rec.lo]), 4*n)
			}
		}
	}
}

// drawBatch takes the next iteration's blocks from the queue of drawn
// batches (see ahead) and sets τᵗ and θᵗ (Eq. 12, 15) from their largest
// spectral norm. It refills the queue with a new draw and moves the
// queue's batches one stage of prefetching closer: a sampled block's
// records and rows are random accesses, cache misses on any data larger
// than the cache, and an iteration of one short row is too short to hide
// even one of them.
func (s *solver) drawBatch(bt *batch) {
	m := len(bt.blocks)
	q := &s.ahead
	cur := q.blocks[q.head*m : (q.head+1)*m]
	copy(bt.blocks, cur)
	s.sampler.Sample(cur) // the batch q.depth iterations later
	// With more than one worker, whoever claims a block fetches its duals:
	// pulling them to this core would cost the other a second transfer.
	one := len(s.workers) == 1
	for _, b := range cur {
		kernels.Prefetch(unsafe.Pointer(&s.binfo[b]))
		if s.maxQ == 1 && (q.rows || !one) {
			// One sample per block: block b's sample records are the b-th,
			// so they need not wait for its blockInfo.
			if one {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[b]), unsafe.Pointer(&s.duals[b]))
			} else {
				kernels.Prefetch(unsafe.Pointer(&s.rows[b]))
			}
		}
	}
	q.head++
	if q.head == q.depth {
		q.head = 0
	}
	// Half-way: the samples' records of larger blocks. (One worker with a
	// larger batch asks for them as it reads the batch before, a block at
	// a time: a burst of prefetches would fill the core's miss buffers and
	// stall it.)
	if s.maxQ > 1 && (q.rows || !one) {
		for _, b := range q.batch(q.depth/2, m) {
			bi := &s.binfo[b]
			if one {
				kernels.Prefetch2(unsafe.Pointer(&s.rows[bi.lo]), unsafe.Pointer(&s.duals[bi.lo]))
			} else {
				kernels.Prefetch(unsafe.Pointer(&s.rows[bi.lo]))
			}
		}
	}
	// Small batches: the rows of the batch q.rowsAhead after this one
	// (larger ones prefetch their rows as the read phase goes,
	// prefetchAhead blocks ahead, and the update phase the first blocks of
	// the next batch).
	if q.rows && one {
		s.prefetchRows(q.batch(q.rowsAhead, m), 0, m)
	}
	bmax := &s.binfo[bt.blocks[0]]
	off := 0
	for i, b := range bt.blocks {
		bt.offset[i] = off
		bi := &s.binfo[b]
		off += int(bi.hi - bi.lo)
		if bi.norm > bmax.norm {
			bmax = bi
		}
	}
	bt.offset[len(bt.blocks)] = off
	// τ and θ are decreasing in the largest norm (Eq. 12, 15).
	bt.tau, bt.theta = bmax.tau, bmax.theta
	// Importance sampling draws one block, so bmax is that block.
	bt.scale = s.scale * bmax.w
	if s.fastL2 {
		s.seg.next(&bt.l2, bt.tau, bt.theta, bmax.a, bt.scale, s.rScale)
	}
}

// drawOne is drawBatch for batches of one sample (solver.one): it takes the
// next block from the queue, draws the one depth iterations later and asks
// for its record, asks for the row of the block rowsAhead+2 iterations on,
// and sets the batch's steps (Eq. 12, 15) and scaled-lazy scalars.
func (s *solver) drawOne(bt *batch) {
	q := &s.ahead
	b := q.blocks[q.head]
	s.sampler.Sample(q.blocks[q.head : q.head+1])
	kernels.Prefetch(unsafe.Pointer(&s.one[q.blocks[q.head]]))
	q.head++
	if q.head == q.depth {
		q.head = 0
	}
	h := q.head + q.rowsAhead
	if h >= q.depth {
		h -= q.depth
	}
	if r := &s.one[q.blocks[h]]; r.hi > r.lo {
		n := int(min(r.hi-r.lo, driver.MaxPrefetchNNZ))
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Values[r.lo]), 8*n)
		kernels.PrefetchRange(unsafe.Pointer(&s.x.Indices[r.lo]), 4*n)
	}
	rec := &s.one[b]
	bt.blocks[0] = b
	bt.offset[0], bt.offset[1] = 0, 1
	bt.tau, bt.theta, bt.scale = rec.tau, rec.theta, s.scale
	s.seg.next(&bt.l2, rec.tau, rec.theta, 1/(1+rec.tau*s.lam), s.scale, s.rScale)
}

// Importance sampling for SPDC (Zhang & Xiao's non-uniform variant, m = 1).
//
// Block i is drawn with probability pᵢ = ½·(1/n_b) + ½·Rᵢ/ΣⱼRⱼ: half
// proportional to its norm, half uniform, so that no block's probability
// falls below half its uniform share and every dual keeps being updated.
// Eq. 11 then weighs the drawn block by wᵢ = 1/(n_b·pᵢ), which keeps the
// primal estimate unbiased. The steps follow from the condition that makes
// the paper's matrix (17) positive definite, τ·σ·(wᵢRᵢ)² ≤ 1/4 for every
// i: SPDC's steps with R = maxᵢ wᵢRᵢ, which lies between the mean norm R̄
// and 2R̄ (wᵢRᵢ = 2RᵢR̄/(Rᵢ + R̄)), instead of the largest norm. On data
// whose norms spread widely that is a much larger step than uniform SPDC's.

// importanceProb returns pᵢ for block norms r.
func importanceProb(r []float64) []float64 {
	var sum float64
	for _, v := range r {
		sum += v
	}
	nb := float64(len(r))
	p := make([]float64, len(r))
	for i, v := range r {
		p[i] = 0.5/nb + 0.5*v/sum
	}
	return p
}

// importanceR returns maxᵢ wᵢRᵢ, the R of SPDC's steps under importance
// sampling.
func importanceR(r []float64) float64 {
	p := importanceProb(r)
	nb := float64(len(r))
	var out float64
	for i, v := range r {
		out = math.Max(out, v/(nb*p[i]))
	}
	return out
}

// importanceSampler builds the sampler and the weights wᵢ from the blocks'
// own norms (zero norms included: such a block is drawn at its uniform
// floor and changes nothing).
func importanceSampler(raw []float64, m int, seed uint64) (blocks.Sampler, []float64, error) {
	p := importanceProb(raw)
	w := make([]float64, len(p))
	for i, pi := range p {
		w[i] = 1 / (float64(len(p)) * pi)
	}
	smp, err := blocks.NewImportance(p, m, seed^0x9e3779b97f4a7c15)
	return smp, w, err
}
