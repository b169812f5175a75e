package comm

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
)

// RunLocal runs fn on p goroutines, each with the Comm of one rank of an
// in-process world of size p, and waits for all of them. It returns nil if
// every fn returned nil, and otherwise the first failure as an *AbortError
// naming its rank.
//
// A rank fails when its fn returns an error, panics (the error then holds the
// panic value and the stack), exits through runtime.Goexit, calls Abort, or
// returns while other ranks wait in a collective it will never join. The
// first failure aborts the world, so that every pending and later collective
// on every rank returns an error and no rank hangs in a collective; what the
// other ranks return after that is not reported.
func RunLocal(p int, fn func(c Comm) error) error {
	if p < 1 {
		return fmt.Errorf("comm: RunLocal: %d ranks; need at least 1", p)
	}
	w := newWorld(p)
	var wg sync.WaitGroup
	for r := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &local{w: w, rank: r}
			returned := false
			defer func() {
				if v := recover(); v != nil {
					w.abort(r, fmt.Errorf("panic: %v\n\n%s", v, debug.Stack()))
				} else if !returned {
					w.abort(r, errors.New("exited through runtime.Goexit (t.FailNow or t.Fatal?)"))
				}
				c.Close()
			}()
			err := fn(c)
			returned = true
			if err != nil {
				w.abort(r, err)
			}
		}()
	}
	wg.Wait()
	if err := w.cause(); err != nil {
		return err
	}
	return nil
}

// op names a collective, so that ranks that disagree on which collective
// they are in are caught instead of mixing their buffers.
type op uint8

const (
	opSum op = iota
	opMax
	opBroadcast
	opBarrier
)

func (o op) String() string {
	return [...]string{"AllreduceSum", "AllreduceMax", "Broadcast", "Barrier"}[o]
}

// slot is what one rank brings to a collective.
type slot struct {
	op   op
	buf  []float64
	root int
}

// world is the state shared by the ranks of an in-process world.
//
// A collective is one or two phases that end when every rank has arrived
// (arrive). Between the phases each rank works on its own part of the data:
// in an allreduce, rank r reduces the r-th piece of every rank's buffer in
// rank order and writes the result back into every buffer, so no scratch
// memory is needed and the pieces do not overlap.
type world struct {
	size  int
	slots []slot // slots[r] is written by rank r before it arrives

	mu      sync.Mutex
	cond    sync.Cond
	arrived int    // ranks arrived in the current phase
	gen     uint64 // completed phases
	err     *AbortError
	left    int // number of ranks that have left (Close, or fn returned)
	leftBy  int // the first rank that left
}

func newWorld(p int) *world {
	w := &world{size: p, slots: make([]slot, p), leftBy: -1}
	w.cond.L = &w.mu
	return w
}

// cause returns the first failure, or nil.
func (w *world) cause() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	return w.err
}

// abort records err as rank's failure if it is the first, and wakes every
// waiting rank.
func (w *world) abort(rank int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abortLocked(rank, err)
}

func (w *world) abortLocked(rank int, err error) {
	if w.err != nil {
		return
	}
	if err == nil {
		err = errors.New("aborted")
	}
	w.err = &AbortError{Rank: rank, Err: err}
	w.cond.Broadcast()
}

// leave records that rank will call no more collectives. If others wait in
// a collective, the world is aborted: that collective can never complete.
func (w *world) leave(rank int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.left++
	if w.leftBy < 0 {
		w.leftBy = rank
	}
	if w.arrived > 0 {
		w.abortLocked(rank, w.errLeft(rank))
	}
}

func (w *world) errLeft(rank int) error {
	return fmt.Errorf("left the world (returned or closed its Comm) while %d of %d ranks wait in a collective", w.arrived, w.size)
}

