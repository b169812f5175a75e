package kernels_test

import (
	"fmt"

	"github.com/adaspdc/adaspdc/kernels"
)

// One step of a dual coordinate method on a sparse row a: the margin a·w is
// a sparse dot product, and the primal update w += δ·a is a sparse axpy.
func Example() {
	w := []float64{0.5, -1, 0, 2, 0}

	// The row a = (0, 2, 0, 1, 0) in compressed form.
	val := []float64{2, 1}
	idx := []int32{1, 3}

	margin := kernels.SparseDot(val, idx, w)
	delta := 0.25
	kernels.SparseAxpy(delta, val, idx, w)

	fmt.Println("margin:", margin)
	fmt.Println("w:", w)
	// Output:
	// margin: 0
	// w: [0.5 -0.5 0 2.25 0]
}

// SparseDotAxpy does both at once when the step is known in advance, for
// instance when the dot product is taken with one vector and the update
// goes to another.
func ExampleSparseDotAxpy() {
	x := []float64{1, 2, 3, 4}
	y := make([]float64, 4)
	val := []float64{10, 100}
	idx := []int32{0, 3}

	dot := kernels.SparseDotAxpy(0.5, val, idx, x, y)
	fmt.Println(dot, y)
	// Output: 410 [5 0 0 50]
}

func ExampleDot() {
	fmt.Println(kernels.Dot([]float64{1, 2, 3}, []float64{4, 5, 6}))
	// Output: 32
}

func ExampleAxpy() {
	y := []float64{1, 1, 1}
	kernels.Axpy(2, []float64{1, 2, 3}, y)
	fmt.Println(y)
	// Output: [3 5 7]
}
