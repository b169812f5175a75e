package sparse

import "fmt"

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
	for i := 0; i < m.Rows; i++ {
		lo, hi := m.Indptr[i], m.Indptr[i+1]
		if hi < lo {
			return fmt.Errorf("sparse: row %d: Indptr decreases (%d < %d)", i, hi, lo)
		}
		prev := int32(-1)
		for _, j := range m.Indices[lo:hi] {
			if j <= prev || int(j) >= m.Cols {
				return fmt.Errorf("sparse: row %d: column %d out of order or out of range [0,%d)", i, j, m.Cols)
			}
			prev = j
		}
	}
	return nil
}
