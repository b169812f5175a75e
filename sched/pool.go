package sched

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Pool is a fixed set of persistent worker goroutines that run one parallel
// phase at a time. Worker 0 is the goroutine that calls Run; workers 1..n−1
// are started once by NewPool (under an errgroup) and park between phases,
// so a phase costs two channel hand-offs per worker rather than a goroutine
// start. Inside a phase, workers synchronise with a Barrier.
//
// A panic in any worker is recovered and returned by Run as a *PanicError;
// the barriers registered with BreakOnPanic are broken so that the other
// workers unwind too, and the pool stays usable.
//
// A Pool is not safe for concurrent use: one goroutine drives it.
type Pool struct {
	threads  int
	start    []chan func(int)
	done     sync.WaitGroup
	group    errgroup.Group
	closed   bool
	barriers []*Barrier // broken on a panic, re-armed before the next phase

	// Per phase: failed is set by the first panic of any kind, cause holds
	// the first real panic and broken the first ErrBroken one.
	failed atomic.Bool
	cause  atomic.Pointer[PanicError]
	broken atomic.Pointer[PanicError]
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
	p := &Pool{threads: threads, start: make([]chan func(int), threads)}
	for w := 1; w < threads; w++ {
		ch := make(chan func(int))
		p.start[w] = ch
		p.group.Go(func() error {
			for fn := range ch {
				p.call(fn, w)
				p.done.Done()
			}
			return nil
		})
	}
	return p
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
	if p.failed.Load() {
		for _, b := range p.barriers {
			b.Reset()
		}
		p.failed.Store(false)
		p.cause.Store(nil)
		p.broken.Store(nil)
	}
	p.done.Add(p.threads - 1)
	for w := 1; w < p.threads; w++ {
		p.start[w] <- fn
	}
	p.call(fn, 0)
	p.done.Wait()
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
	for w := 1; w < p.threads; w++ {
		close(p.start[w])
	}
	return p.group.Wait()
}
