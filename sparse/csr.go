package sparse

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/adaspdc/adaspdc/internal/hugepage"
	"github.com/adaspdc/adaspdc/kernels"
	"gonum.org/v1/gonum/mat"
)

// CSR is a compressed-sparse-row matrix of float64 values.
//
// Row i holds the column indices Indices[Indptr[i]:Indptr[i+1]] (0-based,
// strictly ascending) and the matching Values. Row pointers are int64 so that
// matrices with more than 2³¹ nonzeros work; column indices are int32, which
// halves the memory traffic of every sparse kernel.
type CSR struct {
	Rows    int
	Cols    int
	Indptr  []int64
	Indices []int32
	Values  []float64
}

// Row returns views of row i's values and column indices. The slices alias
// the matrix storage: no copy is made, and writing to them changes the matrix.
func (m *CSR) Row(i int) (val []float64, idx []int32) {
	lo, hi := m.Indptr[i], m.Indptr[i+1]
	return m.Values[lo:hi:hi], m.Indices[lo:hi:hi]
}

// MulVecRows sets out[k] = aᵢᵀx for the rows i = lo + k, lo ≤ i < hi: the
// product of rows lo…hi−1 with x, by kernels.SparseDotRows, one call for
// them all. Each out[k] has the bits of kernels.SparseDot on row lo + k.
// It panics unless 0 ≤ lo ≤ hi ≤ Rows, len(out) ≥ hi − lo and len(x)
// exceeds every column index of the rows.
func (m *CSR) MulVecRows(lo, hi int, x, out []float64) {
	kernels.SparseDotRows(m.Indptr[lo:hi+1], m.Values, m.Indices, x, out[:hi-lo])
}

// RowNNZ returns the number of stored entries of row i.
func (m *CSR) RowNNZ(i int) int { return int(m.Indptr[i+1] - m.Indptr[i]) }

// NNZ returns the number of stored entries.
func (m *CSR) NNZ() int64 {
	if len(m.Indptr) == 0 {
		return 0
	}
	return m.Indptr[len(m.Indptr)-1]
}

// Validate checks the structural invariants of the matrix: pointer
// monotonicity, index range and strict ascent within each row.
func (m *CSR) Validate() error {
	if err := m.validateShape(); err != nil {
		return err
	}
	return m.validateRows(0, m.Rows)
}

// validateShape checks the shape and the slice lengths, the part of Validate
// that does not depend on the number of rows.
func (m *CSR) validateShape() error {
	if m.Rows < 0 || m.Cols < 0 {
		return fmt.Errorf("sparse: negative shape %d×%d", m.Rows, m.Cols)
	}
	if len(m.Indptr) != m.Rows+1 {
		return fmt.Errorf("sparse: len(Indptr)=%d, want Rows+1=%d", len(m.Indptr), m.Rows+1)
	}
	if m.Indptr[0] != 0 {
		return fmt.Errorf("sparse: Indptr[0]=%d, want 0", m.Indptr[0])
	}
	nnz := m.Indptr[m.Rows]
	if int64(len(m.Indices)) != nnz || int64(len(m.Values)) != nnz {
		return fmt.Errorf("sparse: nnz=%d but len(Indices)=%d, len(Values)=%d", nnz, len(m.Indices), len(m.Values))
	}
	return nil
}

// validateRows checks rows [from, to) of a matrix whose slice lengths
// Validate has checked.
func (m *CSR) validateRows(from, to int) error {
	nnz := m.NNZ()
	for i := from; i < to; i++ {
		lo, hi := m.Indptr[i], m.Indptr[i+1]
		if lo < 0 || hi < lo || hi > nnz {
			// Checked before slicing: a pointer out of [0, nnz] in the
			// middle of Indptr must be an error, not a panic, also when
			// the rows are checked in parts and row i−1 was not seen.
			return fmt.Errorf("sparse: row %d: row pointers %d..%d not ascending within [0, nnz=%d]", i, lo, hi, nnz)
		}
		if lo == hi {
			continue
		}
		// Check strict ascent pairwise, then only the ends against the
		// range: one comparison per entry keeps this pass cheap enough to
		// run on every cache load.
		row := m.Indices[lo:hi]
		for k := 1; k < len(row); k++ {
			if row[k] <= row[k-1] {
				return fmt.Errorf("sparse: row %d: column %d after %d: columns must be strictly ascending", i, row[k], row[k-1])
			}
		}
		if first, last := row[0], row[len(row)-1]; first < 0 || int(last) >= m.Cols {
			return fmt.Errorf("sparse: row %d: columns %d..%d out of range [0,%d)", i, first, last, m.Cols)
		}
	}
	return nil
}

