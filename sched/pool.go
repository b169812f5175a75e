package sched

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Pool is a fixed set of persistent worker goroutines that run one parallel
// phase at a time. Worker 0 is the goroutine that calls Run; workers 1..n−1
// are started once by NewPool (under an errgroup) and wait between phases,
// so a phase costs no goroutine start. Inside a phase, workers synchronise
// with a Barrier.
//
// Between phases a worker first spins on the phase counter, yielding now
// and then, for up to PoolSpin, and only then parks; the caller waits for
// the phase's end the same way. On the 2-core development VM a parked
// worker took 0.14 to 1.3 ms to start after Run handed it a phase, as long
// as the phase itself (half of a Hessian product on news20), so Newton's
// sweeps did not speed up on two threads; with spinning they did (sched
// package doc, "Hand-offs").
//
// A panic in any worker is recovered and returned by Run as a *PanicError;
// the barriers registered with BreakOnPanic are broken so that the other
// workers unwind too, and the pool stays usable.
//
// A Pool is not safe for concurrent use: one goroutine drives it.
type Pool struct {
	threads int
	// phase counts the phases started; Run writes fn, then increments it,
	// so a worker that sees the new count sees fn. Close increments it
	// with closing set.
	phase   atomic.Uint32
	fn      func(int)
	closing bool
	// pending counts the workers 1..n−1 still in the phase.
	pending atomic.Int32
	// A worker that stops spinning sets its parked flag, re-reads phase,
	// and blocks on its wake channel (buffered, one token); Run sends a
	// token to each worker whose flag it sees after incrementing phase.
	// Both sides use sequentially consistent atomics, so either the worker
	// sees the new phase or Run sees the flag. A token left over wakes a
	// worker once for nothing: it re-reads phase and blocks again. The
	// caller parks on finished in the same way.
	parked       []atomic.Bool
	wake         []chan struct{}
	callerParked atomic.Bool
	finished     chan struct{}

	group    errgroup.Group
	closed   bool
	barriers []*Barrier // broken on a panic, re-armed before the next phase

	// Per phase: failed is set by the first panic of any kind, cause holds
	// the first real panic and broken the first ErrBroken one.
	failed atomic.Bool
	cause  atomic.Pointer[PanicError]
	broken atomic.Pointer[PanicError]
}

// PoolSpin is how long a worker waiting for the next phase, or the caller
// waiting for the end of one, spins before it parks. It covers the serial
// work between the phases of a Newton step (conjugate-gradient vector
// updates: about 0.1 ms on news20), so the hand-offs stay in the spinning
// regime, while an idle pool gives its cores back within a millisecond.
const PoolSpin = time.Millisecond

// spinUntil polls done, yielding every 256 polls, until it returns true
// (spinUntil then reports true) or PoolSpin has passed (false).
func spinUntil(done func() bool) bool {
	var deadline time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i&255 == 255 {
			runtime.Gosched()
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(PoolSpin)
			} else if now.After(deadline) {
				return false
			}
		}
	}
}

// PanicError is returned by Run when a worker panicked: the first panic
// value, the worker and its stack.
type PanicError struct {
	Worker int    // the worker whose call panicked
	Value  any    // the value passed to panic
	Stack  []byte // the worker's stack at the panic, as debug.Stack formats it
}

// Error describes the panic without its stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("sched: worker %d panicked: %v", e.Worker, e.Value)
}

