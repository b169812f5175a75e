package sparse

import (
	"cmp"
	"slices"
	"sync"
	"unsafe"

	"github.com/adaspdc/adaspdc/kernels"
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
// a large matrix, besides sorting the used columns by count. The per-column
// arrays that its two passes read at each entry's column (counts, tiers,
// new numbers) outgrow the cache on wide data, so each pass asks for the
// next block's or row's elements before it reads its own
// (kernels.PrefetchIndexed); see the RESULTS section "Wide data: the
// grouping's lookups prefetched". It allocates
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
		// The counts of a wide matrix do not fit the cache, and a
		// column's is read where its entries fall: ask for the next
		// block's counts before adding up this block's.
		idx := m.Indices[m.Indptr[lo]:m.Indptr[hi]]
		for s := 0; s < len(idx); s += countBlock {
			e := min(s+countBlock, len(idx))
			kernels.PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(own)), idx[e:min(e+countBlock, len(idx))], 4)
			for _, j := range idx[s:e] {
				own[j]++
			}
		}
		mu.Lock()
		for j, c := range own {
			counts[j] += uint64(c)
		}
		mu.Unlock()
	})
	// Each used column's tier, by its rank in the order of decreasing
	// count, then increasing column, and then its new number: the tiers'
	// starts, each tier's columns numbered in increasing order.
	tiers := len(bounds) + 1
	tier := columnTiers(counts, bounds)
	start := make([]int32, tiers+1)
	used := 0
	for j, c := range counts {
		if c > 0 {
			start[tier[j]+1]++
			used++
		}
	}
	for t := range tiers {
		start[t+1] += start[t]
	}
	next := slices.Clone(start[:tiers])
	newOf := make([]int32, m.Cols)
	cols = make([]int32, used)
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
			if i+1 < hi {
				// As for the counts: the next row's tiers and new
				// numbers, asked for before this row's are read.
				next := m.Indices[b:m.Indptr[i+2]]
				kernels.PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(tier)), next, 1)
				kernels.PrefetchIndexed(unsafe.Pointer(unsafe.SliceData(newOf)), next, 4)
			}
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

// columnTiers returns each column's tier: t where its rank in the order of
// decreasing count, then increasing column, lies in [bounds[t−1],
// bounds[t]) (bounds ascending, with bounds[−1] = 0 and bounds[len] = ∞).
// Columns with no entry get a tier too, which the caller ignores.
//
// No sort is needed: a histogram of the counts gives, for each bound b, the
// count c_b of the column ranked b − 1 and how many of the columns with
// count c_b rank above b (those of the smallest indices, the order's tie
// break); one pass over the columns in increasing order then places each.
func columnTiers(counts []uint64, bounds []int) []uint8 {
	tier := make([]uint8, len(counts))
	var top uint64
	for _, c := range counts {
		top = max(top, c)
	}
	if top > uint64(4*len(counts)+1024) {
		// Counts too spread for a histogram: rank by a sort.
		order := make([]int32, 0, len(counts))
		for j, c := range counts {
			if c > 0 {
				order = append(order, int32(j))
			}
		}
		slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(counts[b], counts[a]) })
		for r, j := range order {
			t, _ := slices.BinarySearch(bounds, r+1)
			tier[j] = uint8(t)
		}
		return tier
	}
	hist := make([]int32, top+1) // a count of columns fits: Cols < 2³¹
	for _, c := range counts {
		hist[c]++
	}
	hist[0] = 0 // unused columns rank nowhere
	// For each bound b: columns of count above at[i] rank above b, and the
	// first take[i] of those with count at[i], in column order, too.
	at, take := make([]uint64, len(bounds)), make([]int, len(bounds))
	for i, b := range bounds {
		above, c := 0, top
		for ; c > 0 && above+int(hist[c]) < b; c-- {
			above += int(hist[c])
		}
		at[i], take[i] = c, b-above // c = 0: every used column ranks above b
	}
	seen := make([]int, len(bounds)) // columns of count at[i] met so far
	for j, c := range counts {
		t := len(bounds)
		for i := len(bounds) - 1; i >= 0; i-- {
			above := c > at[i]
			if c == at[i] && c > 0 {
				seen[i]++
				above = seen[i] <= take[i]
			}
			if above {
				t = i
			}
		}
		tier[j] = uint8(t)
	}
	return tier
}

// countBlock is the entries whose columns' counts GroupColumnsByCount asks
// for ahead of adding them up.
const countBlock = 128
