package sched

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Barrier makes a fixed number of goroutines wait for each other. It is
// reusable: after all parties have called Wait, the next round begins.
//
// A barrier per iteration is the price of the two-phase AdaSPDC step (read,
// then update), and at small m the iteration itself is well under a
// microsecond, so Wait first spins on an atomic generation counter and only
// parks on a condition variable when the wait gets long (an oversubscribed
// machine, a straggler). The atomics give the happens-before edges that the
// race detector and the memory model need: everything a party wrote before
// Wait is visible to every party after Wait.
type Barrier struct {
	parties  int32
	spin     int
	arrived  atomic.Int32
	gen      atomic.Uint32
	sleepers atomic.Int32
	mu       sync.Mutex
	cond     sync.Cond
}

// DefaultSpin is the number of polls of the generation counter before a
// waiting party parks (tens of microseconds, yielding every 256 polls).
// 4096 polls parked workers too often on the 2-core development VM, where an
// iteration's read phase can outlast it, and a wake-up from parking costs
// more than the whole iteration; 2¹⁵ did not.
const DefaultSpin = 1 << 15

// NewBarrier returns a barrier for parties goroutines. spin ≤ 0 selects
// DefaultSpin.
func NewBarrier(parties, spin int) *Barrier {
	if parties < 1 {
		parties = 1
	}
	if spin <= 0 {
		spin = DefaultSpin
	}
	b := &Barrier{parties: int32(parties), spin: spin}
	b.cond.L = &b.mu
	return b
}

// Wait blocks until all parties have called Wait in this round.
func (b *Barrier) Wait() {
	if b.parties == 1 {
		return
	}
	g := b.gen.Load()
	if b.arrived.Add(1) == b.parties {
		b.arrived.Store(0)
		b.gen.Add(1)
		if b.sleepers.Load() > 0 {
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
		}
		return
	}
	for i := 0; i < b.spin; i++ {
		if b.gen.Load() != g {
			return
		}
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	b.mu.Lock()
	b.sleepers.Add(1)
	for b.gen.Load() == g {
		b.cond.Wait()
	}
	b.sleepers.Add(-1)
	b.mu.Unlock()
}
