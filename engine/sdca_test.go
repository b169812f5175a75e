package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
)

// sdcaVariant is one way of running the SDCA family in the tests.
type sdcaVariant struct {
	name string
	opt  Options
	l2   bool // takes plain L2 only (dfsdca)
}

func sdcaVariants() []sdcaVariant {
	return []sdcaVariant{
		{name: "sdca", opt: Options{Solver: SolverSDCA, Threads: 1}},
		{name: "sdca-m8-t2", opt: Options{Solver: SolverSDCA, M: 8, Threads: 2}},
		{name: "async-t2", opt: Options{Solver: SolverSDCAAsync, Threads: 2}},
		{name: "wild-t2", opt: Options{Solver: SolverSDCAWild, Threads: 2}},
		{name: "dfsdca", opt: Options{Solver: SolverDFSDCA}, l2: true},
		{name: "dfsdca-importance", opt: Options{Solver: SolverDFSDCA, Sampling: SamplingImportance}, l2: true},
		{name: "spdc-async-t2", opt: Options{Solver: SolverSPDCAsync, Threads: 2}, l2: true},
	}
}

// TestSDCAFamilyMatchesAdaSPDC runs every SDCA solver to a relative gap of
// 1e-10 and compares it with AdaSPDC run to the same gap, for every smooth
// loss and for L2, the elastic net and a centred L2: both certificates
// bound their point's distance to the optimum, ‖x − x*‖² ≤ 2·gap/λ, so the
// two points must lie within the sum of the bounds; the reported primal must
// be P at the returned model (Certify) and the reported dual D at the
// returned duals, summed exactly.
func TestSDCAFamilyMatchesAdaSPDC(t *testing.T) {
	type dataset struct {
		name string
		load func(t *testing.T) Problem
	}
	sets := []dataset{
		{"sparse", func(t *testing.T) Problem { x, b := sparseData(300, 40, 6, 7); return Problem{X: x, B: b} }},
		{"heart_scale", func(t *testing.T) Problem { x, b := sharedData(t, "heart_scale"); return Problem{X: x, B: b} }},
	}
	regs := []ElasticNet{{Lambda: 1e-2}, {Lambda: 1e-2, L1: 2e-3}}
	if testing.Short() {
		sets = sets[:1] // the race detector makes the barriers and atomics slow
	} else {
		centre := make([]float64, 40)
		for j := range centre {
			centre[j] = 0.1 * float64(j%5-2)
		}
		regs = append(regs, ElasticNet{Lambda: 1e-2, Center: centre})
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			base := set.load(t)
			for _, loss := range []Loss{Logistic{}, Squared{}, SquaredHinge{}, SmoothHinge{S: 1}} {
				for _, reg := range regs {
					if reg.Center != nil && len(reg.Center) != base.X.Cols {
						continue
					}
					prob := Problem{X: base.X, B: base.B, Loss: loss, Reg: reg}
					ref, refRes, err := Train(context.Background(), prob, Options{Solver: SolverAdaSPDC, Tol: 1e-10, MaxEpochs: 5000, Seed: 1})
					if err != nil || !refRes.Converged {
						t.Fatalf("%s %s: reference: %v (gap %.3g)", loss.Name(), reg.Name(), err, refRes.Final.RelGap)
					}
					for _, v := range sdcaVariants() {
						if v.l2 && (reg.L1 > 0 || reg.Center != nil) {
							continue
						}
						opt := v.opt
						opt.Tol, opt.MaxEpochs, opt.Seed = 1e-10, 20000, 3
						model, res, err := Train(context.Background(), prob, opt)
						where := loss.Name() + "/" + reg.Name() + "/" + v.name
						if err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						if !res.Converged {
							t.Errorf("%s: relative gap %.3g after %d epochs (%s)", where, res.Final.RelGap, res.Final.Epoch, res.Stop)
							continue
						}
						bound := math.Sqrt(2*math.Max(res.Final.Gap, 0)/reg.Lambda) + math.Sqrt(2*math.Max(refRes.Final.Gap, 0)/reg.Lambda)
						if dist := distance(model.Weights, ref.Weights); dist > bound+1e-12 {
							t.Errorf("%s: ‖x − x_adaspdc‖ = %.3g beyond the certificates' bound %.3g", where, dist, bound)
						}
						if d := math.Abs(res.Final.Primal - refRes.Final.Primal); d > 2e-10*math.Max(1, math.Abs(refRes.Final.Primal)) {
							t.Errorf("%s: P = %.15g, AdaSPDC's %.15g", where, res.Final.Primal, refRes.Final.Primal)
						}
						cert, err := Certify(prob, model.Weights)
						if err != nil {
							t.Fatal(err)
						}
						if d := math.Abs(cert.Primal - res.Final.Primal); d > 1e-13*math.Max(1, math.Abs(cert.Primal)) {
							t.Errorf("%s: reported primal %.17g, P(model) = %.17g", where, res.Final.Primal, cert.Primal)
						}
						if d := math.Abs(exactDual(prob, res.Duals) - res.Final.Dual); d > 1e-13*math.Max(1, math.Abs(res.Final.Dual)) {
							t.Errorf("%s: reported dual %.17g is not D at the returned duals (off by %.3g)", where, res.Final.Dual, d)
						}
					}
				}
			}
		})
	}
}

