package sdca

import (
	"math"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/internal/hugepage"
)

// stepSearch chooses the step of a CoCoA+ merge in the plane of the summed
// change and the previous merge's step. cocoa (the replicas of one
// process) and distCoCoA (the ranks) merge by the same maths and share it:
// the pieces' changes Δy of the duals, added, are CoCoA+'s step, which
// never decreases D; each piece sees its own change counted ωⱼ times, so
// along the directions that several pieces move alike the summed change
// covers a fraction of the ground a sequential pass would, and covers it
// again merge after merge. A step along the summed change Δy = y − y₀ and
// the previous merge's step p, y₀ + γΔy + βp (a heavy ball whose two
// weights are chosen at every merge), covers that ground, and the dual
// tells which weights are best:
//
//	D(γ, β) = −(1/N) Σₖ φₖ*(y₀ₖ + γΔyₖ + βpₖ) − g*(−(v₀ + γΔv + βp_v)),
//
// with Δv the summed change of v and p_v the previous step of v, which is
// p's (1/N) Σ pₖaₖ to rounding. The conjugate terms are summed at the
// points of the grid over the rows that moved (rows where Δyₖ and pₖ are
// zero add the same constant to every point and are left out; conjugates,
// by fixed ranges of rows per worker, added in the workers' order, so
// that the sums depend on neither the schedule nor how cocoa or one rank
// of distCoCoA runs; ranks add theirs by one allreduce), and objective.DualPlane turns
// them into D at each point with g* at the same v (take), so that every
// rank, or every run with the same seed, picks the same point. These
// values steer the step only; the certificate is the method's own.
//
// Why the step stays safe. grid[0] = (1, 0) is CoCoA+'s summed change,
// which never decreases D. Another point is taken only if its D exceeds
// D(1, 0) by more than a relative 1e-14, a margin over the rounding of the
// sums, so D(new) ≥ D(summed change) ≥ D(y₀): the search can only add to
// what a merge gains. A point that takes a dual outside the domain of φ*
// has φ* = +∞ and is never taken.
type stepSearch struct {
	grid [][2]float64 // the (γ, β) tried; grid[0] = (1, 0), the summed change
	y0   []float64    // the duals at the start of the round
	py   []float64    // the previous merge's step of the duals
	pv   []float64    // the previous merge's step of v, then this merge's
	// sums holds Σₖ φₖ* at each point of grid, then whatever the caller
	// sends with them (distCoCoA's stop flags).
	sums  []float64
	part  [][]float64 // each worker's conjugate sums
	moved int64       // merges whose step was not the summed change
	// plane turns the summed conjugate terms at a point of the grid into
	// D there (objective's formula).
	plane *objective.DualPlane
}

// searchGrid is the (γ, β) that a stepSearch tries: the summed change
// first, then longer steps along it and along the previous step.
var searchGrid = func() [][2]float64 {
	var g [][2]float64
	for _, gamma := range []float64{1, 2, 4} {
		for _, beta := range []float64{0, 0.5, 0.9, 1.5} {
			g = append(g, [2]float64{gamma, beta})
		}
	}
	return g
}()

// newStepSearch returns a stepSearch over searchGrid for n duals of a
// problem of nGlobal rows (every rank's) and d features, summed by k
// workers, whose sums carry extra values after the grid's.
func newStepSearch(reg objective.Regularizer, nGlobal int64, n, d, k, extra int) *stepSearch {
	s := &stepSearch{
		grid:  searchGrid,
		y0:    hugepage.Make[float64](n),
		py:    hugepage.Make[float64](n),
		pv:    hugepage.Make[float64](d),
		sums:  make([]float64, len(searchGrid)+extra),
		part:  make([][]float64, k),
		plane: objective.NewDualPlane(reg, int(nGlobal)),
	}
	for w := range s.part {
		// A cache line of its own for each worker's sums.
		s.part[w] = make([]float64, len(searchGrid), len(searchGrid)+8)
	}
	return s
}

// forget drops the previous step, where the step since the last merge is
// not known as a combination of the duals' steps.
func (s *stepSearch) forget() {
	clear(s.py)
	clear(s.pv)
}

// conjugates sets sums[:len(grid)] to the conjugate terms at every point
// of the grid, for the duals y that the local passes left: run calls its
// function once for each of the k workers (on a pool, or in turn), worker
// w sums the rows n·w/k : n·(w+1)/k, and the workers' sums are added in
// their order.
func (s *stepSearch) conjugates(run func(func(w int)) error, loss objective.Loss, b, y []float64) error {
	k, n, m := len(s.part), len(y), len(s.grid)
	if err := run(func(w int) {
		p := s.part[w]
		clear(p)
		s.conjRows(loss, b, y, n*w/k, n*(w+1)/k, p)
	}); err != nil {
		return err
	}
	sums := s.sums[:m]
	clear(sums)
	for _, p := range s.part {
		for i, t := range p {
			sums[i] += t
		}
	}
	return nil
}

// conjRows adds to sums the conjugate terms of rows lo:hi at every point.
func (s *stepSearch) conjRows(loss objective.Loss, b, y []float64, lo, hi int, sums []float64) {
	m := len(s.grid)
	for k := lo; k < hi; k++ {
		yk, y0, p := y[k], s.y0[k], s.py[k]
		d := yk - y0
		if d == 0 && p == 0 {
			continue
		}
		sums[0] += loss.Conj(yk, b[k]) // (1, 0): the duals as the local passes left them
		for i := 1; i < m; i++ {
			sums[i] += loss.Conj(y0+s.grid[i][0]*d+s.grid[i][1]*p, b[k])
		}
	}
}

// take picks the point of the grid with the largest D, from the summed
// conjugate terms in sums, the merge's starting v and the summed change
// dv; sets the duals y to it (and the logistic prox's warm starts logit,
// nil for other losses, of the rows it moves off the local passes' values
// to unknown) and leaves the step of v in pv.
func (s *stepSearch) take(v, dv, y, logit []float64) error {
	m := len(s.grid)
	sums, pv := s.sums, s.pv
	// D at the grid's points, from the summed conjugate terms, is
	// objective's (DualPlane: a quadratic in (γ, β) for plain L2).
	if err := s.plane.Set(v, dv, pv); err != nil {
		return err
	}
	best, bestD := 0, s.plane.At(1, 0, sums[0])
	for i := 1; i < m; i++ {
		if math.IsInf(sums[i], 1) || math.IsNaN(sums[i]) {
			continue
		}
		if dual := s.plane.At(s.grid[i][0], s.grid[i][1], sums[i]); dual > bestD+1e-14*math.Abs(bestD) {
			best, bestD = i, dual
		}
	}
	g, be := s.grid[best][0], s.grid[best][1]
	if best != 0 {
		s.moved++
	}
	for k, yk := range y {
		y0 := s.y0[k]
		if best != 0 {
			if d, p := yk-y0, s.py[k]; d != 0 || p != 0 {
				yk = y0 + g*d + be*p
				y[k] = yk
				if logit != nil {
					logit[k] = math.NaN() // the prox's warm start is for the old dual
				}
			}
		}
		s.py[k] = yk - y0
	}
	for j, a := range dv {
		pv[j] = g*a + be*pv[j]
	}
	return nil
}
