package sparse

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGroupColumnsByCount: with and without a huge Cols, on matrices
// small and large enough for several goroutines, the renumbered matrix is
// valid, each tier holds columns at least as frequent as the next tier's
// (ties to the lower original column) in their original order, and its
// column k holds exactly the entries of the original column cols[k], row
// by row.
func TestGroupColumnsByCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const huge = 1<<31 - 1
	zipf := rand.NewZipf(rng, 1.1, 1, 49_999)
	cases := []struct {
		name       string
		rows, cols int
		perRow     int
		column     func() int32
	}{
		{"dense", 300, 500, 20, func() int32 { return int32(rng.IntN(500)) }},
		{"zipf, large", 20_000, 50_000, 30, func() int32 { return int32(49_999 - zipf.Uint64()) }},
		{"stray indices", 2000, huge, 10, func() int32 {
			if rng.IntN(1000) == 0 {
				return int32(huge - 1 - rng.IntN(3)*100_000)
			}
			return int32(rng.IntN(3000))
		}},
		{"spread thinly", 200, huge, 5, func() int32 { return int32(rng.IntN(huge)) }},
	}
	for _, c := range cases {
		m := sparseRandom(rng, c.rows, c.perRow, c.cols, c.column)
		orig := m.Clone()
		used := m.UsedColumns()
		bounds := []int{3, 40, 1000}
		cols := m.GroupColumnsByCount(bounds)
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Cols != used || len(cols) != used {
			t.Fatalf("%s: Cols %d and %d columns mapped, want the %d used", c.name, m.Cols, len(cols), used)
		}
		count := make([]int, m.Cols)
		for _, j := range m.Indices {
			count[j]++
		}
		// Tier by tier: every count of a tier at least every count of the
		// next, ties to the lower original column, and the original order
		// within a tier.
		tierOf := func(k int) int { t, _ := slices.BinarySearch(bounds, k+1); return t }
		for k := 1; k < len(count); k++ {
			if tierOf(k) == tierOf(k-1) && cols[k] <= cols[k-1] {
				t.Fatalf("%s: columns %d and %d of tier %d were %d and %d: out of order", c.name, k-1, k, tierOf(k), cols[k-1], cols[k])
			}
		}
		for k := range count {
			for l := k + 1; l < len(count) && l < k+2000; l++ {
				if tierOf(l) > tierOf(k) && (count[l] > count[k] || count[l] == count[k] && cols[l] < cols[k]) {
					t.Fatalf("%s: column %d (tier %d, was %d, %d entries) belongs before column %d (tier %d, was %d, %d entries)", c.name, l, tierOf(l), cols[l], count[l], k, tierOf(k), cols[k], count[k])
				}
			}
		}
		if !slices.Equal(m.Indptr, orig.Indptr) {
			t.Fatalf("%s: the row pointers changed", c.name)
		}
		for i := range m.Rows {
			want := map[int32]float64{}
			val, idx := orig.Row(i)
			for p, j := range idx {
				want[j] = val[p]
			}
			val, idx = m.Row(i)
			for p, k := range idx {
				if v, ok := want[cols[k]]; !ok || v != val[p] {
					t.Fatalf("%s: row %d: column %d (was %d) holds %g, the original %g (present %v)", c.name, i, k, cols[k], val[p], v, ok)
				}
			}
		}
	}
}

// TestColumnTiers checks the histogram's ranks against a sort by (count
// descending, column ascending), with many ties at the bounds, columns
// without entries, fewer used columns than a bound, and counts spread
// enough for the sort's fallback.
func TestColumnTiers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		counts := make([]uint64, n)
		spread := uint64(1 + rng.IntN(6))
		if trial%10 == 9 {
			spread = 1 << 40 // the fallback
		}
		for j := range counts {
			if rng.IntN(5) > 0 {
				counts[j] = rng.Uint64N(spread) + uint64(rng.IntN(2))
			}
		}
		bounds := []int{1 + rng.IntN(n), 0}
		bounds[1] = bounds[0] + rng.IntN(n)
		order := []int{}
		for j, c := range counts {
			if c > 0 {
				order = append(order, j)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(counts[b], counts[a]) })
		got := columnTiers(counts, bounds)
		for r, j := range order {
			want, _ := slices.BinarySearch(bounds, r+1)
			if int(got[j]) != want {
				t.Fatalf("trial %d: column %d (count %d, rank %d) in tier %d, want %d (bounds %v)", trial, j, counts[j], r, got[j], want, bounds)
			}
		}
	}
}
