package sched

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

func TestPoolRunsEveryWorkerOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for round := 0; round < 100; round++ {
			hits := make([]int32, threads)
			if err := p.Run(func(w int) { atomic.AddInt32(&hits[w], 1) }); err != nil {
				t.Fatal(err)
			}
			for w, h := range hits {
				if h != 1 {
					t.Fatalf("threads=%d round %d: worker %d ran %d times", threads, round, w, h)
				}
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBarrierSeparatesPhases has every worker write its slot, wait, and then
// read every other slot: a barrier that lets one party through early shows up
// as a stale read (and as a race under -race).
func TestBarrierSeparatesPhases(t *testing.T) {
	for _, threads := range []int{1, 2, 4, 7} {
		for _, spin := range []int{1, 0} { // parking at once, and the default spin
			p := NewPool(threads)
			b := NewBarrier(threads, spin)
			slots := make([]int, threads)
			var bad atomic.Int32
			if err := p.Run(func(w int) {
				for round := 1; round <= 300; round++ {
					slots[w] = round
					b.Wait()
					for v := range slots {
						if slots[v] != round {
							bad.Add(1)
						}
					}
					b.Wait()
				}
			}); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if bad.Load() != 0 {
				t.Errorf("threads=%d spin=%d: %d stale reads", threads, spin, bad.Load())
			}
		}
	}
}

func TestSplitCovers(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100} {
		for threads := 1; threads <= 9; threads++ {
			next := 0
			for w := 0; w < threads; w++ {
				lo, hi := Split(n, threads, w)
				if lo != next || hi < lo {
					t.Fatalf("Split(%d,%d,%d) = [%d,%d), want start %d", n, threads, w, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("Split(%d,%d) ends at %d", n, threads, next)
			}
		}
	}
}

func TestOwnersBalanceWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	weight := make([]int64, 10000)
	var total int64
	for j := range weight {
		weight[j] = int64(rng.ExpFloat64() * 100 / float64(1+j/100)) // skewed, like feature frequencies
		total += weight[j]
	}
	for _, workers := range []int{1, 2, 3, 16} {
		o := NewOwners(weight, workers)
		if len(o.Bounds) != workers+1 || o.Bounds[0] != 0 || int(o.Bounds[workers]) != len(weight) {
			t.Fatalf("workers=%d: bounds %v", workers, o.Bounds)
		}
		var maxW int64
		for w := 0; w < workers; w++ {
			lo, hi := o.Range(w)
			if hi < lo {
				t.Fatalf("workers=%d: range %d is [%d,%d)", workers, w, lo, hi)
			}
			var sum int64
			for _, c := range weight[lo:hi] {
				sum += c
			}
			maxW = max(maxW, sum)
		}
		// No range may exceed its share by more than the heaviest coordinate.
		if maxW > total/int64(workers)+slices.Max(weight) {
			t.Errorf("workers=%d: heaviest range %d, share %d", workers, maxW, total/int64(workers))
		}
	}
	if o := NewOwners(make([]int64, 10), 3); o.Bounds[1] != 3 || o.Bounds[2] != 6 {
		t.Errorf("zero weight: bounds %v, want equal lengths", o.Bounds)
	}
}

func TestClipMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(80)
		idx := make([]int32, 0, n)
		var j int32
		for len(idx) < n {
			j += 1 + int32(rng.IntN(5))
			idx = append(idx, j)
		}
		lo := int32(rng.IntN(int(j) + 3))
		hi := lo + int32(rng.IntN(int(j)+3))
		a, b := Clip(idx, lo, hi)
		wa, wb := 0, 0
		for wa < n && idx[wa] < lo {
			wa++
		}
		for wb = wa; wb < n && idx[wb] < hi; wb++ {
		}
		if wa == wb {
			if a != b {
				t.Fatalf("Clip(%v, %d, %d) = [%d,%d), want empty", idx, lo, hi, a, b)
			}
			continue
		}
		if a != wa || b != wb {
			t.Fatalf("Clip(%v, %d, %d) = [%d,%d), want [%d,%d)", idx, lo, hi, a, b, wa, wb)
		}
	}
}

// TestRunCaller checks that RunCaller runs worker 0 alone, on the caller,
// reports its panic as Run does, and leaves the pool usable for Run.
func TestRunCaller(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	var calls [3]atomic.Int32
	if err := p.RunCaller(func(w int) { calls[w].Add(1) }); err != nil {
		t.Fatal(err)
	}
	if calls[0].Load() != 1 || calls[1].Load() != 0 || calls[2].Load() != 0 {
		t.Fatalf("calls %d %d %d, want 1 0 0", calls[0].Load(), calls[1].Load(), calls[2].Load())
	}
	err := p.RunCaller(func(int) { panic("boom") })
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Worker != 0 || pe.Value != "boom" {
		t.Fatalf("got %v, want worker 0's panic", err)
	}
	if err := p.Run(func(w int) { calls[w].Add(1) }); err != nil {
		t.Fatal(err)
	}
	if calls[0].Load() != 2 || calls[1].Load() != 1 || calls[2].Load() != 1 {
		t.Fatalf("after Run: calls %d %d %d, want 2 1 1", calls[0].Load(), calls[1].Load(), calls[2].Load())
	}
}
