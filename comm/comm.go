package comm

import (
	"errors"
	"fmt"
)

// Comm is one rank's handle on a world of Size ranks that run the same
// program and meet in collective operations.
//
// Every rank must call the same collectives in the same order with buffers
// of the same length (and the same root for Broadcast). A Comm belongs to
// its rank: one goroutine at a time calls its collectives, as with an MPI
// communicator; Abort may be called from any goroutine.
type Comm interface {
	// Rank returns this rank's number, 0 ≤ Rank < Size.
	Rank() int
	// Size returns the number of ranks in the world.
	Size() int

	// AllreduceSum replaces buf on every rank by the element-wise sum of
	// all ranks' buf. Every rank gets the same bits, and the result does
	// not depend on timing (see the package documentation).
	AllreduceSum(buf []float64) error
	// AllreduceMax replaces buf on every rank by the element-wise maximum
	// of all ranks' buf.
	AllreduceMax(buf []float64) error
	// Broadcast copies root's buf into every other rank's buf.
	Broadcast(buf []float64, root int) error
	// Barrier returns once every rank has called it.
	Barrier() error

	// Abort stops the whole world because of err. The MPI world prints
	// err to standard error and ends every process of the job with exit
	// status 1; Abort does not return there. In process, Abort returns,
	// and every pending and later collective on every rank returns an
	// *AbortError that wraps the first cause and names its rank.
	Abort(err error)
	// Close leaves the world: the MPI world finalizes MPI. Collectives
	// called after Close return ErrClosed. Close is idempotent.
	Close() error
}

// ErrClosed is returned by a collective called on a closed Comm.
var ErrClosed = errors.New("comm: communicator is closed")

// AbortError is the error that every pending and later collective returns
// once a rank of an in-process world has failed. It names the rank that
// failed first and wraps its error.
type AbortError struct {
	// Rank is the rank whose failure stopped the world.
	Rank int
	// Err is that rank's error.
	Err error
}

// Error returns "comm: rank R: " followed by the cause.
func (e *AbortError) Error() string {
	return fmt.Sprintf("comm: rank %d: %v", e.Rank, e.Err)
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *AbortError) Unwrap() error { return e.Err }
