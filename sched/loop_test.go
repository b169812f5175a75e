package sched

import (
	"context"
	"sync/atomic"
	"testing"
)

// countingIteration checks the loop's contract: every item of a batch is
// claimed exactly once per iteration, the update phase sees every read of
// its iteration, worker 0 draws the other slot, and last marks each
// epoch's final iteration once per worker.
type countingIteration struct {
	t        *testing.T
	m        int64
	workers  int
	claimed  []atomic.Int32 // per item, this iteration
	drawn    [2]int64       // the iteration each slot was drawn for
	reads    atomic.Int64
	updates  atomic.Int64
	lasts    atomic.Int64
	iter     int64
	failures atomic.Int32
}

func (c *countingIteration) Read(w, slot int, claims *Claims, sync func()) {
	if w == 0 {
		c.drawn[slot^1] = c.iter + 1
	}
	for {
		first, end, ok := claims.Next(c.m, c.workers)
		if !ok {
			break
		}
		for i := first; i < end; i++ {
			c.claimed[i].Add(1)
			c.reads.Add(1)
		}
	}
}

func (c *countingIteration) Update(w, slot int) {
	if w == 0 {
		if c.drawn[slot] != c.iter {
			c.failures.Add(1)
		}
		for i := range c.claimed {
			if c.claimed[i].Swap(0) != 1 {
				c.failures.Add(1)
			}
		}
		c.iter++
	}
	c.updates.Add(1)
}

func (c *countingIteration) Settle(w int, last bool, sync func()) {
	if last {
		c.lasts.Add(1)
	}
	sync()
}

func TestBatchLoop(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		pool := NewPool(threads)
		bar := NewBarrier(threads, 0)
		pool.BreakOnPanic(bar)
		loop := NewBatchLoop(pool, bar)
		for _, nw := range []int{threads, 1} {
			loop.SetWorkers(nw)
			it := &countingIteration{t: t, m: 37, workers: nw, claimed: make([]atomic.Int32, 37), iter: loop.Iterations()}
			it.drawn[loop.Slot()] = loop.Iterations()
			const k, iters = 3, 50
			started, err := loop.Run(context.Background(), it, k, iters, nil)
			if err != nil {
				t.Fatal(err)
			}
			if started != k || it.reads.Load() != 37*k*iters || it.updates.Load() != int64(nw*k*iters) ||
				it.lasts.Load() != int64(nw*k) || it.failures.Load() != 0 {
				t.Errorf("threads %d, workers %d: started %d, reads %d, updates %d, lasts %d, failures %d",
					threads, nw, started, it.reads.Load(), it.updates.Load(), it.lasts.Load(), it.failures.Load())
			}
		}
		// A cancelled context ends the run within 256 iterations.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		loop.SetWorkers(threads)
		it := &countingIteration{t: t, m: 5, workers: threads, claimed: make([]atomic.Int32, 5), iter: loop.Iterations()}
		it.drawn[loop.Slot()] = loop.Iterations()
		before := loop.Iterations()
		started, err := loop.Run(ctx, it, 10, 1000, nil)
		if err != nil || started != 1 || loop.Iterations()-before != 256 {
			t.Errorf("threads %d, cancelled: started %d, %d iterations, error %v; want 1 epoch of 256", threads, started, loop.Iterations()-before, err)
		}
		if err := pool.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
