package harness

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// sweepReps and sweepMinTime bound one measurement of the bare sweep from
// below: at least sweepReps timed sweeps, and as many more as fit in
// sweepMinTime. A sweep of a small data set is short, and five of them
// can fall inside one burst of another process's work that a run, many
// epochs long, averages out; spreading the sweeps over sweepMinTime makes
// their median the host's typical state, and still costs little next to a
// run's own epochs. sweepMaxReps bounds the sweeps of a tiny matrix.
const (
	sweepReps    = 5
	sweepMaxReps = 1000
	sweepMinTime = 100 * time.Millisecond
)

// SweepNsPerNNZ times the bare sweep over x, the memory-bound yardstick of
// an epoch: one kernels.SparseDot and one kernels.SparseAxpy per row, over
// every row in file order, into a scratch vector, as BenchmarkEpochVsSweep
// in engine does. On threads > 1 each of threads goroutines sweeps a
// contiguous share of the rows (of about equal nonzeros) into a scratch
// vector of its own, and the time is the wall time until the last share is
// done. It returns nanoseconds of wall time per nonzero of x, the median
// of at least reps timed sweeps, more while less than minTime has passed
// (up to sweepMaxReps), after one untimed sweep that faults the scratch
// vectors in; NaN when x has no nonzeros or reps < 1.
//
// The median, not the minimum, is taken because the figure is set against
// a run's iteration time, which is a mean over all of the run's epochs
// under whatever load the host carried: the minimum would be the sweep on
// a quiet moment that the run, timed over many epochs, rarely gets, and would
// inflate the ratio by the host's noise; the median is the typical sweep
// under the same load, and still ignores the odd sweep that another
// process interrupted.
func SweepNsPerNNZ(x *sparse.CSR, threads, reps int, minTime time.Duration) float64 {
	nnz := len(x.Values)
	if nnz == 0 || reps < 1 {
		return math.NaN()
	}
	threads = max(1, threads)
	shares := sweepShares(x, threads)
	scratch := make([][]float64, len(shares)-1)
	for i := range scratch {
		scratch[i] = make([]float64, x.Cols)
	}
	times := make([]float64, 0, reps)
	begin := time.Now()
	for r := -1; r < reps || r < sweepMaxReps && time.Since(begin) < minTime; r++ {
		var d time.Duration
		if len(scratch) == 1 {
			start := time.Now()
			sweepRows(x, 0, x.Rows, scratch[0])
			d = time.Since(start)
		} else {
			d = sweepParallel(x, shares, scratch)
		}
		if r >= 0 {
			times = append(times, float64(d.Nanoseconds())/float64(nnz))
		}
	}
	return summarize(times).Median
}

// sweepRows is the sweep of rows lo to hi−1 into w. The step is tiny, so
// that w stays finite over any number of sweeps, and depends on the dot
// product, so that neither kernel can be skipped.
func sweepRows(x *sparse.CSR, lo, hi int, w []float64) {
	for k := lo; k < hi; k++ {
		val, idx := x.Row(k)
		z := kernels.SparseDot(val, idx, w)
		kernels.SparseAxpy(1e-9*(z+1), val, idx, w)
	}
}

// sweepParallel times one sweep split over the shares: the goroutines are
// started before the clock and released together, so that starting them
// is not timed.
func sweepParallel(x *sparse.CSR, shares []int, scratch [][]float64) time.Duration {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	for i := range scratch {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-release
			sweepRows(x, shares[i], shares[i+1], scratch[i])
		}()
	}
	ready.Wait()
	start := time.Now()
	close(release)
	done.Wait()
	return time.Since(start)
}

// sweepShares splits the rows of x into at most threads contiguous shares
// of about equal nonzeros, since the sweep's time goes with nonzeros, not
// rows: share i is rows b[i] to b[i+1]−1, with b[0] = 0 and the last bound
// x.Rows. Shares that would be empty are dropped, so a matrix of fewer
// rows than threads gets fewer shares.
func sweepShares(x *sparse.CSR, threads int) []int {
	b := []int{0}
	nnz := x.Indptr[x.Rows]
	for i := 1; i < threads; i++ {
		target := nnz * int64(i) / int64(threads)
		// The first row boundary at or past the target.
		r, _ := slices.BinarySearch(x.Indptr[:x.Rows+1], target)
		if r > b[len(b)-1] && r < x.Rows {
			b = append(b, r)
		}
	}
	return append(b, x.Rows)
}
