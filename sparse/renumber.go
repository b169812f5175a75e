package sparse

import (
	"slices"
	"sync"
)

// GroupColumnsByCount renumbers the columns of m in place so that the most
// frequent come first, in tiers, and drops the empty ones. With bounds
// b₀ < b₁ < …, the new columns 0..b₀−1 are the b₀ columns with the most
// stored entries, b₀..b₁−1 the next b₁ − b₀, and so on, the other used
// columns last; within a tier the columns keep their order, and ties of
// count go to the lower column. Afterwards column k of m is column cols[k]
// of m before, and m.Cols = len(cols) = m.UsedColumns(). A model fitted
// on the renumbered m gives the weights of the original columns through
// cols, as CompactColumns' does.
//
// A sweep over the rows gathers and scatters a vector of m.Cols entries
// at each row's columns. Where that vector is larger than the cache and
// the column counts are skewed, as those of words and URL tokens are (a
// Zipf law), the frequent columns, scattered over the index range, each
// share a cache line with seven rare ones; grouped first, they pack into
// the fewest lines, and the part of the vector that most entries touch
// stays in the cache. Tiers that grow with the cache levels keep the
// hottest columns closest; within a tier the order does not matter.
//
// Because every tier keeps its columns' order and the tiers' new numbers
// ascend, each row stays sorted by moving its entries of each tier, in
// order, ahead of the next tier's: O(NNZ) time, on several goroutines for
// a large matrix, besides sorting the used columns by count. It allocates
// arrays of Cols entries only where Cols is at most a few dozen times the
// entries; otherwise it first compacts the columns in place (see
// CompactColumns).
func (m *CSR) GroupColumnsByCount(bounds []int) (cols []int32) {
	base := []int32(nil) // column j of m is column base[j] of the original (nil: j)
	if nnz := len(m.Indices); m.Cols > bitmapColumnsPerEntry*nnz+pageColumns {
		// Cols far beyond the entries: compact in place first (a rank
		// keeps the order), so that the arrays below have a used
		// column's worth of entries each.
		s := m.columnSet()
		m.eachRowRange(func(lo, hi int) {
			idx := m.Indices[m.Indptr[lo]:m.Indptr[hi]]
			for k, j := range idx {
				idx[k] = s.rank(j)
			}
		})
		m.Cols, base = s.n, s.columns()
	}
	// The entries of each column, summed from each row range's own counts.
	counts := make([]uint64, m.Cols)
	var mu sync.Mutex
	m.eachRowRange(func(lo, hi int) {
		own := make([]uint32, m.Cols)
		for _, j := range m.Indices[m.Indptr[lo]:m.Indptr[hi]] {
			own[j]++
		}
		mu.Lock()
		for j, c := range own {
			counts[j] += uint64(c)
		}
		mu.Unlock()
	})
	// The used columns by decreasing count, then increasing column: one
	// sort of keys (maxCount − count, column), each in 32 bits (a count is
	// at most Rows; one beyond 2³² − 1 is clamped, which only coarsens the
	// order).
	var top uint64
	for _, c := range counts {
		top = max(top, c)
	}
	top = min(top, 1<<32-1)
	var keys []uint64
	for j, c := range counts {
		if c > 0 {
			keys = append(keys, (top-min(c, top))<<32|uint64(j))
		}
	}
	slices.Sort(keys)
	// Each used column's tier, then its new number: the tiers' starts,
	// each tier's columns numbered in increasing order.
	tiers := len(bounds) + 1
	tier := make([]uint8, m.Cols)
	start := make([]int32, tiers+1)
	for k, key := range keys {
		t, _ := slices.BinarySearch(bounds, k+1)
		tier[uint32(key)] = uint8(t)
		start[t+1]++
	}
	for t := range tiers {
		start[t+1] += start[t]
	}
	next := slices.Clone(start[:tiers])
	newOf := make([]int32, m.Cols)
	cols = make([]int32, len(keys))
	for j, c := range counts {
		if c == 0 {
			continue
		}
		t := tier[j]
		newOf[j] = next[t]
		cols[next[t]] = int32(j)
		if base != nil {
			cols[next[t]] = base[j]
		}
		next[t]++
	}
	m.eachRowRange(func(lo, hi int) {
		var idxBuf []int32
		var valBuf []float64
		at := make([]int, tiers+1)
		for i := lo; i < hi; i++ {
			a, b := m.Indptr[i], m.Indptr[i+1]
			idx, val := m.Indices[a:b], m.Values[a:b]
			clear(at)
			for _, j := range idx {
				at[tier[j]+1]++
			}
			for t := range tiers {
				at[t+1] += at[t]
			}
			idxBuf, valBuf = slices.Grow(idxBuf[:0], len(idx))[:len(idx)], slices.Grow(valBuf[:0], len(idx))[:len(idx)]
			for p, j := range idx {
				q := at[tier[j]]
				idxBuf[q], valBuf[q] = newOf[j], val[p]
				at[tier[j]]++
			}
			copy(idx, idxBuf)
			copy(val, valBuf)
		}
	})
	m.Cols = len(cols)
	return cols
}
