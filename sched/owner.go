package sched

// Owners partitions the coordinates [0, d) into contiguous ranges, one per
// worker, so that each coordinate has exactly one writer. The reducer merges
// the batch's contributions Σₖ Δyₖ·aₖ by letting worker w add, for every
// sampled row in a fixed order, just the part of the row that falls in its
// range: no two workers write the same coordinate, no atomics are needed, and
// each coordinate's sum is formed in the same order whatever the number of
// workers, which makes the result bit-identical across thread counts.
type Owners struct {
	// Bounds has len(workers)+1 entries; worker w owns [Bounds[w], Bounds[w+1]).
	Bounds []int32
}

// NewOwners cuts [0, len(weight)) into workers contiguous ranges of nearly
// equal total weight, where weight[j] is the work that coordinate j brings
// (its column's nonzero count, so that skewed feature frequencies do not
// leave one worker with most of the scatter). Zero total weight falls back to
// equal lengths.
func NewOwners(weight []int64, workers int) Owners {
	d := len(weight)
	if workers < 1 {
		workers = 1
	}
	bounds := make([]int32, workers+1)
	var total int64
	for _, c := range weight {
		total += c
	}
	if total == 0 {
		for w := 0; w <= workers; w++ {
			bounds[w] = int32(d * w / workers)
		}
		return Owners{Bounds: bounds}
	}
	var acc int64
	w := 1
	for j := 0; j < d && w < workers; j++ {
		acc += weight[j]
		// Close range w−1 once it holds its share of the weight.
		for w < workers && acc*int64(workers) >= total*int64(w) {
			bounds[w] = int32(j + 1)
			w++
		}
	}
	for ; w <= workers; w++ {
		bounds[w] = int32(d)
	}
	return Owners{Bounds: bounds}
}

// Range returns the coordinates worker w owns.
func (o Owners) Range(w int) (lo, hi int32) { return o.Bounds[w], o.Bounds[w+1] }

// Clip returns the positions [a, b) of the entries of the ascending index
// slice idx that fall in [lo, hi). Rows are short, so a linear scan from the
// nearer end beats a binary search for the common case of under ~32 entries.
func Clip(idx []int32, lo, hi int32) (a, b int) {
	n := len(idx)
	if n == 0 || idx[0] >= hi || idx[n-1] < lo {
		return 0, 0
	}
	if idx[0] >= lo && idx[n-1] < hi {
		return 0, n
	}
	a = lowerBound(idx, lo)
	b = a + lowerBound(idx[a:], hi)
	return a, b
}

// lowerBound returns the first position whose index is ≥ v.
func lowerBound(idx []int32, v int32) int {
	lo, hi := 0, len(idx)
	for hi-lo > 16 {
		mid := int(uint(lo+hi) >> 1)
		if idx[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for lo < hi && idx[lo] < v {
		lo++
	}
	return lo
}
