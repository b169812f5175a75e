package sdca

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// heartScale is the bundled data set with its labels mapped to ±1.
func heartScale(t *testing.T) (*sparse.CSR, []float64) {
	t.Helper()
	ds, err := sparse.ReadFile(enginetest.BundledPath("heart_scale"), sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := sparse.BinaryLabels(ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	return ds.X, b
}

// shares is enginetest.Shares.
var shares = enginetest.Shares

// distResult is what one rank returned.
type distResult struct {
	w   []float64
	res *driver.Result
	err error
}

// runDistributed trains prob split over p in-process ranks (opts[r], or
// opt for every rank when opts is nil) and returns each rank's result and
// RunLocal's error. It fails the test if the world has not ended within
// the timeout.
func runDistributed(t *testing.T, parts []objective.Problem, opt driver.Options, perRank func(r int, o *driver.Options), timeout time.Duration) ([]distResult, error) {
	t.Helper()
	p := len(parts)
	out := make([]distResult, p)
	done := make(chan error, 1)
	go func() {
		done <- comm.RunLocal(p, func(c comm.Comm) error {
			o := opt
			if perRank != nil {
				perRank(c.Rank(), &o)
			}
			w, res, err := TrainDistributed(context.Background(), c, parts[c.Rank()], o)
			out[c.Rank()] = distResult{slices.Clone(w), res, err}
			return err
		})
	}()
	select {
	case err := <-done:
		return out, err
	case <-time.After(timeout):
		t.Fatalf("the %d ranks had not ended after %v", p, timeout)
		return nil, nil
	}
}

// TestDistributedOneRankIsCoCoA checks that a world of one rank trains
// cocoa's model bit for bit, with the same certificates, on one worker
// (sdca's epoch) and on three (the replicas), and for a smooth and a
// non-smooth loss with an L1 term.
func TestDistributedOneRankIsCoCoA(t *testing.T) {
	hx, hb := heartScale(t)
	gx, gb := enginetest.SparseData(2500, 300, 40, 5) // 100k nonzeros: three workers
	for _, c := range []struct {
		name    string
		prob    objective.Problem
		threads int
	}{
		{"heart_scale", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, 1},
		{"generated", objective.Problem{X: gx, B: gb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, 3},
		{"generated-hinge-l1", objective.Problem{X: gx, B: gb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-4, L1: 1e-3}}, 3},
	} {
		if enginetest.RaceEnabled && c.name == "generated-hinge-l1" {
			continue
		}
		opt := driver.Options{Solver: SolverCoCoA, Threads: c.threads, Tol: 1e-9, MaxEpochs: 2000, Seed: 7}
		want, wres, err := enginetest.Train(context.Background(), c.prob, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runDistributed(t, []objective.Problem{c.prob}, opt, nil, 30*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g := got[0]
		if g.res.Threads != wres.Threads {
			t.Errorf("%s: %d workers, cocoa %d", c.name, g.res.Threads, wres.Threads)
		}
		if len(g.res.Trace) != len(wres.Trace) {
			t.Fatalf("%s: %d certificates, cocoa %d", c.name, len(g.res.Trace), len(wres.Trace))
		}
		for i, tp := range g.res.Trace {
			if w := wres.Trace[i]; tp.Primal != w.Primal || tp.Dual != w.Dual || tp.Epoch != w.Epoch || tp.Passes != w.Passes {
				t.Fatalf("%s: certificate %d: epoch %d P %.17g D %.17g, cocoa epoch %d P %.17g D %.17g", c.name, i, tp.Epoch, tp.Primal, tp.Dual, w.Epoch, w.Primal, w.Dual)
			}
		}
		if !slices.Equal(g.w, want.Weights) {
			t.Errorf("%s: the model differs from cocoa's (relative difference %.3g)", c.name, enginetest.RelDiff(g.w, want.Weights))
		}
		if g.res.Stop != wres.Stop {
			t.Errorf("%s: stopped on %q, cocoa on %q", c.name, g.res.Stop, wres.Stop)
		}
	}
}

// TestDistributedConverges checks, at 1, 2 and 4 ranks on the bundled data
// and on a generated sparse set (where two ranks run two workers each),
// that the run ends at the tolerance with a primal within the gaps of the
// single-process optimum (sdca at 1e-10), that every rank holds the same
// model bit for bit, and that a second run with the same seed gives the
// same model.
func TestDistributedConverges(t *testing.T) {
	hx, hb := heartScale(t)
	gx, gb := enginetest.SparseData(3300, 300, 40, 6) // 132k nonzeros: 66k a rank at P = 2
	for _, c := range []struct {
		name string
		prob objective.Problem
		tol  float64
	}{
		{"heart_scale", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}}, 1e-8},
		{"generated", objective.Problem{X: gx, B: gb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 0.1, L1: 1e-4}}, 1e-7},
	} {
		_, ref, err := enginetest.Train(context.Background(), c.prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-10, MaxEpochs: 5000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		pStar, refGap := ref.Final.Primal, ref.Final.Gap
		ranks := []int{1, 2, 4}
		if enginetest.RaceEnabled || testing.Short() {
			ranks = ranks[:2] // ten times slower under the race detector
		}
		for _, p := range ranks {
			parts := shares(c.prob, p)
			opt := driver.Options{Solver: SolverCoCoA, Threads: 2, Tol: c.tol, MaxEpochs: 3000, Seed: 3}
			first, err := runDistributed(t, parts, opt, nil, 30*time.Second)
			if err != nil {
				t.Fatalf("%s, P = %d: %v", c.name, p, err)
			}
			r0 := first[0]
			if !r0.res.Converged || r0.res.Model.RelGap > c.tol {
				t.Errorf("%s, P = %d: stopped on %q at relative gap %.3g after %d epochs", c.name, p, r0.res.Stop, r0.res.Model.RelGap, r0.res.Final.Epoch)
			}
			if d := math.Abs(r0.res.Model.Primal - pStar); d > r0.res.Model.Gap+refGap+1e-13 {
				t.Errorf("%s, P = %d: P = %.15g, the optimum %.15g: %.3g apart, the gaps %.3g + %.3g", c.name, p, r0.res.Model.Primal, pStar, d, r0.res.Model.Gap, refGap)
			}
			if len(r0.w) != c.prob.X.Cols {
				t.Errorf("%s, P = %d: %d weights for %d columns", c.name, p, len(r0.w), c.prob.X.Cols)
			}
			for r, got := range first {
				if !slices.Equal(got.w, r0.w) || got.res.Model != r0.res.Model && !sameCert(got.res.Model, r0.res.Model) {
					t.Errorf("%s, P = %d: rank %d's model differs from rank 0's", c.name, p, r)
				}
			}
			if enginetest.RaceEnabled {
				continue
			}
			again, err := runDistributed(t, parts, opt, nil, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(again[0].w, r0.w) {
				t.Errorf("%s, P = %d: a second run with the same seed gave another model", c.name, p)
			}
			t.Logf("%s, P = %d: %d epochs, %d certificates, relative gap %.3g, workers %d", c.name, p, r0.res.Final.Epoch, len(r0.res.Trace), r0.res.Model.RelGap, r0.res.Threads)
		}
	}
}

// sameCert compares the certificate values of two trace points, whose
// times differ from rank to rank.
func sameCert(a, b driver.TracePoint) bool {
	return a.Primal == b.Primal && a.Dual == b.Dual && a.Epoch == b.Epoch && a.Passes == b.Passes
}

// TestDistributedEmptyRank checks that ranks without rows take part: five
// ranks on three rows, and four ranks of which one holds none.
func TestDistributedEmptyRank(t *testing.T) {
	hx, hb := heartScale(t)
	for _, c := range []struct {
		rows, ranks int
	}{{3, 5}, {200, 4}} {
		x, b := enginetest.FirstRows(hx, hb, c.rows)
		prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}}
		parts := shares(prob, c.ranks)
		if c.rows == 200 {
			// Move rank 2's rows to rank 3, leaving rank 2 none.
			parts = shares(prob, 3)
			parts = append(parts[:2], shares(objective.Problem{X: &sparse.CSR{Indptr: []int64{0}}, Loss: prob.Loss, Reg: prob.Reg}, 1)[0], parts[2])
		}
		_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-11, MaxEpochs: 5000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := runDistributed(t, parts, driver.Options{Tol: 1e-9, MaxEpochs: 5000, Seed: 2}, nil, 30*time.Second)
		if err != nil {
			t.Fatalf("%d rows on %d ranks: %v", c.rows, c.ranks, err)
		}
		m := got[0].res.Model
		if !got[0].res.Converged || math.Abs(m.Primal-ref.Final.Primal) > m.Gap+ref.Final.Gap+1e-13 {
			t.Errorf("%d rows on %d ranks: stopped on %q at P %.15g (gap %.3g), the optimum %.15g", c.rows, c.ranks, got[0].res.Stop, m.Primal, m.Gap, ref.Final.Primal)
		}
		for r := range got {
			if !slices.Equal(got[r].w, got[0].w) {
				t.Errorf("%d rows on %d ranks: rank %d's model differs", c.rows, c.ranks, r)
			}
		}
	}
}

// TestDistributedFailingRank checks that a rank that fails (its callback
// errs, it panics, its problem is refused) ends every rank with an error,
// within a second, and that a refusal found by one rank is named.
func TestDistributedFailingRank(t *testing.T) {
	hx, hb := heartScale(t)
	prob := objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4}}
	parts := shares(prob, 3)
	boom := errors.New("rank 1 fails")
	for _, c := range []struct {
		name    string
		perRank func(r int, o *driver.Options)
		parts   func() []objective.Problem
	}{
		{"callback error", func(r int, o *driver.Options) {
			if r == 1 {
				o.Callback = func(tp driver.TracePoint) error {
					if tp.Epoch >= 3 {
						return boom
					}
					return nil
				}
			}
		}, nil},
		{"panic", func(r int, o *driver.Options) {
			if r == 1 {
				o.Callback = func(tp driver.TracePoint) error {
					if tp.Epoch >= 2 {
						panic("rank 1 panics")
					}
					return nil
				}
			}
		}, nil},
		{"refused problem", nil, func() []objective.Problem {
			p := slices.Clone(parts)
			p[2].Reg = objective.ElasticNet{Lambda: 2e-4} // another λ
			return p
		}},
		{"other solver", func(r int, o *driver.Options) {
			if r == 0 {
				o.Solver = SolverSDCA
			}
		}, nil},
	} {
		ps := parts
		if c.parts != nil {
			ps = c.parts()
		}
		start := time.Now()
		got, err := runDistributed(t, ps, driver.Options{Tol: -1, MaxEpochs: 1 << 20, StallEpochs: -1, Seed: 1}, c.perRank, 10*time.Second)
		if el := time.Since(start); el > time.Second {
			t.Errorf("%s: the ranks took %v to end", c.name, el)
		}
		if err == nil {
			t.Errorf("%s: RunLocal returned no error", c.name)
		}
		for r, g := range got {
			if g.err == nil {
				t.Errorf("%s: rank %d returned no error", c.name, r)
			}
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// TestDistributedTimeLimitOneRank checks that a time limit on one rank
// stops every rank after the same round, with the same model and Stop
// "time".
func TestDistributedTimeLimitOneRank(t *testing.T) {
	x, b := enginetest.SparseData(2000, 300, 20, 8)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-6}}
	got, err := runDistributed(t, shares(prob, 3), driver.Options{Tol: 1e-14, MaxEpochs: 1 << 20, StallEpochs: -1, Seed: 1}, func(r int, o *driver.Options) {
		if r == 1 {
			o.TimeLimit = 100 * time.Millisecond
		}
	}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for r, g := range got {
		if g.res.Stop != "time" || g.err != nil {
			t.Errorf("rank %d: stop %q, error %v; want the time limit", r, g.res.Stop, g.err)
		}
		if !slices.Equal(g.w, got[0].w) || !sameCert(g.res.Final, got[0].res.Final) {
			t.Errorf("rank %d stopped elsewhere than rank 0 (epoch %d, rank 0 %d)", r, g.res.Final.Epoch, got[0].res.Final.Epoch)
		}
	}
}

// TestDistributedSearchKeepsDual checks the step search of the rounds
// (chooseStep) on two and three ranks, with the search on and off: the
// dual never falls from one certificate to the next beyond rounding, the
// run reaches its tolerance at a primal within the gaps of the optimum,
// the ranks hold the same model, and with the search on the note counts
// the rounds whose step left the summed change.
func TestDistributedSearchKeepsDual(t *testing.T) {
	defer func(on bool) { distSearch = on }(distSearch)
	x, b := enginetest.SparseData(3000, 300, 30, 9)
	for _, c := range []struct {
		name string
		prob objective.Problem
	}{
		{"logistic", objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}},
		{"sqhinge-l1", objective.Problem{X: x, B: b, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-4}}},
	} {
		_, ref, err := enginetest.Train(context.Background(), c.prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-11, MaxEpochs: 5000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if enginetest.RaceEnabled && c.name != "logistic" {
			continue // ten times slower under the race detector
		}
		for _, p := range []int{2, 3} {
			if enginetest.RaceEnabled && p > 2 {
				continue
			}
			for _, on := range []bool{false, true} {
				distSearch = on
				duals := make([][]float64, p)
				got, err := runDistributed(t, shares(c.prob, p), driver.Options{Threads: 2, Tol: 1e-8, MaxEpochs: 3000, Seed: 4}, func(r int, o *driver.Options) {
					o.Callback = func(tp driver.TracePoint) error {
						duals[r] = append(duals[r], tp.Dual)
						return nil
					}
				}, 120*time.Second)
				if err != nil {
					t.Fatalf("%s, P = %d, search %v: %v", c.name, p, on, err)
				}
				for i := 1; i < len(duals[0]); i++ {
					if d0, d1 := duals[0][i-1], duals[0][i]; d1 < d0-1e-13*math.Abs(d0) {
						t.Errorf("%s, P = %d, search %v: the dual fell from %.17g to %.17g at certificate %d", c.name, p, on, d0, d1, i)
					}
				}
				m := got[0].res.Model
				if on && !got[0].res.Converged || math.Abs(m.Primal-ref.Final.Primal) > m.Gap+ref.Final.Gap+1e-13 {
					t.Errorf("%s, P = %d, search %v: stopped on %q at P %.15g (gap %.3g), the optimum %.15g", c.name, p, on, got[0].res.Stop, m.Primal, m.Gap, ref.Final.Primal)
				}
				for r := range got {
					if !slices.Equal(got[r].w, got[0].w) {
						t.Errorf("%s, P = %d, search %v: rank %d's model differs from rank 0's", c.name, p, on, r)
					}
				}
				if moved := strings.Contains(got[0].res.Note, "step search moved"); moved != on {
					t.Errorf("%s, P = %d, search %v: note %q", c.name, p, on, got[0].res.Note)
				}
				t.Logf("%s, P = %d, search %v: %d rounds; %s", c.name, p, on, got[0].res.Final.Epoch, got[0].res.Note)
			}
		}
	}
}

