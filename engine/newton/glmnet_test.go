package newton

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sched"
	"github.com/adaspdc/adaspdc/sparse"
)

// glmnetRun drives a newGLMNET method built by hand (so that a test can
// switch shrinking or the formed Hessian off) to tol.
func glmnetRun(t *testing.T, prob objective.Problem, tol float64, tweak func(*glmnet)) ([]float64, *driver.Result) {
	t.Helper()
	opt := driver.Options{Solver: SolverGLMNET, Tol: tol, MaxEpochs: 2000, StallEpochs: -1, Threads: 2}.WithDefaults()
	m, err := newGLMNET(prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(m)
	}
	res, err := driver.Run(context.Background(), m, opt)
	m.Finish(res)
	if err != nil || !res.Converged {
		t.Fatalf("stop %q at gap %.3g: %v", res.Stop, res.Final.RelGap, err)
	}
	return res.ModelPoint(m.Point(), nil), res
}

func bundled(t *testing.T, name string) (*sparse.CSR, []float64) {
	t.Helper()
	ds, err := sparse.ReadFile(enginetest.BundledPath(name), sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := ds.Y
	if name == "heart_scale" {
		b, _, _ = sparse.BinaryLabels(ds.Y)
	}
	return ds.X, b
}

// TestGLMNETKKT: at the solution certified to a 1e-12 gap every
// coordinate meets the optimality conditions to within 1e-6 (kktViolation), for the logistic loss, the
// squared hinge and the lasso, with and without an L2 term.
func TestGLMNETKKT(t *testing.T) {
	hx, hb := bundled(t, "heart_scale")
	rx, rb := bundled(t, "housing_scale")
	for _, c := range []struct {
		name string
		prob objective.Problem
	}{
		{"logistic", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1e-2}}},
		{"logistic+L2", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-2, L1: 1e-2}}},
		{"sqhinge", objective.Problem{X: hx, B: hb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{L1: 1e-2}}},
		{"lasso", objective.Problem{X: rx, B: rb, Loss: objective.Squared{}, Reg: objective.ElasticNet{L1: 0.5}}},
		{"elastic net", objective.Problem{X: rx, B: rb, Loss: objective.Squared{}, Reg: objective.ElasticNet{Lambda: 1e-2, L1: 0.5}}},
	} {
		w, res := glmnetRun(t, c.prob, 1e-12, nil)
		nnz := 0
		for _, v := range w {
			if v != 0 {
				nnz++
			}
		}
		if v := enginetest.KktViolation(c.prob, w); v > 1e-6 {
			t.Errorf("%s: KKT violated by %.3g (l1 %g), %d nonzeros, gap %.3g", c.name, v, l1Of(c.prob), nnz, res.Final.RelGap)
		}
		if nnz == 0 || nnz == len(w) {
			t.Errorf("%s: %d of %d weights nonzero: the test wants a sparse, nonzero optimum", c.name, nnz, len(w))
		}
	}
}

// TestGLMNETShrinkingAndHessianAgree: shrinking on and off, and the
// coordinate descent on the formed Hessian or on A's columns, reach the
// same optimum and the same support.
func TestGLMNETShrinkingAndHessianAgree(t *testing.T) {
	x, b := enginetest.SparseData(4000, 40, 6, 9)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 3e-3}}
	if !denseHessianPays(x) {
		t.Fatal("the test wants data where the Hessian is formed")
	}
	ref, rres := glmnetRun(t, prob, 1e-11, nil)
	zeros := 0
	for _, v := range ref {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == len(ref) {
		t.Fatalf("%d of %d weights are zero: the test wants features to shrink and features to keep", zeros, len(ref))
	}
	for name, tweak := range map[string]func(*glmnet){
		"no shrinking": func(m *glmnet) { m.noShrink = true },
		"columns":      func(m *glmnet) { m.hmat, m.hd = nil, nil },
	} {
		w, res := glmnetRun(t, prob, 1e-11, tweak)
		if d := math.Abs(res.Final.Primal - rres.Final.Primal); d > 1e-10*rres.Final.Primal {
			t.Errorf("%s: P = %.15g, with both on %.15g", name, res.Final.Primal, rres.Final.Primal)
		}
		for j := range w {
			if (w[j] == 0) != (ref[j] == 0) && math.Max(math.Abs(w[j]), math.Abs(ref[j])) > 1e-6 {
				t.Errorf("%s: feature %d is %g, with both on %g", name, j, w[j], ref[j])
			}
		}
	}
}

