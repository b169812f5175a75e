// Package enginetest holds the data the engine's tests share: generated
// problems and the real data sets beside the project.
package enginetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// SharedPath returns the path of a data set in the shared folder beside
// the project root (../shared/data), wherever the calling test's package
// sits in the tree.
func SharedPath(name string) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	return filepath.Join(root, "..", "shared", "data", name)
}

// Fig1Data is the synthetic ridge problem of the paper's Fig. 1: rows
// aₖ ~ N(0, Σ) with Σⱼⱼ = j⁻², targets bₖ = aₖᵀx° + noise.
func Fig1Data(n, d int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	xo := make([]float64, d)
	for j := range xo {
		xo[j] = rng.NormFloat64()
	}
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	for k := 0; k < n; k++ {
		var z float64
		for j := 0; j < d; j++ {
			v := rng.NormFloat64() / float64(j+1)
			x.Indices = append(x.Indices, int32(j))
			x.Values = append(x.Values, v)
			z += v * xo[j]
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = z + 0.1*rng.NormFloat64()
	}
	return x, b
}

// SparseData draws a random sparse classification problem with skewed
// feature frequencies, like text data.
func SparseData(n, d, perRow int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	seen := make(map[int32]bool)
	for k := 0; k < n; k++ {
		clear(seen)
		cols := make([]int32, 0, perRow)
		for len(cols) < perRow {
			// Zipf-like: low indices are frequent.
			j := int32(float64(d) * math.Pow(rng.Float64(), 3))
			if !seen[j] {
				seen[j] = true
				cols = append(cols, j)
			}
		}
		slices.Sort(cols)
		var z float64
		for _, j := range cols {
			v := rng.Float64() + 0.1
			x.Indices = append(x.Indices, j)
			x.Values = append(x.Values, v)
			z += v * w[j]
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		if z+0.3*rng.NormFloat64() > 0 {
			b[k] = 1
		} else {
			b[k] = -1
		}
	}
	return x, b
}

// SharedData loads a binary-labelled file from ../shared/data, skipping the
// test when the folder is absent.
func SharedData(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := SharedPath(name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y, _, err := sparse.BinaryLabels(ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	return ds.X, y
}

// RelDiff returns ‖a − b‖/‖b‖.
func RelDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / math.Max(den, 1e-300))
}

// Model is the part of a trained model the family tests read.
type Model struct {
	Weights []float64
}

// Train runs the solver opt.Solver names on prob, as engine.Train does
// once it has picked the solver, for the tests of a solver family, which
// cannot import engine (engine imports them). It returns a nil model
// where engine.Train does.
func Train(ctx context.Context, prob objective.Problem, opt driver.Options) (*Model, *driver.Result, error) {
	if err := prob.Validate(); err != nil {
		return nil, nil, err
	}
	if err := opt.ValidateFor(prob.X.Rows); err != nil {
		return nil, nil, err
	}
	e := driver.Lookup(opt.Solver)
	if e == nil {
		return nil, nil, fmt.Errorf("enginetest: solver %q is not registered (want one of %s)", opt.Solver, driver.Names())
	}
	if err := e.Accepts(prob, opt.WithDefaults()); err != nil {
		return nil, nil, err
	}
	w, res, err := driver.Solve(ctx, e, prob, opt)
	if w == nil {
		return nil, res, err
	}
	return &Model{Weights: w}, res, err
}

// SharedRegression loads a regression file from ../shared/data with its raw
// targets, skipping the test when the folder is absent.
func SharedRegression(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := SharedPath(name)
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	return ds.X, ds.Y
}

// DenseColumns returns the columns of x as dense vectors.
func DenseColumns(x *sparse.CSR) [][]float64 {
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

// LossTestName names a loss with its parameter, for test messages.
func LossTestName(l objective.Loss) string {
	switch l := l.(type) {
	case objective.SmoothHinge:
		return fmt.Sprintf("%s(S=%g)", l.Name(), l.S)
	case objective.EpsInsensitive:
		return fmt.Sprintf("%s(ε=%g)", l.Name(), l.Epsilon)
	case objective.Quantile:
		return fmt.Sprintf("%s(q=%g)", l.Name(), l.Q)
	}
	return l.Name()
}