// RowSquaredNorms returns ‖a_i‖², the squared Euclidean norm of every row.
// Large matrices are swept by several goroutines (eachRowRange); each norm
// is summed in the row's order whatever their number.
func (m *CSR) RowSquaredNorms() []float64 {
	norms := make([]float64, m.Rows)
	m.eachRowRange(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			val, _ := m.Row(i)
			norms[i] = sumSquares(val)
		}
	})
	return norms
}

// sumSquares returns Σ v², summed in order (small enough to be inlined).
func sumSquares(val []float64) float64 {
	var s float64
	for _, v := range val {
		s += v * v
	}
	return s
}

// parallelMinNNZ is the nonzeros from which eachRowRange uses several
// goroutines: a goroutine costs about a microsecond to start, a nonzero
// about a nanosecond to read.
const parallelMinNNZ = 1 << 18

// eachRowRange calls fn over ranges of rows that cover them all, with
// about the same number of nonzeros each: one range per GOMAXPROCS on
// matrices of at least parallelMinNNZ nonzeros, run concurrently, one
// range otherwise. On url-shaped data (200k rows, 23M nonzeros) a serial
// sweep of the values took tens of milliseconds, which -threads 1 and 2
// both paid in full.
func (m *CSR) eachRowRange(fn func(lo, hi int)) {
	t := runtime.GOMAXPROCS(0)
	nnz := m.NNZ()
	if t == 1 || nnz < parallelMinNNZ || m.Rows < 2 {
		fn(0, m.Rows)
		return
	}
	t = min(t, m.Rows)
	var wg sync.WaitGroup
	lo := 0
	for w := 1; w <= t; w++ {
		hi := m.Rows
		if w < t {
			target := nnz * int64(w) / int64(t)
			hi = sort.Search(m.Rows, func(k int) bool { return m.Indptr[k+1] > target })
		}
		if hi > lo {
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				fn(lo, hi)
			}(lo, hi)
		}
		lo = hi
	}
	wg.Wait()
}

// ScaleRows multiplies row i by s[i] in place. It panics if len(s) != m.Rows.
func (m *CSR) ScaleRows(s []float64) {
	if len(s) != m.Rows {
		panic(fmt.Sprintf("sparse: ScaleRows: len(s)=%d, want Rows=%d", len(s), m.Rows))
	}
	for i, f := range s {
		val, _ := m.Row(i)
		for k := range val {
			val[k] *= f
		}
	}
}

// NormalizeRowsByMax divides every entry by R = max_i ‖a_i‖ in place, so that
// the largest row norm becomes 1 while the ratios between rows are kept, and
// returns R. A matrix whose rows all have norm 0 is left unchanged and 0 is
// returned.
func (m *CSR) NormalizeRowsByMax() float64 {
	var maxSq float64
	for _, sq := range m.RowSquaredNorms() {
		maxSq = max(maxSq, sq)
	}
	if maxSq == 0 {
		return 0
	}
	r := math.Sqrt(maxSq)
	inv := 1 / r
	for k := range m.Values {
		m.Values[k] *= inv
	}
	return r
}

// ColumnCounts returns, for every column j, the number of rows with an
// entry in column j (ωⱼ in the ESO bounds and CoCoA's damping). Large
// matrices are counted by several goroutines: where Cols is small against
// the entries, each counts its own rows into 32-bit counters of its own,
// summed by column range at the end; otherwise (a huge Cols, where private
// counters would outweigh the entries) each reads all the entries but
// counts only its own range of columns, so that no two write the same
// counter. On url-shaped 1M rows (3.2M columns, 115M entries), whose
// frequent columns the grouping puts in the first range, counting by
// column range kept one goroutine busy while the other scanned.
func (m *CSR) ColumnCounts() []int64 {
	counts := hugepage.Make[int64](m.Cols)
	t := runtime.GOMAXPROCS(0)
	nnz := m.NNZ()
	if t == 1 || nnz < parallelMinNNZ || m.Cols < 2 {
		for _, j := range m.Indices {
			counts[j]++
		}
		return counts
	}
	t = min(t, m.Cols)
	var wg sync.WaitGroup
	if int64(m.Cols) <= nnz/4 && nnz < 1<<32 {
		var mu sync.Mutex
		var parts [][]uint32
		m.eachRowRange(func(lo, hi int) {
			own := make([]uint32, m.Cols)
			for _, j := range m.Indices[m.Indptr[lo]:m.Indptr[hi]] {
				own[j]++
			}
			mu.Lock()
			parts = append(parts, own)
			mu.Unlock()
		})
		for w := range t {
			lo, hi := m.Cols*w/t, m.Cols*(w+1)/t
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, own := range parts {
					for j, c := range own[lo:hi] {
						counts[lo+j] += int64(c)
					}
				}
			}()
		}
		wg.Wait()
		return counts
	}
	for w := range t {
		lo, hi := int32(m.Cols*w/t), int32(m.Cols*(w+1)/t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, j := range m.Indices {
				if j >= lo && j < hi {
					counts[j]++
				}
			}
		}()
	}
	wg.Wait()
	return counts
}

