package driver

import "github.com/adaspdc/adaspdc/sparse"

// WorldSweep is a RowSweep over this rank's rows whose sweeps sum over the
// rows of every rank: each sweep that sums something ends with one
// allreduce of its outs and the rank's scalars (World.Sum), so that a
// method written against it runs over the ranks with no code of its own
// for the sums. With a nil World it is the RowSweep, call for call and
// bit for bit.
//
// A sweep that sums nothing (no outs, no tail: per-row outputs such as
// the margins Ax) stays on the rank and makes no collective.
type WorldSweep struct {
	*RowSweep
	world *World
}

// NewWorldSweep returns a sweep over the rank's rows x on threads workers
// (NewRowSweep), summing over the ranks of world (nil: one process).
func NewWorldSweep(x *sparse.CSR, threads int, dynamic bool, world *World) *WorldSweep {
	return &WorldSweep{RowSweep: NewRowSweep(x, threads, dynamic), world: world}
}

// World returns the sweep's World (nil: one process).
func (s *WorldSweep) World() *World { return s.world }

// Ranges returns the number of coordinate ranges that post is called on:
// one per worker in one process and on a world of one rank, WorldRanges
// over several ranks (see RunSum).
func (s *WorldSweep) Ranges() int {
	if s.world.Size() == 1 {
		return s.Threads()
	}
	return WorldRanges
}

// Run is RowSweep.Run summed over the ranks (RunSum).
func (s *WorldSweep) Run(fn func(lo, hi int, acc [][]float64), outs ...[]float64) error {
	return s.RunSum(func(_, lo, hi int, acc [][]float64) { fn(lo, hi, acc) }, nil, nil, outs...)
}

// RunChunks is RowSweep.RunChunks summed over the ranks (RunSum).
func (s *WorldSweep) RunChunks(fn func(c, lo, hi int, acc [][]float64), outs ...[]float64) error {
	return s.RunSum(fn, nil, nil, outs...)
}

// RunThen is RowSweep.RunThen summed over the ranks (RunSum).
func (s *WorldSweep) RunThen(fn func(c, lo, hi int, acc [][]float64), post func(r, lo, hi int), outs ...[]float64) error {
	return s.RunSum(fn, nil, post, outs...)
}

// RunSum calls fn over the rank's rows as RowSweep.RunThen does and sums
// the outs over the workers; then, where tail is not nil, it calls tail,
// which returns the rank's scalars (sums of per-chunk results, say: a
// slice the caller owns), and sums the outs and those scalars over the
// ranks in one allreduce, the scalars replaced in place by their sums;
// then it calls post(r, lo, hi) on the summed coordinates lo:hi of each
// range r (CoordRange of the first out's length).
//
// In one process (nil World) the ranges are the workers', and post runs
// on each worker as soon as its range is summed, as in RowSweep.RunThen.
// Over the ranks post runs after the allreduce on Ranges() ranges, the
// same on every rank, spread over the rank's workers: post must keep a
// per-range result by r, and a method that adds those results in range
// order gets the same bits on every rank. On a world of one rank the
// ranges are the workers', so that the sums are one process's.
func (s *WorldSweep) RunSum(fn func(c, lo, hi int, acc [][]float64), tail func() []float64, post func(r, lo, hi int), outs ...[]float64) error {
	if s.world == nil {
		if err := s.RowSweep.RunThen(fn, post, outs...); err != nil {
			return err
		}
		if tail != nil {
			tail()
		}
		return nil
	}
	if err := s.RowSweep.RunThen(fn, nil, outs...); err != nil {
		return err
	}
	parts := outs
	if tail != nil {
		parts = append(outs[:len(outs):len(outs)], tail())
	}
	if len(parts) > 0 {
		if err := s.world.Sum(parts...); err != nil {
			return err
		}
	}
	if post == nil || len(outs) == 0 {
		return nil
	}
	n, k, t := len(outs[0]), s.Ranges(), s.Threads()
	if t == 1 {
		for r := range k {
			lo, hi := CoordRange(n, r, k)
			post(r, lo, hi)
		}
		return nil
	}
	return s.Pool().Run(func(w int) {
		for r := w; r < k; r += t {
			lo, hi := CoordRange(n, r, k)
			post(r, lo, hi)
		}
	})
}
