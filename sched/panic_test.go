package sched

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// within runs f on its own goroutine and fails the test if f has not
// returned after 10 s, so that a worker stuck at a barrier fails the test
// instead of hanging it.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still running after 10 s (workers stuck at a barrier?)", what)
	}
}

// spins are the barrier configurations under test: parking at once (Break
// must wake parked waiters) and spinning for far longer than any test (Break
// must stop spinning waiters).
var spins = []int{1, 1 << 30}

// panicWhileOthersWait runs one phase on p in which worker k waits until
// every other worker is about to enter b.Wait, gives them time to get there
// (and, with spin 1, to park), and panics with value; the others wait at b.
// It returns Run's error and how many workers got past the barrier.
func panicWhileOthersWait(t *testing.T, p *Pool, b *Barrier, k int, value any) (err error, passed int32) {
	t.Helper()
	var waiting, through atomic.Int32
	within(t, fmt.Sprintf("threads=%d panic in worker %d", p.Threads(), k), func() {
		err = p.Run(func(w int) {
			if w == k {
				for waiting.Load() != int32(p.Threads()-1) {
					runtime.Gosched()
				}
				time.Sleep(5 * time.Millisecond)
				panic(value)
			}
			waiting.Add(1)
			b.Wait()
			through.Add(1)
		})
	})
	return err, through.Load()
}

// checkPanicError asserts that err is a *PanicError for worker k with the
// given value, whose stack shows the panicking test code.
func checkPanicError(t *testing.T, err error, k int, value any) {
	t.Helper()
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Run returned %v (%T), want a *PanicError", err, err)
	}
	if pe.Worker != k || pe.Value != value {
		t.Fatalf("PanicError{Worker: %d, Value: %v}, want worker %d, value %v", pe.Worker, pe.Value, k, value)
	}
	if want := fmt.Sprintf("sched: worker %d panicked: %v", k, value); pe.Error() != want {
		t.Errorf("Error() = %q, want %q", pe.Error(), want)
	}
	if !strings.Contains(string(pe.Stack), "panic_test.go") {
		t.Errorf("stack does not show the panic site:\n%s", pe.Stack)
	}
}

