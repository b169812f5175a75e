package driver

import (
	"math"
	"runtime"

	"github.com/adaspdc/adaspdc/sparse"
)

// The worker policy, in one place: a run may use Options.Threads threads
// (GOMAXPROCS when ≤ 0), and each parallel phase gets one worker per unit
// of work that pays for a goroutine, within the parallelism the phase has.
// The units differ because the costs do: an iteration of a batch method
// shares its batch's nonzeros (MinBatchWork, as two barriers and the
// moved coordinates cost each iteration), a sweep over all rows shares the
// whole matrix (SweepMinNNZ, the per-worker accumulator of length d it
// costs to clear and add), and the certificate likewise (certifyMinNNZ).

// ThreadBudget returns the threads a run may use: threads, or GOMAXPROCS
// when threads ≤ 0.
func ThreadBudget(threads int) int {
	if threads <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return threads
}

// WorkersFor returns the workers a phase of the given work gets under the
// budget of Options.Threads: one per `per` units of work, at most limit
// (the phase's own parallelism: samples in a batch, chunks of rows), and
// at least one.
func WorkersFor(threads int, work, per float64, limit int) int {
	return max(1, min(ThreadBudget(threads), int(work/per), limit))
}

// noLimit is the limit of a phase whose parallelism is not bounded by its
// own structure.
const NoLimit = math.MaxInt

// SweepMinNNZ is the nonzeros per worker below which another worker of a
// sweep over all rows costs more in hand-offs and reductions (its
// accumulator of length d) than it saves.
const SweepMinNNZ = 1 << 15

// SweepWorkers is the number of workers a sweep over all rows of x gets,
// given Options.Threads: one per SweepMinNNZ nonzeros, up to the threads.
func SweepWorkers(x *sparse.CSR, threads int) int {
	return WorkersFor(threads, float64(x.NNZ()), SweepMinNNZ, NoLimit)
}

// MinBatchWork is the number of batch nonzeros per iteration below which
// no further worker is added. A variable so that tests can force thread
// counts on small data, to exercise the concurrent paths.
var MinBatchWork = DefaultMinBatchWork

// DefaultMinBatchWork is MinBatchWork's value outside tests: below it, a
// second worker's barrier rounds and coordinate hand-offs cost more than
// the half batch it takes over (the break-even measured on two cores lay
// somewhat above it, so the first epoch's timing, CalibrateWorkers,
// settles the cases near the bound).
const DefaultMinBatchWork = 1000

// CalibrateWorkers makes the first epoch of an AdaSPDC or SPDC run with
// more than one pool thread time the iteration on one worker against all
// of them and keep the faster. A variable so that tests, which force thread counts on small
// data to exercise the concurrent paths, can keep them.
var CalibrateWorkers = true

// MaxPrefetchNNZ bounds the entries of a row that a method asks the
// memory system to prefetch: the hardware prefetcher follows a long row
// once it has seen a few lines.
const MaxPrefetchNNZ = 256
