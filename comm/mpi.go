//go:build mpi

package comm

/*
#cgo pkg-config: mpi
#include <stdlib.h>
#include <mpi.h>

// comm_init initialises MPI for a program whose MPI calls all come from the
// calling thread.
static int comm_init(int *rank, int *size) {
	int provided = MPI_THREAD_SINGLE;
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	if (provided < MPI_THREAD_FUNNELED) {
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return MPI_SUCCESS;
}

static int comm_allreduce(double *buf, int n, int max) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
}

static int comm_bcast(double *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

static int comm_barrier(void) {
	return MPI_Barrier(MPI_COMM_WORLD);
}

static int comm_finalize(void) {
	return MPI_Finalize();
}

static void comm_abort(void) {
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// mpiBuild holds in the build with the mpi tag.
const mpiBuild = true

// maxCount is the most values passed to one MPI call, whose counts are C
// ints; longer buffers go in several calls.
const maxCount = 1 << 30

// abortWait is how long Abort waits for the MPI thread before it calls
// MPI_Abort from its own thread (see mpiComm.Abort).
const abortWait = time.Second

var (
	mpiOnce  sync.Once
	mpiWorld *mpiComm
	mpiErr   error
)

// World returns this process's communicator: built with the mpi tag, as
// here, the MPI_COMM_WORLD of the job that mpirun started. The first call
// initialises MPI (MPI_Init_thread with MPI_THREAD_FUNNELED) on a goroutine
// locked to its OS thread, which then makes every MPI call of the process;
// later calls return the same Comm, or the same error. Call Close before the
// program exits: a process that exits without finalizing MPI fails the job.
func World() (Comm, error) {
	mpiOnce.Do(startMPI)
	if mpiErr != nil {
		return nil, mpiErr
	}
	return mpiWorld, nil
}

// mpiComm is the MPI world. Its collectives hand closures to the goroutine
// that initialised MPI (serve) and wait for their result.
type mpiComm struct {
	rank, size int
	reqs       chan func()
	reply      chan C.int

	mu     sync.Mutex // one collective at a time, and Close
	closed atomic.Bool
}

func startMPI() {
	c := &mpiComm{reqs: make(chan func()), reply: make(chan C.int, 1)}
	ready := make(chan error)
	go c.serve(ready)
	if err := <-ready; err != nil {
		mpiErr = err
		return
	}
	mpiWorld = c
}

// serve initialises MPI and then runs the requests, all on one OS thread:
// MPI_THREAD_FUNNELED allows MPI calls only from the thread that initialised
// MPI, while the Go scheduler moves an unlocked goroutine between threads.
// The thread stays locked until Close.
func (c *mpiComm) serve(ready chan<- error) {
	runtime.LockOSThread()
	var rank, size C.int
	switch rc := C.comm_init(&rank, &size); rc {
	case C.MPI_SUCCESS:
	case -1:
		ready <- errors.New("comm: this MPI library does not provide MPI_THREAD_FUNNELED")
		return
	default:
		ready <- fmt.Errorf("comm: MPI_Init_thread failed: %v", mpiError(rc))
		return
	}
	c.rank, c.size = int(rank), int(size)
	ready <- nil
	for f := range c.reqs {
		if f == nil {
			return
		}
		f()
	}
}

// call runs f on the MPI thread and returns its MPI result as an error.
func (c *mpiComm) call(name string, f func() C.int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return ErrClosed
	}
	c.reqs <- func() { c.reply <- f() }
	if rc := <-c.reply; rc != C.MPI_SUCCESS {
		return fmt.Errorf("comm: rank %d: %s: %v", c.rank, name, mpiError(rc))
	}
	return nil
}

// mpiError describes an MPI error code. With MPI's default error handler,
// MPI_ERRORS_ARE_FATAL, a failing call ends the job before it returns, so
// this is for the codes of other handlers and of MPI_Init_thread.
func mpiError(rc C.int) error {
	return fmt.Errorf("MPI error code %d", int(rc))
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) AllreduceSum(buf []float64) error { return c.allreduce("AllreduceSum", buf, 0) }
func (c *mpiComm) AllreduceMax(buf []float64) error { return c.allreduce("AllreduceMax", buf, 1) }

// allreduce reduces buf in place (MPI_IN_PLACE): MPI reads and writes the
// caller's memory, so the wrapper adds no copy and no allocation of its own.
func (c *mpiComm) allreduce(name string, buf []float64, max C.int) error {
	return c.call(name, func() C.int {
		for b := buf; len(b) > 0; {
			k := min(len(b), maxCount)
			if rc := C.comm_allreduce((*C.double)(unsafe.Pointer(&b[0])), C.int(k), max); rc != C.MPI_SUCCESS {
				return rc
			}
			b = b[k:]
		}
		return C.MPI_SUCCESS
	})
}

func (c *mpiComm) Broadcast(buf []float64, root int) error {
	if root < 0 || root >= c.size {
		err := fmt.Errorf("Broadcast from root %d in a world of %d ranks", root, c.size)
		c.Abort(err)
		return err
	}
	return c.call("Broadcast", func() C.int {
		for b := buf; len(b) > 0; {
			k := min(len(b), maxCount)
			if rc := C.comm_bcast((*C.double)(unsafe.Pointer(&b[0])), C.int(k), C.int(root)); rc != C.MPI_SUCCESS {
				return rc
			}
			b = b[k:]
		}
		return C.MPI_SUCCESS
	})
}

func (c *mpiComm) Barrier() error {
	return c.call("Barrier", func() C.int { return C.comm_barrier() })
}

// Abort prints err and ends the job through MPI_Abort, which makes mpirun
// stop every process. The MPI thread may be blocked in a collective that
// waits for ranks that will never join it (Abort called from another
// goroutine); if it does not take the request within abortWait, Abort calls
// MPI_Abort from its own thread, which MPI_THREAD_FUNNELED does not promise
// to allow but which is the only way left to stop the other ranks.
func (c *mpiComm) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	fmt.Fprintf(os.Stderr, "comm: rank %d of %d aborts the job: %v\n", c.rank, c.size, err)
	if !c.closed.Load() {
		select {
		case c.reqs <- func() { C.comm_abort() }:
			select {} // comm_abort ends the process
		case <-time.After(abortWait):
			C.comm_abort()
		}
	}
	os.Exit(1)
}

// Close finalizes MPI, once, and ends the MPI thread.
func (c *mpiComm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return nil
	}
	c.reqs <- func() { c.reply <- C.comm_finalize() }
	rc := <-c.reply
	c.closed.Store(true)
	c.reqs <- nil
	if rc != C.MPI_SUCCESS {
		return fmt.Errorf("comm: rank %d: MPI_Finalize: %v", c.rank, mpiError(rc))
	}
	return nil
}
