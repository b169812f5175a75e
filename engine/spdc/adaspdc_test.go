package spdc

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"gonum.org/v1/gonum/mat"
)

// TestRidgeClosedForm checks the squared loss against
// x* = (AᵀA + nλI)⁻¹Aᵀb on the paper's Fig. 1 data (n = d = 1000,
// Σⱼⱼ = j⁻², λ = 1e-3).
func TestRidgeClosedForm(t *testing.T) {
	n, d := 1000, 1000
	if testing.Short() {
		n, d = 300, 300
	}
	x, b := enginetest.Fig1Data(n, d, 7)
	lam := 1e-3
	a := x.Dense()
	var ata mat.Dense
	ata.Mul(a.T(), a)
	for j := 0; j < d; j++ {
		ata.Set(j, j, ata.At(j, j)+float64(n)*lam)
	}
	var atb mat.VecDense
	atb.MulVec(a.T(), mat.NewVecDense(n, b))
	var want mat.VecDense
	if err := want.SolveVec(&ata, &atb); err != nil {
		t.Fatal(err)
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: lam}}
	model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Threads: 2, Tol: -1, MaxEpochs: 600, Seed: 1}.With(driver.Coordinate{M: 4}))
	if err != nil {
		t.Fatal(err)
	}
	got := model.Weights
	if diff := enginetest.RelDiff(got, want.RawVector().Data); diff > 1e-8 {
		t.Errorf("relative distance to the closed form = %.3g after %d epochs (gap %.3g), want ≤ 1e-8", diff, res.Final.Epoch, res.Final.Gap)
	}
	t.Logf("epochs %d, rel gap %.3g, lazy %v, distance %.3g", res.Final.Epoch, res.Final.RelGap, res.Lazy, enginetest.RelDiff(got, want.RawVector().Data))
}

// TestLazyMatchesDense runs the lazy primal update against the dense one
// (every coordinate every iteration) from the same seed: the two must agree
// to 1e-10 after many iterations, with and without an l1 term.
func TestLazyMatchesDense(t *testing.T) {
	n, d := 3000, 20000
	if enginetest.RaceEnabled {
		n, d = 800, 5000
	}
	x, b := enginetest.SparseData(n, d, 12, 3)
	for _, tc := range []struct {
		name string
		loss objective.Loss
		reg  objective.ElasticNet
		m    int
		bs   int
	}{
		{"logistic-l2", objective.Logistic{}, objective.ElasticNet{Lambda: 1e-4}, 1, 1},
		{"squared-l2-m8-block4", objective.Squared{}, objective.ElasticNet{Lambda: 1e-3}, 8, 4},
		{"sqhinge-elasticnet", objective.SquaredHinge{}, objective.ElasticNet{Lambda: 1e-4, L1: 1e-4}, 4, 1},
		{"logistic-strong-l1", objective.Logistic{}, objective.ElasticNet{Lambda: 1e-3, L1: 3e-3}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prob := objective.Problem{X: x, B: b, Loss: tc.loss, Reg: tc.reg}
			opt := driver.Options{Threads: 2, Seed: 5, Tol: -1, MaxEpochs: 6}.With(driver.Coordinate{M: tc.m, BlockSize: tc.bs})
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.Lazy = driver.LazyOn })
			lazy, lres, err := enginetest.Train(context.Background(), prob, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.Lazy = driver.LazyOff })
			dense, dres, err := enginetest.Train(context.Background(), prob, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !lres.Lazy || dres.Lazy {
				t.Fatalf("modes not honoured: lazy run %v, dense run %v", lres.Lazy, dres.Lazy)
			}
			if d := enginetest.RelDiff(lazy.Weights, dense.Weights); d > 1e-10 {
				t.Errorf("lazy and dense weights differ by %.3g (relative), want ≤ 1e-10", d)
			}
			t.Logf("relative difference %.3g, gap %.3g, zero weights follow", enginetest.RelDiff(lazy.Weights, dense.Weights), lres.Final.Gap)
			zeros := 0
			for _, w := range lazy.Weights {
				if w == 0 {
					zeros++
				}
			}
			if tc.reg.L1 > 0 && zeros == 0 {
				t.Errorf("elastic net left no weight at exactly zero")
			}
			if g1, g2 := lres.Final.Gap, dres.Final.Gap; math.Abs(g1-g2) > 1e-8*math.Max(1, math.Abs(g2)) {
				t.Errorf("gaps differ: lazy %.6g, dense %.6g", g1, g2)
			}
		})
	}
}

