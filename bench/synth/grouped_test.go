package synth

import (
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// BenchmarkSweepGrouped times the bare sweep, one sparse dot product and
// one sparse axpy per row in file order, over url-shaped rows (200k rows,
// 3.2M columns, seed 1) as generated ("ungrouped", the frequent columns
// spread over the index range) and with their columns grouped by count in
// the tiers train uses (engine.ColumnTiers). The ratio of the two is the
// gain of the grouping on one core.
func BenchmarkSweepGrouped(b *testing.B) {
	x, _, err := Generate(URLLike(200_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	grouped := x.Clone()
	grouped.GroupColumnsByCount(engine.ColumnTiers(grouped.UsedColumns()))
	for _, c := range []struct {
		name string
		x    *sparse.CSR
	}{{"ungrouped", x}, {"grouped", grouped}} {
		w, g := hugepage.Make[float64](x.Cols), hugepage.Make[float64](x.Cols)
		for j := range w {
			w[j] = 1e-3 * float64(j%7)
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				for k := range c.x.Rows {
					val, idx := c.x.Row(k)
					kernels.SparseAxpy(1e-3*kernels.SparseDot(val, idx, w), val, idx, g)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.x.NNZ()), "ns/nnz")
		})
	}
}

// BenchmarkGroupColumns times sparse.CSR.GroupColumnsByCount, in the tiers
// train uses, on url-shaped rows of 1M rows and 3.2M columns (seed 1), the
// size at which its per-column arrays (13 MB of counts, as much of new
// numbers) outgrow the cache: each iteration groups a fresh copy of the
// indices and values, whose copying is not timed.
func BenchmarkGroupColumns(b *testing.B) {
	x, _, err := Generate(URLLike(1_000_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	tiers := engine.ColumnTiers(x.Cols)
	c := x.Clone()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(c.Indices, x.Indices)
		copy(c.Values, x.Values)
		c.Cols = x.Cols
		b.StartTimer()
		c.GroupColumnsByCount(tiers)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(x.NNZ()), "ns/nnz")
}
