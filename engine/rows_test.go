package engine

import (
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestRowWindow checks the rule of RowWindow: newton on short rows whose
// length changes its block of four from row to row sorts them (w8a), and
// rows of one block of lengths (a9a's 13 or 14 entries), long rows, few
// rows, and the coordinate methods do not.
func TestRowWindow(t *testing.T) {
	rows := func(n int, length func(k int) int) *sparse.CSR {
		x := &sparse.CSR{Rows: n, Cols: 200, Indptr: make([]int64, n+1)}
		for k := range n {
			for j := range length(k) {
				x.Indices = append(x.Indices, int32(j))
				x.Values = append(x.Values, 1)
			}
			x.Indptr[k+1] = int64(len(x.Indices))
		}
		return x
	}
	varied := func(k int) int { return (k * 7) % 23 }
	for _, tc := range []struct {
		name   string
		x      *sparse.CSR
		solver Solver
		want   int
	}{
		{"varied short rows", rows(2000, varied), SolverNewton, rowWindow},
		{"13 or 14 entries", rows(2000, func(k int) int { return 13 + k%2 }), SolverNewton, 0},
		{"long rows", rows(2000, func(k int) int { return 60 + varied(k)*4 }), SolverNewton, 0},
		{"few rows", rows(300, varied), SolverNewton, 0},
		{"a coordinate method", rows(2000, varied), SolverSDCA, 0},
	} {
		if got := RowWindow(Problem{X: tc.x}, tc.solver); got != tc.want {
			t.Errorf("%s: RowWindow = %d, want %d", tc.name, got, tc.want)
		}
	}
	for _, c := range []struct {
		file string
		want int
	}{{"w8a", rowWindow}, {"a9a", 0}} {
		x, _ := enginetest.SharedData(t, c.file)
		if got := RowWindow(Problem{X: x}, SolverNewton); got != c.want {
			t.Errorf("%s: RowWindow = %d, want %d", c.file, got, c.want)
		}
	}
}
