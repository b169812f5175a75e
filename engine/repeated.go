package engine

import (
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/newton"
	"github.com/adaspdc/adaspdc/sparse"
)

// mergeMinShare is the share of repeated rows from which Train merges
// them: a tenth, where the passes saved pay for the hashing many times
// (w8a repeats 30% of its rows, a9a 20%; news20 3%, ijcnn1 none).
const mergeMinShare = 10

// mergeMinRows is the size below which Train does not look for repeats: a
// problem that small costs less to solve than to hash.
const mergeMinRows = 1000

// mergeRepeatedRows returns prob with every row that repeats an earlier
// one (the same entries and the same label, bit for bit) merged into that
// row, which then weighs as much as the rows merged into it, and the number
// of rows merged; prob itself and 0 where fewer than a mergeMinShare'th of
// the rows repeat. The objective is unchanged:
//
//	(1/n) Σₖ wₖ φ(aₖᵀx, bₖ) = (1/n′) Σᵤ w′ᵤ φ(aᵤᵀx, bᵤ),   w′ᵤ = (n′/n) Σ_{k→u} wₖ,
//
// over the n′ distinct rows u (SampleWeights' scaling is 1/rows), so P, D
// and the gap at every point, and the optimum, are the original problem's;
// only the passes shrink. The order of the distinct rows is the data's.
func mergeRepeatedRows(prob Problem) (Problem, int) {
	x, n := prob.X, prob.X.Rows
	if n < mergeMinRows {
		return prob, 0
	}
	first, repeats := x.RepeatedRows(prob.B)
	if repeats*mergeMinShare < n {
		return prob, 0
	}
	m := n - repeats
	at := make([]int32, n) // the merged row of each distinct row
	merged := &sparse.CSR{Rows: m, Cols: x.Cols, Indptr: make([]int64, 1, m+1),
		Indices: make([]int32, 0, x.NNZ()), Values: make([]float64, 0, x.NNZ())}
	b, weights := make([]float64, m), make([]float64, m)
	for i, f := range first {
		if int(f) == i {
			at[i] = int32(len(merged.Indptr) - 1)
			val, idx := x.Row(i)
			merged.Indices = append(merged.Indices, idx...)
			merged.Values = append(merged.Values, val...)
			merged.Indptr = append(merged.Indptr, int64(len(merged.Indices)))
			if prob.B != nil {
				b[at[i]] = prob.B[i]
			}
		}
		w := 1.0
		if prob.SampleWeights != nil {
			w = prob.SampleWeights[i]
		}
		weights[at[f]] += w
	}
	scale := float64(m) / float64(n)
	for u := range weights {
		weights[u] *= scale
	}
	p := prob
	p.X, p.SampleWeights = merged, weights
	if prob.B != nil {
		p.B = b
	}
	return p, repeats
}

// mergesRows reports whether Train merges repeated rows for a run of
// solver e with opt: where the solver weighs rows, and the rows are not
// shared with other runs (one-vs-rest's shared products need the same X).
func mergesRows(takesWeights bool, opt Options) bool {
	if !takesWeights {
		return false
	}
	st, _ := driver.SettingsOf[newton.Settings](opt)
	return st.Products == nil
}