func distance(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// TestSDCAHingeSVM: SDCA and its asynchronous forms solve the hinge-loss
// SVM (γ = 0, which AdaSPDC refuses) to a relative gap of 1e-8, and reach
// the same optimum: the primal values agree within the gaps.
func TestSDCAHingeSVM(t *testing.T) {
	x, b := sparseData(300, 40, 6, 3)
	lam := 1e-2
	if !testing.Short() {
		x, b = sharedData(t, "mushrooms")
		lam = 1e-3
	}
	prob := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: lam}}
	if _, _, err := Train(context.Background(), prob, Options{Solver: SolverAdaSPDC}); err == nil {
		t.Fatal("adaspdc took the hinge loss")
	}
	var ref TracePoint
	for i, v := range sdcaVariants()[:4] {
		opt := v.opt
		opt.Tol, opt.MaxEpochs, opt.Seed = 1e-8, 3000, 5
		_, res, err := Train(context.Background(), prob, opt)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if !res.Converged {
			t.Errorf("%s: relative gap %.3g after %d epochs (%s)", v.name, res.Final.RelGap, res.Final.Epoch, res.Stop)
			continue
		}
		t.Logf("%s: %d epochs, P = %.12g", v.name, res.Final.Epoch, res.Final.Primal)
		if i == 0 {
			ref = res.Final
			continue
		}
		if d := math.Abs(res.Final.Primal - ref.Primal); d > res.Final.Gap+ref.Gap {
			t.Errorf("%s: P = %.15g, sdca's %.15g: further apart than the gaps %.3g + %.3g", v.name, res.Final.Primal, ref.Primal, res.Final.Gap, ref.Gap)
		}
	}
	// With no solver named, Train picks sdca for the hinge loss.
	_, res, err := Train(context.Background(), prob, Options{Tol: 1e-3, MaxEpochs: 100})
	if err != nil || res.Solver != SolverSDCA {
		t.Errorf("no solver named: ran %q, error %v; want sdca", res.Solver, err)
	}
}

// TestSDCAMiniBatchThreadsBitIdentical: the mini-batch form reduces each
// batch by coordinate owners in batch order, so one and two workers give
// the same model to the last bit.
func TestSDCAMiniBatchThreadsBitIdentical(t *testing.T) {
	x, b := sparseData(500, 60, 8, 11)
	for _, reg := range []ElasticNet{{Lambda: 1e-2}, {Lambda: 1e-2, L1: 1e-3}} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: reg}
		var w [2][]float64
		for i, threads := range []int{1, 2} {
			model, res, err := Train(context.Background(), prob, Options{Solver: SolverSDCA, M: 16, Threads: threads, Seed: 2, Tol: -1, MaxEpochs: 20})
			if err != nil {
				t.Fatal(err)
			}
			if res.Threads != threads {
				t.Fatalf("asked for %d threads, ran %d", threads, res.Threads)
			}
			w[i] = model.Weights
		}
		for j := range w[0] {
			if w[0][j] != w[1][j] {
				t.Fatalf("%s: coordinate %d differs: %v on one worker, %v on two", reg.Name(), j, w[0][j], w[1][j])
			}
		}
	}
}