// TestGLMNETRawCounts: on raw counts (rows of norm 1 to ~700) newGLMNET
// reaches a 1e-7 gap at l1 = 1/n, cold and warm-started from the optimum
// at 8/n as a regularisation path starts it. At that start some long
// document is misclassified by a margin of about 20, where φ″ ≈ e⁻²⁰ and
// φ′ ≈ ±1: its words seen nowhere else have a gradient beyond l1 and a
// curvature of about e⁻²⁰, and the unclipped coordinate steps of the model
// were of the order of 10⁸, too far for any of the line search's
// halvings ("the line search found no decrease").
func TestGLMNETRawCounts(t *testing.T) {
	x, b := enginetest.RawCountData(500, 2000, 20, 500, 50, 0.05, 2)
	if denseHessianPays(x) {
		t.Fatal("the test wants wide data, solved on A's columns")
	}
	n := float64(x.Rows)
	prob := func(l1 float64) objective.Problem {
		return objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: l1}}
	}
	_, cold := glmnetRun(t, prob(1/n), 1e-7, nil)
	start, _ := glmnetRun(t, prob(8/n), 1e-7, nil)
	_, warm := glmnetRun(t, prob(1/n), 1e-7, func(m *glmnet) { copy(m.w, start) })
	// Each P is within 1e-7 of P*: so are they of each other, twice over.
	if d := math.Abs(warm.Final.Primal - cold.Final.Primal); d > 2e-7*cold.Final.Primal {
		t.Errorf("P = %.12g warm-started, %.12g cold", warm.Final.Primal, cold.Final.Primal)
	}
}

// TestGLMNETNews20 is the real data the generated problem above stands in
// for: news20 binarised, raw counts, l1 = 1/n, to a 1e-7 gap.
func TestGLMNETNews20(t *testing.T) {
	if testing.Short() {
		t.Skip("news20: seconds")
	}
	x, b := enginetest.News20Binary(t)
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1 / float64(x.Rows)}}
	glmnetRun(t, prob, 1e-7, nil)
}

// l1Of returns the problem's L1 strength.
func l1Of(prob objective.Problem) float64 {
	_, l1 := prob.Reg.Strengths()
	return l1
}

// glmnetRunOpt is glmnetRun with the options given.
func glmnetRunOpt(t *testing.T, prob objective.Problem, opt driver.Options, tweak func(*glmnet)) ([]float64, *driver.Result) {
	t.Helper()
	m, err := newGLMNET(prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(m)
	}
	res, err := driver.Run(context.Background(), m, opt)
	m.Finish(res)
	if err != nil || !res.Converged {
		t.Fatalf("stop %q at gap %.3g: %v", res.Stop, res.Final.RelGap, err)
	}
	return res.ModelPoint(m.Point(), nil), res
}

// correlated returns a small problem of bench/synth's dense correlated
// columns (pairwise correlations 0.49 to 0.90, 8 true features).
func correlated(t *testing.T, rows, cols int) (*sparse.CSR, []float64) {
	t.Helper()
	spec := synth.CorrelatedDense(3)
	spec.Rows, spec.Cols = rows, cols
	x, b, _, err := synth.GenerateCorrelated(spec)
	if err != nil {
		t.Fatal(err)
	}
	return x, b
}

