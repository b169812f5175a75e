package comm

import (
	"os"
	"sync/atomic"
	"time"
)

// Counter is a Comm that counts the collectives that pass through it: the
// calls, the float64 values they carry, and the wall time spent in them
// (the transfer and the wait for the slowest rank). A distributed run
// wraps its world in one Counter from the start, so that the count covers
// every collective of the run, the agreements on the data included. The
// counts are those of this rank; every rank calls the same collectives,
// so every rank counts the same calls and values.
type Counter struct {
	Comm
	calls, values atomic.Int64
	nanos         atomic.Int64
}

// Counted returns c counted: c itself when it is a Counter already, so
// that layers that each count what passes through them share one count.
func Counted(c Comm) *Counter {
	if k, ok := c.(*Counter); ok {
		return k
	}
	return &Counter{Comm: c}
}

// CounterStats is a Counter's totals at one moment.
type CounterStats struct {
	// Calls is the number of collective calls: allreduces, broadcasts
	// and barriers.
	Calls int64
	// Values is the float64 values the calls carried, 8 bytes each.
	Values int64
	// Seconds is the wall time spent in the calls.
	Seconds float64
}

// Sub returns the counts between an earlier snapshot b and s.
func (s CounterStats) Sub(b CounterStats) CounterStats {
	return CounterStats{Calls: s.Calls - b.Calls, Values: s.Values - b.Values, Seconds: s.Seconds - b.Seconds}
}

// Stats returns the totals so far.
func (k *Counter) Stats() CounterStats {
	return CounterStats{Calls: k.calls.Load(), Values: k.values.Load(), Seconds: float64(k.nanos.Load()) * 1e-9}
}

func (k *Counter) count(n int, start time.Time) {
	k.calls.Add(1)
	k.values.Add(int64(n))
	k.nanos.Add(int64(time.Since(start)))
}

// AllreduceSum is the wrapped Comm's, counted.
func (k *Counter) AllreduceSum(buf []float64) error {
	start := time.Now()
	err := k.Comm.AllreduceSum(buf)
	k.count(len(buf), start)
	return err
}

// AllreduceMax is the wrapped Comm's, counted.
func (k *Counter) AllreduceMax(buf []float64) error {
	start := time.Now()
	err := k.Comm.AllreduceMax(buf)
	k.count(len(buf), start)
	return err
}

// Broadcast is the wrapped Comm's, counted.
func (k *Counter) Broadcast(buf []float64, root int) error {
	start := time.Now()
	err := k.Comm.Broadcast(buf, root)
	k.count(len(buf), start)
	return err
}

// Barrier is the wrapped Comm's, counted.
func (k *Counter) Barrier() error {
	start := time.Now()
	err := k.Comm.Barrier()
	k.count(0, start)
	return err
}

// Launched reports whether World is the world of a job that a launcher
// started: the build has the mpi tag, and mpirun (OMPI_COMM_WORLD_SIZE)
// or a PMI launcher such as Slurm's srun (PMI_SIZE, PMIX_RANK) set the
// process's environment. A world of one rank is then a job of one rank,
// which a program may run as it runs several, for the counts to compare.
func Launched() bool {
	if !mpiBuild {
		return false
	}
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}
