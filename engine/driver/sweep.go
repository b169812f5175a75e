package driver

import (
	"sort"
	"sync/atomic"

	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// RowSweep runs a function over the rows of a CSR matrix on a pool of
// workers and sums what the workers scatter into their own copies of the
// output vectors: the first worker's copy is the output itself, the
// others' are private. The sums are made by coordinate ranges, one per
// worker, in a second phase, so no two workers write the same memory.
//
// The rows are cut into chunks of about equal nonzeros. With one worker
// there is one chunk. Otherwise each worker takes the next chunk not yet
// taken until none is left (rowChunksPerWorker per worker), so a worker
// slowed by the host, or rows that the function skips (a Hessian product
// reads only the rows with φ″ ≠ 0), no longer hold the others at the
// phase's end: on news20 on two threads the static split, one range per
// worker, left the faster worker waiting 6–10 ms of a 55 ms solve. A
// function's per-row outputs and its per-chunk scalars do not depend on
// which worker took a chunk; the vector sums do, in their rounding, since
// a chunk's rows land in its taker's copy. Where the run must be the same
// bit for bit from run to run (Options.Deterministic), the sweep is
// static: chunk w is worker w's.
type RowSweep struct {
	pool    *sched.Pool
	bounds  []int         // chunk c is rows bounds[c]:bounds[c+1]
	dynamic bool          // workers take chunks as they go, not chunk w alone
	next    atomic.Int64  // the next chunk to take, in a dynamic phase
	bufs    [][][]float64 // bufs[w][i] is worker w's i-th accumulator, for w ≥ 1; zero between sweeps
	accs    [][][]float64 // accs[w] is what worker w's fn receives: bufs[w] cut to the outs' lengths
}

// rowChunksPerWorker is how many chunks a dynamic sweep cuts per worker:
// the wait at a phase's end is then about half a chunk, 3% of the phase,
// while taking a chunk costs one atomic add.
const rowChunksPerWorker = 16

// rowChunkMinNNZ bounds the chunks of a dynamic sweep from below, so that
// taking one stays cheap against sweeping it.
const rowChunkMinNNZ = 1 << 12

// NewRowSweep returns a sweep over x's rows on threads workers; dynamic
// lets the workers take chunks as they go (see RowSweep).
func NewRowSweep(x *sparse.CSR, threads int, dynamic bool) *RowSweep {
	s := &RowSweep{pool: sched.NewPool(threads)}
	nnz := x.NNZ()
	chunks := threads
	if threads > 1 && dynamic {
		chunks = max(threads, min(threads*rowChunksPerWorker, int(nnz/rowChunkMinNNZ)))
		s.dynamic = chunks > threads
	}
	s.bounds = make([]int, chunks+1)
	for c := 1; c < chunks; c++ {
		target := nnz * int64(c) / int64(chunks)
		s.bounds[c] = sort.Search(x.Rows, func(k int) bool { return x.Indptr[k+1] > target })
	}
	s.bounds[chunks] = x.Rows
	s.bufs, s.accs = make([][][]float64, threads), make([][][]float64, threads)
	return s
}

// Threads returns the number of workers.
func (s *RowSweep) Threads() int { return s.pool.Threads() }

// Pool returns the sweep's workers, for a method that runs phases of its
// own on them between sweeps.
func (s *RowSweep) Pool() *sched.Pool { return s.pool }

// Chunks returns the number of chunks the rows are cut into.
func (s *RowSweep) Chunks() int { return len(s.bounds) - 1 }

// Close stops the workers.
func (s *RowSweep) Close() error { return s.pool.Close() }

// Run calls fn(lo, hi, acc) for each chunk of rows lo:hi, with acc the
// zeroed accumulators of the worker that took the chunk, one per out, then
// sets each out to the sum of its accumulators over the workers. The
// first worker's accumulators are the outs.
func (s *RowSweep) Run(fn func(lo, hi int, acc [][]float64), outs ...[]float64) error {
	return s.RunChunks(func(_, lo, hi int, acc [][]float64) { fn(lo, hi, acc) }, outs...)
}

// RunChunks is run with the chunk's index c passed to fn, for results
// kept per chunk.
func (s *RowSweep) RunChunks(fn func(c, lo, hi int, acc [][]float64), outs ...[]float64) error {
	return s.RunThen(fn, nil, outs...)
}

// RunThen is runChunks followed, where post is not nil, by post(w, lo,
// hi) on each worker w, once the coordinates lo:hi of the outs are summed
// (the worker's range in the summing phase: coordRange of the first out's
// length), so that work on the sums touches the cache lines the worker
// has just written.
func (s *RowSweep) RunThen(fn func(c, lo, hi int, acc [][]float64), post func(w, lo, hi int), outs ...[]float64) error {
	t := s.Threads()
	if t == 1 {
		for _, o := range outs {
			clear(o)
		}
		fn(0, s.bounds[0], s.bounds[1], outs)
		if post != nil {
			post(0, 0, len(outs[0]))
		}
		return nil
	}
	// A worker's accumulators are kept from sweep to sweep, each as long
	// as the longest out it has served: fresh memory costs a page fault
	// per 4 KiB (a dense Hessian on w8a is 720 KiB). Where one is short,
	// all of them are made anew from one allocation, which the kernel may
	// back with huge pages.
	for w := 1; w < t; w++ {
		for len(s.bufs[w]) < len(outs) {
			s.bufs[w] = append(s.bufs[w], nil)
		}
		size := func(i int) int {
			if i < len(outs) {
				return max(cap(s.bufs[w][i]), len(outs[i]))
			}
			return cap(s.bufs[w][i])
		}
		short, total := false, 0
		for i, b := range s.bufs[w] {
			short = short || size(i) > cap(b)
			total += size(i)
		}
		if short {
			slab := hugepage.Make[float64](total + 8*len(s.bufs[w]))
			for i := range s.bufs[w] {
				k := size(i)
				s.bufs[w][i], slab = slab[:k:k], slab[Pad8(k):]
			}
		}
		s.accs[w] = s.accs[w][:0]
		for i, o := range outs {
			s.accs[w] = append(s.accs[w], s.bufs[w][i][:len(o)])
		}
	}
	s.next.Store(0)
	err := s.pool.Run(func(w int) {
		acc := s.accs[w]
		if w == 0 {
			for _, o := range outs {
				clear(o)
			}
			acc = outs
		}
		if !s.dynamic {
			fn(w, s.bounds[w], s.bounds[w+1], acc)
			return
		}
		for c := int(s.next.Add(1) - 1); c < s.Chunks(); c = int(s.next.Add(1) - 1) {
			fn(c, s.bounds[c], s.bounds[c+1], acc)
		}
	})
	if err != nil || len(outs) == 0 {
		return err
	}
	return s.pool.Run(func(w int) {
		for i, o := range outs {
			lo, hi := CoordRange(len(o), w, t)
			o := o[lo:hi]
			for v := 1; v < t; v++ {
				b := s.bufs[v][i][lo:hi]
				kernels.Axpy(1, b, o)
				clear(b)
			}
		}
		if post != nil {
			lo, hi := CoordRange(len(outs[0]), w, t)
			post(w, lo, hi)
		}
	})
}

// Pad8 rounds n up to a multiple of 8.
func Pad8(n int) int { return (n + 7) &^ 7 }

// CoordRange returns worker w's share lo:hi of n coordinates cut into t
// ranges, with inner bounds on multiples of 8 (64 bytes of float64), so
// that no two workers write the same cache line.
func CoordRange(n, w, t int) (lo, hi int) {
	lo, hi = (n*w/t)&^7, (n*(w+1)/t)&^7
	if w == t-1 {
		hi = n
	}
	return lo, hi
}