func TestPanicInOtherWorkerReleasesBarrier(t *testing.T) {
	for _, threads := range []int{2, 3, 4} {
		for _, spin := range spins {
			for k := 1; k < threads; k++ {
				p := NewPool(threads)
				b := NewBarrier(threads, spin)
				p.BreakOnPanic(b)
				value := fmt.Sprintf("boom in %d of %d", k, threads)
				err, passed := panicWhileOthersWait(t, p, b, k, value)
				checkPanicError(t, err, k, value)
				if passed != 0 {
					t.Errorf("threads=%d spin=%d k=%d: %d workers got past a barrier that a worker never reached", threads, spin, k, passed)
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func TestPanicInWorkerZeroReleasesBarrier(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 4} {
		for _, spin := range spins {
			p := NewPool(threads)
			b := NewBarrier(threads, spin)
			p.BreakOnPanic(b)
			err, passed := panicWhileOthersWait(t, p, b, 0, "boom in 0")
			checkPanicError(t, err, 0, "boom in 0")
			if passed != 0 {
				t.Errorf("threads=%d spin=%d: %d workers got past the barrier", threads, spin, passed)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("code %d", e.code) }

func TestPanicErrorUnwrap(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	errSentinel := errors.New("sentinel")

	err := p.Run(func(w int) {
		if w == 1 {
			panic(fmt.Errorf("wrapped: %w", errSentinel))
		}
	})
	if !errors.Is(err, errSentinel) {
		t.Errorf("errors.Is(%v, sentinel) = false", err)
	}

	err = p.Run(func(w int) {
		if w == 1 {
			panic(&codeError{7})
		}
	})
	var ce *codeError
	if !errors.As(err, &ce) || ce.code != 7 {
		t.Errorf("errors.As(%v, *codeError) failed", err)
	}

	err = p.Run(func(w int) {
		if w == 0 {
			var s []int
			_ = s[w+3] // a runtime panic
		}
	})
	var re runtime.Error
	if !errors.As(err, &re) {
		t.Errorf("errors.As(%v, runtime.Error) failed", err)
	}

	err = p.Run(func(w int) {
		if w == 1 {
			panic(42)
		}
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != 42 || pe.Unwrap() != nil {
		t.Errorf("non-error value: got %v, want a PanicError with value 42 that unwraps to nil", err)
	}
}

// TestPoolReusableAfterPanic alternates phases that panic mid-round with
// phases that count through many barrier rounds: a barrier that still
// remembered the interrupted round's arrivals, or a worker goroutine that
// died with its panic, shows up as a wrong count or a hang.
func TestPoolReusableAfterPanic(t *testing.T) {
	for _, threads := range []int{2, 3, 4} {
		for _, spin := range spins {
			before := runtime.NumGoroutine()
			p := NewPool(threads)
			b := NewBarrier(threads, spin)
			p.BreakOnPanic(b)
			b2 := NewBarrier(threads, spin) // registered twice: no effect
			p.BreakOnPanic(b2)
			p.BreakOnPanic(b2)
			for cycle := 0; cycle < 3; cycle++ {
				k := cycle % threads
				value := fmt.Sprintf("cycle %d", cycle)
				err, _ := panicWhileOthersWait(t, p, b, k, value)
				checkPanicError(t, err, k, value)

				const rounds = 200
				var count atomic.Int64
				var bad atomic.Int32
				hits := make([]int, threads)
				within(t, "normal phase after a panic", func() {
					err = p.Run(func(w int) {
						for round := 1; round <= rounds; round++ {
							b.Wait()
							count.Add(1)
							hits[w]++
							b2.Wait()
							if count.Load() != int64(round*threads) {
								bad.Add(1)
							}
						}
					})
				})
				if err != nil {
					t.Fatalf("threads=%d spin=%d cycle %d: normal phase returned %v", threads, spin, cycle, err)
				}
				if bad.Load() != 0 || count.Load() != int64(rounds*threads) {
					t.Errorf("threads=%d spin=%d cycle %d: %d bad rounds, count %d, want %d",
						threads, spin, cycle, bad.Load(), count.Load(), rounds*threads)
				}
				for w, h := range hits {
					if h != rounds {
						t.Errorf("threads=%d spin=%d cycle %d: worker %d counted %d rounds, want %d", threads, spin, cycle, w, h, rounds)
					}
				}
				if b.Broken() || b2.Broken() {
					t.Errorf("threads=%d spin=%d cycle %d: barrier still broken after a normal phase", threads, spin, cycle)
				}
			}
			within(t, "Close", func() {
				if err := p.Close(); err != nil {
					t.Errorf("Close after a panicking phase: %v", err)
				}
			})
			// The workers have exited: no goroutine outlives Close.
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				t.Errorf("threads=%d spin=%d: %d goroutines after Close, %d before NewPool", threads, spin, n, before)
			}
		}
	}
}

func TestTwoPanicsReportTheFirst(t *testing.T) {
	// Ordered: worker 2's panic happens while it unwinds from the barrier
	// that worker 1's panic broke, so worker 1's is certainly the first.
	for _, spin := range spins {
		p := NewPool(3)
		b := NewBarrier(3, spin)
		p.BreakOnPanic(b)
		var err error
		within(t, "two ordered panics", func() {
			err = p.Run(func(w int) {
				switch w {
				case 1:
					panic("first")
				case 2:
					defer func() { panic("second") }()
				}
				b.Wait()
			})
		})
		checkPanicError(t, err, 1, "first")
		p.Close()
	}

	// Unordered: both panic at once; exactly one is reported, whole.
	p := NewPool(3)
	defer p.Close()
	b := NewBarrier(3, 0)
	p.BreakOnPanic(b)
	for round := 0; round < 100; round++ {
		var err error
		within(t, "two concurrent panics", func() {
			err = p.Run(func(w int) {
				if w > 0 {
					panic(w)
				}
				b.Wait()
			})
		})
		var pe *PanicError
		if !errors.As(err, &pe) || (pe.Worker != 1 && pe.Worker != 2) || pe.Value != pe.Worker {
			t.Fatalf("round %d: got %#v, want the panic of worker 1 or 2", round, err)
		}
	}
}

// TestBrokenElsewhere: a phase whose only panics are ErrBroken, from a
// barrier broken outside the pool, still fails, and says why.
func TestBrokenElsewhere(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	b := NewBarrier(2, 0)
	b.Break()
	var err error
	within(t, "broken barrier", func() {
		err = p.Run(func(int) { b.Wait() })
	})
	var pe *PanicError
	if !errors.As(err, &pe) || !errors.Is(err, ErrBroken) {
		t.Fatalf("Run returned %v, want a PanicError wrapping ErrBroken", err)
	}
	b.Reset()
	if err := p.Run(func(int) { b.Wait() }); err != nil {
		t.Fatalf("after Reset: %v", err)
	}

	// A real panic is the cause even when an ErrBroken came first: worker 1
	// hits the broken barrier, which breaks the registered one, and worker 0
	// panics for real while it unwinds from there.
	reg := NewBarrier(2, 0)
	p.BreakOnPanic(reg)
	b.Break()
	within(t, "broken barrier, then a real panic", func() {
		err = p.Run(func(w int) {
			if w == 1 {
				b.Wait()
			}
			defer func() { panic("real") }()
			reg.Wait()
		})
	})
	checkPanicError(t, err, 0, "real")
}

// waitRecover calls b.Wait and returns what it panicked with, or nil.
func waitRecover(b *Barrier) (r any) {
	defer func() { r = recover() }()
	b.Wait()
	return nil
}

func TestBarrierBreak(t *testing.T) {
	for _, spin := range spins {
		const parties = 4
		b := NewBarrier(parties, spin)
		got := make(chan any, parties)
		for i := 0; i < parties-1; i++ {
			go func() { got <- waitRecover(b) }()
		}
		for b.arrived.Load() != parties-1 {
			runtime.Gosched()
		}
		time.Sleep(5 * time.Millisecond) // with spin 1, let them park
		b.Break()
		within(t, "Break releases waiters", func() {
			for i := 0; i < parties-1; i++ {
				if r := <-got; r != ErrBroken {
					t.Errorf("spin=%d: a waiter returned with %v, want a panic with ErrBroken", spin, r)
				}
			}
		})
		if !b.Broken() {
			t.Error("Broken() = false after Break")
		}
		// Later calls panic at once, until Reset.
		if r := waitRecover(b); r != ErrBroken {
			t.Errorf("spin=%d: Wait on a broken barrier returned with %v", spin, r)
		}
		b.Break() // idempotent
		b.Reset()
		if b.Broken() {
			t.Error("Broken() = true after Reset")
		}
		for i := 0; i < parties-1; i++ {
			go func() { got <- waitRecover(b) }()
		}
		within(t, "a round after Reset", func() {
			if r := waitRecover(b); r != nil {
				t.Errorf("spin=%d: Wait after Reset panicked with %v", spin, r)
			}
			for i := 0; i < parties-1; i++ {
				if r := <-got; r != nil {
					t.Errorf("spin=%d: Wait after Reset panicked with %v", spin, r)
				}
			}
		})
	}

	one := NewBarrier(1, 0)
	one.Break()
	if r := waitRecover(one); r != ErrBroken {
		t.Errorf("one-party barrier: Wait after Break returned with %v", r)
	}
	one.Reset()
	if r := waitRecover(one); r != nil {
		t.Errorf("one-party barrier: Wait after Reset panicked with %v", r)
	}
}

// TestBarrierGenerationWraps runs rounds across the wrap-around of the
// generation counter, whose low bit is the broken flag.
func TestBarrierGenerationWraps(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	b := NewBarrier(2, 0)
	p.BreakOnPanic(b)
	b.gen.Store(^uint32(0) - 3*genStep + 1) // 3 rounds before the wrap, not broken
	slots := make([]int, 2)
	var bad atomic.Int32
	err := p.Run(func(w int) {
		for round := 1; round <= 10; round++ {
			slots[w] = round
			b.Wait()
			if slots[1-w] != round {
				bad.Add(1)
			}
			b.Wait()
		}
	})
	if err != nil || bad.Load() != 0 || b.Broken() {
		t.Fatalf("across the wrap: err %v, %d stale reads, broken %v", err, bad.Load(), b.Broken())
	}
}
