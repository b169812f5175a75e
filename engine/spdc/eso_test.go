package spdc

import (
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// esoTestSolver builds (and closes the workers of) an AdaSPDC or SPDC
// solver for logistic regression on x, b with the given options, to look at
// its steps.
func esoTestSolver(t *testing.T, x *sparse.CSR, b []float64, opt driver.Options) *solver {
	t.Helper()
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	if opt.Solver == "" {
		opt.Solver = SolverAdaSPDC
	}
	opt.Threads = 1
	opt = opt.WithDefaults()
	if err := opt.ValidateFor(x.Rows); err != nil {
		t.Fatal(err)
	}
	s, err := newSolver(t.Context(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.pool.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// disjointRows returns n rows of perRow features each, no feature shared
// by two rows, with values of varying size, and ±1 labels.
func disjointRows(n, perRow int) (*sparse.CSR, []float64) {
	x := &sparse.CSR{Rows: n, Cols: n * perRow, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	for k := 0; k < n; k++ {
		for p := 0; p < perRow; p++ {
			x.Indices = append(x.Indices, int32(k*perRow+p))
			x.Values = append(x.Values, 0.3+float64((k*7+p*3)%11)/5)
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = float64(1 - 2*(k%3%2))
	}
	return x, b
}

// TestESOStepsEqualPaperAtM1: with one block per iteration vᵢ = Rᵢ², so the
// ESO steps are the paper's bit for bit, for AdaSPDC and SPDC, with blocks
// of one row and of several.
func TestESOStepsEqualPaperAtM1(t *testing.T) {
	x, b := enginetest.SparseData(300, 60, 6, 3)
	for _, solver := range []driver.Solver{SolverAdaSPDC, SolverSPDC} {
		for _, block := range []int{1, 4} {
			opt := driver.Options{Solver: solver, Seed: 5}.With(driver.Coordinate{M: 1, BlockSize: block})
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.Steps = driver.StepsPaper })
			p := esoTestSolver(t, x, b, opt)
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.Steps = driver.StepsESO })
			e := esoTestSolver(t, x, b, opt)
			if p.tauC != e.tauC || p.thA != e.thA || p.thB != e.thB {
				t.Fatalf("%s block %d: constants differ", solver, block)
			}
			for i := range p.binfo {
				if p.binfo[i] != e.binfo[i] || p.sigma[i] != e.sigma[i] {
					t.Fatalf("%s block %d: block %d: paper %+v σ %v, eso %+v σ %v", solver, block, i, p.binfo[i], p.sigma[i], e.binfo[i], e.sigma[i])
				}
			}
		}
	}
}

// TestESOStepsDisjointRows: when no two rows share a feature, βⱼ = 1 and
// vᵢ = Rᵢ², so ρᵢ = Rᵢ/√m: each block's σᵢ keeps its m = 1 value, τ for a
// batch whose largest coupling is block i's is m times its m = 1 value
// (the paper's: √m times), and 1 − θ is m times its m = 1 value. On dense
// rows (every feature in every row) βⱼ = m and the ESO steps are the
// paper's.
func TestESOStepsDisjointRows(t *testing.T) {
	x, b := disjointRows(512, 3)
	one := esoTestSolver(t, x, b, driver.Options{}.With(driver.Coordinate{M: 1, Steps: driver.StepsPaper, Partition: driver.PartitionContiguous}))
	for _, m := range []int{16, 256} {
		eso := esoTestSolver(t, x, b, driver.Options{}.With(driver.Coordinate{M: m, Steps: driver.StepsESO, Partition: driver.PartitionContiguous}))
		paper := esoTestSolver(t, x, b, driver.Options{}.With(driver.Coordinate{M: m, Steps: driver.StepsPaper, Partition: driver.PartitionContiguous}))
		fm := float64(m)
		for i := range one.binfo {
			b1, be, bp := one.binfo[i], eso.binfo[i], paper.binfo[i]
			if d := math.Abs(be.tau/(fm*b1.tau) - 1); d > 1e-12 {
				t.Fatalf("m = %d, block %d: eso τ = %v, want m·τ(1) = %v", m, i, be.tau, fm*b1.tau)
			}
			if d := math.Abs(bp.tau/(math.Sqrt(fm)*b1.tau) - 1); d > 1e-12 {
				t.Fatalf("m = %d, block %d: paper τ = %v, want √m·τ(1) = %v", m, i, bp.tau, math.Sqrt(fm)*b1.tau)
			}
			if d := math.Abs(eso.sigma[i]/one.sigma[i] - 1); d > 1e-12 {
				t.Fatalf("m = %d, block %d: eso σ = %v, want σ(1) = %v", m, i, eso.sigma[i], one.sigma[i])
			}
			if d := math.Abs((1-be.theta)/(fm*(1-b1.theta)) - 1); d > 1e-9 {
				t.Fatalf("m = %d, block %d: eso 1−θ = %v, want m(1−θ(1)) = %v", m, i, 1-be.theta, fm*(1-b1.theta))
			}
		}
	}

	// Dense rows: every feature in every row, so vᵢ = m·Rᵢ² and ρᵢ = Rᵢ.
	n, d := 300, 4
	dense := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	db := make([]float64, n)
	for k := 0; k < n; k++ {
		for j := 0; j < d; j++ {
			dense.Indices = append(dense.Indices, int32(j))
			dense.Values = append(dense.Values, 0.5+float64((k+3*j)%7)/3)
		}
		dense.Indptr[k+1] = int64(len(dense.Indices))
		db[k] = float64(1 - 2*(k%2))
	}
	eso := esoTestSolver(t, dense, db, driver.Options{}.With(driver.Coordinate{M: 32, Steps: driver.StepsESO}))
	paper := esoTestSolver(t, dense, db, driver.Options{}.With(driver.Coordinate{M: 32, Steps: driver.StepsPaper}))
	for i := range eso.binfo {
		if d := math.Abs(eso.binfo[i].tau/paper.binfo[i].tau - 1); d > 1e-12 {
			t.Fatalf("dense rows, block %d: eso τ = %v, paper τ = %v", i, eso.binfo[i].tau, paper.binfo[i].tau)
		}
	}
}

// TestESOParameters: vᵢ of blocks of several rows is the squared spectral
// norm of the column-weighted block, which for rows with no shared feature
// in other blocks is ‖Aᵢ‖₂²; MeanESO is 1 at m = 1, within [1, m], and on
// disjoint rows 1 at every m.
func TestESOParameters(t *testing.T) {
	x, b := enginetest.SparseData(400, 50, 5, 7)
	_ = b
	for _, m := range []int{1, 8, 64} {
		v, err := MeanESO(x, m)
		if err != nil {
			t.Fatal(err)
		}
		if v < 1 || v > float64(m) || (m == 1 && v != 1) {
			t.Errorf("m = %d: MeanESO = %v, want within [1, m] (1 at m = 1)", m, v)
		}
	}
	dx, db := disjointRows(64, 2)
	if v, err := MeanESO(dx, 32); err != nil || math.Abs(v-1) > 1e-15 {
		t.Errorf("disjoint rows: MeanESO = %v, %v; want 1", v, err)
	}
	// Blocks of 4 disjoint rows: v equals the block's squared norm.
	s := esoTestSolver(t, dx, db, driver.Options{}.With(driver.Coordinate{M: 4, BlockSize: 4, Steps: driver.StepsPaper}))
	v, err := esoParameters(t.Context(), dx, s.part, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range s.norms {
		if math.Abs(v[i]/(r*r)-1) > 1e-9 {
			t.Errorf("block %d: v = %v, want R² = %v", i, v[i], r*r)
		}
	}
	if _, err := MeanESO(dx, 65); err == nil {
		t.Error("MeanESO with m above the rows: no error")
	}
}

// TestESOStepsRidgeOptimum: AdaSPDC and SPDC with the ESO steps at m = 16
// and 256 reach the ridge optimum of sparse overlapping data (closed form)
// to a relative objective gap of 1e-9.
func TestESOStepsRidgeOptimum(t *testing.T) {
	n, d := 2048, 120
	if testing.Short() {
		n = 1024
	}
	x, b := enginetest.SparseData(n, d, 6, 11)
	const lam = 1e-2
	want := enginetest.RidgeClosedFormCentred(x, b, lam, make([]float64, d))
	prob := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: lam}}
	star, err := driver.Certify(prob, want)
	if err != nil {
		t.Fatal(err)
	}
	pStar := star.Primal
	for _, solver := range []driver.Solver{SolverAdaSPDC, SolverSPDC} {
		for _, m := range []int{16, 256} {
			opt := enginetest.AdaSPDCOptions()
			opt.Solver, opt.Tol, opt.Threads = solver, 1e-11, 2
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.M, c.Steps = m, driver.StepsESO })
			opt.MaxEpochs = 3000
			model, res, err := enginetest.Train(t.Context(), prob, opt)
			if err != nil {
				t.Fatalf("%s m = %d: %v", solver, m, err)
			}
			if !res.Converged {
				t.Fatalf("%s m = %d: stopped (%s) at gap %v", solver, m, res.Stop, res.Final.RelGap)
			}
			got, err := driver.Certify(prob, model.Weights)
			if err != nil {
				t.Fatal(err)
			}
			p := got.Primal
			if g := (p - pStar) / math.Max(1, math.Abs(pStar)); g > 1e-9 || g < -1e-12 {
				t.Errorf("%s m = %d: P − P* = %v relative, want ≤ 1e-9", solver, m, g)
			}
			if r := enginetest.RelDiff(model.Weights, want); r > 1e-4 {
				t.Errorf("%s m = %d: ‖x − x*‖/‖x*‖ = %v", solver, m, r)
			}
			// The same data under the paper's steps takes more passes.
			if m == 256 && !testing.Short() {
				opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.Steps = driver.StepsPaper })
				_, rp, err := enginetest.Train(t.Context(), prob, opt)
				if err != nil {
					t.Fatal(err)
				}
				if rp.Final.Passes <= res.Final.Passes {
					t.Errorf("%s m = %d: paper steps %v passes, eso %v: want eso fewer", solver, m, rp.Final.Passes, res.Final.Passes)
				}
			}
		}
	}
}

// TestESOBrokenStepDiverges: ESO steps made ten times too large (as if vᵢ
// were underestimated a hundredfold) diverge, and the driver's guard stops
// the run with an error.
func TestESOBrokenStepDiverges(t *testing.T) {
	x, b := enginetest.SparseData(1024, 40, 6, 13)
	prob := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: 1e-2}}
	opt := enginetest.AdaSPDCOptions()
	opt.Solver, opt.Threads = SolverAdaSPDC, 1
	opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.M, c.Steps, c.Lazy = 16, driver.StepsESO, driver.LazyOff })
	opt.MaxEpochs = 200
	s, err := newSolver(t.Context(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.pool.Close()
	const k = 10
	for r := range s.rows {
		s.rows[r].sigma *= k
	}
	for i := range s.binfo {
		s.binfo[i].tau *= k
		s.binfo[i].a = 1 / (1 + s.binfo[i].tau*s.lam)
	}
	s.drawBatch(&s.batches[0])
	res, err := driver.Run(t.Context(), s, opt)
	if err == nil || res.Stop != "diverged" || !strings.Contains(err.Error(), "diverg") {
		t.Fatalf("broken steps: stop %q, error %v; want a divergence error", res.Stop, err)
	}
}
