package sparse

import (
	"math/bits"
	"slices"
	"sync/atomic"
)

// UsedColumns returns the number of distinct columns that hold at least one
// stored entry of m (an explicitly stored zero counts: it is an entry),
// at most min(Cols, NNZ). Like CompactColumns, it takes time and memory in
// proportion to the entries, not to Cols, so that it can be asked of a
// matrix whose Cols comes from a single absurd index (2³¹ − 1 columns for
// two entries). m must be valid (see Validate).
func (m *CSR) UsedColumns() int {
	s := m.columnSet()
	return s.n
}

// CompactColumns returns m without its empty columns, and the map back:
// column k of c is column cols[k] of m, where cols lists the columns of m
// that hold at least one stored entry in increasing order, so that c keeps
// the order of the columns and c.Cols = len(cols) = m.UsedColumns(). A
// model fitted on c gives the weights of m's columns through cols: w[cols[k]]
// is c's k-th weight and every other weight is 0, since a column without
// entries never moves a margin, and with a regulariser its weight is 0 at
// the optimum.
//
// c shares Indptr and Values with m; its Indices are new, except when every
// column is used, where c is m itself and cols the identity. m must be
// valid (see Validate) and is not modified.
//
// No array of Cols entries is allocated, since a stray index can make Cols
// 2³¹ − 1. The used columns are marked in a bitmap whose 64-bit words carry
// a running count of the bits before them, so that a column's new index is
// that count plus the set bits below it in its word (one popcount). Where
// Cols is more than a few dozen times NNZ, only the runs of 65536 columns
// that hold an entry get bits, so the usual cause of a huge Cols, real
// columns plus a few stray indices, costs a bitmap of the real columns and
// 12 KiB per stray; were that more than 6 bytes per entry, the distinct
// columns are found by sorting a copy of the indices instead, in
// O(NNZ log NNZ) time. Large matrices are swept by several goroutines.
func (m *CSR) CompactColumns() (c *CSR, cols []int32) {
	s := m.columnSet()
	cols = s.columns()
	if s.n == m.Cols {
		return m, cols
	}
	c = &CSR{Rows: m.Rows, Cols: s.n, Indptr: m.Indptr, Values: m.Values, Indices: make([]int32, len(m.Indices))}
	m.eachRowRange(func(lo, hi int) {
		from, to := m.Indptr[lo], m.Indptr[hi]
		dst := c.Indices[from:to]
		for k, j := range m.Indices[from:to] {
			dst[k] = s.rank(j)
		}
	})
	return c, cols
}

// columnSet is the set of columns of a matrix that hold an entry, as a
// bitmap where that takes little memory (columnSet chooses), as a sorted
// list otherwise.
type columnSet struct {
	n int // the number of columns in the set

	// The bitmap: bit j%64 of word j/64 is set when column j is in the set,
	// and before[w] is the number of set bits in words[:w]. Where the
	// columns are many more than the entries, only the pages (runs of
	// pageColumns columns) that hold an entry have words: page p's are at
	// slot[p]·pageWords (slot[p] < 0 for an empty page), and the slots are
	// in the order of the pages, so that the words remain in column order;
	// pageOf maps a slot back to its page. slot is nil when every page has
	// its words, at their natural place.
	words  []uint64
	before []int32
	slot   []int32
	pageOf []int32

	// The list form: the columns in the set, in increasing order.
	list []int32
}

const (
	// bitmapColumnsPerEntry is how many columns per stored entry a matrix
	// may have for columnSet to give every column a bit: the bitmap's
	// Cols/8 bytes and its counts' Cols/16 are then at most 6 bytes per
	// entry, next to the 4 that new column indices take anyway.
	bitmapColumnsPerEntry = 32
	// pageBits sets the columns of a page of the bitmap, pageColumns; a
	// page takes pageWords words and as many counts, 12 KiB.
	pageBits    = 16
	pageColumns = 1 << pageBits
	pageWords   = pageColumns / 64
	pageBytes   = pageWords * (8 + 4)
)

// columnSet returns the set of the columns of m that hold an entry.
//
// Where Cols is at most bitmapColumnsPerEntry times the entries, every
// column gets a bit. Otherwise the pages that hold an entry are marked
// first (a bit per page, 4 KiB for 2³¹ columns) and only they get bits,
// unless they would take more than 6 bytes per entry (entries spread thinly
// over a huge range), where the distinct columns are found by sorting a
// copy of the indices instead. The common way to get a huge Cols, a few
// stray indices beyond the real columns, thus costs the real columns' bits
// and a page per stray index.
func (m *CSR) columnSet() columnSet {
	nnz := len(m.Indices)
	if m.Cols <= bitmapColumnsPerEntry*nnz+pageColumns {
		return m.columnBitmap(nil, nil, (m.Cols+63)/64)
	}
	pages := (m.Cols + pageColumns - 1) / pageColumns
	touched := make([]uint64, (pages+63)/64)
	m.eachRowRange(func(lo, hi int) {
		for _, j := range m.Indices[m.Indptr[lo]:m.Indptr[hi]] {
			setBit(touched, int(j>>pageBits))
		}
	})
	used := 0
	for _, w := range touched {
		used += bits.OnesCount64(w)
	}
	if used*pageBytes > 6*nnz+1<<20 {
		list := slices.Clone(m.Indices)
		slices.Sort(list)
		list = slices.Compact(list)
		return columnSet{n: len(list), list: list}
	}
	slot := make([]int32, pages)
	pageOf := make([]int32, 0, used)
	for p := range slot {
		slot[p] = -1
		if touched[p>>6]&(1<<(p&63)) != 0 {
			slot[p] = int32(len(pageOf))
			pageOf = append(pageOf, int32(p))
		}
	}
	return m.columnBitmap(slot, pageOf, used*pageWords)
}

