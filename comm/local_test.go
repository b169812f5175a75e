package comm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after d: a hang
// then fails instead of stalling the test binary.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("no return within %v: a rank hangs", d)
		return nil
	}
}

// rankValues returns the values that rank contributes: of widely varying
// magnitudes and signs, so that adding them in another order than rank
// order changes the low bits of the sum.
func rankValues(rank, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, uint64(rank)))
	v := make([]float64, n)
	for i := range v {
		v[i] = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(12)-6))
	}
	return v
}

// serial returns the reference: the element-wise sum (or maximum) of the
// ranks' values, taken in rank order.
func serial(o op, p, n int, seed uint64) []float64 {
	ref := rankValues(0, n, seed)
	for r := 1; r < p; r++ {
		v := rankValues(r, n, seed)
		for i := range ref {
			if o == opSum {
				ref[i] += v[i]
			} else {
				ref[i] = math.Max(ref[i], v[i])
			}
		}
	}
	return ref
}

// firstDiff returns the first index where got and want differ in their bits,
// or -1.
func firstDiff(got, want []float64) int {
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i
		}
	}
	return -1
}

var sizes = []int{0, 1, 7, 8, 9, 100, reduceBlock + 3, 5000}

func TestAllreduceMatchesSerial(t *testing.T) {
	for _, o := range []op{opSum, opMax} {
		for _, p := range []int{1, 2, 3, 4, 7} {
			for _, n := range sizes {
				seed := uint64(1000*p + n)
				want := serial(o, p, n, seed)
				err := within(t, 10*time.Second, func() error {
					return RunLocal(p, func(c Comm) error {
						buf := rankValues(c.Rank(), n, seed)
						var err error
						if o == opSum {
							err = c.AllreduceSum(buf)
						} else {
							err = c.AllreduceMax(buf)
						}
						if err != nil {
							return err
						}
						if i := firstDiff(buf, want); i >= 0 {
							return fmt.Errorf("%v: value %d is %v, want %v (bits of the serial rank-order result)", o, i, buf[i], want[i])
						}
						return nil
					})
				})
				if err != nil {
					t.Errorf("p=%d n=%d: %v", p, n, err)
				}
			}
		}
	}
}

