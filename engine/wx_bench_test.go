package engine

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkWXPasses measures the claim of Wang & Xiao 2017 on real data: at
// λ = 1e-4/n, with rows scaled to unit norm, the adaptive methods (Ada-SPDC,
// ADF-SPDC) need fewer passes than SPDC to a relative suboptimality
// (P − P*)/|P*| ≤ 1e-6. P* is AdaSPDC's objective at a relative duality gap
// of 1e-10 (or at the smallest gap it reaches in WX_REF_EPOCHS epochs; the
// log says which). Every solver's run is certified after every pass (a
// StopRule that never fires), and it stops at the target or at
// WX_MAX_EPOCHS. It reports passes-SOLVER for each solver and x-SOLVER,
// SPDC's passes over the solver's (above 1: fewer passes).
//
// Environment (all optional):
//
//	WX_DATA        comma-separated files of ../shared/data (default a9a,ijcnn1)
//	WX_LOSS        logistic (default) or squared
//	WX_ROWS        use the first N rows only (default all)
//	WX_SOLVERS     default spdc,wx-adaspdc,dfspdc,adfspdc
//	WX_MAX_EPOCHS  default 2000
//	WX_REF_EPOCHS  default 20000
//	WX_STEP_SCALE  the Wang–Xiao solvers' CoordinateSettings.StepScale (default 1; SPDC keeps 1)
//	WX_SEEDS       comma-separated seeds; passes are averaged (default 1)
//	WX_CSV         a file to which the suboptimality after every pass is written
//
// Run it with
//
//	go test ./engine -run '^$' -bench BenchmarkWXPasses -benchtime 1x -timeout 0
func BenchmarkWXPasses(b *testing.B) {
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	atoi := func(k string, def int) int {
		v, err := strconv.Atoi(env(k, strconv.Itoa(def)))
		if err != nil {
			b.Fatalf("%s: %v", k, err)
		}
		return v
	}
	loss, err := LossByName(env("WX_LOSS", "logistic"), 0)
	if err != nil {
		b.Fatal(err)
	}
	maxEpochs := atoi("WX_MAX_EPOCHS", 2000)
	refEpochs := atoi("WX_REF_EPOCHS", 20000)
	rows := atoi("WX_ROWS", 0)
	scale, err := strconv.ParseFloat(env("WX_STEP_SCALE", "1"), 64)
	if err != nil {
		b.Fatal(err)
	}
	var seeds []uint64
	for _, f := range strings.Split(env("WX_SEEDS", "1"), ",") {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			b.Fatalf("WX_SEEDS: %v", err)
		}
		seeds = append(seeds, v)
	}
	solvers := strings.Split(env("WX_SOLVERS", "spdc,wx-adaspdc,dfspdc,adfspdc"), ",")
	var csv *os.File
	if path := os.Getenv("WX_CSV"); path != "" {
		csv, err = os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer csv.Close()
		fmt.Fprintln(csv, "data,loss,solver,step_scale,seed,passes,rel_subopt,rel_gap")
	}
	for _, name := range strings.Split(env("WX_DATA", "a9a,ijcnn1"), ",") {
		x, y := sharedData(b, name)
		if rows > 0 && rows < x.Rows {
			sel := make([]int, rows)
			for i := range sel {
				sel[i] = i
			}
			x, y = x.SelectRows(sel), y[:rows]
		}
		x.NormalizeRowsUnit()
		n := x.Rows
		prob := Problem{X: x, B: y, Loss: loss, Reg: ElasticNet{Lambda: 1e-4 / float64(n)}}
		b.Run(fmt.Sprintf("%s/%s/n=%d", name, loss.Name(), n), func(b *testing.B) {
			for b.Loop() {
				pstar, refGap := wxReference(b, prob, refEpochs)
				b.Logf("%s: P* = %.12g (AdaSPDC, relative gap %.2g)", name, pstar, refGap)
				target := pstar + 1e-6*math.Abs(pstar)
				base := 0.0
				for _, sv := range solvers {
					sc := scale
					if sv == "spdc" || sv == "adaspdc" {
						sc = 1
					}
					var passes float64
					for _, seed := range seeds {
						p, curve := wxPassesTo(b, prob, Solver(sv), target, maxEpochs, sc, seed)
						for _, c := range curve {
							if csv != nil {
								fmt.Fprintf(csv, "%s,%s,%s,%g,%d,%g,%.4g,%.4g\n", name, loss.Name(), sv, sc, seed, c.Passes, (c.Primal-pstar)/math.Abs(pstar), c.RelGap)
							}
						}
						b.Logf("%s %s seed %d: %g passes to 1e-6 (last rel. subopt. %.3g)", name, sv, seed, p, (curve[len(curve)-1].Primal-pstar)/math.Abs(pstar))
						passes += p / float64(len(seeds))
					}
					b.ReportMetric(passes, "passes-"+sv)
					if sv == "spdc" {
						base = passes
					} else if base > 0 {
						b.ReportMetric(base/passes, "x-"+sv)
					}
				}
			}
		})
	}
}

// wxReference returns AdaSPDC's primal objective at a relative gap of
// 1e-10, or at the best gap within epochs, and that gap.
func wxReference(b *testing.B, prob Problem, epochs int) (float64, float64) {
	opt := adaspdcOptions()
	opt.Solver, opt.Tol, opt.MaxEpochs, opt.StallEpochs = SolverAdaSPDC, 1e-10, epochs, -1
	opt = opt.WithCoordinate(func(c *CoordinateSettings) { c.StepScale = 2 })
	_, res, err := Train(context.Background(), prob, opt)
	if err != nil {
		b.Fatal(err)
	}
	return res.Best.Primal, res.Best.RelGap
}

// wxPassesTo runs solver until P ≤ target and returns the passes it took
// (+Inf if it did not get there) and the certificate after every pass.
func wxPassesTo(b *testing.B, prob Problem, solver Solver, target float64, maxEpochs int, scale float64, seed uint64) (float64, []TracePoint) {
	opt := adaspdcOptions()
	opt.Seed = seed
	opt.Solver, opt.Tol, opt.MaxEpochs, opt.StallEpochs = solver, -1, maxEpochs, -1
	opt.TargetPrimal = target
	opt = opt.WithCoordinate(func(c *CoordinateSettings) { c.StepScale = scale })
	opt.StopRule = func([]TracePoint) bool { return false } // certify every pass
	_, res, err := Train(context.Background(), prob, opt)
	if err != nil {
		b.Fatalf("%s: %v", solver, err)
	}
	if res.Stop != "target" {
		return math.Inf(1), res.Trace
	}
	return res.Final.Passes, res.Trace
}
