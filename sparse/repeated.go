package sparse

import (
	"math"
	"math/bits"
	"slices"
)

// RepeatedRows finds the rows of m that repeat an earlier row: the same
// columns, the same values and the same key (a label, say), compared bit
// for bit. It returns first, where first[i] is the earliest row equal to
// row i (i itself for a row met for the first time), and the number of
// rows that repeat an earlier one. key may be nil (no key) or hold one
// value per row.
//
// Rows are hashed, on several goroutines for a large matrix, and rows with
// equal hashes are compared entry by entry, so that a collision never
// merges two different rows.
func (m *CSR) RepeatedRows(key []float64) (first []int32, repeats int) {
	hash := make([]uint64, m.Rows)
	m.eachRowRange(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			h := uint64(0x9e3779b97f4a7c15)
			if key != nil {
				h = mix(h, math.Float64bits(key[i]))
			}
			val, idx := m.Row(i)
			for p, j := range idx {
				h = mix(h, uint64(uint32(j)))
				h = mix(h, math.Float64bits(val[p]))
			}
			hash[i] = mix(h, uint64(len(idx)))
		}
	})
	first = make([]int32, m.Rows)
	seen := make(map[uint64][]int32, m.Rows)
	for i, h := range hash {
		first[i] = int32(i)
		for _, f := range seen[h] {
			if m.rowsEqual(int(f), i) && (key == nil || math.Float64bits(key[f]) == math.Float64bits(key[i])) {
				first[i] = f
				repeats++
				break
			}
		}
		if first[i] == int32(i) {
			seen[h] = append(seen[h], int32(i))
		}
	}
	return first, repeats
}

// mix folds x into the hash h (a multiply-rotate step in the manner of
// wyhash and xxHash).
func mix(h, x uint64) uint64 {
	hi, lo := bits.Mul64(h^x, 0xbf58476d1ce4e5b9)
	return hi ^ lo
}

// rowsEqual reports whether rows a and b hold the same columns and the same
// values, bit for bit.
func (m *CSR) rowsEqual(a, b int) bool {
	va, ia := m.Row(a)
	vb, ib := m.Row(b)
	if !slices.Equal(ia, ib) {
		return false
	}
	for p, v := range va {
		if math.Float64bits(v) != math.Float64bits(vb[p]) {
			return false
		}
	}
	return true
}
