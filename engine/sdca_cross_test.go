package engine

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
)

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
						if dist := floats.Distance(model.Weights, ref.Weights, 2); dist > bound+1e-12 {
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

// TestAdaptSmoothOverSPDCAsync: AdaptSmooth, whose stages hand their duals
// on to spdc-async (WarmDuals), solves the hinge SVM at sdca's optimum.
func TestAdaptSmoothOverSPDCAsync(t *testing.T) {
	x, b := sparseData(300, 40, 6, 3)
	hinge := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-2}}
	_, href, err := Train(context.Background(), hinge, Options{Solver: SolverSDCA, Tol: 1e-10, MaxEpochs: 20000})
	if err != nil || !href.Converged {
		t.Fatalf("hinge reference: %v", err)
	}
	_, res, err := Train(context.Background(), hinge, Options{Solver: SolverAdaptSmooth, Threads: 2, Tol: 1e-6, MaxEpochs: 5000}.With(ReductionSettings{Inner: SolverSPDCAsync}))
	if err != nil || !res.Converged {
		t.Fatalf("adaptsmooth over spdc-async: %v", err)
	}
	if d := res.Final.Primal - href.Final.Primal; d < -1e-9 || d > res.Final.Gap+1e-9 {
		t.Errorf("adaptsmooth over spdc-async: P = %.12g, sdca's optimum %.12g, gap %.3g", res.Final.Primal, href.Final.Primal, res.Final.Gap)
	}
}

func sdcaVariants() []sdcaVariant {
	return []sdcaVariant{
		{name: "sdca", opt: Options{Solver: SolverSDCA, Threads: 1}},
		{name: "sdca-m8-t2", opt: Options{Solver: SolverSDCA, Threads: 2}.With(CoordinateSettings{M: 8})},
		{name: "async-t2", opt: Options{Solver: SolverSDCAAsync, Threads: 2}},
		{name: "wild-t2", opt: Options{Solver: SolverSDCAWild, Threads: 2}},
		{name: "dfsdca", opt: Options{Solver: SolverDFSDCA}, l2: true},
		{name: "dfsdca-importance", opt: Options{Solver: SolverDFSDCA}.With(CoordinateSettings{Sampling: SamplingImportance}), l2: true},
		{name: "spdc-async-t2", opt: Options{Solver: SolverSPDCAsync, Threads: 2}, l2: true},
	}
}

// sdcaVariant is one way of running the SDCA family in the tests.
type sdcaVariant struct {
	name string
	opt  Options
	l2   bool // takes plain L2 only (dfsdca)
}
