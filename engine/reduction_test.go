package engine

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// sharedRegression loads a regression file from ../shared/data with its raw
// targets, skipping the test when the folder is absent.
func sharedRegression(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", name)
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	return ds.X, ds.Y
}

// denseColumns returns the columns of x as dense vectors.
func denseColumns(x *sparse.CSR) [][]float64 {
	cols := make([][]float64, x.Cols)
	for j := range cols {
		cols[j] = make([]float64, x.Rows)
	}
	for k := 0; k < x.Rows; k++ {
		val, idx := x.Row(k)
		for i, j := range idx {
			cols[j][k] = val[i]
		}
	}
	return cols
}

// lassoMaxL1 returns ‖Aᵀb‖∞/n, the smallest L1 weight at which the lasso's
// solution is 0.
func lassoMaxL1(x *sparse.CSR, b []float64) float64 {
	worst := 0.0
	for _, c := range denseColumns(x) {
		var s float64
		for k, v := range c {
			s += v * b[k]
		}
		worst = math.Max(worst, math.Abs(s)/float64(x.Rows))
	}
	return worst
}

// referenceLasso solves min (1/2n)‖Ax − b‖² + l1‖x‖₁ by cyclic coordinate
// descent on dense columns, then polishes the solution on its support and
// sign pattern by solving the optimality equations
// (A_SᵀA_S/n) x_S = A_Sᵀb/n − l1·sign(x_S) exactly, and checks the result
// with kktViolation. It is meant for a handful of columns.
func referenceLasso(t *testing.T, x *sparse.CSR, b []float64, l1 float64) []float64 {
	t.Helper()
	n, d := x.Rows, x.Cols
	cols := denseColumns(x)
	norm2 := make([]float64, d)
	for j, c := range cols {
		for _, v := range c {
			norm2[j] += v * v
		}
		norm2[j] /= float64(n)
	}
	w := make([]float64, d)
	res := make([]float64, n) // Ax − b
	for k := range res {
		res[k] = -b[k]
	}
	prob := Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: l1}}
	cd := func(cycles int) {
		for range cycles {
			for j, c := range cols {
				if norm2[j] == 0 {
					continue
				}
				var g float64
				for k, v := range c {
					g += v * res[k]
				}
				g /= float64(n)
				v := w[j] - g/norm2[j]
				nw := math.Copysign(math.Max(math.Abs(v)-l1/norm2[j], 0), v)
				if dw := nw - w[j]; dw != 0 {
					for k, a := range c {
						res[k] += dw * a
					}
					w[j] = nw
				}
			}
		}
	}
	for range 200 {
		cd(100)
		if kktViolation(prob, w) < 1e-8 {
			break
		}
	}
	// Polish: Newton on the support with the signs fixed.
	var s []int
	for j, v := range w {
		if v != 0 {
			s = append(s, j)
		}
	}
	m := len(s)
	g := make([][]float64, m)
	for a, ja := range s {
		g[a] = make([]float64, m+1)
		for c, jc := range s {
			var sum float64
			for k, v := range cols[ja] {
				sum += v * cols[jc][k]
			}
			g[a][c] = sum / float64(n)
		}
		var rhs float64
		for k, v := range cols[ja] {
			rhs += v * b[k]
		}
		g[a][m] = rhs/float64(n) - l1*math.Copysign(1, w[ja])
	}
	sol := solveDense(g)
	polished := make([]float64, d)
	consistent := true
	for a, ja := range s {
		polished[ja] = sol[a]
		if math.Signbit(sol[a]) != math.Signbit(w[ja]) || sol[a] == 0 {
			consistent = false
		}
	}
	if consistent && kktViolation(prob, polished) <= kktViolation(prob, w) {
		w = polished
	}
	if v := kktViolation(prob, w); v > 1e-12 {
		t.Fatalf("reference lasso: KKT violation %.3g, want ≤ 1e-12", v)
	}
	return w
}

