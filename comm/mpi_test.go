//go:build mpi

// The MPI tests run under mpirun, every rank running the same tests in the
// same order:
//
//	go test -tags mpi -c -o /tmp/commtest ./comm
//	mpirun --oversubscribe --bind-to none -np 4 /tmp/commtest -test.run MPI
//
// COMM_TEST_TIMING=1 makes TestMPITiming log allreduce times on rank 0;
// COMM_TEST_FAIL=abort|abort-busy|panic|exit makes TestMPIFailure fail the last rank in
// that way, and then the job must end (with a non-zero status) instead of
// hanging.

package comm

import (
	"errors"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if mpiWorld != nil {
		if err := mpiWorld.Close(); err != nil {
			println(err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

func mpiWorldT(t *testing.T) Comm {
	t.Helper()
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameOnAllRanks reports whether buf has the same bits on every rank, by
// comparing it with rank 0's copy.
func sameOnAllRanks(t *testing.T, c Comm, buf []float64) bool {
	t.Helper()
	root := slices.Clone(buf)
	if err := c.Broadcast(root, 0); err != nil {
		t.Fatal(err)
	}
	return firstDiff(buf, root) < 0
}

func TestMPIRanks(t *testing.T) {
	c := mpiWorldT(t)
	if s := os.Getenv("OMPI_COMM_WORLD_SIZE"); s != "" && s != strconv.Itoa(c.Size()) {
		t.Errorf("Size is %d, mpirun started %s", c.Size(), s)
	}
	if c.Rank() < 0 || c.Rank() >= c.Size() {
		t.Fatalf("rank %d of %d", c.Rank(), c.Size())
	}
	// Every rank sets its own entry: the ranks are distinct and cover 0…P−1.
	seen := make([]float64, c.Size())
	seen[c.Rank()] = 1
	if err := c.AllreduceSum(seen); err != nil {
		t.Fatal(err)
	}
	for r, v := range seen {
		if v != 1 {
			t.Errorf("rank %d claimed by %v ranks", r, v)
		}
	}
	if c.Rank() == 0 {
		t.Logf("%d ranks, GOMAXPROCS %d on rank 0", c.Size(), runtime.GOMAXPROCS(0))
	}
}

var mpiSizes = []int{0, 1, 7, 1000, 100_000, 1_000_000}

func TestMPIAllreduceSum(t *testing.T) {
	c := mpiWorldT(t)
	for _, n := range mpiSizes {
		// Integers: every order of addition gives the exact sum.
		buf := make([]float64, n)
		for i := range buf {
			buf[i] = float64(c.Rank()*n + i)
		}
		if err := c.AllreduceSum(buf); err != nil {
			t.Fatal(err)
		}
		p := c.Size()
		for i, v := range buf {
			if want := float64(n*p*(p-1)/2 + p*i); v != want {
				t.Fatalf("n=%d: value %d is %v, want %v", n, i, v, want)
			}
		}
		// Values of mixed magnitudes: close to the rank-order sum and the
		// same bits on every rank.
		seed := uint64(n + 1)
		buf = rankValues(c.Rank(), n, seed)
		if err := c.AllreduceSum(buf); err != nil {
			t.Fatal(err)
		}
		want := serial(opSum, p, n, seed)
		for i := range buf {
			if d := math.Abs(buf[i] - want[i]); d > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("n=%d: value %d is %v, want %v", n, i, buf[i], want[i])
			}
		}
		if !sameOnAllRanks(t, c, buf) {
			t.Errorf("n=%d: the ranks got different sums", n)
		}
	}
}

func TestMPIAllreduceMax(t *testing.T) {
	c := mpiWorldT(t)
	for _, n := range mpiSizes {
		seed := uint64(n + 2)
		buf := rankValues(c.Rank(), n, seed)
		if err := c.AllreduceMax(buf); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(buf, serial(opMax, c.Size(), n, seed)); i >= 0 {
			t.Fatalf("n=%d: value %d differs from the serial maximum", n, i)
		}
	}
}

func TestMPIBroadcast(t *testing.T) {
	c := mpiWorldT(t)
	for root := range c.Size() {
		for _, n := range []int{0, 1, 1000, 100_000} {
			buf := rankValues(c.Rank(), n, 3)
			if err := c.Broadcast(buf, root); err != nil {
				t.Fatal(err)
			}
			if i := firstDiff(buf, rankValues(root, n, 3)); i >= 0 {
				t.Fatalf("root %d, n=%d: value %d differs from the root's", root, n, i)
			}
		}
	}
}

func TestMPIBarrier(t *testing.T) {
	c := mpiWorldT(t)
	for range 100 {
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMPITiming logs on rank 0 the time of AllreduceSum through this
// package, the fastest and the median of several calls, for a few sizes.
func TestMPITiming(t *testing.T) {
	if os.Getenv("COMM_TEST_TIMING") == "" {
		t.Skip("set COMM_TEST_TIMING=1 to time AllreduceSum")
	}
	c := mpiWorldT(t)
	for _, n := range []int{100_000, 1_000_000, 10_000_000} {
		buf := make([]float64, n)
		reps := max(5, 20_000_000/n)
		times := make([]time.Duration, reps+1)
		for k := range times {
			for i := range buf {
				buf[i] = float64(i + c.Rank())
			}
			if err := c.Barrier(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := c.AllreduceSum(buf); err != nil {
				t.Fatal(err)
			}
			times[k] = time.Since(start)
		}
		first := times[0]
		times = times[1:]
		slices.Sort(times)
		if c.Rank() == 0 {
			t.Logf("AllreduceSum of %d doubles on %d ranks: first %v, fastest %v, median %v of %d",
				n, c.Size(), first, times[0], times[len(times)/2], len(times))
		}
	}
}

// TestMPIFailure fails the last rank in the way COMM_TEST_FAIL names while
// the others wait in a barrier. The job must then end with a non-zero
// status; the caller checks that, and that it does not hang.
func TestMPIFailure(t *testing.T) {
	mode := os.Getenv("COMM_TEST_FAIL")
	if mode == "" {
		t.Skip("set COMM_TEST_FAIL=abort|abort-busy|panic|exit to fail a rank")
	}
	c := mpiWorldT(t)
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	if mode == "abort-busy" {
		// Rank 0 never joins the barrier that the others wait in, and the
		// last rank aborts from another goroutine meanwhile, so Abort finds
		// the MPI thread busy.
		if c.Rank() == 0 {
			time.Sleep(time.Hour)
		}
		if c.Rank() == c.Size()-1 {
			go func() {
				time.Sleep(200 * time.Millisecond)
				c.Abort(errors.New("test failure"))
			}()
		}
		c.Barrier()
		t.Fatal("the barrier without rank 0 returned")
	}
	if c.Rank() == c.Size()-1 {
		switch mode {
		case "abort":
			c.Abort(errors.New("test failure"))
		case "panic":
			panic("test failure")
		case "exit":
			os.Exit(3)
		}
		t.Fatalf("unknown COMM_TEST_FAIL %q", mode)
	}
	for {
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
}