func TestAllreduceMaxSpecialValues(t *testing.T) {
	in := [][]float64{
		{math.Copysign(0, -1), 1, math.Inf(-1), -3, math.NaN()},
		{0, math.Inf(-1), math.Inf(-1), -2, 1},
		{math.Copysign(0, -1), -1, math.Inf(-1), -5, 2},
	}
	want := []float64{0, 1, math.Inf(-1), -2, math.NaN()}
	err := RunLocal(len(in), func(c Comm) error {
		buf := append([]float64(nil), in[c.Rank()]...)
		if err := c.AllreduceMax(buf); err != nil {
			return err
		}
		if i := firstDiff(buf, want); i >= 0 {
			return fmt.Errorf("value %d is %v, want %v", i, buf[i], want[i])
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

func TestBroadcast(t *testing.T) {
	for _, p := range []int{1, 2, 3, 5} {
		for root := range p {
			for _, n := range []int{0, 1, 1000} {
				err := within(t, 10*time.Second, func() error {
					return RunLocal(p, func(c Comm) error {
						buf := rankValues(c.Rank(), n, 7)
						if err := c.Broadcast(buf, root); err != nil {
							return err
						}
						if i := firstDiff(buf, rankValues(root, n, 7)); i >= 0 {
							return fmt.Errorf("value %d differs from the root's", i)
						}
						return nil
					})
				})
				if err != nil {
					t.Errorf("p=%d root=%d n=%d: %v", p, root, n, err)
				}
			}
		}
	}
}

// TestManyCollectives runs a long mixed sequence, so that the race detector
// and the result checks see ranks that run ahead into the next collective
// while others still finish the last one.
func TestManyCollectives(t *testing.T) {
	const p, rounds = 4, 300
	err := within(t, 30*time.Second, func() error {
		return RunLocal(p, func(c Comm) error {
			buf := make([]float64, 37)
			for k := range rounds {
				for i := range buf {
					buf[i] = float64(c.Rank()*1000 + k + i)
				}
				switch k % 4 {
				case 0:
					if err := c.AllreduceSum(buf); err != nil {
						return err
					}
					if want := float64(1000*p*(p-1)/2 + p*(k+5)); buf[5] != want {
						return fmt.Errorf("round %d: sum %v, want %v", k, buf[5], want)
					}
				case 1:
					if err := c.AllreduceMax(buf); err != nil {
						return err
					}
					if want := float64((p-1)*1000 + k + 5); buf[5] != want {
						return fmt.Errorf("round %d: max %v, want %v", k, buf[5], want)
					}
				case 2:
					root := k % p
					if err := c.Broadcast(buf, root); err != nil {
						return err
					}
					if want := float64(root*1000 + k + 5); buf[5] != want {
						return fmt.Errorf("round %d: broadcast %v, want %v", k, buf[5], want)
					}
				case 3:
					if err := c.Barrier(); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// failureCase makes one rank fail in some way while the others keep calling
// collectives; every rank must stop with an error naming the failed rank.
func checkFailure(t *testing.T, p, bad int, fail func(c Comm) error, wantMsg string) {
	t.Helper()
	var mu sync.Mutex
	others := map[int]error{}
	err := within(t, time.Second, func() error {
		return RunLocal(p, func(c Comm) error {
			if c.Rank() == bad {
				if err := c.Barrier(); err != nil {
					return err
				}
				return fail(c)
			}
			buf := make([]float64, 100)
			var err error
			for k := 0; err == nil; k++ {
				switch k % 3 {
				case 0:
					err = c.Barrier()
				case 1:
					err = c.AllreduceSum(buf)
				case 2:
					err = c.Broadcast(buf, 0)
				}
			}
			// A collective after the failure fails too.
			if later := c.AllreduceMax(buf); later == nil {
				err = errors.New("a collective after the abort succeeded")
			}
			mu.Lock()
			others[c.Rank()] = err
			mu.Unlock()
			return err
		})
	})
	var ae *AbortError
	if !errors.As(err, &ae) {
		t.Fatalf("RunLocal returned %v, want an *AbortError", err)
	}
	if ae.Rank != bad {
		t.Errorf("the error names rank %d, want %d: %v", ae.Rank, bad, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("rank %d", bad)) || !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("error %q lacks %q or the rank", err, wantMsg)
	}
	if len(others) != p-1 {
		t.Errorf("%d ranks other than %d reported, want %d", len(others), bad, p-1)
	}
	for r, e := range others {
		var rae *AbortError
		if !errors.As(e, &rae) || rae != ae {
			t.Errorf("rank %d stopped with %v, want the first cause %v", r, e, err)
		}
	}
}

var errBoom = errors.New("boom")

func TestFailingRankStopsAll(t *testing.T) {
	checkFailure(t, 4, 2, func(c Comm) error { return errBoom }, "boom")
	err := RunLocal(3, func(c Comm) error {
		if c.Rank() == 1 {
			return errBoom
		}
		return c.Barrier()
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("RunLocal's error %v does not wrap the cause", err)
	}
}

func TestPanickingRankStopsAll(t *testing.T) {
	checkFailure(t, 3, 1, func(c Comm) error { panic("boom") }, "panic: boom")
}

func TestGoexitRankStopsAll(t *testing.T) {
	checkFailure(t, 3, 0, func(c Comm) error { runtime.Goexit(); return nil }, "Goexit")
}

func TestAbortStopsAll(t *testing.T) {
	checkFailure(t, 3, 2, func(c Comm) error { c.Abort(errBoom); return nil }, "boom")
}

func TestEarlyReturnStopsAll(t *testing.T) {
	checkFailure(t, 3, 1, func(c Comm) error { return nil }, "left the world")
	checkFailure(t, 2, 0, func(c Comm) error { return c.Close() }, "left the world")
}

func TestMismatchedCollectivesStopAll(t *testing.T) {
	cases := []struct {
		name string
		fn   func(c Comm) error
		want string
	}{
		{"lengths", func(c Comm) error { return c.AllreduceSum(make([]float64, 3+c.Rank())) }, "AllreduceSum with 4 values while rank 0 has 3"},
		{"ops", func(c Comm) error {
			if c.Rank() == 1 {
				return c.AllreduceMax(make([]float64, 3))
			}
			return c.AllreduceSum(make([]float64, 3))
		}, "called AllreduceMax while rank 0 called AllreduceSum"},
		{"roots", func(c Comm) error { return c.Broadcast(make([]float64, 3), c.Rank()) }, "from root 1 while rank 0 names root 0"},
		{"bad root", func(c Comm) error { return c.Broadcast(make([]float64, 3), 5) }, "root 5 in a world of 3"},
	}
	for _, tc := range cases {
		err := within(t, time.Second, func() error { return RunLocal(3, tc.fn) })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestClosed(t *testing.T) {
	err := RunLocal(1, func(c Comm) error {
		if err := c.Close(); err != nil {
			return err
		}
		if err := c.Close(); err != nil {
			return fmt.Errorf("second Close: %v", err)
		}
		if err := c.AllreduceSum([]float64{1}); !errors.Is(err, ErrClosed) {
			return fmt.Errorf("AllreduceSum after Close returned %v, want ErrClosed", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRunLocalNeedsARank(t *testing.T) {
	if err := RunLocal(0, func(Comm) error { return nil }); err == nil {
		t.Error("RunLocal(0, …) returned nil")
	}
}

func TestPieces(t *testing.T) {
	for _, p := range []int{1, 2, 3, 7} {
		for n := range 100 {
			next := 0
			for r := range p {
				lo, hi := piece(n, r, p)
				if lo != next || hi < lo || (lo%8 != 0 && lo != n) {
					t.Fatalf("n=%d p=%d rank %d: piece [%d, %d) after %d", n, p, r, lo, hi, next)
				}
				next = hi
			}
			if next != n {
				t.Fatalf("n=%d p=%d: pieces end at %d", n, p, next)
			}
		}
	}
}

func ExampleRunLocal() {
	err := RunLocal(3, func(c Comm) error {
		// Each rank holds a part of the data; the sum is the same on all.
		buf := []float64{float64(c.Rank()), 1}
		if err := c.AllreduceSum(buf); err != nil {
			return err
		}
		if c.Rank() == 0 {
			fmt.Println("sum of ranks:", buf[0], "ranks:", buf[1])
		}
		return nil
	})
	fmt.Println("error:", err)

	err = RunLocal(3, func(c Comm) error {
		if c.Rank() == 2 {
			return errors.New("cannot read my share")
		}
		return c.Barrier() // returns an error instead of waiting for rank 2
	})
	fmt.Println("error:", err)
	// Output:
	// sum of ranks: 3 ranks: 3
	// error: <nil>
	// error: comm: rank 2: cannot read my share
}
