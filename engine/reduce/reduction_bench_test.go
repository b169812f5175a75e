package reduce

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// BenchmarkAdaptSmoothA9a solves the hinge SVM on a9a at λ = 1/n
// (LIBLINEAR's C = 1) with AdaptSmooth over AdaSPDC to a relative gap of
// 3e-7 (1e-6 of P* ≈ 0.35), and, when liblinear-train is on the PATH,
// compares with `liblinear-train -s 3 -c 1 -e 1e-8` evaluated by Certify:
// rel-obj-diff is (P_liblinear − P_adaptsmooth)/P_adaptsmooth, and
// liblinear-above-D is (P_liblinear − D)/D with D the reduction's certified
// dual bound (an upper bound on LIBLINEAR's relative suboptimality).
//
//	go test ./engine/reduce -run '^$' -bench AdaptSmoothA9a -benchtime 1x
func BenchmarkAdaptSmoothA9a(b *testing.B) {
	x, y := enginetest.SharedData(b, "a9a")
	lambda := 1 / float64(x.Rows)
	prob := objective.Problem{X: x, B: y, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: lambda}}
	var res *driver.Result
	var model *enginetest.Model
	for b.Loop() {
		var err error
		model, res, err = enginetest.Train(context.Background(), prob, driver.Options{Solver: SolverAdaptSmooth, Tol: 3e-7, MaxEpochs: 5000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
	}
	p, _ := driver.Certify(prob, model.Weights)
	b.ReportMetric(float64(res.Final.Epoch), "epochs")
	b.ReportMetric(res.Final.RelGap, "rel-gap")
	b.ReportMetric(res.Final.Seconds, "run-s")
	b.Logf("adaptsmooth: stop %s, P %.12g, D %.12g, %d epochs, %.2fs; %s", res.Stop, p.Primal, res.Final.Dual, res.Final.Epoch, res.Final.Seconds, res.Note)
	if _, err := exec.LookPath("liblinear-train"); err != nil {
		b.Log("liblinear-train not on the PATH: no comparison (apt-get install liblinear-tools)")
		return
	}
	modelPath := filepath.Join(b.TempDir(), "a9a.model")
	data := filepath.Join("..", "..", "shared", "data", "a9a")
	out, err := exec.Command("liblinear-train", "-s", "3", "-c", "1", "-e", "1e-8", data, modelPath).CombinedOutput()
	if err != nil {
		b.Fatalf("liblinear-train: %v\n%s", err, out)
	}
	w, err := enginetest.ReadLIBLINEARWeights(modelPath, x.Cols) // sdca_bench_test.go
	if err != nil {
		b.Fatal(err)
	}
	lib, err := driver.Certify(prob, w)
	if err != nil {
		b.Fatal(err)
	}
	rel := (lib.Primal - p.Primal) / p.Primal
	above := (lib.Primal - res.Final.Dual) / res.Final.Dual
	b.ReportMetric(rel, "rel-obj-diff")
	b.ReportMetric(above, "liblinear-above-D")
	warn := ""
	if strings.Contains(string(out), "max number of iterations") {
		warn = " (liblinear stopped at its iteration limit)"
	}
	b.Logf("liblinear -s 3 -c 1 -e 1e-8: P %.12g%s; (P_lib − P)/P = %.3g, (P_lib − D)/D = %.3g", lib.Primal, warn, rel, above)
	if math.IsNaN(rel) {
		b.Fatal("no comparison")
	}
}

// BenchmarkReductionVariants measures the choices of the practical
// implementation (reduction.go) on small problems: epochs to the relative
// gap, or the stop reason and the gap reached, for the paper's centre x₀
// against the moving one, without the dual warm start, and without the
// bias-share stage end, each at ReductionScale 1, 0.1 and 0.01.
//
//	go test ./engine/reduce -run '^$' -bench ReductionVariants -benchtime 1x -v
func BenchmarkReductionVariants(b *testing.B) {
	type problem struct {
		name   string
		prob   objective.Problem
		solver driver.Solver
		tol    float64
	}
	var probs []problem
	for _, name := range []string{"housing_scale", "abalone_scale"} {
		x, y := enginetest.SharedRegression(b, name)
		probs = append(probs, problem{name + " lasso", objective.Problem{X: x, B: y, Loss: objective.Squared{}, Reg: objective.ElasticNet{L1: 0.1 * enginetest.LassoMaxL1(x, y)}}, SolverAdaptReg, 1e-7})
	}
	for _, name := range []string{"heart_scale", "a1a"} {
		x, y := enginetest.SharedData(b, name)
		lam := 1 / float64(x.Rows)
		probs = append(probs,
			problem{name + " svm", objective.Problem{X: x, B: y, Loss: objective.Hinge{}, Reg: objective.ElasticNet{Lambda: lam}}, SolverAdaptSmooth, 1e-6},
			problem{name + " l1svm", objective.Problem{X: x, B: y, Loss: objective.Hinge{}, Reg: objective.ElasticNet{L1: 10 * lam}}, SolverJointAdapt, 1e-4})
	}
	variants := []struct {
		name           string
		recentre, warm bool
		biasShare      float64
	}{
		{"default", true, true, 0.25},
		{"paper centre", false, true, 0.25},
		{"no warm duals", true, false, 0.25},
		{"no bias share", true, true, 0},
	}
	defer func(a, w bool, s float64) { reductionRecentre, reductionWarmDuals, stageBiasShare = a, w, s }(reductionRecentre, reductionWarmDuals, stageBiasShare)
	for b.Loop() {
		for _, p := range probs {
			for _, v := range variants {
				reductionRecentre, reductionWarmDuals, stageBiasShare = v.recentre, v.warm, v.biasShare
				line := fmt.Sprintf("%-18s %-14s", p.name, v.name)
				for _, scale := range []float64{1, 0.1, 0.01} {
					_, res, err := enginetest.Train(context.Background(), p.prob, driver.Options{Solver: p.solver, Tol: p.tol, MaxEpochs: 1500, Seed: 1}.With(Settings{Scale: scale}))
					if err != nil {
						line += fmt.Sprintf(" | %g: error %v", scale, err)
						continue
					}
					if res.Converged {
						line += fmt.Sprintf(" | %g: %5d epochs", scale, res.Final.Epoch)
					} else {
						line += fmt.Sprintf(" | %g: %s %.2g", scale, res.Stop, res.Final.RelGap)
					}
				}
				b.Log(line)
			}
		}
	}
}
