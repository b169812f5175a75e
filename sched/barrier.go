package sched

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// ErrBroken is the value a Wait on a broken barrier panics with (see
// Barrier.Break). Pool.Run recognises it: a worker that unwinds with
// ErrBroken is a casualty of another worker's panic, not its cause.
var ErrBroken = errors.New("sched: barrier broken")

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
//
// A barrier can be broken (Break), which releases every waiting party by
// making its Wait panic with ErrBroken, until Reset re-arms it. A Pool
// breaks the barriers registered with Pool.BreakOnPanic when a worker
// panics, so that the other workers unwind instead of waiting forever for a
// party that will never arrive.
type Barrier struct {
	parties int32
	spin    int
	arrived atomic.Int32
	// gen counts rounds in steps of 2; its low bit (genBroken) is the broken
	// flag, so that a spinning party sees Break through the very load that
	// watches for the end of its round and the hot path pays nothing for it.
	gen      atomic.Uint32
	sleepers atomic.Int32
	mu       sync.Mutex
	cond     sync.Cond
}

// genBroken is the bit of Barrier.gen that marks a broken barrier. Rounds
// add genStep, which never carries into it, even on wrap-around.
const (
	genBroken = 1
	genStep   = 2
)

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

// Wait blocks until all parties have called Wait in this round. If the
// barrier is broken before the round completes, or was broken before Wait
// was called, Wait panics with ErrBroken instead (a one-party barrier too).
func (b *Barrier) Wait() {
	g := b.gen.Load()
	if g&genBroken != 0 {
		panic(ErrBroken)
	}
	if b.parties == 1 {
		return
	}
	if b.arrived.Add(1) == b.parties {
		b.arrived.Store(0)
		b.gen.Add(genStep)
		if b.sleepers.Load() > 0 {
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
		}
		return
	}
	for i := 0; i < b.spin; i++ {
		if v := b.gen.Load(); v != g {
			if v&genBroken != 0 {
				panic(ErrBroken)
			}
			return
		}
		if i&255 == 255 {
			runtime.Gosched()
		}
	}
	b.mu.Lock()
	b.sleepers.Add(1)
	v := b.gen.Load()
	for v == g {
		b.cond.Wait()
		v = b.gen.Load()
	}
	b.sleepers.Add(-1)
	b.mu.Unlock()
	if v&genBroken != 0 {
		panic(ErrBroken)
	}
}

// Break breaks the barrier: every party waiting in Wait now, spinning or
// parked, and every later call to Wait, until Reset, panics with ErrBroken.
// A party whose round completed before Break returns normally. Break may be
// called from any goroutine, any number of times.
func (b *Barrier) Break() {
	b.gen.Or(genBroken)
	// A parker checks gen under the mutex before it sleeps, so taking the
	// mutex here means it either saw the flag or is already asleep.
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}

// Broken reports whether the barrier is broken.
func (b *Barrier) Broken() bool { return b.gen.Load()&genBroken != 0 }

// Reset re-arms a broken barrier for a new first round: it clears the
// broken state and forgets the arrivals of the interrupted round. It must
// only be called when no party is inside Wait.
func (b *Barrier) Reset() {
	b.arrived.Store(0)
	b.gen.And(^uint32(genBroken))
}
