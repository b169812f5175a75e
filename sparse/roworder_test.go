package sparse

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRowsByLength checks the reordering against its definition on
// rows of random lengths (some past the keys' bound): within each window
// the rows ascend by length, rows of one length keep their order, every
// row is the one Perm names, bit for bit, and Apply moves a per-row array
// alike; on one goroutine and on several.
func TestSortRowsByLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ rows, window, maxLen int }{
		{0, 4, 3}, {1, 4, 3}, {7, 3, 5}, {100, 16, 20}, {1000, 256, 300}, {30000, 256, 40},
	} {
		x := &CSR{Rows: tc.rows, Cols: 1000, Indptr: make([]int64, tc.rows+1)}
		for i := range tc.rows {
			n := rng.IntN(tc.maxLen + 1)
			for _, j := range rng.Perm(1000)[:n] {
				x.Indices = append(x.Indices, int32(j))
				x.Values = append(x.Values, rng.NormFloat64())
			}
			slices.Sort(x.Indices[x.Indptr[i]:])
			x.Indptr[i+1] = int64(len(x.Indices))
		}
		before := &CSR{Rows: x.Rows, Cols: x.Cols, Indptr: slices.Clone(x.Indptr), Indices: slices.Clone(x.Indices), Values: slices.Clone(x.Values)}
		y := make([]float64, tc.rows)
		for i := range y {
			y[i] = float64(i)
		}
		o := x.SortRowsByLength(tc.window)
		o.Apply(y)
		if err := x.Validate(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		for i := range tc.rows {
			p := o.Perm[i]
			if p/tc.window != i/tc.window {
				t.Fatalf("%+v: row %d came from row %d, outside its window", tc, i, p)
			}
			val, idx := x.Row(i)
			wval, widx := before.Row(p)
			if !slices.Equal(idx, widx) || !slices.Equal(val, wval) {
				t.Fatalf("%+v: row %d is not row %d before", tc, i, p)
			}
			if y[i] != float64(p) {
				t.Fatalf("%+v: Apply put %v at row %d, want %d", tc, y[i], i, p)
			}
			if i%tc.window != 0 {
				q := o.Perm[i-1]
				lp, lq := min(before.RowNNZ(p), rowOrderKeys-1), min(before.RowNNZ(q), rowOrderKeys-1)
				if lq > lp || lq == lp && q > p {
					t.Fatalf("%+v: rows %d (from %d, %d entries) and %d (from %d, %d entries) out of order", tc, i-1, q, lq, i, p, lp)
				}
			}
		}
	}
}
