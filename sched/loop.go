package sched

import (
	"context"
	"sync/atomic"
)

// Claims hands out the items [0, m) of one batch to the workers of a read
// phase, by guided self-scheduling: each claim takes about a 2·workers-th
// of what is left, so claims are large while the batch is full and shrink as
// it runs out, and the workers finish together when items differ in cost.
//
// Every claim writes the counter, so it sits on a cache line of its own:
// beside fields that the workers read every iteration, each claim would
// evict them from the other cores.
type Claims struct {
	_    [64]byte
	next atomic.Int64
	_    [56]byte
}

// Next claims the next run of items of a batch of m for one of workers
// workers and returns it as [first, end); ok is false when the batch is
// exhausted.
func (c *Claims) Next(m int64, workers int) (first, end int64, ok bool) {
	for {
		first = c.next.Load()
		if first >= m {
			return 0, 0, false
		}
		n := max(1, (m-first)/(2*int64(workers)))
		if c.next.CompareAndSwap(first, first+n) {
			return first, min(first+n, m), true
		}
	}
}

// Reset makes the whole next batch claimable. Call it between phases.
func (c *Claims) Reset() { c.next.Store(0) }

// Iteration is one mini-batch method's iteration, as a BatchLoop runs it
// on every worker w:
//
//	Read(w, slot)        the read phase on batches[slot]: claim items,
//	                     compute margins, update the duals. Worker 0 first
//	                     draws batches[slot^1], the next iteration's batch,
//	                     so that drawing overlaps the other workers' reads.
//	— barrier —
//	Update(w, slot)      the update phase: the reduction and primal update
//	                     of worker w's coordinates. Worker 0 also does the
//	                     iteration's serial bookkeeping.
//	— barrier —
//	Settle(w, last)      anything every worker must see after the update
//	                     (a lazy segment ending); last marks an epoch's
//	                     last iteration.
//
// Read and Settle get a sync function that waits for every worker (a
// barrier, or nothing with one worker), for steps that need one more
// rendezvous. The loop owns the slots, the barriers, the claims, the
// epoch count and polling the context, so a method never touches them.
type Iteration interface {
	Read(w, slot int, claims *Claims, sync func())
	Update(w, slot int)
	Settle(w int, last bool, sync func())
}

// BatchLoop runs a method's iterations on a pool: k epochs of a fixed
// number of iterations, double-buffered batches (slot it&1 runs while slot
// (it+1)&1 is drawn), two barriers per iteration with more than one worker
// and none with one, and a check of the context every 256 iterations.
//
// The loop runs on the first Workers() of the pool's threads; the others
// return at once, and with one worker they are not woken at all
// (Pool.RunCaller). Changing the count between runs is how a method adapts
// it (SetWorkers). A BatchLoop is driven by one goroutine.
type BatchLoop struct {
	pool    *Pool
	bar     *Barrier
	workers int
	iter    int64 // iterations run so far: the current batch is slot iter&1
	claims  Claims
	// stop is written by worker 0 before the barrier that ends an
	// iteration and read by every worker after it.
	stop bool
}

// NewBatchLoop returns a loop over pool's threads that synchronises them at
// bar, which must have one party per pool thread. It starts with all
// threads as workers.
func NewBatchLoop(pool *Pool, bar *Barrier) *BatchLoop {
	return &BatchLoop{pool: pool, bar: bar, workers: pool.Threads()}
}

// SetWorkers makes the next runs use the first n threads: 1 or all of them
// (the barrier has one party per thread). Call it between runs.
func (l *BatchLoop) SetWorkers(n int) {
	if n != 1 && n != l.pool.Threads() {
		panic("sched: a BatchLoop runs on one worker or on all the pool's threads")
	}
	l.workers = n
}

// Workers returns the number of workers the next run uses.
func (l *BatchLoop) Workers() int { return l.workers }

// Slot returns the slot of the batch that the next iteration runs.
func (l *BatchLoop) Slot() int { return int(l.iter & 1) }

// Iterations returns the number of iterations run so far.
func (l *BatchLoop) Iterations() int64 { return l.iter }

// Run runs k epochs of iters iterations of it in one pool phase and returns
// how many epochs it started: fewer than k when ctx ends the run, which it
// notices within 256 iterations. finish, if not nil, runs on every worker
// after the last iteration. The error is a worker's panic (Pool.Run).
func (l *BatchLoop) Run(ctx context.Context, it Iteration, k, iters int, finish func(w int)) (int, error) {
	l.stop = false
	nw := l.workers
	started := 0
	sync := func() {}
	if nw > 1 {
		sync = l.bar.Wait
	}
	run := l.pool.Run
	if nw == 1 {
		run = l.pool.RunCaller
	}
	err := run(func(w int) {
		if w >= nw {
			return
		}
		for e := 0; e < k && !l.stop; e++ {
			if w == 0 {
				started++
			}
			for i := 0; i < iters; i++ {
				slot := int(l.iter & 1)
				it.Read(w, slot, &l.claims, sync)
				if nw > 1 {
					l.bar.Wait()
				}
				it.Update(w, slot)
				if w == 0 {
					l.claims.Reset()
					l.iter++
					if i&255 == 255 && ctx.Err() != nil {
						l.stop = true
					}
				}
				if nw > 1 {
					l.bar.Wait()
				}
				it.Settle(w, i == iters-1, sync)
				if l.stop {
					break
				}
			}
		}
		if finish != nil {
			finish(w)
		}
	})
	return started, err
}
