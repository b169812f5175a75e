package newton

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// splitData draws w8a's pattern: long rows in the first 20 columns that a
// planted model separates, whose margins grow wide and whose curvature
// falls below dropShare of the largest while they cost most of forming
// the Hessian, and short rows of random labels in the last 10 columns,
// which keep theirs.
func splitData(seed uint64) (*sparse.CSR, []float64) {
	const n, d = 4000, 30
	rng := rand.New(rand.NewPCG(seed, 3))
	planted := make([]float64, d)
	for j := range planted {
		planted[j] = 3 * rng.NormFloat64()
	}
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	for k := range n {
		m, first, width := 2, 20, 10
		if k%2 == 0 {
			m, first, width = 16, 0, 20
		}
		cols := make([]int32, 0, m)
		for _, j := range rng.Perm(width)[:m] {
			cols = append(cols, int32(first+j))
		}
		slices.Sort(cols)
		var z float64
		for _, j := range cols {
			x.Indices = append(x.Indices, j)
			x.Values = append(x.Values, 1)
			z += planted[j]
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = 1
		if m == 2 && rng.IntN(2) == 0 || m == 16 && z < 0 {
			b[k] = -1
		}
	}
	return x, b
}

// TestNewtonSplitHessian checks the split steps: where the rows of tiny
// curvature cost most of forming the Hessian, the formed matrix holds
// exactly the other rows (the naive sum over the rows whose curvature is
// at least dropBelow); the Hessian's products add the rows left out back,
// so that they equal the products with A; and the run reaches the optimum
// of the run that forms every row, with as many Newton steps or fewer.
func TestNewtonSplitHessian(t *testing.T) {
	x, b := splitData(1)
	d := x.Cols
	v := make([]float64, d)
	for j := range v {
		v[j] = math.Cos(float64(j))
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-7}}
	for _, threads := range []int{1, 2} {
		s, err := newNewton(prob, driver.Options{Solver: SolverNewton, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if !s.exact || s.dropCurv == 0 {
			t.Fatalf("%d threads: exact %v, dropCurv %g", threads, s.exact, s.dropCurv)
		}
		splits := 0
		for step := 1; step <= 8 && splits < 2; step++ {
			if moved, err := s.newtonStep(); err != nil || !moved {
				t.Fatalf("%d threads, step %d: moved %v, %v", threads, step, moved, err)
			}
			if err := s.sweepAt(); err != nil {
				t.Fatal(err)
			}
			if err := s.formHessian(); err != nil { // as the next step would
				t.Fatal(err)
			}
			if !s.split {
				continue
			}
			splits++
			want := make([]float64, d*d)
			left := 0
			for k := range x.Rows {
				c := s.curv[k]
				if c != 0 && c < s.dropBelow(nil, k) {
					left++
					if s.curvHess[k] != 0 {
						t.Fatalf("%d threads, step %d: row %d of curvature %g below %g was formed", threads, step, k, c, s.dropBelow(nil, k))
					}
					continue
				}
				if s.curvHess[k] != c {
					t.Fatalf("%d threads, step %d: row %d formed with %g, its curvature %g", threads, step, k, s.curvHess[k], c)
				}
				addRowOuter(want, d, c, x, k)
			}
			if left == 0 {
				t.Fatalf("%d threads, step %d: split with no row left out", threads, step)
			}
			if r := enginetest.RelDiff(s.hessianFull(), want); r > 1e-12 {
				t.Errorf("%d threads, step %d: the formed part differs from the kept rows' sum by %.3g", threads, step, r)
			}
			split, whole := make([]float64, d), make([]float64, d)
			vhv, err := s.hessianTimes(v, split)
			if err != nil {
				t.Fatal(err)
			}
			h := s.hess
			s.hess = nil
			if _, err := s.hessianTimes(v, whole); err != nil {
				t.Fatal(err)
			}
			s.hess = h
			if r := enginetest.RelDiff(split, whole); r > 1e-12 {
				t.Errorf("%d threads, step %d: H̃v + ΔHv differs from Aᵀ(φ″·Av) + Λv by %.3g", threads, step, r)
			}
			if w := kernels.Dot(v, split); math.Abs(vhv-w) > 1e-12*math.Abs(w) {
				t.Errorf("%d threads, step %d: vᵀHv %.17g, vᵀ(Hv) %.17g", threads, step, vhv, w)
			}
		}
		if splits == 0 {
			t.Fatalf("%d threads: no step left a row out", threads)
		}
		s.Finish(&driver.Result{})
	}

	// The whole run, against the same run forming every row.
	opt := driver.Options{Solver: SolverNewton, Threads: 2, Tol: 1e-10, MaxEpochs: 100}
	runTo := func(drop bool) (p float64, epochs, splits int) {
		s, err := newNewton(prob, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !drop {
			s.dropCurv = 0
		}
		for epochs = 0; epochs < opt.MaxEpochs; epochs++ {
			c, err := s.Certify()
			if err != nil {
				t.Fatal(err)
			}
			if c.RelGap <= opt.Tol {
				p = c.Primal
				break
			}
			if moved, err := s.newtonStep(); err != nil || !moved {
				t.Fatalf("drop %v, step %d: moved %v, %v", drop, epochs+1, moved, err)
			}
		}
		splits = s.splitSteps
		s.Finish(&driver.Result{})
		return p, epochs, splits
	}
	pSplit, nSplit, splits := runTo(true)
	pWhole, nWhole, _ := runTo(false)
	if splits == 0 {
		t.Fatal("the run took no split step")
	}
	if math.Abs(pSplit-pWhole) > 1e-10*pWhole || nSplit > nWhole {
		t.Errorf("split: P = %.15g in %d steps (%d split); whole: P = %.15g in %d steps", pSplit, nSplit, splits, pWhole, nWhole)
	}
}

// TestNewtonHessianChangeInPlace checks the forms that add a small change
// in place (addChangeInPlace): on the squared hinge, whose late steps move
// a few rows across the hinge, some form adds rows that way, and after every
// form the upper triangle equals the naive sum Σₖ cₖaₖaₖᵀ over the rows
// at their current curvature, and hessianFull the whole matrix.
func TestNewtonHessianChangeInPlace(t *testing.T) {
	x, b := splitData(2)
	d := x.Cols
	prob := objective.Problem{X: x, B: b, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-5}}
	for _, threads := range []int{1, 2} {
		s, err := newNewton(prob, driver.Options{Solver: SolverNewton, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if !s.exact {
			t.Fatalf("%d threads: the steps are not by Cholesky", threads)
		}
		changed := 0 // forms in place that added some row
		for step := 1; step <= 12; step++ {
			moved, err := s.newtonStep()
			if err != nil {
				t.Fatal(err)
			}
			if !moved {
				break
			}
			if err := s.sweepAt(); err != nil {
				t.Fatal(err)
			}
			inPlace := s.formsInPlace
			if err := s.formHessian(); err != nil { // as the next step would
				t.Fatal(err)
			}
			if s.formsInPlace > inPlace && s.hessChangeLast > 0 {
				changed++
			}
			want := make([]float64, d*d)
			for k := range x.Rows {
				c := s.curv[k]
				if s.curvHess[k] != c {
					t.Fatalf("%d threads, step %d: row %d formed with %g, its curvature %g", threads, step, k, s.curvHess[k], c)
				}
				addRowOuter(want, d, c, x, k)
			}
			upper := func(h []float64) []float64 {
				u := slices.Clone(h)
				for i := range d {
					clear(u[i*d : i*d+i])
				}
				return u
			}
			if r := enginetest.RelDiff(upper(s.hess), upper(want)); r > 1e-12 {
				t.Fatalf("%d threads, step %d: the upper triangle differs from the rows' sum by %.3g", threads, step, r)
			}
			if r := enginetest.RelDiff(s.hessianFull(), want); r > 1e-12 {
				t.Fatalf("%d threads, step %d: the mirrored matrix differs from the rows' sum by %.3g", threads, step, r)
			}
		}
		if changed == 0 {
			t.Errorf("%d threads: no form added a change in place (%d forms in place)", threads, s.formsInPlace)
		}
	}
}

// addRowOuter adds c·aₖaₖᵀ for row k of x to the d×d matrix h, entry by
// entry: the naive sum the formed Hessians are checked against.
func addRowOuter(h []float64, d int, c float64, x *sparse.CSR, k int) {
	val, idx := x.Row(k)
	for p, i := range idx {
		for q, j := range idx {
			h[int(i)*d+int(j)] += c * val[p] * val[q]
		}
	}
}
