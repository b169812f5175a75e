package engine

import "github.com/adaspdc/adaspdc/sparse"

// rowWindow is the window within which RowWindow's rows are sorted: 256
// rows gave the fastest passes over w8a's (BenchmarkMulVecRowsOrder), and
// so few rows, a few thousand entries, are reordered within the level-1
// and level-2 caches.
const rowWindow = 256

// rowOrderMaxMean bounds the mean entries per row of data that RowWindow
// sorts: a row's few mispredicted loop exits weigh against the reading of
// a short row, not of a long one.
const rowOrderMaxMean = 64

// RowWindow returns the window within which to sort the rows of prob by
// their number of entries before solver trains on it
// (sparse.CSR.SortRowsByLength), or 0 where sorting does not pay.
//
// The rows kernels end each row in branches on its length (blocks of eight
// entries, of four, the last ones). Where consecutive rows differ in
// length, as short rows of words do, the predictor misses them at most
// rows; sorted within windows, a pass over w8a's rows took a third of the
// time. Sorting costs about two copies of the data, which pays for a
// solver that passes over the rows in order many times: newton (50 passes
// a run on w8a, each of its steps reading the rows twice or more), not the
// coordinate methods, which visit the rows at random. RowWindow asks for
// short rows (at most rowOrderMaxMean entries on average) whose length
// changes its block of four from one row to the next at a quarter of the
// rows or more (w8a: most; a9a, whose rows hold 13 or 14 entries: none).
//
// The objective is a sum over the rows, so the order changes the solution
// only by rounding. The reordering moves the rows of the matrix only: a
// caller that sorts them applies the returned sparse.RowOrder to every
// array it keeps by row (the labels, the sample weights), and validates
// the problem before, so that a row named in an error is the data's.
func RowWindow(prob Problem, solver Solver) int {
	x := prob.X
	if solver != SolverNewton || x == nil || x.Rows < 2*rowWindow || x.NNZ() > rowOrderMaxMean*int64(x.Rows) {
		return 0
	}
	if lengthChanges(x)*4 < int64(x.Rows) {
		return 0
	}
	return rowWindow
}

// lengthChanges counts the rows whose number of entries falls in another
// block of four than the row before's.
func lengthChanges(x *sparse.CSR) int64 {
	var changes int64
	prev := int64(-1)
	for k := range x.Rows {
		b := (x.Indptr[k+1] - x.Indptr[k]) >> 2
		if b != prev {
			changes++
		}
		prev = b
	}
	return changes
}