// TestThreadsBitIdentical checks that the same seed and data give the same
// weights, bit for bit, whatever the number of threads.
func TestThreadsBitIdentical(t *testing.T) {
	x, b := enginetest.SparseData(2000, 3000, 10, 11)
	for _, lazy := range []driver.Lazy{driver.LazyOn, driver.LazyOff} {
		var ref []float64
		for _, threads := range []int{1, 2, 3, 5} {
			prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4, L1: 1e-5}}
			opt := driver.Options{Threads: threads, Seed: 9, Tol: -1, MaxEpochs: 4, Deterministic: true}.With(driver.Coordinate{M: 16, BlockSize: 2, Lazy: lazy})
			model, _, err := enginetest.Train(context.Background(), prob, opt)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref = model.Weights
				continue
			}
			for j := range ref {
				if math.Float64bits(ref[j]) != math.Float64bits(model.Weights[j]) {
					t.Fatalf("lazy=%s threads=%d: weight %d = %v, with 1 thread %v", lazy, threads, j, model.Weights[j], ref[j])
				}
			}
		}
	}
}

// TestFusedReductionMatchesDeterministic checks the fast dense mode (each
// worker reduces its own rows) against the ordered reduction: the same
// iterates up to rounding.
func TestFusedReductionMatchesDeterministic(t *testing.T) {
	x, b := enginetest.SparseData(3000, 150, 10, 13)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4, L1: 1e-5}}
	var models [2][]float64
	for i, det := range []bool{true, false} {
		model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Threads: 2, Seed: 4, Tol: -1, MaxEpochs: 8, Deterministic: det}.With(driver.Coordinate{M: 32, Lazy: driver.LazyOff}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Lazy {
			t.Fatal("lazy mode chosen despite LazyOff")
		}
		models[i] = model.Weights
	}
	if d := enginetest.RelDiff(models[1], models[0]); d > 1e-10 {
		t.Errorf("fused and ordered reductions differ by %.3g", d)
	}
}

// TestCalibrationKeepsIterates runs deterministic problems with the timed
// choice of workers on: calibrateThreads switches between one worker and
// all of them four times inside the first epoch, and whichever it keeps,
// the weights must equal a one-thread run's bit for bit. A correction,
// touch stamp or buffer left behind by a switch would change them. The
// L2-only lazy run uses the scaled store; the elastic net uses the stamped
// one, which brings every coordinate up to date at each switch (as at an
// epoch's end) and so agrees to rounding only.
func TestCalibrationKeepsIterates(t *testing.T) {
	driver.CalibrateWorkers = true
	defer func() { driver.CalibrateWorkers = false }()
	x, b := enginetest.SparseData(2000, 3000, 10, 17)
	for _, tc := range []struct {
		name string
		reg  objective.ElasticNet
		lazy driver.Lazy
	}{
		{"lazy-l2", objective.ElasticNet{Lambda: 1e-4}, driver.LazyOn},
		{"lazy-elasticnet", objective.ElasticNet{Lambda: 1e-4, L1: 1e-5}, driver.LazyOn},
		{"dense-l2", objective.ElasticNet{Lambda: 1e-4}, driver.LazyOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: tc.reg}
			var ref []float64
			for _, threads := range []int{1, 3} {
				opt := driver.Options{Threads: threads, Seed: 3, Tol: -1, MaxEpochs: 3, Deterministic: true}.With(driver.Coordinate{M: 8, Lazy: tc.lazy})
				model, res, err := enginetest.Train(context.Background(), prob, opt)
				if err != nil {
					t.Fatal(err)
				}
				if res.Final.Threads != res.Threads || res.Threads < 1 || res.Threads > threads {
					t.Errorf("-threads %d: result says %d workers, trace %d", threads, res.Threads, res.Final.Threads)
				}
				if ref == nil {
					ref = model.Weights
					continue
				}
				if tc.reg.L1 > 0 {
					if d := enginetest.RelDiff(model.Weights, ref); d > 1e-13 {
						t.Errorf("after calibration (%d workers kept): weights differ from one thread's by %.3g, want ≤ 1e-13", res.Threads, d)
					}
					continue
				}
				for j := range ref {
					if math.Float64bits(ref[j]) != math.Float64bits(model.Weights[j]) {
						t.Fatalf("after calibration (%d workers kept): weight %d = %v, with 1 thread %v", res.Threads, j, model.Weights[j], ref[j])
					}
				}
			}
		})
	}
}