// solveDense solves the m×m system held in the augmented m×(m+1) matrix a
// by Gaussian elimination with partial pivoting; a is overwritten.
func solveDense(a [][]float64) []float64 {
	m := len(a)
	for c := 0; c < m; c++ {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < m; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= m; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, m)
	for r := m - 1; r >= 0; r-- {
		sum := a[r][m]
		for k := r + 1; k < m; k++ {
			sum -= a[r][k] * x[k]
		}
		x[r] = sum / a[r][r]
	}
	return x
}

// referenceSVM solves the hinge SVM min (1/n)Σ max(0, 1 − bₖaₖᵀw) + (λ/2)‖w‖²
// by dual coordinate descent (LIBLINEAR's -s 3 without bias and shrinking):
// with C = 1/(nλ), w = Σ αₖbₖaₖ and αₖ ∈ [0, C], each step minimises the dual
// exactly in one αₖ. It returns w once Certify's gap at the DCD duals,
// yₖ = −bₖαₖ/C, is at most tol relative.
func referenceSVM(t *testing.T, x *sparse.CSR, b []float64, lambda, tol float64) []float64 {
	t.Helper()
	n, d := x.Rows, x.Cols
	c := 1 / (float64(n) * lambda)
	alpha := make([]float64, n)
	w := make([]float64, d)
	q := make([]float64, n)
	for k := range q {
		val, _ := x.Row(k)
		for _, v := range val {
			q[k] += v * v
		}
	}
	prob := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: lambda}}
	for epoch := 0; epoch < 100000; epoch++ {
		for k := 0; k < n; k++ {
			if q[k] == 0 {
				continue
			}
			val, idx := x.Row(k)
			var z float64
			for i, j := range idx {
				z += val[i] * w[j]
			}
			grad := b[k]*z - 1
			na := math.Min(math.Max(alpha[k]-grad/q[k], 0), c)
			if da := na - alpha[k]; da != 0 {
				for i, j := range idx {
					w[j] += da * b[k] * val[i]
				}
				alpha[k] = na
			}
		}
		if epoch%50 == 49 {
			// The dual at α: D = (1/n)Σ αₖ/C − (λ/2)‖w‖² with w = Σαₖbₖaₖ/(nλC)
			// = Σαₖbₖaₖ (nλC = 1).
			var sa, ww float64
			for _, a := range alpha {
				sa += a
			}
			for _, v := range w {
				ww += v * v
			}
			dual := sa/(float64(n)*c) - lambda/2*ww
			tp, err := Certify(prob, w)
			if err != nil {
				t.Fatal(err)
			}
			if gap := tp.Primal - dual; gap <= tol*math.Max(1, tp.Primal) {
				return w
			}
		}
	}
	t.Fatal("reference SVM did not converge")
	return nil
}

func TestReductionScratch(t *testing.T) {
	for _, name := range []string{"housing_scale", "abalone_scale"} {
		x, b := sharedRegression(t, name)
		l1 := 0.1 * lassoMaxL1(x, b)
		ref := referenceLasso(t, x, b, l1)
		prob := Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: l1}}
		pref, _ := Certify(Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: l1, Lambda: 1e-300}}, ref)
		nz := 0
		for _, v := range ref {
			if v != 0 {
				nz++
			}
		}
		t.Logf("%s: l1 %.4g, P* %.12g, %d/%d nonzero", name, l1, pref.Primal, nz, len(ref))
		for _, scale := range []float64{1, 0.1, 0.01} {
			model, res, err := Train(context.Background(), prob, Options{Solver: SolverAdaptReg, Tol: 1e-7, MaxEpochs: 20000, Seed: 1, ReductionScale: scale})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := Certify(Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{L1: l1, Lambda: 1e-300}}, model.Weights)
			t.Logf("scale %g: stop %s epochs %d passes %.1f rel gap %.3g rel obj %.3g %.2fs; %s", scale, res.Stop, res.Final.Epoch, res.Final.Passes, res.Final.RelGap, (p.Primal-pref.Primal)/pref.Primal, res.Final.Seconds, res.Note)
		}
	}
}
