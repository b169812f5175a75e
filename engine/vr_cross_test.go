package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// TestVRReachAdaSPDCOptimum: SAGA, SAG and SVRG, dense and lazy, reach a
// relative gap of 1e-9 on logistic and squared losses with and without
// L1, at the optimum of AdaSPDC run to a 1e-10 gap: their primal is within
// both gaps of AdaSPDC's, and their point within the distance that strong
// convexity allows, ‖x − x*‖² ≤ 2(gap + gap*)/λ.
func TestVRReachAdaSPDCOptimum(t *testing.T) {
	sx, sb := sparseData(600, 300, 8, 41) // d ≫ row nnz: the lazy stores
	type dataset struct {
		name string
		x    *sparse.CSR
		b    []float64
		lazy Lazy
	}
	sets := []dataset{{"sparse", sx, sb, LazyAuto}}
	if !testing.Short() {
		hx, hb := sharedData(t, "heart_scale")
		sets = append(sets, dataset{"heart_scale", hx, hb, LazyOff}) // the dense store
	}
	for _, ds := range sets {
		for _, loss := range []Loss{Logistic{}, Squared{}} {
			for _, reg := range []ElasticNet{{Lambda: 1e-3}, {Lambda: 1e-3, L1: 2e-3}} {
				prob := Problem{X: ds.x, B: ds.b, Loss: loss, Reg: reg}
				name := fmt.Sprintf("%s/%s/%s", ds.name, loss.Name(), reg.Name())
				t.Run(name, func(t *testing.T) {
					ref, rres, err := Train(context.Background(), prob, Options{Tol: 1e-10, MaxEpochs: 5000, Seed: 1})
					if err != nil || !rres.Converged {
						t.Fatalf("reference: %v, gap %.3g", err, rres.Final.RelGap)
					}
					for _, s := range []Solver{SolverSAGA, SolverSAG, SolverSVRG} {
						model, res, err := Train(context.Background(), prob, Options{Solver: s, Tol: 1e-9, MaxEpochs: 3000, Seed: 2}.With(CoordinateSettings{Lazy: ds.lazy}))
						if err != nil {
							t.Fatalf("%s: %v", s, err)
						}
						if !res.Converged {
							t.Errorf("%s: relative gap %.3g after %d epochs (%s)", s, res.Final.RelGap, res.Final.Epoch, res.Stop)
							continue
						}
						if want := ds.lazy != LazyOff; res.Lazy != want {
							t.Errorf("%s: lazy = %v, want %v", s, res.Lazy, want)
						}
						gaps := res.Final.Gap + rres.Final.Gap
						if d := math.Abs(res.Final.Primal - rres.Final.Primal); d > gaps {
							t.Errorf("%s: primal %.15g, AdaSPDC's %.15g: differ by %.3g, more than the gaps %.3g", s, res.Final.Primal, rres.Final.Primal, d, gaps)
						}
						var dist float64
						for j := range model.Weights {
							dist += (model.Weights[j] - ref.Weights[j]) * (model.Weights[j] - ref.Weights[j])
						}
						if bound := 2 * gaps / reg.Lambda; dist > bound {
							t.Errorf("%s: ‖x − x*‖² = %.3g, above 2·gaps/λ = %.3g", s, dist, bound)
						}
						t.Logf("%s: %d epochs, %.0f passes, lazy %v", s, res.Final.Epoch, res.Final.Passes, res.Lazy)
					}
				})
			}
		}
	}
}