// TestOneSampleLoopMatchesGeneral checks that batches of one sample run by
// oneIteration, with its packed records, give the general loop's weights
// and duals bit for bit, with logistic and squared loss and a warm start.
func TestOneSampleLoopMatchesGeneral(t *testing.T) {
	defer func() { oneSampleLoop = true }()
	x, b := enginetest.SparseData(1500, 2000, 10, 19)
	for _, loss := range []objective.Loss{objective.Logistic{}, objective.Squared{}} {
		var ref, refY []float64
		for _, fast := range []bool{false, true} {
			oneSampleLoop = fast
			prob := objective.Problem{X: x, B: b, Loss: loss, Reg: objective.ElasticNet{Lambda: 1e-3}}
			opt := driver.Options{Seed: 5, Tol: -1, MaxEpochs: 3, WarmStart: make([]float64, x.Cols)}.With(driver.Coordinate{M: 1, Lazy: driver.LazyOn})
			opt.WarmStart[3] = 0.5
			model, res, err := enginetest.Train(context.Background(), prob, opt)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref, refY = model.Weights, res.Duals
				continue
			}
			for j := range ref {
				if math.Float64bits(ref[j]) != math.Float64bits(model.Weights[j]) {
					t.Fatalf("%s: weight %d = %v, general loop %v", loss.Name(), j, model.Weights[j], ref[j])
				}
			}
			for k := range refY {
				if math.Float64bits(refY[k]) != math.Float64bits(res.Duals[k]) {
					t.Fatalf("%s: dual %d = %v, general loop %v", loss.Name(), k, res.Duals[k], refY[k])
				}
			}
		}
	}
}

// TestFallBackToOneWorker checks that a run which calibration left on all
// workers goes back to one when its epochs run slower than one worker's
// measured iterations, and that it keeps all while they do not.
func TestFallBackToOneWorker(t *testing.T) {
	x, b := enginetest.SparseData(2000, 300, 10, 23)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4}}
	opt := enginetest.AdaSPDCOptions()
	opt.Threads, opt.Tol = 2, -1
	opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.M = 32 })
	s, err := newSolver(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.pool.Close()
	if len(s.allWorkers) != 2 {
		t.Skipf("%d workers", len(s.allWorkers))
	}
	s.calibrate = false
	s.setWorkers(2)
	s.oneIter = time.Hour
	if _, err := s.RunEpochs(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if len(s.workers) != 2 {
		t.Fatalf("faster than one worker, yet %d workers", len(s.workers))
	}
	s.oneIter = time.Nanosecond
	if _, err := s.RunEpochs(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if len(s.workers) != 1 || s.oneIter != 0 {
		t.Fatalf("slower than one worker, yet %d workers", len(s.workers))
	}
}