// TestDistributedCertificateIsObjectives checks, on heart_scale and
// housing_scale, that the certificate a distributed run reports for its
// model is objective's at the model and the ranks' duals: At's to the
// bit on one rank (Assemble is AtDualVector's arithmetic, and the
// certificate a run stops on takes v from the duals), and to rounding
// over two and three ranks, whose partial sums add in another order.
func TestDistributedCertificateIsObjectives(t *testing.T) {
	hx, hb := enginetest.SharedData(t, "heart_scale")
	gx, gb := enginetest.SharedRegression(t, "housing_scale")
	for _, prob := range []objective.Problem{
		{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}},
		{X: hx, B: hb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-2, L1: 1e-3}},
		{X: gx, B: gb, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: 1e-2}},
	} {
		for _, p := range []int{1, 2, 3} {
			got, err := runDistributed(t, shares(prob, p), driver.Options{Threads: 2, Tol: 1e-9, MaxEpochs: 3000, Seed: 5}, nil, 120*time.Second)
			if err != nil {
				t.Fatalf("%s, P = %d: %v", prob.Loss.Name(), p, err)
			}
			r0 := got[0]
			if r0.res.Stop != "tol" {
				t.Fatalf("%s, P = %d: stopped on %q", prob.Loss.Name(), p, r0.res.Stop)
			}
			var y []float64
			for _, r := range got {
				y = append(y, r.res.Duals...)
			}
			c, err := objective.NewEvaluator(prob, 1).At(r0.w, y, objective.OwnDuals)
			if err != nil {
				t.Fatal(err)
			}
			m := r0.res.Model
			if p == 1 {
				if m.Primal != c.Primal || m.Dual != c.Dual || m.Gap != c.Gap || m.RelGap != c.RelGap {
					t.Errorf("%s, one rank: reported %+v, objective's %+v", prob.Loss.Name(), m, c)
				}
				continue
			}
			for _, q := range [][2]float64{{m.Primal, c.Primal}, {m.Dual, c.Dual}} {
				if math.Abs(q[0]-q[1]) > 1e-13*math.Max(1, math.Abs(q[1])) {
					t.Errorf("%s, P = %d: reported P = %.17g, D = %.17g; objective's P = %.17g, D = %.17g", prob.Loss.Name(), p, m.Primal, m.Dual, c.Primal, c.Dual)
				}
			}
		}
	}
}

