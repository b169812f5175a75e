package sdca

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestSPDCAsyncClosedForm checks the closed form of spdcAsync against the
// serial SPDC iteration written out on dense vectors: after every step, x
// and r read from the stored ξ and r equal the dense xₜ₊₁ and rₜ₊₁; every
// read of x̄ equals the dense (1+θ)xₜ − θxₜ₋₁ up to exactly the term the
// asynchronous read leaves out, −θτΔyₚ(1 − 1/n)⟨aₖ, aₚ⟩ for the previous
// step's sample p; and a rebase in the middle changes nothing. λ is large,
// so that a = 1/(1+τλ) is far from 1 and the scaling is exercised.
func TestSPDCAsyncClosedForm(t *testing.T) {
	x, b := enginetest.SparseData(200, 30, 5, 9)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 0.5}}
	opt := driver.Options{Solver: SolverSPDCAsync, Threads: 1, Seed: 1}.WithDefaults()
	m, err := startSPDCAsync(prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := m.(*spdcAsync)
	defer s.Finish(&driver.Result{})
	if s.a > 0.999 {
		t.Fatalf("a = %v: the test wants a contraction far from 1", s.a)
	}
	n, d := s.n, s.d
	lam, tau, theta, a := s.lam, s.tau, s.theta, s.a
	xd, xPrev, r := make([]float64, d), make([]float64, d), make([]float64, d)
	lazyX := func(t int64, j int) (float64, float64) {
		p := s.scale(t)
		c := s.cs[j]
		return p*c.xi + c.r*(p-1)/lam, c.r
	}
	prevK, prevDy := -1, 0.0
	var clock int64
	for step := 0; step < 3*n; step++ {
		if step == n+17 {
			s.clock = clock
			s.rebase()
			clock = 0
			prevK = -1 // the segment's first read is x, not x̄
		}
		k := int(s.rng.IntN(n))
		val, idx := x.Row(k)
		// The dense read: x̄ = (1+θ)xₜ − θxₜ₋₁, at t = 0 of a segment x.
		var want float64
		for q, j := range idx {
			xb := xd[j]
			if clock > 0 {
				xb = (1+theta)*xd[j] - theta*xPrev[j]
			}
			want += val[q] * xb
		}
		if prevK >= 0 {
			pv, pi := x.Row(prevK)
			var dot float64
			for q, j := range idx {
				for q2, j2 := range pi {
					if j == j2 {
						dot += val[q] * pv[q2]
					}
				}
			}
			want -= -theta * tau * prevDy * (1 - 1/float64(n)) * dot
		}
		th := theta
		ca, cb := 1.0, 0.0
		if clock > 0 {
			p, pp := s.scale(clock), s.scale(clock-1)
			ca, cb = (1+th)*p-th*pp, ((1+th)*(p-1)-th*(pp-1))/lam
		}
		if got := s.readBar(val, idx, ca, cb); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
			t.Fatalf("step %d: read aₖᵀx̄ = %.17g, dense %.17g", step, got, want)
		}
		y0 := s.y[k]
		s.step(k, clock, s.scale(clock), s.scale(clock-1), s.scale(clock+1))
		dy := s.y[k] - y0
		// The dense serial step.
		copy(xPrev, xd)
		for j := range xd {
			xd[j] = a * (xd[j] - tau*r[j])
		}
		for q, j := range idx {
			xd[j] -= a * tau * dy * val[q]
			r[j] += dy * val[q] / float64(n)
		}
		clock++
		prevK, prevDy = k, dy
		for j := range xd {
			gx, gr := lazyX(clock, j)
			if math.Abs(gx-xd[j]) > 1e-12*(1+math.Abs(xd[j])) || math.Abs(gr-r[j]) > 1e-14 {
				t.Fatalf("step %d, coordinate %d: closed form x = %.17g, r = %.17g; dense %.17g, %.17g", step, j, gx, gr, xd[j], r[j])
			}
		}
	}
}

