package engine

import (
	"context"
	"math"
	"path/filepath"
	"os"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// hingeSVMReference solves min (1/n)Σ max(0, 1 − bₖaₖᵀx) + (λ/2)‖x‖² by
// dual coordinate descent (Hsieh et al. 2008, LIBLINEAR's -s 3 with
// C = 1/(nλ)) until its own duality gap is below tol, and returns the
// optimal x and P(x). The dual point is yₖ = −bₖαₖ/C, which is the dual of
// this package's convention, so the gap is a certificate in the same terms.
func hingeSVMReference(t testing.TB, x *sparse.CSR, b []float64, lam, tol float64) ([]float64, float64) {
	n, d := x.Rows, x.Cols
	c := 1 / (float64(n) * lam)
	alpha := make([]float64, n)
	w := make([]float64, d)
	sq := x.RowSquaredNorms()
	prob := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: lam}}
	for sweep := range 100000 {
		for k := range n {
			if sq[k] == 0 {
				continue
			}
			val, idx := x.Row(k)
			g := b[k]*kernels.SparseDot(val, idx, w) - 1
			a := min(max(alpha[k]-g/sq[k], 0), c)
			if a != alpha[k] {
				kernels.SparseAxpy((a-alpha[k])*b[k], val, idx, w)
				alpha[k] = a
			}
		}
		if sweep%10 != 9 {
			continue
		}
		// P(w) and D(y) with yₖ = −bₖαₖ/C: v = (1/n)Σyₖaₖ = −λw.
		var loss, conj float64
		for k := range n {
			val, idx := x.Row(k)
			loss += max(0, 1-b[k]*kernels.SparseDot(val, idx, w))
			conj -= alpha[k] / c
		}
		var wsq float64
		for _, e := range w {
			wsq += e * e
		}
		p := loss/float64(n) + 0.5*lam*wsq
		dual := -conj/float64(n) - 0.5*lam*wsq
		if p-dual <= tol*math.Max(1, p) {
			_ = prob
			return w, p
		}
	}
	t.Fatalf("the hinge SVM reference did not converge")
	return nil, 0
}

// regressionData loads a regression file from ../shared/data with its raw
// targets, skipping the test when the folder is absent.
func regressionData(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.X, ds.Y
}

func TestPdproxExplore(t *testing.T) {
	x, b := sparseData(400, 40, 6, 3)
	lam := 1e-2
	_, pstar := hingeSVMReference(t, x, b, lam, 1e-13)
	t.Logf("P* = %.15g", pstar)
	for _, s := range []Solver{SolverPdproxDual, SolverPdproxNoProj, SolverPdproxPrimal} {
		opt := DefaultOptions()
		opt.Solver = s
		opt.Tol = -1
		opt.MaxEpochs = 3000
		opt.StallEpochs = -1
		opt.Callback = func(tp TracePoint) error {
			if tp.Epoch == 10 || tp.Epoch == 100 || tp.Epoch == 1000 || tp.Epoch == 3000 {
				t.Logf("%s epoch %d P-P* %.10e gap %.10e", s, tp.Epoch, tp.Primal-pstar, tp.Gap)
			}
			return nil
		}
		_, _, err := Train(context.Background(), Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: lam}}, opt)
		if err != nil {
			t.Fatal(err)
		}
	}
}