// TestGLMNETBundlesDeterministic: the parallel coordinate descent (PCDN
// bundles) gives the same model bit for bit at one and two workers and
// from run to run, its row ranges being fixed, and reaches the serial
// path's optimum: on bundled data and on dense correlated columns, where
// the bundles' combined steps overshoot most and the line search works.
func TestGLMNETBundlesDeterministic(t *testing.T) {
	hx, hb := bundled(t, "heart_scale")
	cx, cb := correlated(t, 2000, 30)
	for _, c := range []struct {
		name string
		prob objective.Problem
	}{
		{"heart_scale", objective.Problem{X: hx, B: hb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1e-2}}},
		{"heart_scale sqhinge+L2", objective.Problem{X: hx, B: hb, Loss: objective.SquaredHinge{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-2}}},
		{"correlated", objective.Problem{X: cx, B: cb, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1 / float64(cx.Rows)}}},
	} {
		// 1e-8: the bundles' steps on the correlated columns slow down
		// below gaps of about 1e-9 (see glmnetBundleMaxCols).
		opt := driver.Options{Solver: SolverGLMNET, Tol: 1e-8, MaxEpochs: 500, StallEpochs: -1, Threads: 2, Deterministic: true, Seed: 7}.WithDefaults()
		pool := sched.NewPool(2)
		bundles := func(workers int) func(*glmnet) {
			return func(m *glmnet) {
				m.hmat, m.hd = nil, nil
				m.bundles = newBundleCD(m, pool, 2)
				m.bundles.workers = workers
			}
		}
		w1, r1 := glmnetRunOpt(t, c.prob, opt, bundles(1))
		w2, _ := glmnetRunOpt(t, c.prob, opt, bundles(2))
		w2b, _ := glmnetRunOpt(t, c.prob, opt, bundles(2))
		pool.Close()
		for j := range w1 {
			if math.Float64bits(w1[j]) != math.Float64bits(w2[j]) || math.Float64bits(w2[j]) != math.Float64bits(w2b[j]) {
				t.Fatalf("%s: weight %d is %v at one worker, %v and %v at two", c.name, j, w1[j], w2[j], w2b[j])
			}
		}
		ws, rs := glmnetRunOpt(t, c.prob, opt, func(m *glmnet) { m.hmat, m.hd, m.bundles = nil, nil, nil })
		// Both P are within 1e-8 of P*.
		if d := math.Abs(r1.Final.Primal - rs.Final.Primal); d > 2e-8*math.Max(1, rs.Final.Primal) {
			t.Errorf("%s: P = %.15g with bundles, %.15g serial", c.name, r1.Final.Primal, rs.Final.Primal)
		}
		for j := range ws {
			if (w1[j] == 0) != (ws[j] == 0) && math.Max(math.Abs(w1[j]), math.Abs(ws[j])) > 1e-4 {
				t.Errorf("%s: feature %d is %g with bundles, %g serial", c.name, j, w1[j], ws[j])
			}
		}
	}
}

// TestGLMNETScreeningSafe: the features Gap Safe screening discards are
// zero in the optimum solved without it, and both runs reach the same P,
// cold and warm-started from a larger l1's optimum as the path starts
// them, where the first certificate screens most.
func TestGLMNETScreeningSafe(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		t.Run(fmt.Sprintf("weighted=%v", weighted), func(t *testing.T) { testGLMNETScreeningSafe(t, weighted) })
	}
}