// Unwrap returns the panic value if it is an error, and nil otherwise, so
// that errors.Is and errors.As see through a PanicError.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// NewPool starts a pool of threads workers. threads ≤ 0 means
// runtime.GOMAXPROCS(0).
func NewPool(threads int) *Pool {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	p := &Pool{threads: threads, parked: make([]atomic.Bool, threads), wake: make([]chan struct{}, threads),
		finished: make(chan struct{}, 1)}
	for w := 1; w < threads; w++ {
		p.wake[w] = make(chan struct{}, 1)
		p.group.Go(func() error {
			for seen := uint32(0); ; seen++ {
				p.awaitPhase(w, seen)
				if p.closing {
					return nil
				}
				p.call(p.fn, w)
				if p.pending.Add(-1) == 0 && p.callerParked.Load() {
					select {
					case p.finished <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	return p
}

// awaitPhase returns once the phase counter has moved past seen: after
// spinning, or parked.
func (p *Pool) awaitPhase(w int, seen uint32) {
	if spinUntil(func() bool { return p.phase.Load() != seen }) {
		return
	}
	p.parked[w].Store(true)
	for p.phase.Load() == seen {
		<-p.wake[w]
	}
	p.parked[w].Store(false)
}

// startPhase publishes a phase to the workers and wakes the parked ones.
func (p *Pool) startPhase() {
	p.phase.Add(1)
	for w := 1; w < p.threads; w++ {
		if p.parked[w].Load() {
			select {
			case p.wake[w] <- struct{}{}:
			default:
			}
		}
	}
}

// Threads returns the number of workers, the caller included.
func (p *Pool) Threads() int { return p.threads }

// BreakOnPanic registers b with the pool: when a worker of a phase panics,
// Run breaks b (Barrier.Break), so that the workers waiting at b, or
// arriving there later in the phase, unwind instead of waiting forever for
// the worker that panicked. Before the phase after a panic starts, Run
// resets every registered barrier, so the pool and its barriers stay
// reusable. Register every barrier that the pool's workers wait at; a
// worker waiting at an unregistered barrier for a worker that panicked
// waits forever, and so does Run. Registering a barrier twice, or nil, has
// no effect. BreakOnPanic must not be called during Run.
func (p *Pool) BreakOnPanic(b *Barrier) {
	if b != nil && !slices.Contains(p.barriers, b) {
		p.barriers = append(p.barriers, b)
	}
}

// Run calls fn(w) for every worker w in [0, Threads()) concurrently, fn(0) on
// the calling goroutine, and returns when all calls have returned. Everything
// written by any fn happens before Run returns.
//
// Every call runs under a deferred recover. The first panic breaks the
// barriers registered with BreakOnPanic, and Run returns a *PanicError for
// the first panic whose value is not ErrBroken: a worker released from a
// broken barrier is a casualty, not the cause. Only if every panic of the
// phase was ErrBroken (a barrier broken by someone else) does Run report
// the first of those. Run returns nil when no call panicked.
func (p *Pool) Run(fn func(worker int)) error {
	if p.closed {
		panic("sched: Run on a closed Pool")
	}
	p.rearm()
	if p.threads > 1 {
		p.fn = fn
		p.pending.Store(int32(p.threads - 1))
		p.startPhase()
	}
	p.call(fn, 0)
	if p.threads > 1 && !spinUntil(func() bool { return p.pending.Load() == 0 }) {
		p.callerParked.Store(true)
		for p.pending.Load() != 0 {
			<-p.finished
		}
		p.callerParked.Store(false)
	}
	p.fn = nil
	return p.result()
}

// RunCaller calls fn(0) on the calling goroutine alone, with Run's handling
// of panics, and does not wake the other workers: a phase that only worker 0
// has work for (a batch loop on one worker) then leaves the others spinning
// out their PoolSpin or parked, rather than woken to return at once and
// spin for another PoolSpin beside it, which on a host whose other cores
// are busy takes time from worker 0.
func (p *Pool) RunCaller(fn func(worker int)) error {
	if p.closed {
		panic("sched: RunCaller on a closed Pool")
	}
	p.rearm()
	p.call(fn, 0)
	return p.result()
}

// rearm resets the registered barriers and the panic record after a phase
// that panicked.
func (p *Pool) rearm() {
	if p.failed.Load() {
		for _, b := range p.barriers {
			b.Reset()
		}
		p.failed.Store(false)
		p.cause.Store(nil)
		p.broken.Store(nil)
	}
}

// result returns the error of the phase that has just ended (see Run).
func (p *Pool) result() error {
	if !p.failed.Load() {
		return nil
	}
	if e := p.cause.Load(); e != nil {
		return e
	}
	return p.broken.Load()
}

// call runs fn(w) and records a panic instead of propagating it.
func (p *Pool) call(fn func(int), w int) {
	defer func() {
		if r := recover(); r != nil {
			p.fail(w, r)
		}
	}()
	fn(w)
}

// fail records the panic of worker w with value r and, on the phase's first
// panic, breaks the registered barriers.
func (p *Pool) fail(w int, r any) {
	e := &PanicError{Worker: w, Value: r, Stack: debug.Stack()}
	if r == any(ErrBroken) {
		p.broken.CompareAndSwap(nil, e)
	} else {
		p.cause.CompareAndSwap(nil, e)
	}
	if p.failed.CompareAndSwap(false, true) {
		for _, b := range p.barriers {
			b.Break()
		}
	}
}

// Close stops the workers and waits for them to exit. It is safe to call
// more than once, and after a phase that panicked.
func (p *Pool) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.threads > 1 {
		p.closing = true
		p.startPhase()
	}
	return p.group.Wait()
}