// AbsRange returns the smallest nonzero and the largest magnitude of the
// stored values, (+Inf, 0) if there is none. Large matrices are scanned by
// several goroutines; the result does not depend on their number.
func (m *CSR) AbsRange() (lo, hi float64) {
	scan := func(v []float64) (lo, hi float64) {
		lo = math.Inf(1)
		for _, x := range v {
			a := math.Abs(x)
			if a > 0 && a < lo {
				lo = a
			}
			if a > hi {
				hi = a
			}
		}
		return lo, hi
	}
	t := runtime.GOMAXPROCS(0)
	if t == 1 || len(m.Values) < parallelMinNNZ {
		return scan(m.Values)
	}
	los, his := make([]float64, t), make([]float64, t)
	var wg sync.WaitGroup
	for w := range t {
		wg.Add(1)
		go func() {
			defer wg.Done()
			los[w], his[w] = scan(m.Values[len(m.Values)*w/t : len(m.Values)*(w+1)/t])
		}()
	}
	wg.Wait()
	lo, hi = math.Inf(1), 0
	for w := range t {
		lo, hi = min(lo, los[w]), max(hi, his[w])
	}
	return lo, hi
}

// NormalizeRowsUnit scales every row with a nonzero norm to unit Euclidean
// norm in place. Rows whose norm is 0 are left unchanged. Large matrices
// are swept by several goroutines, with the same result.
func (m *CSR) NormalizeRowsUnit() {
	m.eachRowRange(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			val, _ := m.Row(i)
			sq := sumSquares(val)
			if sq == 0 {
				continue
			}
			inv := 1 / math.Sqrt(sq)
			for k := range val {
				val[k] *= inv
			}
		}
	})
}

// WithBias returns a new matrix with one more column, index m.Cols, that holds
// value in every row: the usual way to fit an intercept with a solver that
// only knows weights. The receiver is not modified. It panics if m.Cols does
// not fit a column index (int32).
func (m *CSR) WithBias(value float64) *CSR {
	if m.Cols > math.MaxInt32 {
		panic(fmt.Sprintf("sparse: WithBias: bias column %d does not fit an int32 index", m.Cols))
	}
	nnz := m.NNZ()
	out := &CSR{
		Rows:    m.Rows,
		Cols:    m.Cols + 1,
		Indptr:  make([]int64, m.Rows+1),
		Indices: make([]int32, nnz+int64(m.Rows)),
		Values:  make([]float64, nnz+int64(m.Rows)),
	}
	bias := int32(m.Cols)
	var dst int64
	for i := 0; i < m.Rows; i++ {
		val, idx := m.Row(i)
		dst += int64(copy(out.Values[dst:], val))
		copy(out.Indices[dst-int64(len(idx)):], idx)
		out.Values[dst] = value
		out.Indices[dst] = bias
		dst++
		out.Indptr[i+1] = dst
	}
	return out
}

// Dense returns a dense copy of the matrix. It is meant for tests and small
// problems. Because a gonum matrix cannot have a zero dimension, a matrix
// with no rows or no columns yields an empty mat.Dense (IsEmpty reports true).
func (m *CSR) Dense() *mat.Dense {
	if m.Rows == 0 || m.Cols == 0 {
		return &mat.Dense{}
	}
	d := mat.NewDense(m.Rows, m.Cols, nil)
	for i := 0; i < m.Rows; i++ {
		val, idx := m.Row(i)
		for k, j := range idx {
			d.Set(i, int(j), val[k])
		}
	}
	return d
}

// SelectRows returns a new matrix made of the given rows of m, in the given
// order; a row may be selected more than once. The result has m.Cols columns
// and shares no storage with m. It panics if an index is out of range.
func (m *CSR) SelectRows(rows []int) *CSR {
	var nnz int64
	for _, i := range rows {
		if i < 0 || i >= m.Rows {
			panic(fmt.Sprintf("sparse: SelectRows: row %d out of range [0,%d)", i, m.Rows))
		}
		nnz += int64(m.RowNNZ(i))
	}
	out := &CSR{
		Rows:    len(rows),
		Cols:    m.Cols,
		Indptr:  make([]int64, len(rows)+1),
		Indices: make([]int32, nnz),
		Values:  make([]float64, nnz),
	}
	var dst int64
	for k, i := range rows {
		val, idx := m.Row(i)
		copy(out.Values[dst:], val)
		copy(out.Indices[dst:], idx)
		dst += int64(len(idx))
		out.Indptr[k+1] = dst
	}
	return out
}

// Clone returns a deep copy of the matrix.
func (m *CSR) Clone() *CSR {
	return &CSR{
		Rows:    m.Rows,
		Cols:    m.Cols,
		Indptr:  slices.Clone(m.Indptr),
		Indices: slices.Clone(m.Indices),
		Values:  slices.Clone(m.Values),
	}
}
