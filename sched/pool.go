package sched

import (
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Pool is a fixed set of persistent worker goroutines that run one parallel
// phase at a time. Worker 0 is the goroutine that calls Run; workers 1..n−1
// are started once by NewPool (under an errgroup) and park between phases,
// so a phase costs two channel hand-offs per worker rather than a goroutine
// start. Inside a phase, workers synchronise with a Barrier.
//
// A Pool is not safe for concurrent use: one goroutine drives it.
type Pool struct {
	threads int
	start   []chan func(int)
	done    sync.WaitGroup
	group   errgroup.Group
	closed  bool
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
				fn(w)
				p.done.Done()
			}
			return nil
		})
	}
	return p
}

// Threads returns the number of workers, the caller included.
func (p *Pool) Threads() int { return p.threads }

// Run calls fn(w) for every worker w in [0, Threads()) concurrently, fn(0) on
// the calling goroutine, and returns when all calls have returned. Everything
// written by any fn happens before Run returns.
func (p *Pool) Run(fn func(worker int)) {
	if p.closed {
		panic("sched: Run on a closed Pool")
	}
	p.done.Add(p.threads - 1)
	for w := 1; w < p.threads; w++ {
		p.start[w] <- fn
	}
	fn(0)
	p.done.Wait()
}

// Close stops the workers and waits for them to exit. It is safe to call
// more than once.
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
