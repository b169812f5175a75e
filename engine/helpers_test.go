package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// fig1Data is the synthetic ridge problem of the paper's Fig. 1: rows
// aₖ ~ N(0, Σ) with Σⱼⱼ = j⁻², targets bₖ = aₖᵀx° + noise.
func fig1Data(n, d int, seed uint64) (*sparse.CSR, []float64) {
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

// sparseData draws a random sparse classification problem with skewed
// feature frequencies, like text data.
func sparseData(n, d, perRow int, seed uint64) (*sparse.CSR, []float64) {
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

// sharedData loads a binary-labelled file from ../shared/data, skipping the
// test when the folder is absent.
func sharedData(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "data", name)
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

func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / math.Max(den, 1e-300))
}

// The tests run on small data, where the production rules would give most
// runs one worker; they ask for thread counts to exercise the concurrent
// paths (under -race too), so the rules (a worker per minWorkPerWorker
// nonzeros, and the timed choice of calibrateWorkers) are off here except
// where a test checks them.
func init() {
	minWorkPerWorker = 1
	calibrateWorkers = false
}

// productionWorkers sets the worker rules as Train has them outside tests
// and returns a function that restores the test setting.
func productionWorkers() func() {
	minWorkPerWorker, calibrateWorkers = defaultMinWorkPerWorker, true
	return func() { minWorkPerWorker, calibrateWorkers = 1, false }
}

// adaspdcOptions returns DefaultOptions as they were before Train chose
// solvers by itself: AdaSPDC, named, with its defaults filled in. Tests of
// AdaSPDC's own behaviour start from it.
func adaspdcOptions() Options {
	o := DefaultOptions()
	o.Solver = SolverAdaSPDC
	return o.withDefaults()
}

// lossTestName names a loss with its parameter, for test messages.
func lossTestName(l Loss) string {
	switch l := l.(type) {
	case SmoothHinge:
		return fmt.Sprintf("%s(S=%g)", l.Name(), l.S)
	case EpsInsensitive:
		return fmt.Sprintf("%s(ε=%g)", l.Name(), l.Epsilon)
	case Quantile:
		return fmt.Sprintf("%s(q=%g)", l.Name(), l.Q)
	}
	return l.Name()
}
