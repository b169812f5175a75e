package engine

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRidgeClosedForm checks the squared loss against
// x* = (AᵀA + nλI)⁻¹Aᵀb on the paper's Fig. 1 data (n = d = 1000,
// Σⱼⱼ = j⁻², λ = 1e-3).
func TestRidgeClosedForm(t *testing.T) {
	n, d := 1000, 1000
	if testing.Short() {
		n, d = 300, 300
	}
	x, b := fig1Data(n, d, 7)
	lam := 1e-3
	a := x.Dense()
	var ata mat.Dense
	ata.Mul(a.T(), a)
	for j := 0; j < d; j++ {
		ata.Set(j, j, ata.At(j, j)+float64(n)*lam)
	}
	var atb mat.VecDense
	atb.MulVec(a.T(), mat.NewVecDense(n, b))
	var want mat.VecDense
	if err := want.SolveVec(&ata, &atb); err != nil {
		t.Fatal(err)
	}
	prob := Problem{X: x, B: b, Loss: Squared{}, Reg: Regularizer{Lambda: lam}}
	model, res, err := Train(context.Background(), prob, Options{M: 4, Threads: 2, Tol: -1, MaxEpochs: 600, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := model.Weights
	if diff := relDiff(got, want.RawVector().Data); diff > 1e-8 {
		t.Errorf("relative distance to the closed form = %.3g after %d epochs (gap %.3g), want ≤ 1e-8", diff, res.Final.Epoch, res.Final.Gap)
	}
	t.Logf("epochs %d, rel gap %.3g, lazy %v, distance %.3g", res.Final.Epoch, res.Final.RelGap, res.Lazy, relDiff(got, want.RawVector().Data))
}
