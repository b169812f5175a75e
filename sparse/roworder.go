package sparse

import (
	"runtime"
	"sync"
)

// RowOrder is a reordering of a matrix's rows that moves each row only
// within its window of Window consecutive rows: row i after it is row
// Perm[i] before it, and Perm[i]/Window = i/Window.
type RowOrder struct {
	Window int
	Perm   []int
}

// rowOrderKeys bounds the sort's keys: rows of rowOrderKeys − 1 entries or
// more share the last one, in their order. A row that long costs far more
// than its loops' few mispredicted exits.
const rowOrderKeys = 256

// SortRowsByLength reorders the rows of m in place so that within each
// window of window consecutive rows (the last may be shorter) they ascend
// by their number of entries, rows of one length (and the rows of
// rowOrderKeys − 1 entries or more) keeping their order, and returns the
// reordering, which the caller applies to its other arrays by row
// (RowOrder.Apply). m's columns, and so any model on them, are unchanged.
//
// Why: the rows kernels loop over a row in blocks of eight entries, then
// four, then one, so each row ends in a few branches that depend on its
// length. Where lengths vary from row to row, as on short rows of words
// (w8a: 0 to 114 entries, median 9), the predictor misses them at nearly
// every row, and a pass over the rows in the file's order took three
// times as long as over the same rows sorted within windows of 256
// (BenchmarkMulVecRowsOrder). Windows keep the rows near where they were,
// so a pass still reads the memory in order, which the prefetchers follow:
// sorted through a list of row numbers instead, the same rows read out of
// order were slower than the file's order.
//
// Each window's entries are copied out once and written back in the new
// order, windows of about equal nonzeros on each of GOMAXPROCS goroutines;
// a window already in order is left as it is. m must be valid (see
// Validate).
func (m *CSR) SortRowsByLength(window int) RowOrder {
	window = max(1, min(window, m.Rows))
	o := RowOrder{Window: window, Perm: make([]int, m.Rows)}
	windows := (m.Rows + window - 1) / window
	t := runtime.GOMAXPROCS(0)
	if m.NNZ() < parallelMinNNZ {
		t = 1
	}
	t = max(1, min(t, windows))
	var wg sync.WaitGroup
	first := 0
	for g := 1; g <= t; g++ {
		last := windows
		if g < t {
			// The first window whose rows start past the goroutine's share
			// of the nonzeros.
			target := m.NNZ() * int64(g) / int64(t)
			last = first
			for last < windows && m.Indptr[last*window] < target {
				last++
			}
		}
		if last > first {
			wg.Add(1)
			go func(first, last int) {
				defer wg.Done()
				m.sortWindows(first, last, o)
			}(first, last)
		}
		first = last
	}
	wg.Wait()
	return o
}

// sortWindows sorts the rows of windows first…last−1 (SortRowsByLength).
func (m *CSR) sortWindows(first, last int, o RowOrder) {
	w := o.Window
	var idx []int32
	var val []float64
	start, length := make([]int64, w), make([]int64, w)
	key := make([]int32, w)
	order := make([]int32, w)
	var count [rowOrderKeys + 1]int32
	for win := first; win < last; win++ {
		lo, hi := win*w, min((win+1)*w, m.Rows)
		rows := hi - lo
		sorted := true
		for r := range rows {
			n := m.Indptr[lo+r+1] - m.Indptr[lo+r]
			start[r], length[r], key[r] = m.Indptr[lo+r], n, int32(min(n, rowOrderKeys-1))
			o.Perm[lo+r] = lo + r
			sorted = sorted && (r == 0 || key[r] >= key[r-1])
		}
		if sorted {
			continue
		}
		// A counting sort on the keys: stable.
		clear(count[:])
		for _, k := range key[:rows] {
			count[k+1]++
		}
		for k := 1; k <= rowOrderKeys; k++ {
			count[k] += count[k-1]
		}
		for r, k := range key[:rows] {
			order[count[k]] = int32(r)
			count[k]++
		}
		base, end := m.Indptr[lo], m.Indptr[hi]
		size := int(end - base)
		if cap(idx) < size {
			idx, val = make([]int32, size), make([]float64, size)
		}
		idx, val = idx[:size], val[:size]
		copy(idx, m.Indices[base:end])
		copy(val, m.Values[base:end])
		p := base
		for i, r := range order[:rows] {
			from, n := start[r]-base, length[r]
			copy(m.Indices[p:p+n], idx[from:from+n])
			copy(m.Values[p:p+n], val[from:from+n])
			p += n
			m.Indptr[lo+i+1] = p
			o.Perm[lo+i] = lo + int(r)
		}
	}
}

// Apply reorders v, which holds one value per row of the matrix before
// the reordering, in place as the rows were reordered.
func (o RowOrder) Apply(v []float64) {
	if v == nil {
		return
	}
	tmp := make([]float64, o.Window)
	for lo := 0; lo < len(o.Perm); lo += o.Window {
		hi := min(lo+o.Window, len(o.Perm))
		for i, p := range o.Perm[lo:hi] {
			tmp[i] = v[p]
		}
		copy(v[lo:hi], tmp[:hi-lo])
	}
}
