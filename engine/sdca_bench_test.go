package engine

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/sparse"
)

// BenchmarkSDCAAsyncEpoch times epochs of the asynchronous SDCA solvers
// (atomic and wild adds) on one and two workers, logistic loss at
// λ = 1e-5, and the synchronous sdca for reference, all in one loop so
// that the ratios come from the same run. ns/epoch counts the iterations
// only. It reports t1-ns/epoch and t2-ns/epoch for each mode, x-speedup (one
// worker's epoch over two workers'), and sync-ns/epoch.
//
// url200k is url-shaped 0/1 rows (bench/synth, 200k rows, seed 1) with
// their columns grouped by count as train groups them, where sdca-async's
// workers buffer the frequent columns.
//
//	go test ./engine -run '^$' -bench SDCAAsyncEpoch -benchtime 3x
func BenchmarkSDCAAsyncEpoch(b *testing.B) {
	for _, file := range []string{"a9a", "w8a", "news20", "url200k"} {
		var x *sparse.CSR
		var y []float64
		if file == "url200k" {
			var err error
			if x, y, err = synth.Generate(synth.URLLike(200_000, 1)); err != nil {
				b.Fatal(err)
			}
			x.GroupColumnsByCount(ColumnTiers(x.Cols))
		} else {
			x, y = epochData(b, file) // news20: rows scaled to norm 1
		}
		prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-5}}
		for _, solver := range []Solver{SolverSDCAAsync, SolverSDCAWild} {
			b.Run(fmt.Sprintf("%s/%s", file, solver), func(b *testing.B) {
				var iter [3]float64
				var epochs [3]int
				for b.Loop() {
					for k, run := range []Options{
						{Solver: solver, Threads: 1},
						{Solver: solver, Threads: 2},
						{Solver: SolverSDCA, Threads: 1},
					} {
						run.Tol, run.MaxEpochs = -1, 10
						_, res, err := Train(context.Background(), prob, run)
						if err != nil {
							b.Fatal(err)
						}
						iter[k] += res.Final.IterSeconds
						epochs[k] += res.Final.Epoch
					}
				}
				per := func(k int) float64 { return iter[k] / float64(epochs[k]) * 1e9 }
				b.ReportMetric(per(0), "t1-ns/epoch")
				b.ReportMetric(per(1), "t2-ns/epoch")
				b.ReportMetric(per(0)/per(1), "x-speedup")
				b.ReportMetric(per(2), "sync-ns/epoch")
			})
		}
	}
}

// BenchmarkSDCAPasses reports the passes (and seconds) sdca, sdca-async on
// two workers, dfsdca and AdaSPDC take to a relative gap of 1e-6 on a9a,
// logistic loss, λ = 1e-5 (the same as `adaspdc train -data
// ../shared/data/a9a -loss logistic -lambda 1e-5 -solver NAME -tol 1e-6`).
//
//	go test ./engine -run '^$' -bench SDCAPasses -benchtime 1x
func BenchmarkSDCAPasses(b *testing.B) {
	x, y := sharedData(b, "a9a")
	prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-5}}
	for _, run := range []Options{
		{Solver: SolverSDCA, Threads: 1},
		{Solver: SolverSDCAAsync, Threads: 2},
		{Solver: SolverDFSDCA},
		{Solver: SolverAdaSPDC, Threads: 1},
	} {
		b.Run(string(run.Solver), func(b *testing.B) {
			run.Tol, run.MaxEpochs, run.Seed = 1e-6, 2000, 1
			var res *Result
			for b.Loop() {
				var err error
				if _, res, err = Train(context.Background(), prob, run); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(res.Final.Passes, "passes")
			b.ReportMetric(res.Final.Seconds, "seconds")
			b.ReportMetric(res.Final.RelGap, "rel-gap")
		})
	}
}

// BenchmarkLIBLINEARHinge compares sdca on the hinge-loss SVM of a9a with
// LIBLINEAR's dual coordinate descent, `liblinear-train -s 3 -c C -e 1e-8`
// with C = 1/(nλ) and no bias, for λ = 1e-4 and 1e-5. LIBLINEAR's objectives
// are ours divided by λ: its weights are evaluated with engine.Certify (P in
// our scale), and its dual is minus the "Objective value" it prints, times
// λ. sdca runs 1000 epochs (LIBLINEAR's iteration cap) or to a relative gap
// of 1e-8. Reported: both primal and dual values, and lib-minus-sdca-P, the
// difference of the primal values relative to sdca's (positive: sdca's
// model is better). Skipped when liblinear-train is not installed
// (apt-get install liblinear-tools).
//
//	go test ./engine -run '^$' -bench LIBLINEARHinge -benchtime 1x
func BenchmarkLIBLINEARHinge(b *testing.B) {
	bin, err := exec.LookPath("liblinear-train")
	if err != nil {
		b.Skip("liblinear-train not installed")
	}
	path := filepath.Join("..", "..", "shared", "data", "a9a")
	x, y := sharedData(b, "a9a")
	for _, lam := range []float64{1e-4, 1e-5} {
		b.Run(fmt.Sprintf("lambda=%g", lam), func(b *testing.B) {
			c := 1 / (float64(x.Rows) * lam)
			prob := Problem{X: x, B: y, Loss: Hinge{}, Reg: ElasticNet{Lambda: lam}}
			modelPath := filepath.Join(b.TempDir(), "a9a.model")
			var res *Result
			var cert TracePoint
			var libDual float64
			for b.Loop() {
				cmd := exec.Command(bin, "-s", "3", "-c", strconv.FormatFloat(c, 'g', 17, 64), "-e", "1e-8", path, modelPath)
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("liblinear-train: %v: %s", err, out)
				}
				for _, line := range strings.Split(string(out), "\n") {
					if v, ok := strings.CutPrefix(line, "Objective value = "); ok {
						obj, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
						if err != nil {
							b.Fatal(err)
						}
						libDual = -obj * lam
					}
				}
				w, err := readLIBLINEARWeights(modelPath, x.Cols)
				if err != nil {
					b.Fatal(err)
				}
				if cert, err = Certify(prob, w); err != nil {
					b.Fatal(err)
				}
				opt := Options{Solver: SolverSDCA, Threads: 1, Tol: 1e-8, MaxEpochs: 1000, StallEpochs: -1, Seed: 1}
				if _, res, err = Train(context.Background(), prob, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("λ = %g: sdca %d epochs P %.10g D %.10g rel gap %.3g; LIBLINEAR P %.10g D %.10g (gap %.3g)",
				lam, res.Final.Epoch, res.Final.Primal, res.Final.Dual, res.Final.RelGap, cert.Primal, libDual, cert.Primal-libDual)
			b.ReportMetric(res.Final.Primal, "sdca-P")
			b.ReportMetric(res.Final.Dual, "sdca-D")
			b.ReportMetric(float64(res.Final.Epoch), "sdca-epochs")
			b.ReportMetric(cert.Primal, "lib-P")
			b.ReportMetric(libDual, "lib-D")
			b.ReportMetric((cert.Primal-res.Final.Primal)/res.Final.Primal, "lib-minus-sdca-P")
		})
	}
}
