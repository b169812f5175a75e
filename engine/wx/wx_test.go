package wx

import (
	"context"
	"math"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestWXFitRate checks the least-squares rate of §3.1 on exact geometric
// sequences, and that a sequence with a non-positive or non-finite gap has
// no rate.
func TestWXFitRate(t *testing.T) {
	for _, r := range []float64{0.5, 0.93, 0.999, 1.2} {
		gaps := make([]float64, wxPeriod+1)
		for i := range gaps {
			gaps[i] = 3e4 * math.Pow(r, float64(i))
		}
		if got := fitRate(gaps); math.Abs(got-r) > 1e-12*r {
			t.Errorf("rate %v: fitted %v", r, got)
		}
	}
	// Noise εₜ on log Gₜ moves log ρ̂ by Σ t·εₜ / Σ t²: here ε = (0, 1, −1, 0),
	// so by (1 − 2)/14.
	gaps := []float64{1, 0.5 * math.E, 0.25 / math.E, 0.125}
	want := 0.5 * math.Exp(-1.0/14)
	if got := fitRate(gaps); math.Abs(got-want) > 1e-14 {
		t.Errorf("zig-zag: fitted %v, want %v", got, want)
	}
	for _, bad := range [][]float64{{1}, {1, 0}, {0, 1}, {1, math.NaN()}, {1, math.Inf(1)}, {-1, 0.5}} {
		if got := fitRate(bad); !math.IsNaN(got) {
			t.Errorf("%v: fitted %v, want NaN", bad, got)
		}
	}
}

// TestWXDecide checks Algorithm 4's decision: double Δ when ρ̂ ≤ 0.95ρ,
// halve it when ρ̂ ≥ 1.5ρ, and in both cases take ρ̂ as the new ρ;
// otherwise change nothing. Δ stops at its cap.
func TestWXDecide(t *testing.T) {
	a := newWXAdapter(1, 8, true)
	a.rho = 0.5
	steps := []struct {
		rhoHat, delta, rho float64
		changed            bool
	}{
		{0.48, 1, 0.5, false},   // 0.96ρ: within the band
		{0.475, 2, 0.475, true}, // 0.95ρ: double
		{0.7, 2, 0.475, false},  // 1.47ρ: within
		{0.7125, 1, 0.7125, true},
		{0.3, 2, 0.3, true},
		{0.2, 4, 0.2, true},
		{0.1, 8, 0.1, true},
		{0.05, 8, 0.05, false}, // at the cap: Δ stays, ρ follows
		{math.NaN(), 8, 0.05, false},
		{0, 8, 0.05, false},
		{math.Inf(1), 8, 0.05, false},
		{2, 4, 2, true}, // a growing gap halves
	}
	for i, s := range steps {
		changed := a.decide(s.rhoHat)
		if changed != s.changed || a.delta != s.delta || a.rho != s.rho {
			t.Fatalf("step %d (ρ̂ = %v): changed %v, Δ %v, ρ %v; want %v, %v, %v", i, s.rhoHat, changed, a.delta, a.rho, s.changed, s.delta, s.rho)
		}
	}
	if a.doublings != 4 || a.halvings != 2 {
		t.Errorf("%d doublings, %d halvings; want 4 and 2", a.doublings, a.halvings)
	}
}

// TestWXObserve feeds the rule certificates whose gaps fall geometrically:
// the first period only measures ρ = r^T; a faster second period doubles
// Δ, a much slower third halves it, and a period at the noise floor
// changes nothing. The batch rule uses the ratio of the end gaps.
func TestWXObserve(t *testing.T) {
	for _, ls := range []bool{true, false} {
		a := newWXAdapter(1, 100, ls)
		gap := 1.0
		feed := func(r float64) (changes int) {
			for range wxPeriod {
				gap *= r
				if a.observe(driver.TracePoint{Gap: gap, RelGap: gap}) {
					changes++
				}
			}
			return changes
		}
		if a.observe(driver.TracePoint{Gap: gap, RelGap: gap}) {
			t.Fatal("the first gap changed Δ")
		}
		if c := feed(0.9); c != 0 || a.delta != 1 || math.Abs(a.rho-math.Pow(0.9, wxPeriod)) > 1e-12 {
			t.Fatalf("ls %v: first period: %d changes, Δ %v, ρ %v", ls, c, a.delta, a.rho)
		}
		if c := feed(0.8); c != 1 || a.delta != 2 || math.Abs(a.rho-math.Pow(0.8, wxPeriod)) > 1e-12 {
			t.Fatalf("ls %v: faster period: %d changes, Δ %v, ρ %v", ls, c, a.delta, a.rho)
		}
		if c := feed(0.8); c != 0 || a.delta != 2 {
			t.Fatalf("ls %v: same rate: %d changes, Δ %v", ls, c, a.delta)
		}
		if c := feed(0.9); c != 1 || a.delta != 1 {
			t.Fatalf("ls %v: slower period: %d changes, Δ %v", ls, c, a.delta)
		}
		gap = 1e-15
		if c := feed(0.5); c != 0 || a.delta != 1 {
			t.Fatalf("ls %v: period at the noise floor: %d changes, Δ %v", ls, c, a.delta)
		}
	}
}

// TestWXRefuses checks the problems the Wang–Xiao solvers do not take.
func TestWXRefuses(t *testing.T) {
	x, b := enginetest.SparseData(50, 10, 3, 1)
	for _, sv := range Solvers {
		cases := map[string]struct {
			prob objective.Problem
			opt  driver.Options
		}{
			"hinge":   {objective.Problem{X: x, B: b, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: 1e-2}}, driver.Options{}},
			"lasso":   {objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1e-2}}, driver.Options{}},
			"m":       {objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}}, driver.Options{}.With(driver.Coordinate{M: 4})},
			"block":   {objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}}, driver.Options{}.With(driver.Coordinate{BlockSize: 2})},
			"scale>1": {objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}}, driver.Options{}.With(driver.Coordinate{StepScale: 1.5})},
		}
		for name, c := range cases {
			if name == "scale>1" && sv != "bpd" && sv != "adabpd" {
				continue
			}
			c.opt.Solver, c.opt.MaxEpochs, c.opt.Tol = sv, 5, 1e-6
			if _, _, err := enginetest.Train(context.Background(), c.prob, c.opt); err == nil {
				t.Errorf("%s took %s", sv, name)
			}
		}
	}
}

