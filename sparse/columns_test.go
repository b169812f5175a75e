package sparse

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestCompactColumnsStrayIndex: one absurd index makes Cols 2³¹ − 1 for
// three entries; UsedColumns and CompactColumns see the 3 columns that
// matter, without an allocation of the order of Cols (the page table, 128
// KiB for 2³¹ columns, is the largest).
func TestCompactColumnsStrayIndex(t *testing.T) {
	d, err := ReadLIBSVM(strings.NewReader("1 1:0.5 2147483647:1\n-1 2:1\n"), "stray", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := d.X
	if m.Cols != 2147483647 {
		t.Fatalf("Cols = %d, want 2147483647", m.Cols)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	used := m.UsedColumns()
	c, cols := m.CompactColumns()
	runtime.ReadMemStats(&after)
	if used != 3 {
		t.Errorf("UsedColumns = %d, want 3", used)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("UsedColumns and CompactColumns allocated %d bytes for 3 entries", got)
	}
	if !slices.Equal(cols, []int32{0, 1, 2147483646}) {
		t.Errorf("cols = %v, want [0 1 2147483646]", cols)
	}
	if c.Cols != 3 || c.Rows != 2 || !slices.Equal(c.Indices, []int32{0, 2, 1}) ||
		!slices.Equal(c.Values, []float64{0.5, 1, 1}) || !slices.Equal(c.Indptr, []int64{0, 2, 3}) {
		t.Errorf("compacted matrix %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	if !slices.Equal(m.Indices, []int32{0, 2147483646, 1}) {
		t.Errorf("CompactColumns changed the matrix: indices %v", m.Indices)
	}
}

// naiveCompact is CompactColumns written plainly, with a map, to check it
// against.
func naiveCompact(m *CSR) ([]int32, []int32) {
	seen := map[int32]bool{}
	for _, j := range m.Indices {
		seen[j] = true
	}
	var cols []int32
	for j := range seen {
		cols = append(cols, j)
	}
	slices.Sort(cols)
	rank := map[int32]int32{}
	for k, j := range cols {
		rank[j] = int32(k)
	}
	idx := make([]int32, len(m.Indices))
	for k, j := range m.Indices {
		idx[k] = rank[j]
	}
	return cols, idx
}

// sparseRandom returns a rows-row matrix with Cols = cols whose entries are
// drawn by column(rng) (sorted and made distinct within each row).
func sparseRandom(rng *rand.Rand, rows, perRow, cols int, column func() int32) *CSR {
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int64, rows+1)}
	for i := range rows {
		var row []int32
		for range rng.IntN(2 * perRow) {
			row = append(row, column())
		}
		slices.Sort(row)
		row = slices.Compact(row)
		for _, j := range row {
			m.Indices = append(m.Indices, j)
			m.Values = append(m.Values, rng.NormFloat64())
		}
		m.Indptr[i+1] = int64(len(m.Indices))
	}
	return m
}

// TestCompactColumns checks UsedColumns and CompactColumns against
// naiveCompact in each of columnSet's forms (a bitmap of every column, a
// paged bitmap, a sorted list), on matrices small and large enough to be
// swept by several goroutines.
func TestCompactColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const huge = 1<<31 - 1
	cases := []struct {
		name       string
		rows, cols int
		perRow     int
		column     func() int32
		form       string
	}{
		{"dense", 300, 500, 20, func() int32 { return int32(rng.IntN(500)) }, "bitmap"},
		{"dense, few used", 50, 60_000, 3, func() int32 { return int32(rng.IntN(3000) * 20) }, "bitmap"},
		{"dense, large", 20_000, 40_000, 20, func() int32 { return int32(rng.IntN(40_000)) }, "bitmap"},
		{"stray indices", 2000, huge, 10, func() int32 {
			if rng.IntN(1000) == 0 {
				return int32(huge - 1 - rng.IntN(3)*100_000)
			}
			return int32(rng.IntN(3000))
		}, "pages"},
		{"stray indices, large", 30_000, huge, 10, func() int32 {
			if rng.IntN(10_000) == 0 {
				return int32(rng.IntN(huge))
			}
			return int32(rng.IntN(200_000))
		}, "pages"},
		{"spread thinly", 200, huge, 5, func() int32 { return int32(rng.IntN(huge)) }, "list"},
	}
	for _, c := range cases {
		m := sparseRandom(rng, c.rows, c.perRow, c.cols, c.column)
		if err := m.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := m.columnSet()
		form := "list"
		if s.words != nil {
			form = "bitmap"
			if s.slot != nil {
				form = "pages"
			}
		}
		if form != c.form {
			t.Errorf("%s: columnSet used a %s, want a %s", c.name, form, c.form)
		}
		orig := m.Clone()
		wantCols, wantIdx := naiveCompact(m)
		if got := m.UsedColumns(); got != len(wantCols) {
			t.Errorf("%s: UsedColumns = %d, want %d", c.name, got, len(wantCols))
		}
		got, cols := m.CompactColumns()
		if !slices.Equal(cols, wantCols) {
			t.Errorf("%s: %d columns differ from the %d expected", c.name, len(cols), len(wantCols))
			continue
		}
		if got.Cols != len(wantCols) || got.Rows != m.Rows || !slices.Equal(got.Indices, wantIdx) ||
			!slices.Equal(got.Indptr, m.Indptr) || !slices.Equal(got.Values, m.Values) {
			t.Errorf("%s: compacted matrix differs", c.name)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !slices.Equal(m.Indices, orig.Indices) || m.Cols != orig.Cols {
			t.Errorf("%s: CompactColumns changed its receiver", c.name)
		}
	}
}

// TestCompactColumnsEdges: a matrix whose columns are all used comes back
// as itself with the identity map; one without entries has no columns.
func TestCompactColumnsEdges(t *testing.T) {
	m := &CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 2, 3}, Indices: []int32{0, 2, 1}, Values: []float64{1, 2, 3}}
	c, cols := m.CompactColumns()
	if c != m || !slices.Equal(cols, []int32{0, 1, 2}) || m.UsedColumns() != 3 {
		t.Errorf("all columns used: got %p (want %p), cols %v", c, m, cols)
	}
	for _, empty := range []*CSR{
		{Rows: 0, Cols: 0, Indptr: []int64{0}},
		{Rows: 2, Cols: 1 << 30, Indptr: []int64{0, 0, 0}},
	} {
		c, cols := empty.CompactColumns()
		if c.Cols != 0 || len(cols) != 0 || empty.UsedColumns() != 0 || c.Validate() != nil {
			t.Errorf("%d×%d without entries: %+v, cols %v", empty.Rows, empty.Cols, c, cols)
		}
	}
}