// TestSDCAWeightsOptimality: per-coordinate weights (one coordinate
// barely penalised) change the steps σₖ = n/Σⱼ aₖⱼ²/λⱼ; the solution must
// satisfy the optimality conditions of the weighted elastic net.
func TestSDCAWeightsOptimality(t *testing.T) {
	x, b := sparseData(400, 30, 6, 4)
	weights := make([]float64, 30)
	for j := range weights {
		weights[j] = 1 + float64(j%3)
	}
	weights[0] = 0.01
	for _, reg := range []ElasticNet{{Lambda: 1e-2, Weights: weights}, {Lambda: 1e-2, L1: 1e-3, Weights: weights}} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: reg}
		model, res, err := Train(context.Background(), prob, Options{Solver: SolverSDCA, Tol: 1e-11, MaxEpochs: 20000})
		if err != nil || !res.Converged {
			t.Fatalf("%s: %v, gap %.3g", reg.Name(), err, res.Final.RelGap)
		}
		if v := kktViolation(prob, model.Weights); v > 1e-6 {
			t.Errorf("%s: optimality violated by %.3g", reg.Name(), v)
		}
	}
}

// TestSDCAWarmStartAtOptimum: warm-started at the optimum, the first
// certificate (epoch 0) already has a tiny gap: the duals φ'(aₖᵀx*) and
// x = ∇g*(−v) reproduce x*.
func TestSDCAWarmStartAtOptimum(t *testing.T) {
	x, b := sparseData(300, 40, 6, 9)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2, L1: 1e-3}}
	ref, _, err := Train(context.Background(), prob, Options{Solver: SolverAdaSPDC, Tol: 1e-12, MaxEpochs: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Solver{SolverSDCA, SolverSDCAAsync} {
		_, res, err := Train(context.Background(), prob, Options{Solver: s, WarmStart: ref.Weights, Tol: -1, MaxEpochs: 0})
		if err != nil {
			t.Fatal(err)
		}
		if res.Final.RelGap > 1e-9 {
			t.Errorf("%s: warm start at the optimum has relative gap %.3g", s, res.Final.RelGap)
		}
	}
}

// TestDFSDCAInvariant: after epochs of steps with no certificate between
// them (which would restore it), λw = (1/n) Σ αᵢaᵢ holds to rounding, under
// uniform and importance sampling.
func TestDFSDCAInvariant(t *testing.T) {
	x, b := sparseData(500, 60, 8, 5)
	for _, sampling := range []Sampling{SamplingUniform, SamplingImportance} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
		m, err := startDFSDCA(context.Background(), prob, Options{Sampling: sampling, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := m.(*dfsdca)
		if _, err := s.RunEpochs(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, x.Cols)
		for i := 0; i < x.Rows; i++ {
			val, idx := x.Row(i)
			kernels.SparseAxpy(s.alpha[i]/float64(x.Rows), val, idx, sum)
		}
		var worst, scale float64
		for j := range sum {
			worst = math.Max(worst, math.Abs(s.lam*s.w[j]-sum[j]))
			scale = math.Max(scale, math.Abs(sum[j]))
		}
		if scale == 0 || worst > 1e-13*scale {
			t.Errorf("%s: max |λw − (1/n)Σαᵢaᵢ| = %.3g, scale %.3g", sampling, worst, scale)
		}
		// The pseudo-duals are feasible duals: y = −α lies in dom φ*.
		for i, a := range s.alpha {
			if math.IsInf(prob.Loss.Conj(-a, b[i]), 1) {
				t.Fatalf("%s: −α_%d = %v is outside dom φ*", sampling, i, -a)
			}
		}
	}
}

// TestSDCAFamilyRefuses: what a solver cannot take is refused with a
// message that says why or names a solver that can.
func TestSDCAFamilyRefuses(t *testing.T) {
	x, b := sparseData(100, 20, 4, 1)
	cases := []struct {
		solver Solver
		prob   Problem
		opt    Options
		want   string
	}{
		{SolverSDCA, Problem{Loss: Logistic{}, Reg: ElasticNet{L1: 1e-3}}, Options{}, "λ > 0"},
		{SolverSDCA, Problem{Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}, Options{BlockSize: 4}, "-m"},
		{SolverSDCAAsync, Problem{Loss: Hinge{}, Reg: ElasticNet{}}, Options{}, "λ > 0"},
		{SolverSDCAAsync, Problem{Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}, Options{M: 4}, "sdca"},
		{SolverDFSDCA, Problem{Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3, L1: 1e-4}}, Options{}, "use sdca"},
		{SolverDFSDCA, Problem{Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-3}}, Options{}, "smooth loss"},
		{SolverDFSDCA, Problem{Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3, Weights: make([]float64, 20)}}, Options{}, "sdca"},
		{SolverSDCA, Problem{Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}, Options{Sampling: SamplingImportance}, "importance"},
	}
	for _, c := range cases {
		c.prob.X, c.prob.B = x, b
		c.opt.Solver = c.solver
		_, _, err := Train(context.Background(), c.prob, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with %s/%s: error %v, want one mentioning %q", c.solver, c.prob.Loss.Name(), c.prob.Reg.Name(), err, c.want)
		}
	}
}