// testGLMNETScreeningSafe is TestGLMNETScreeningSafe, with sample weights
// where weighted is set: 30 on every row, and l1 30 times as large, the
// same problem scaled, whose sphere is √30 times the unweighted one (the
// rule's weighted column norms).
func testGLMNETScreeningSafe(t *testing.T, weighted bool) {
	x, b := enginetest.SparseData(3000, 200, 8, 5)
	n := float64(x.Rows)
	var sw []float64
	if weighted {
		sw = make([]float64, x.Rows)
		for k := range sw {
			sw[k] = 30
		}
		n /= 30
	}
	prob := func(l1 float64) objective.Problem {
		return objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: l1}, SampleWeights: sw}
	}
	ref, rres := glmnetRun(t, prob(4/n), 1e-11, func(m *glmnet) { m.noScreen = true })
	start, _ := glmnetRun(t, prob(16/n), 1e-9, nil)
	for _, warm := range []bool{false, true} {
		var run *glmnet
		_, res := glmnetRun(t, prob(4/n), 1e-11, func(m *glmnet) {
			if warm {
				copy(m.w, start)
			}
			run = m
		})
		if d := math.Abs(res.Final.Primal - rres.Final.Primal); d > 2e-11*math.Max(1, rres.Final.Primal) {
			t.Errorf("warm %v: P = %.15g screened, %.15g without", warm, res.Final.Primal, rres.Final.Primal)
		}
		if run.nScreened == 0 {
			t.Errorf("warm %v: nothing screened", warm)
		}
		for j, out := range run.screened {
			if out && math.Abs(ref[j]) > 1e-9 {
				t.Errorf("warm %v: feature %d screened, %g at the optimum", warm, j, ref[j])
			}
		}
		if weighted && !warm {
			// The weights scale P by 30, which the rule must not see: it
			// screens what it screens on the unweighted problem.
			var plain *glmnet
			glmnetRun(t, objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 4 / float64(x.Rows)}}, 1e-11,
				func(m *glmnet) { plain = m })
			if !slices.Equal(run.screened, plain.screened) {
				t.Errorf("%d features screened with weights 30, %d without", run.nScreened, plain.nScreened)
			}
			// At a gap where the sphere decides: the rule with the
			// weighted column norms, Σₖ wₖaₖⱼ², summed here by rows.
			norm := make([]float64, x.Cols)
			for k := range x.Rows {
				val, idx := x.Row(k)
				for p, j := range idx {
					norm[j] += sw[k] * val[p] * val[p]
				}
			}
			clear(run.w)
			run.screened, run.nScreened = nil, 0
			gap := 1e-3
			r := math.Sqrt(2 * gap / (run.loss.Gamma() * float64(x.Rows)))
			run.screen(gap, 1)
			want, differs := 0, 0
			for j, v := range run.lossGrad {
				in := math.Abs(v)+math.Sqrt(norm[j])*r < run.reg.L1
				if in {
					want++
				}
				if in != run.screened[j] {
					differs++
				}
			}
			if differs > 0 || want == 0 || want == x.Cols {
				t.Errorf("at a gap of %g: %d features screened, %d by the weighted norms, %d differ", gap, run.nScreened, want, differs)
			}
		}
	}
}