// TestDistributedWarmDuals starts cocoa on three ranks from the duals of a
// one-process sdca run, each rank from its rows' share: the first
// certificate is sdca's at those duals, to the rounding of the sums over
// the ranks. Warm duals on one rank alone (the others start cold) end in
// the same collectives on every rank, not in a hang.
func TestDistributedWarmDuals(t *testing.T) {
	x, b := heartScale(t)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}
	_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: -1, MaxEpochs: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Duals) != x.Rows {
		t.Fatalf("sdca handed back %d duals for %d rows", len(ref.Duals), x.Rows)
	}
	_, start, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Threads: 1, Tol: -1, MaxEpochs: 0}.With(Settings{WarmDuals: ref.Duals}))
	if err != nil {
		t.Fatal(err)
	}
	parts := shares(prob, 3)
	offsets := []int{0, x.Rows / 3, 2 * x.Rows / 3}
	got, err := runDistributed(t, parts, driver.Options{Solver: SolverCoCoA, Tol: -1, MaxEpochs: 0, Seed: 1}, func(r int, o *driver.Options) {
		*o = o.With(Settings{WarmDuals: ref.Duals[offsets[r] : offsets[r]+parts[r].X.Rows]})
	}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want, first := start.Trace[0], got[0].res.Trace[0]
	if math.Abs(first.Primal-want.Primal) > 1e-12*want.Primal || math.Abs(first.Dual-want.Dual) > 1e-12*math.Abs(want.Dual) {
		t.Errorf("3 ranks from the duals: P = %.17g, D = %.17g; sdca at them: %.17g, %.17g", first.Primal, first.Dual, want.Primal, want.Dual)
	}
	if _, err := runDistributed(t, parts, driver.Options{Solver: SolverCoCoA, Tol: -1, MaxEpochs: 2, Seed: 1}, func(r int, o *driver.Options) {
		if r == 1 {
			*o = o.With(Settings{WarmDuals: ref.Duals[offsets[r] : offsets[r]+parts[r].X.Rows]})
		}
	}, 30*time.Second); err != nil {
		t.Errorf("warm duals on rank 1 alone: %v", err)
	}
}
