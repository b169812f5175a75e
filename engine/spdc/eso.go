package spdc

import (
	"context"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/sparse"
)

// blockColumnCounts returns ωⱼ, the number of blocks with at least one row
// that stores an entry in column j.
func blockColumnCounts(x *sparse.CSR, part *blocks.Partition) []int64 {
	if part.NumBlocks() == x.Rows {
		return x.ColumnCounts()
	}
	counts := make([]int64, x.Cols)
	last := make([]int32, x.Cols) // 1 + the last block that counted column j
	for b := 0; b < part.NumBlocks(); b++ {
		for _, k := range part.Block(b) {
			_, idx := x.Row(int(k))
			for _, j := range idx {
				if last[j] != int32(b+1) {
					last[j] = int32(b + 1)
					counts[j]++
				}
			}
		}
	}
	return counts
}

// esoParameters returns, for every block i, vᵢ = ‖diag(√β)Aᵢᵀ‖₂², the
// parameter of the expected separable over-approximation for τ-nice
// sampling of m blocks out of n_b, with βⱼ = 1 + (m−1)(ωⱼ−1)/(n_b−1)
// (miniBatchBeta on the block column counts): for every h,
//
//	E‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ (m/n_b) Σᵢ vᵢ‖hᵢ‖².
//
// For blocks of one row, vᵢ = Σⱼ βⱼaᵢⱼ²; larger blocks take the spectral
// norm of the column-weighted block.
func esoParameters(ctx context.Context, x *sparse.CSR, part *blocks.Partition, m, threads int) ([]float64, error) {
	nb := part.NumBlocks()
	beta := blocks.MiniBatchBeta(blockColumnCounts(x, part), nb, m)
	v := make([]float64, nb)
	if nb == x.Rows {
		for b := range v {
			val, idx := x.Row(int(part.Order[b]))
			var s float64
			for p, j := range idx {
				s += beta[j] * val[p] * val[p]
			}
			v[b] = s
		}
		return v, nil
	}
	w := *x
	w.Values = make([]float64, len(x.Values))
	for p, j := range x.Indices {
		w.Values[p] = x.Values[p] * math.Sqrt(beta[j])
	}
	norms, err := blocks.SpectralNormsContext(ctx, &w, part, blocks.DefaultTolerance, threads)
	if err != nil {
		return nil, err
	}
	for b, r := range norms {
		v[b] = r * r
	}
	return v, nil
}

// MeanESO returns the mean over the rows of vᵢ/‖aᵢ‖², the expected
// separable over-approximation parameter of each nonzero row of x under
// τ-nice sampling of m rows (blocks of one row), normalised by its squared
// norm: 1 when the rows of a batch share no feature, m when they all
// share all of theirs. Benchmarks print it beside the passes.
func MeanESO(x *sparse.CSR, m int) (float64, error) {
	if err := x.Validate(); err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	if m < 1 || m > x.Rows {
		return 0, fmt.Errorf("engine: m = %d: must lie in [1, %d]", m, x.Rows)
	}
	beta := blocks.MiniBatchBeta(x.ColumnCounts(), x.Rows, m)
	var sum float64
	var rows int
	for k := 0; k < x.Rows; k++ {
		val, idx := x.Row(k)
		var v, r2 float64
		for p, j := range idx {
			a2 := val[p] * val[p]
			v += beta[j] * a2
			r2 += a2
		}
		if r2 > 0 {
			sum += v / r2
			rows++
		}
	}
	if rows == 0 {
		return 0, fmt.Errorf("engine: every row of the data is zero")
	}
	return sum / float64(rows), nil
}
