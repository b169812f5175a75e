package engine

import "github.com/adaspdc/adaspdc/kernels"

// ColumnTiers returns the tiers in which to group the columns of data
// with cols used columns, most frequent first, before training
// (sparse.CSR.GroupColumnsByCount), or nil where grouping does not pay.
//
// Every sweep over the rows gathers the model at each row's columns, and
// its gradient or update scatters there. Where a vector of cols float64s
// does not fit in a core's level-2 cache, the columns that most entries
// touch, grouped first, share cache lines with one another instead of
// with rare columns: the tiers hold as many columns as the level-1 data
// cache and the level-2 cache hold float64s, the rest follow. Below that
// width the vector stays in the cache whatever the order, and the
// grouping, a pass over the data, would cost more than it saves. train
// groups the columns of such data before it trains, and maps the model
// back; a program that embeds the engine can do the same with the
// returned map (sparse.CSR.GroupColumnsByCount).
func ColumnTiers(cols int) []int {
	l1, l2 := kernels.L1DataBytes()/8, kernels.L2Bytes()/8
	switch {
	case cols <= l2:
		return nil
	case l1 >= l2:
		return []int{l2}
	}
	return []int{l1, l2}
}
