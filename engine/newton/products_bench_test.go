package newton

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// BenchmarkProductRows times one Hessian product of W lanes over news20's
// rows (raw counts, 62k columns), per nonzero and lane: the shared sweep's
// work, against W = 1, a run alone, and against the product of a run
// that shares nothing (SparseDot and SparseAxpy per row, as hessianTimes).
func BenchmarkProductRows(b *testing.B) {
	ds, err := sparse.ReadFile(enginetest.SharedPath("news20"), sparse.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	x := ds.X
	b.Run("unshared", func(b *testing.B) {
		v, o := make([]float64, x.Cols), make([]float64, x.Cols)
		for i := range v {
			v[i] = float64(i % 7)
		}
		for b.Loop() {
			for k := range x.Rows {
				val, idx := x.Row(k)
				kernels.SparseAxpy(1e-3*kernels.SparseDot(val, idx, v), val, idx, o)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(x.NNZ()), "ns/nnz/lane")
	})
	for _, w := range []int{1, 2, 4, 8} {
		rng := rand.New(rand.NewPCG(1, 2))
		v, o, c := make([]float64, x.Cols*w), make([]float64, x.Cols*w), make([]float64, x.Rows*w)
		for i := range v {
			v[i] = rng.Float64()
		}
		for i := range c {
			c[i] = rng.Float64()
		}
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			for b.Loop() {
				productRows(x, w, 0, x.Rows, v, c, o, &[ProductLanes][]float64{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(x.NNZ())/float64(w), "ns/nnz/lane")
		})
	}
}
