package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/adaspdc/adaspdc/engine/wx"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestWXSolversReachOptimum runs every Wang–Xiao solver to a relative gap
// of 1e-8 and checks its objective and weights against AdaSPDC's at a gap
// of 1e-10, and its certificate against Certify.
func TestWXSolversReachOptimum(t *testing.T) {
	probs := wxProblems(t)
	for name, prob := range probs {
		if testing.Short() && name != "heart/logistic" && name != "sparse/squared" {
			continue
		}
		opt := adaspdcOptions()
		opt.Solver, opt.Tol, opt.MaxEpochs = SolverAdaSPDC, 1e-10, 20000
		opt = opt.WithCoordinate(func(c *CoordinateSettings) { c.StepScale = 2 })
		ref, rres, err := Train(context.Background(), prob, opt)
		if err != nil || !rres.Converged {
			t.Fatalf("%s: reference: %v (stop %s)", name, err, rres.Stop)
		}
		pstar := rres.Final.Primal
		for _, sv := range wx.Solvers {
			if testing.Short() && sv != "wx-adaspdc" && sv != "adfspdc" {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", name, sv), func(t *testing.T) {
				opt := adaspdcOptions()
				opt.Solver, opt.Tol, opt.MaxEpochs = sv, 1e-8, 5000
				model, res, err := Train(context.Background(), prob, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Converged {
					t.Fatalf("stopped at %s after %d epochs, rel. gap %.3g", res.Stop, res.Final.Epoch, res.Final.RelGap)
				}
				// The gap bounds the suboptimality, and the reference is
				// within 1e-10 of P*.
				if sub := res.Final.Primal - pstar; sub > 1e-8*math.Max(1, math.Abs(pstar)) || sub < -2e-10*math.Max(1, math.Abs(pstar)) {
					t.Errorf("P − P* = %.3g (P = %.12g, P* = %.12g)", sub, res.Final.Primal, pstar)
				}
				if d := relDiff(model.Weights, ref.Weights); d > 1e-3 {
					t.Errorf("weights differ from AdaSPDC's by %.3g", d)
				}
				c, err := Certify(prob, model.Weights)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(c.Primal-res.Final.Primal) > 1e-12*math.Max(1, math.Abs(c.Primal)) {
					t.Errorf("primal %.15g, Certify's %.15g", res.Final.Primal, c.Primal)
				}
				// Weak duality; and the randomised methods take the better of
				// their own dual and Certify's.
				if res.Final.Dual > pstar+1e-12*math.Max(1, math.Abs(pstar)) {
					t.Errorf("dual %.15g above P* = %.15g", res.Final.Dual, pstar)
				}
				if sv != "bpd" && sv != "adabpd" && res.Final.Dual < c.Dual-1e-12*math.Max(1, math.Abs(c.Dual)) {
					t.Errorf("dual %.15g below Certify's %.15g", res.Final.Dual, c.Dual)
				}
			})
		}
	}
}

// wxProblems are the test problems, logistic and squared loss on unit rows:
// sparse synthetic data with λ = 1e-2/n, and heart_scale with λ = 1e-4/n,
// where the data's own strong convexity is what the methods exploit.
func wxProblems(t *testing.T) map[string]Problem {
	t.Helper()
	out := map[string]Problem{}
	add := func(name string, x *sparse.CSR, b []float64, lam float64) {
		x.NormalizeRowsUnit()
		out[name+"/logistic"] = Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: lam}}
		out[name+"/squared"] = Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{Lambda: lam}}
	}
	x, b := sparseData(300, 60, 8, 3)
	add("sparse", x, b, 1e-2/300)
	x, b = sharedData(t, "heart_scale")
	add("heart", x, b, 1e-4/float64(x.Rows))
	return out
}