// TestWXElasticNet checks a run with an L1 term (the plain elastic net's
// soft-thresholding path) against the KKT conditions.
func TestWXElasticNet(t *testing.T) {
	x, b := enginetest.SparseData(200, 40, 6, 5)
	x.NormalizeRowsUnit()
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-3}}
	for _, sv := range []driver.Solver{"wx-adaspdc", "adfspdc", "adabpd"} {
		opt := enginetest.AdaSPDCOptions()
		opt.Solver, opt.Tol, opt.MaxEpochs = sv, 1e-9, 5000
		model, res, err := enginetest.Train(context.Background(), prob, opt)
		if err != nil || !res.Converged {
			t.Fatalf("%s: %v (stop %s)", sv, err, res.Stop)
		}
		if v := enginetest.KktViolation(prob, model.Weights); v > 1e-4 {
			t.Errorf("%s: KKT violation %.3g", sv, v)
		}
	}
}

// TestBPDGapsFromObjective checks, on heart_scale and housing_scale, that
// the gaps Ada-BPD adapts by are objective's certificate at the point each
// iteration starts from, with the running u = (1/n)Aᵀy, bit for bit
// (AtDualVector's, which forms the margins itself), and that the
// certificate BPD and Ada-BPD report is objective's at the point they
// return and their duals, with v from y (At).
func TestBPDGapsFromObjective(t *testing.T) {
	hx, hb := enginetest.SharedData(t, "heart_scale")
	gx, gb := enginetest.SharedRegression(t, "housing_scale")
	ctx := context.Background()
	for _, prob := range []objective.Problem{
		{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2}},
		{X: hx, B: hb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-2, L1: 1e-3}},
		{X: gx, B: gb, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: 1e-2}},
	} {
		for _, adaptive := range []bool{false, true} {
			opt := driver.Options{Solver: "bpd", Threads: 1}.With(driver.Coordinate{StepScale: 1})
			if adaptive {
				opt.Solver = "adabpd"
			}
			m, err := newWXBPD(ctx, prob, opt, adaptive)
			if err != nil {
				t.Fatal(err)
			}
			eval := objective.NewEvaluator(prob, 1)
			for it := range 40 {
				if adaptive {
					got, err := m.adaptGap()
					if err != nil {
						t.Fatal(err)
					}
					c, err := eval.AtDualVector(m.xv, m.y, m.u)
					if err != nil {
						t.Fatal(err)
					}
					if want := driver.TracePointOf(c); got != want {
						t.Fatalf("%s, %s, iteration %d: Ada-BPD adapts by %+v, objective gives %+v", opt.Solver, prob.Loss.Name(), it, got, want)
					}
				}
				if _, err := m.RunEpochs(ctx, 1); err != nil {
					t.Fatal(err)
				}
				got, err := m.Certify()
				if err != nil {
					t.Fatal(err)
				}
				c, err := eval.At(m.Point(), m.y, objective.OwnDuals)
				if err != nil {
					t.Fatal(err)
				}
				if want := driver.TracePointOf(c); got != want {
					t.Fatalf("%s, %s, iteration %d: certificate %+v, objective's %+v", opt.Solver, prob.Loss.Name(), it, got, want)
				}
			}
		}
	}
}