// TestSPDCAsyncRefuses: what the closed form cannot take is refused with a
// message that says why.
func TestSPDCAsyncRefuses(t *testing.T) {
	x, b := enginetest.SparseData(100, 20, 4, 1)
	cases := []struct {
		prob objective.Problem
		opt  driver.Options
		want string
	}{
		{objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-4}}, driver.Options{}, "no L1 term"},
		{objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, Center: make([]float64, 20)}}, driver.Options{}, "centre"},
		{objective.Problem{Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}, "smooth loss"},
		{objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3}}, driver.Options{}.With(driver.Coordinate{M: 4}), "m = 4"},
		{objective.Problem{Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1e-3}}, driver.Options{}, "λ > 0"},
	}
	for _, c := range cases {
		c.prob.X, c.prob.B = x, b
		c.opt.Solver = SolverSPDCAsync
		_, _, err := enginetest.Train(context.Background(), c.prob, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s/%s %+v: error %v, want one mentioning %q", c.prob.Loss.Name(), c.prob.Reg.Name(), c.opt, err, c.want)
		}
	}
}

// TestSPDCAsyncSegments runs spdc-async with segments of 37 iterations, so
// that every epoch of 300 samples rebases the closed form several times
// inside the epoch, on two workers: it must still reach a relative gap of
// 1e-10 at the optimum sdca certifies.
func TestSPDCAsyncSegments(t *testing.T) {
	defer func(v int64) { spdcAsyncMaxSegment = v }(spdcAsyncMaxSegment)
	spdcAsyncMaxSegment = 37
	x, b := enginetest.SparseData(300, 40, 6, 5)
	prob := objective.Problem{X: x, B: b, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-2}}
	ref, refRes, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Tol: 1e-11, MaxEpochs: 20000, Seed: 1})
	if err != nil || !refRes.Converged {
		t.Fatalf("reference: %v", err)
	}
	model, res, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSPDCAsync, Threads: 2, Tol: 1e-10, MaxEpochs: 5000, Seed: 2})
	if err != nil || !res.Converged {
		t.Fatalf("spdc-async: %v, relative gap %.3g after %d epochs", err, res.Final.RelGap, res.Final.Epoch)
	}
	bound := math.Sqrt(2*res.Final.Gap/1e-2) + math.Sqrt(2*refRes.Final.Gap/1e-2)
	if dist := distance(model.Weights, ref.Weights); dist > bound+1e-12 {
		t.Errorf("‖x − x*‖ = %.3g beyond the certificates' bound %.3g", dist, bound)
	}
	if res.Final.Threads != 2 {
		t.Errorf("ran %d threads, asked for 2", res.Final.Threads)
	}
}

// TestSPDCAsyncWarmDuals: new duals between epochs (a reduction's next
// stage) restart the closed form with r = (1/n)Σₖ yₖaₖ for them and x where
// the iteration left it.
func TestSPDCAsyncWarmDuals(t *testing.T) {
	x, b := enginetest.SparseData(300, 40, 6, 3)
	prob := objective.Problem{X: x, B: b, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-2}}
	_, ref, err := enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverSDCA, Tol: 1e-12, MaxEpochs: 20000})
	if err != nil || !ref.Converged {
		t.Fatalf("reference: %v", err)
	}
	m, err := startSPDCAsync(prob, driver.Options{Solver: SolverSPDCAsync, Threads: 2, Seed: 1}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	s := m.(*spdcAsync)
	defer s.Finish(&driver.Result{})
	if _, err := s.RunEpochs(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	p := s.scale(s.clock)
	before := make([]float64, s.d)
	for j, c := range s.cs {
		before[j] = p*c.xi + c.r*(p-1)/s.lam
	}
	if err := s.WarmDuals(ref.Duals); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, s.d)
	for k := range s.n {
		val, idx := x.Row(k)
		for q, j := range idx {
			want[j] += ref.Duals[k] * val[q] / float64(s.n)
		}
	}
	for j, c := range s.cs {
		if math.Abs(c.r-want[j]) > 1e-14 || math.Abs(c.xi-before[j]) > 1e-14*(1+math.Abs(before[j])) || s.clock != 0 {
			t.Fatalf("coordinate %d after warm duals: ξ = %v, r = %v; want x = %v, r = %v at clock 0 (clock %d)", j, c.xi, c.r, before[j], want[j], s.clock)
		}
	}
	tp, err := s.Certify()
	if err != nil || tp.RelGap > 1e-10 {
		t.Fatalf("certificate at the optimal duals: gap %.3g, %v", tp.RelGap, err)
	}

}
