package harness

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

// writeUnequalRows writes a LIBSVM file of n dense rows in d columns whose
// norms spread over two orders of magnitude (row k scaled by 10^u, u
// uniform in [−1, 1]), the case where AdaSPDC's per-row steps pay. Targets
// are aₖᵀw + noise, or their signs when classification is set.
func writeUnequalRows(t *testing.T, path string, n, d int, classification bool, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	var b strings.Builder
	for k := 0; k < n; k++ {
		s := math.Pow(10, 2*rng.Float64()-1)
		row := make([]float64, d)
		var z float64
		for j := range row {
			row[j] = s * rng.NormFloat64() / math.Sqrt(float64(d))
			z += row[j] * w[j]
		}
		z += 0.3 * rng.NormFloat64()
		if classification {
			z = math.Copysign(1, z)
		}
		fmt.Fprintf(&b, "%g", z)
		for j, v := range row {
			fmt.Fprintf(&b, " %d:%.6g", j+1, v)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyData writes a classification file "cls" and a regression file "reg"
// to a temporary folder and returns it.
func tinyData(t *testing.T) string {
	dir := t.TempDir()
	writeUnequalRows(t, filepath.Join(dir, "cls"), 300, 20, true, 1)
	writeUnequalRows(t, filepath.Join(dir, "reg"), 300, 20, false, 2)
	return dir
}

// runTiny runs cfg and checks the files every reproduction writes.
func runTiny(t *testing.T, cfg CurvesConfig) *CurvesResult {
	t.Helper()
	res, err := Curves(context.Background(), cfg, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Write(); err != nil {
		t.Fatal(err)
	}
	names := []string{"summary.md", "curves.csv", "reference.csv"}
	for _, g := range res.groups() {
		names = append(names, res.FileBase(g)+".png", res.FileBase(g)+".svg")
	}
	for _, name := range names {
		if st, err := os.Stat(filepath.Join(cfg.Out, name)); err != nil || st.Size() < 60 {
			t.Errorf("%s missing or tiny: %v", name, err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(cfg.Out, "curves.csv"))
	if !strings.HasPrefix(string(csv), "problem,method,passes,mean_suboptimality,") {
		t.Errorf("curves.csv header: %.80q", csv)
	}
	// The smooth problems' references are certified by L-BFGS (or AdaSPDC).
	for pi, p := range cfg.Panels {
		if r := res.Ref[pi]; p.RefSolver == "" && !(r.RelGap() <= 1e-10) {
			t.Errorf("%s: reference relative gap %g", p.Title, r.RelGap())
		}
	}
	return res
}

// final returns a method's mean suboptimality at the start and the end.
func startEnd(t *testing.T, res *CurvesResult, pi int, label string) (float64, float64) {
	for mi, m := range res.Config.Methods {
		if m.Label == label && res.Curves[pi][mi] != nil {
			c := res.Curves[pi][mi].Mean
			return c[0], c[len(c)-1]
		}
	}
	t.Fatalf("%s: no curve %s", res.Config.Panels[pi].Title, label)
	return 0, 0
}

// On rows whose norms spread a hundredfold, AdaSPDC ends below SPDC on
// both of Zhu & Storkey's losses, and every method falls.
func TestZSFig23Tiny(t *testing.T) {
	c := ZSFig23Config{DataDir: tinyData(t), Datasets: []string{"cls"}, Losses: []string{"smoothhinge", "logistic"},
		Lambdas: []float64{1e-3}, Passes: 30, Seeds: 1, Out: t.TempDir(), Command: "test"}
	cfg, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	res := runTiny(t, cfg)
	for pi, p := range cfg.Panels {
		_, ada := startEnd(t, res, pi, "AdaSPDC")
		_, spdc := startEnd(t, res, pi, "SPDC")
		if !(ada < spdc) {
			t.Errorf("%s: AdaSPDC ends at %g, SPDC at %g", p.Title, ada, spdc)
		}
		if s, e := startEnd(t, res, pi, "AdaSPDC"); !(e < 1e-3*s) {
			t.Errorf("%s, AdaSPDC: %g at the start, %g at the end", p.Title, s, e)
		}
		for _, m := range cfg.Methods {
			if s, e := startEnd(t, res, pi, m.Label); !(e < 0.5*s) {
				t.Errorf("%s, %s: %g at the start, %g at the end", p.Title, m.Label, s, e)
			}
		}
	}
}

// At λ = 1/n every Wang–Xiao curve falls a hundredfold in 30 passes.
func TestWXFig23Tiny(t *testing.T) {
	c := WXFig23Config{DataDir: tinyData(t), Regression: []string{"reg"}, Logistic: []string{"cls"},
		Scales: []float64{1}, Passes: 30, Seeds: 1, Out: t.TempDir(), Command: "test"}
	cfg, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	res := runTiny(t, cfg)
	for pi, p := range cfg.Panels {
		for _, m := range cfg.Methods {
			if s, e := startEnd(t, res, pi, m.Label); !(e < 1e-2*s) {
				t.Errorf("%s, %s: %g at the start, %g at the end", p.Title, m.Label, s, e)
			}
		}
	}
}

// A fixed large σ stops at its bias; AdaptReg, which halves σ, ends far
// below it. On the SVM both curves must fall: AdaptSmooth over AdaSPDC
// oscillates on these rows (its suboptimality moves between 0.006 and
// 0.04 from pass 15 on), which this test records rather than hides.
func TestAZHTiny(t *testing.T) {
	c := AZHConfig{DataDir: tinyData(t), Lasso: []string{"reg"}, LassoL1: []float64{1e-3}, Hinge: []string{"cls"}, HingeL2: []float64{1e-3},
		FixedReg: []float64{1e-1}, FixedSmth: []float64{0.5}, Passes: 30, Seeds: 1, Out: t.TempDir(), Command: "test"}
	cfg, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	res := runTiny(t, cfg)
	for pi, p := range cfg.Panels {
		if p.Group == "svm" {
			for _, label := range []string{"fixed smoothing 0.5", "AdaptSmooth"} {
				if s, e := startEnd(t, res, pi, label); !(e < 0.1*s) {
					t.Errorf("%s, %s: %g at the start, %g at the end", p.Title, label, s, e)
				}
			}
			continue
		}
		_, f := startEnd(t, res, pi, "fixed σ = 0.1")
		_, r := startEnd(t, res, pi, "AdaptReg")
		if !(r < 1e-2*f) || !(f > 0.1) {
			t.Errorf("%s: AdaptReg ends at %g, fixed σ = 0.1 at %g", p.Title, r, f)
		}
	}
}

func TestCheckpoints(t *testing.T) {
	got := fmt.Sprint(Checkpoints(20))
	if got != "[0 1 2 3 4 6 9 13 19 20]" {
		t.Errorf("Checkpoints(20) = %s", got)
	}
}

// The reference's L-BFGS (gonum's) reaches the limits of float64 on a
// smooth L2 problem by itself, so that smooth panels' P* is certified
// without the AdaSPDC run; it refuses what it cannot minimise.
func TestLBFGSReference(t *testing.T) {
	data, err := LoadData(filepath.Join(tinyData(t), "cls"))
	if err != nil {
		t.Fatal(err)
	}
	for _, loss := range []string{"logistic", "smoothhinge", "squared"} {
		prob, err := data.Problem(loss, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		w, err := lbfgs(prob)
		if err != nil {
			t.Fatalf("%s: %v", loss, err)
		}
		cert, err := engine.Certify(prob, w)
		if err != nil {
			t.Fatal(err)
		}
		if !(cert.RelGap <= 1e-10) {
			t.Errorf("%s: L-BFGS's point has relative gap %.3g", loss, cert.RelGap)
		}
	}
	hinge, _ := data.Problem("hinge", 1e-3)
	if _, err := lbfgs(hinge); err == nil {
		t.Error("L-BFGS accepted the non-smooth hinge loss")
	}
	l1, _ := data.Problem("logistic", 1e-3)
	l1.Reg = engine.ElasticNet{Lambda: 1e-3, L1: 1e-4}
	if _, err := lbfgs(l1); err == nil {
		t.Error("L-BFGS accepted an L1 term")
	}
}