// TestSDCACertificateRunningV checks the certificate's two routes: far from
// the tolerance it uses the running v, whose certificate then agrees with
// the exact one to rounding; within twice the tolerance it recomputes v, so
// that a drift of v (planted here) cannot make the run stop on a gap that
// the duals do not back.
func TestSDCACertificateRunningV(t *testing.T) {
	x, b := sparseData(300, 40, 6, 11)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-3}}
	for _, tol := range []float64{1e-12, 1} {
		m, err := startSDCA(context.Background(), prob, Options{Seed: 1, Tol: tol, M: 1, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := m.(*sdcaSolver)
		if _, err := s.RunEpochs(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		running, err := s.Certify()
		if err != nil {
			t.Fatal(err)
		}
		s.recomputeV()
		exact := s.evaluate()
		if tol < 1 && math.Abs(running.Gap-exact.Gap) > 1e-12*exact.Primal {
			t.Errorf("tol %g: the running v's gap %.17g, the exact v's %.17g", tol, running.Gap, exact.Gap)
		}
		s.v[0] += 1e-3 // drift
		got, _ := s.Certify()
		drifted := math.Abs(got.Dual-exact.Dual) > 1e-9
		if tol < 1 && !drifted {
			t.Errorf("tol %g: far from the tolerance the certificate should use the running v (no recomputation)", tol)
		}
		if tol == 1 && (drifted || got.Gap != exact.Gap) {
			t.Errorf("tol %g: within the tolerance the certificate must recompute v: D = %.17g, exact %.17g", tol, got.Dual, exact.Dual)
		}
		// exactEvery certificates in a row recompute v at least once.
		s.v[0] += 1e-3
		for range exactEvery {
			got, _ = s.Certify()
		}
		if got.Dual != exact.Dual {
			t.Errorf("tol %g: after %d certificates v should have been recomputed: D = %.17g, exact %.17g", tol, exactEvery, got.Dual, exact.Dual)
		}
	}
}

// TestSDCAParallelCertificate checks that the certificate's workers (the
// row sweep for P and D, the column ranges for recomputing v) give the
// same trace, bit for bit, as one worker: the run's stopping decisions
// must not depend on the thread count.
func TestSDCAParallelCertificate(t *testing.T) {
	x, b := sparseData(2500, 300, 40, 5) // 100k nonzeros: three certificate workers
	for _, reg := range []ElasticNet{{Lambda: 1e-3}, {Lambda: 1e-3, L1: 1e-4}, {Lambda: 1e-3, Weights: constVec(300, 2)}} {
		prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: reg}
		var want []TracePoint
		for _, threads := range []int{1, 2, 3} {
			_, res, err := Train(context.Background(), prob, Options{Solver: SolverSDCA, Threads: threads, Tol: 1e-9, MaxEpochs: 40, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if threads == 3 && res.Threads != 3 {
				t.Errorf("%d threads asked, the certificate used %d", threads, res.Threads)
			}
			if threads == 1 {
				want = res.Trace
				continue
			}
			if len(res.Trace) != len(want) {
				t.Fatalf("%+v, %d threads: %d certificates, one thread %d", reg, threads, len(res.Trace), len(want))
			}
			for i, tp := range res.Trace {
				if tp.Primal != want[i].Primal || tp.Dual != want[i].Dual {
					t.Fatalf("%+v, %d threads, certificate %d: P %.17g D %.17g, one thread P %.17g D %.17g", reg, threads, i, tp.Primal, tp.Dual, want[i].Primal, want[i].Dual)
				}
			}
		}
	}
}

func constVec(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}