// TestGLMNETSupportMatchesLIBLINEAR: on the dense correlated set of
// bench/synth (11,000 × 68), at l1 = 1/n, our support and LIBLINEAR -s 6
// -c 1's differ in at most 2% of the features (the correlated columns
// make the support the hard part of the problem).
func TestGLMNETSupportMatchesLIBLINEAR(t *testing.T) {
	if testing.Short() {
		t.Skip("LIBLINEAR on 11,000 rows")
	}
	train, err := exec.LookPath("liblinear-train")
	if err != nil {
		t.Skip("liblinear-train is not installed")
	}
	x, b, _, err := synth.GenerateCorrelated(synth.CorrelatedDense(1))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, model := filepath.Join(dir, "corr.svm"), filepath.Join(dir, "corr.model")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.WriteLIBSVM(f, &sparse.Dataset{Name: "corr", X: x, Y: b}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, err := exec.Command(train, "-s", "6", "-c", "1", "-e", "1e-6", data, model).CombinedOutput(); err != nil {
		t.Fatalf("liblinear-train: %v\n%s", err, out)
	}
	ll, err := enginetest.ReadLIBLINEARWeights(model, x.Cols)
	if err != nil {
		t.Fatal(err)
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{L1: 1 / float64(x.Rows)}}
	w, _ := glmnetRun(t, prob, 1e-10, nil)
	var ours, theirs, differ int
	for j := range w {
		if w[j] != 0 {
			ours++
		}
		if ll[j] != 0 {
			theirs++
		}
		if (w[j] != 0) != (ll[j] != 0) {
			differ++
		}
	}
	if float64(differ) > 0.02*float64(x.Cols) {
		t.Errorf("supports differ in %d of %d features (ours %d, LIBLINEAR's %d)", differ, x.Cols, ours, theirs)
	}
	t.Logf("supports: ours %d, LIBLINEAR's %d, %d differ", ours, theirs, differ)
}

// TestGLMNETOrthantStep: on heart_scale's formed Hessian, from a rough
// step whose signs are those of the model's minimiser on its orthant,
// orthantStep lowers the model q, keeps H·d in step with d, and, where
// it reports a full solve, leaves ∇q zero on every nonzero coordinate
// of w + d; from a step that a solve would carry across zero it holds
// that coordinate at zero instead.
func TestGLMNETOrthantStep(t *testing.T) {
	x, b := bundled(t, "heart_scale")
	prob := objective.Problem{X: x, B: b, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-3, L1: 1e-3}}
	w0 := make([]float64, x.Cols)
	for j := range w0 {
		w0[j] = 0.1 * math.Cos(float64(j))
	}
	opt := driver.Options{Solver: SolverGLMNET, Threads: 2, WarmStart: w0}.WithDefaults()
	s, err := newGLMNET(prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.hmat == nil {
		t.Fatal("glmnet does not form the Hessian on heart_scale")
	}
	if err := s.sweepAt(); err != nil {
		t.Fatal(err)
	}
	if err := s.formHessian(); err != nil {
		t.Fatal(err)
	}
	d, l1, mu := s.d, s.reg.L1, s.reg.Lambda+glmnetNu
	model := func() float64 { // q(d) with the mirrored H
		var q float64
		for i := range d {
			var hi float64
			for j := range d {
				hi += s.hmat[i*d+j] * s.step[j]
			}
			q += s.grad[i]*s.step[i] + 0.5*s.step[i]*(hi+mu*s.step[i]) + l1*math.Abs(s.w[i]+s.step[i])
		}
		return q
	}
	start := func(scale float64) {
		s.inner = s.inner[:0]
		for j := range d {
			s.inner = append(s.inner, int32(j))
			s.step[j] = -scale * s.grad[j] / (s.hdiag[j] + mu)
		}
		for i := range d {
			s.hd[i] = 0
			for j := range d {
				s.hd[i] += s.hmat[i*d+j] * s.step[j]
			}
		}
	}
	for _, scale := range []float64{0.01, 1} {
		start(scale)
		q0 := model()
		full := s.orthantStep()
		if q1 := model(); !(q1 < q0) {
			t.Errorf("scale %g: q went from %.12g to %.12g", scale, q0, q1)
		}
		zeros := 0
		for i := range d {
			var hi float64
			for j := range d {
				hi += s.hmat[i*d+j] * s.step[j]
			}
			if math.Abs(hi-s.hd[i]) > 1e-12*(1+math.Abs(hi)) {
				t.Fatalf("scale %g: (H·d)[%d] = %g, kept %g", scale, i, hi, s.hd[i])
			}
			wd := s.w[i] + s.step[i]
			if wd == 0 {
				zeros++
				continue
			}
			if g := s.grad[i] + hi + mu*s.step[i] + l1*math.Copysign(1, wd); full && math.Abs(g) > 1e-10 {
				t.Errorf("scale %g: ∂q/∂d[%d] = %.3g after a full solve", scale, i, g)
			}
		}
		t.Logf("scale %g: full solve %v, %d coordinates held at zero", scale, full, zeros)
		if scale == 1 && (!full || zeros == 0) {
			t.Errorf("scale %g: full %v with %d zeros: the test wants a solve that stops at zero and then finishes", scale, full, zeros)
		}
	}
}
