package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/sparse"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// threeClasses draws n rows of d features whose class (1, 2 or 3, raw
// labels) shifts three of them.
func threeClasses(n, d int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	y := make([]float64, n)
	for k := range n {
		c := rng.IntN(3)
		y[k] = float64(c + 1)
		for j := range d {
			if rng.Float64() < 0.5 || j == c {
				v := rng.NormFloat64()
				if j == c {
					v += 1.5
				}
				x.Indices = append(x.Indices, int32(j))
				x.Values = append(x.Values, v)
			}
		}
		x.Indptr[k+1] = int64(len(x.Indices))
	}
	return x, y
}

// TestMultinomialAgainstGonum solves the softmax objective independently,
// with gonum's L-BFGS on a plain implementation of P and ∇P, and checks
// that TrainMultinomial's certified model has the same objective and
// weights, and that its certificate brackets the optimum.
func TestMultinomialAgainstGonum(t *testing.T) {
	x, y := threeClasses(400, 10, 1)
	const lambda = 1e-2
	prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: lambda}}
	model, res, err := TrainMultinomial(context.Background(), prob, y, Options{Tol: 1e-10, MaxEpochs: 2000})
	if err != nil || !res.Converged {
		t.Fatalf("TrainMultinomial: %v (stop %s)", err, res.Stop)
	}
	if !model.Multinomial || model.Classes() != 3 || res.Solver != "lbfgs" {
		t.Fatalf("model: multinomial %v, %d classes, solver %s", model.Multinomial, model.Classes(), res.Solver)
	}
	// W class-major, as the model keeps it: W[c·d + j].
	n, d := x.Rows, x.Cols
	f := func(w, grad []float64) float64 {
		var loss float64
		if grad != nil {
			clear(grad)
		}
		z := make([]float64, 3)
		for k := range n {
			val, idx := x.Row(k)
			for c := range 3 {
				z[c] = 0
				for q, j := range idx {
					z[c] += val[q] * w[c*d+int(j)]
				}
			}
			m := floats.Max(z)
			var s float64
			for _, v := range z {
				s += math.Exp(v - m)
			}
			c := int(y[k]) - 1
			loss += m + math.Log(s) - z[c]
			if grad != nil {
				for cc := range 3 {
					g := math.Exp(z[cc]-m) / s
					if cc == c {
						g--
					}
					for q, j := range idx {
						grad[cc*d+int(j)] += g * val[q] / float64(n)
					}
				}
			}
		}
		if grad != nil {
			floats.AddScaled(grad, lambda, w)
		}
		return loss/float64(n) + 0.5*lambda*floats.Dot(w, w)
	}
	ref, err := optimize.Minimize(optimize.Problem{
		Func: func(w []float64) float64 { return f(w, nil) },
		Grad: func(g, w []float64) { f(w, g) },
	}, make([]float64, 3*d), &optimize.Settings{GradientThreshold: 1e-10}, &optimize.LBFGS{})
	// Near the optimum gonum's line search can fail on rounding; its point
	// serves wherever the gradient is small: P − P* ≤ ‖∇P‖²/(2λ) and
	// ‖W − W*‖ ≤ ‖∇P‖/λ.
	if gn := floats.Norm(ref.Gradient, 2); err != nil && gn > 1e-7 {
		t.Fatalf("gonum's L-BFGS: %v at ‖∇P‖ = %.3g", err, gn)
	}
	pstar := ref.F
	got := f(model.Weights, nil)
	if rel := math.Abs(got-pstar) / pstar; rel > 1e-9 {
		t.Errorf("P = %.15g, gonum's L-BFGS %.15g: relative difference %.3g", got, pstar, rel)
	}
	if mp := res.Model; mp.Dual > pstar*(1+1e-12) || mp.Primal < pstar*(1-1e-12) {
		t.Errorf("certificate [%.15g, %.15g] does not bracket gonum's optimum %.15g", mp.Dual, mp.Primal, pstar)
	}
	if dist := floats.Distance(model.Weights, ref.X, math.Inf(1)); dist > 1e-4 {
		t.Errorf("weights differ from gonum's by %.3g", dist)
	}
	// Predictions: the class of the largest margin, raw labels.
	correct := 0
	for k := range n {
		val, idx := x.Row(k)
		if model.Predict(val, idx) == y[k] {
			correct++
		}
	}
	if acc := float64(correct) / float64(n); acc < 0.6 {
		t.Errorf("training accuracy %.3f: the classes are separable enough for more", acc)
	}
}