// BenchmarkCompactColumns compacts news20 as read, and with one stray
// index that makes Cols 2³¹ − 1 (the paged bitmap).
func BenchmarkCompactColumns(b *testing.B) {
	d, err := ReadFile(benchPath(b, "news20"), ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	stray := d.X.Clone()
	stray.Cols = 1<<31 - 1
	stray.Indices[len(stray.Indices)-1] = 1<<31 - 2
	for name, m := range map[string]*CSR{"news20": d.X, "news20+stray": stray} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				m.CompactColumns()
			}
		})
	}
}

// TestUsedColumnsStopsOnlyWhenFull checks the bitmap's early stop on a
// matrix large enough for several goroutines and many blocks: every column
// but the last used in the first rows, the last column only in the last
// row, counted all the same; and the same matrix without that entry,
// where the count falls by one and CompactColumns drops the column.
func TestUsedColumnsStopsOnlyWhenFull(t *testing.T) {
	const cols, rows, perRow = 300, 40000, 10
	build := func(lastEntry bool) *CSR {
		m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int64, rows+1)}
		for r := range rows {
			for e := range perRow {
				m.Indices = append(m.Indices, int32((r*perRow+e)%(cols-1)))
			}
			if r == rows-1 && lastEntry {
				m.Indices = append(m.Indices, cols-1)
			}
			slices.Sort(m.Indices[m.Indptr[r]:])
			m.Indices = append(m.Indices[:m.Indptr[r]], slices.Compact(m.Indices[m.Indptr[r]:])...)
			m.Indptr[r+1] = int64(len(m.Indices))
		}
		m.Values = make([]float64, len(m.Indices))
		for p := range m.Values {
			m.Values[p] = 1
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := build(true); m.NNZ() < parallelMinNNZ {
		t.Fatalf("%d entries: too few for several goroutines", m.NNZ())
	} else if got := m.UsedColumns(); got != cols {
		t.Errorf("with the last column in the last row: %d used columns, want %d", got, cols)
	}
	m := build(false)
	if got := m.UsedColumns(); got != cols-1 {
		t.Errorf("without it: %d used columns, want %d", got, cols-1)
	}
	if c, kept := m.CompactColumns(); c.Cols != cols-1 || len(kept) != cols-1 || kept[cols-2] != cols-2 {
		t.Errorf("CompactColumns kept %d columns (last %d), want %d", c.Cols, kept[len(kept)-1], cols-1)
	}
}