// setBit sets bit k of a bitmap that other goroutines may be setting bits
// of too, and reports whether this call set it: the word is read first and
// written, with an atomic OR, only when the bit is missing, so that a bit
// set again, as most are, costs a plain load and no goroutine needs a
// private copy of the bitmap.
func setBit(bitmap []uint64, k int) bool {
	w, bit := &bitmap[k>>6], uint64(1)<<(k&63)
	return atomic.LoadUint64(w)&bit == 0 && atomic.OrUint64(w, bit)&bit == 0
}

// fullCheckEntries is how many entries a goroutine of columnBitmap marks
// between its looks at whether every column is marked already.
const fullCheckEntries = 4096

// columnBitmap marks the columns of m in a bitmap of the given words,
// paged by slot and pageOf (nil for a bitmap of every column). Large
// matrices are marked by several goroutines (eachRowRange), each in a
// bitmap of its own where the bitmap is small (markPrivately), in the
// shared one otherwise (markShared). In a bitmap of every column, the
// goroutines count the bits new to the shared one, and stop once all
// m.Cols are: on narrow data, where every column is used (w8a's 300 within
// its first 14k rows of 50k), the rest of the entries need not be read.
func (m *CSR) columnBitmap(slot, pageOf []int32, words int) columnSet {
	s := columnSet{words: make([]uint64, words), slot: slot, pageOf: pageOf}
	var set atomic.Int64
	all := int64(m.Cols)
	if slot != nil {
		all = -1 // the paged bitmap: no early stop
	}
	if slot == nil && words <= privateBitmapWords {
		m.eachRowRange(func(lo, hi int) { m.markPrivately(lo, hi, s.words, &set, all) })
	} else {
		m.eachRowRange(func(lo, hi int) { m.markShared(lo, hi, &s, &set, all) })
	}
	s.before = make([]int32, words)
	for w, word := range s.words {
		s.before[w] = int32(s.n)
		s.n += bits.OnesCount64(word)
	}
	return s
}

// privateBitmapWords bounds the bitmaps that markPrivately copies per
// goroutine: 8 KiB, 65,536 columns.
const privateBitmapWords = 1 << 10

// markPrivately marks the columns of rows lo…hi−1 in a bitmap of its own
// and ORs what it found into shared, counting the bits new there in set,
// after each block of fullCheckEntries entries that found a column new to
// it; it stops once set reaches all. On narrow data every goroutine marks
// the same few words, and setBit's atomic OR on a shared word took the
// cache line from the other core at each new bit.
func (m *CSR) markPrivately(lo, hi int, shared []uint64, set *atomic.Int64, all int64) {
	// mine holds the columns this goroutine knows of, fresh those it found
	// since it last merged.
	mine, fresh := make([]uint64, len(shared)), make([]uint64, len(shared))
	idx := m.Indices[m.Indptr[lo]:m.Indptr[hi]]
	for len(idx) > 0 && set.Load() != all {
		block := idx[:min(len(idx), fullCheckEntries)]
		idx = idx[len(block):]
		found := false
		for _, j := range block {
			w, bit := &mine[j>>6], uint64(1)<<(j&63)
			if *w&bit == 0 {
				*w |= bit
				fresh[j>>6] |= bit
				found = true
			}
		}
		if !found {
			continue
		}
		var added int64
		for i, b := range fresh {
			if b == 0 {
				continue
			}
			old := atomic.OrUint64(&shared[i], b)
			added += int64(bits.OnesCount64(b &^ old))
			mine[i] |= old // the other goroutines' columns, known now
			fresh[i] = 0
		}
		set.Add(added)
	}
}

// markShared marks the columns of rows lo…hi−1 in the shared bitmap s by
// setBit, counting the bits it set in set, and stops once set reaches all.
func (m *CSR) markShared(lo, hi int, s *columnSet, set *atomic.Int64, all int64) {
	idx := m.Indices[m.Indptr[lo]:m.Indptr[hi]]
	for len(idx) > 0 && set.Load() != all {
		block := idx[:min(len(idx), fullCheckEntries)]
		idx = idx[len(block):]
		var added int64
		for _, j := range block {
			if setBit(s.words, s.bit(j)) {
				added++
			}
		}
		if added > 0 {
			set.Add(added)
		}
	}
}

// bit returns the position of column j's bit in the bitmap.
func (s *columnSet) bit(j int32) int {
	if s.slot == nil {
		return int(j)
	}
	return int(s.slot[j>>pageBits])<<pageBits | int(j&(pageColumns-1))
}

// rank returns the number of columns in the set below column j, which must
// be in the set: j's index among them.
func (s *columnSet) rank(j int32) int32 {
	if s.words == nil {
		k, _ := slices.BinarySearch(s.list, j)
		return int32(k)
	}
	b := s.bit(j)
	return s.before[b>>6] + int32(bits.OnesCount64(s.words[b>>6]&(uint64(1)<<(b&63)-1)))
}

// columns returns the columns in the set in increasing order.
func (s *columnSet) columns() []int32 {
	if s.words == nil {
		return s.list
	}
	cols := make([]int32, 0, s.n)
	for w, word := range s.words {
		base := w << 6
		if s.slot != nil {
			base = int(s.pageOf[w/pageWords])<<pageBits | (w%pageWords)<<6
		}
		for word != 0 {
			cols = append(cols, int32(base+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return cols
}