// With two classes the softmax model is binary logistic regression at
// half the λ (at the optimum W₀ = −W₁, so λ/2·(‖W₀‖² + ‖W₁‖²) = (λ/4)‖w‖²
// for w = W₁ − W₀), and TrainMultinomial returns that binary model.
func TestMultinomialTwoClassesIsLogistic(t *testing.T) {
	x, b := sparseData(300, 30, 6, 2)
	const lambda = 2e-2
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: lambda}}
	mm, res, err := TrainMultinomial(context.Background(), prob, b, Options{Tol: 1e-12, MaxEpochs: 3000})
	if err != nil || !res.Converged {
		t.Fatalf("TrainMultinomial: %v", err)
	}
	if mm.Multinomial || mm.Classes() != 2 || len(mm.Weights) != x.Cols {
		t.Fatalf("two classes: multinomial %v, %d classes, %d weights", mm.Multinomial, mm.Classes(), len(mm.Weights))
	}
	half := prob
	half.Reg = ElasticNet{Lambda: lambda / 2}
	bm, _, err := Train(context.Background(), half, Options{Solver: SolverNewton, Tol: 1e-12, MaxEpochs: 200})
	if err != nil {
		t.Fatal(err)
	}
	if d := floats.Distance(mm.Weights, bm.Weights, math.Inf(1)); d > 1e-5 {
		t.Errorf("softmax of two classes against logistic at λ/2: weights differ by %.3g", d)
	}
}

func TestMultinomialRefuses(t *testing.T) {
	x, y := threeClasses(50, 5, 3)
	for name, c := range map[string]struct {
		prob Problem
		opt  Options
	}{
		"hinge":  {Problem{X: x, B: y, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1}}, Options{}},
		"l1":     {Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1, L1: 0.1}}, Options{}},
		"λ = 0":  {Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{}}, Options{}},
		"solver": {Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1}}, Options{Solver: SolverAdaSPDC}},
	} {
		if _, _, err := TrainMultinomial(context.Background(), c.prob, y, c.opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Multinomial SDCA, whose dual steps are exact, reaches L-BFGS's
// certified optimum, and its own certificate brackets it.
func TestMultinomialSDCA(t *testing.T) {
	x, y := threeClasses(300, 8, 5)
	prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	ref, rres, err := TrainMultinomial(context.Background(), prob, y, Options{Tol: 1e-11, MaxEpochs: 3000})
	if err != nil || !rres.Converged {
		t.Fatalf("lbfgs: %v", err)
	}
	m, res, err := TrainMultinomial(context.Background(), prob, y, Options{Solver: SolverSDCA, Tol: 1e-10, MaxEpochs: 3000})
	if err != nil || !res.Converged || res.Solver != SolverSDCA {
		t.Fatalf("sdca: %v (stop %s, solver %s)", err, res.Stop, res.Solver)
	}
	pstar := rres.Model.Primal
	if res.Model.Dual > pstar*(1+1e-11) || res.Model.Primal < pstar*(1-1e-11) {
		t.Errorf("sdca's certificate [%.15g, %.15g] misses lbfgs's optimum %.15g", res.Model.Dual, res.Model.Primal, pstar)
	}
	// ‖W − W*‖² ≤ 2·gap/λ for either model.
	bound := math.Sqrt(2*res.Model.Gap/1e-2) + math.Sqrt(2*rres.Model.Gap/1e-2)
	if d := floats.Distance(m.Weights, ref.Weights, 2); d > bound+1e-9 {
		t.Errorf("‖W_sdca − W_lbfgs‖ = %.3g beyond the gaps' bound %.3g", d, bound)
	}
}

// TestMultinomialThroughRegistry: the solvers of the multinomial loss come
// from the registry, lbfgs first (the default), and a solver of the scalar
// losses alone is refused with the registry's names.
func TestMultinomialThroughRegistry(t *testing.T) {
	es := driver.MultinomialEntries()
	if len(es) < 2 || es[0].Name != SolverLBFGS || driver.LookupMultinomial("") != es[0] || driver.LookupMultinomial(SolverSDCA) == nil {
		t.Fatalf("multinomial registry %v: want lbfgs first, and sdca", es)
	}
	if ms := MultinomialSolvers(); len(ms) != 1 || ms[0].Name != SolverLBFGS {
		t.Errorf("MultinomialSolvers = %v, want lbfgs alone (sdca is listed with the scalar solvers)", ms)
	}
	x, b := sharedData(t, "heart_scale")
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 0.01}}
	opt := DefaultOptions()
	opt.Solver = SolverNewton
	_, _, err := TrainMultinomial(context.Background(), prob, b, opt)
	if err == nil || !strings.Contains(err.Error(), "lbfgs or sdca") {
		t.Errorf("newton on the multinomial loss: %v, want a refusal naming lbfgs or sdca", err)
	}
	if driver.Lookup(SolverCoCoA).Workers == nil {
		t.Error("cocoa declares no Workers: the automatic choice cannot predict its cost")
	}
}
