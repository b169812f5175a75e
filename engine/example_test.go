package engine_test

import (
	"context"
	"fmt"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// ExampleTrain fits a ridge regression y ≈ 2·a₁ − a₂ on four rows and
// certifies it with the duality gap.
func ExampleTrain() {
	x := &sparse.CSR{
		Rows: 4, Cols: 2,
		Indptr:  []int64{0, 2, 3, 4, 6},
		Indices: []int32{0, 1, 0, 1, 0, 1},
		Values:  []float64{1, 1, 1, 1, 2, 1},
	}
	b := []float64{1, 2, -1, 3}
	prob := engine.Problem{X: x, B: b, Loss: engine.Squared{}, Reg: engine.ElasticNet{Lambda: 1e-3}}
	opt := engine.DefaultOptions()
	opt.Tol, opt.Threads = 1e-10, 1
	model, res, err := engine.Train(context.Background(), prob, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("converged=%v w=[%.3f %.3f] gap<=1e-10: %v\n",
		res.Converged, model.Weights[0], model.Weights[1], res.Final.RelGap <= 1e-10)
	// Output: converged=true w=[1.996 -0.995] gap<=1e-10: true
}