// arrive blocks until every rank has arrived at the current phase or the
// world is aborted. The last rank to arrive calls check, if not nil, before
// it releases the others; an error from check aborts the world.
func (w *world) arrive(check func() (rank int, err error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.left > 0 {
		w.abortLocked(w.leftBy, w.errLeft(w.leftBy))
		return w.err
	}
	gen := w.gen
	w.arrived++
	if w.arrived == w.size {
		w.arrived = 0
		w.gen++
		if check != nil {
			if rank, err := check(); err != nil {
				w.abortLocked(rank, err)
				return w.err
			}
		}
		w.cond.Broadcast()
		return nil
	}
	for w.gen == gen && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// checkSlots reports the first rank whose collective differs from rank 0's.
func (w *world) checkSlots() (int, error) {
	s0 := w.slots[0]
	for r, s := range w.slots[1:] {
		r++
		switch {
		case s.op != s0.op:
			return r, fmt.Errorf("called %v while rank 0 called %v", s.op, s0.op)
		case len(s.buf) != len(s0.buf):
			return r, fmt.Errorf("%v with %d values while rank 0 has %d", s.op, len(s.buf), len(s0.buf))
		case s.root != s0.root:
			return r, fmt.Errorf("%v from root %d while rank 0 names root %d", s.op, s.root, s0.root)
		}
	}
	return 0, nil
}

// local is one rank's Comm in an in-process world.
type local struct {
	w      *world
	rank   int
	closed bool
}

func (c *local) Rank() int { return c.rank }
func (c *local) Size() int { return c.w.size }

func (c *local) Abort(err error) { c.w.abort(c.rank, err) }

func (c *local) Close() error {
	if !c.closed {
		c.closed = true
		c.w.leave(c.rank)
	}
	return nil
}

// enter checks that the rank may start a collective.
func (c *local) enter() error {
	if c.closed {
		return ErrClosed
	}
	return nil
}

func (c *local) AllreduceSum(buf []float64) error { return c.allreduce(opSum, buf) }
func (c *local) AllreduceMax(buf []float64) error { return c.allreduce(opMax, buf) }

func (c *local) allreduce(o op, buf []float64) error {
	if err := c.enter(); err != nil {
		return err
	}
	w := c.w
	if w.size == 1 {
		return w.cause()
	}
	w.slots[c.rank] = slot{op: o, buf: buf}
	if err := w.arrive(w.checkSlots); err != nil {
		return err
	}
	lo, hi := piece(len(buf), c.rank, w.size)
	reduce(o, w.slots, lo, hi)
	return w.arrive(nil)
}

// piece returns the part [lo, hi) of n values that rank reduces. The cuts
// fall on multiples of 8 values (64 bytes), so that two ranks do not write
// to one cache line.
func piece(n, rank, size int) (lo, hi int) {
	per := (n + size - 1) / size
	per = (per + 7) &^ 7
	lo = min(rank*per, n)
	hi = min(lo+per, n)
	return lo, hi
}

// reduceBlock is the number of values reduced at a time: a block of every
// rank's buffer stays in cache between the reduction and the write-back.
const reduceBlock = 512

// reduce combines slots[0].buf[lo:hi], slots[1].buf[lo:hi], … in rank order
// and writes the result into every slot's buffer.
func reduce(o op, slots []slot, lo, hi int) {
	var accBuf [reduceBlock]float64
	for b := lo; b < hi; b += reduceBlock {
		e := min(b+reduceBlock, hi)
		acc := accBuf[:e-b]
		copy(acc, slots[0].buf[b:e])
		for _, s := range slots[1:] {
			src := s.buf[b:e:e]
			if o == opSum {
				for i := range acc {
					acc[i] += src[i]
				}
			} else {
				for i := range acc {
					acc[i] = math.Max(acc[i], src[i])
				}
			}
		}
		for _, s := range slots {
			copy(s.buf[b:e], acc)
		}
	}
}

func (c *local) Broadcast(buf []float64, root int) error {
	if err := c.enter(); err != nil {
		return err
	}
	w := c.w
	if root < 0 || root >= w.size {
		err := fmt.Errorf("Broadcast from root %d in a world of %d ranks", root, w.size)
		c.Abort(err)
		return w.cause()
	}
	if w.size == 1 {
		return w.cause()
	}
	w.slots[c.rank] = slot{op: opBroadcast, buf: buf, root: root}
	if err := w.arrive(w.checkSlots); err != nil {
		return err
	}
	if c.rank != root {
		copy(buf, w.slots[root].buf)
	}
	// The root's buffer must not change until every rank has copied it.
	return w.arrive(nil)
}

func (c *local) Barrier() error {
	if err := c.enter(); err != nil {
		return err
	}
	w := c.w
	if w.size == 1 {
		return w.cause()
	}
	w.slots[c.rank] = slot{op: opBarrier}
	return w.arrive(w.checkSlots)
}
