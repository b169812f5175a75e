package newton

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/sparse"
)

// BenchmarkProductRows times one Hessian product of W lanes over news20's
// rows (raw counts, 62k columns), per nonzero and lane: the shared sweep's
// work, against W = 1, a run alone.
func BenchmarkProductRows(b *testing.B) {
	ds, err := sparse.ReadFile(enginetest.SharedPath("news20"), sparse.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	x := ds.X
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
