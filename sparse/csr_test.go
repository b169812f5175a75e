package sparse

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// randomCSR returns a rows×cols matrix with about density·rows·cols
// normally distributed entries, and at least one all-zero row.
func randomCSR(rng *rand.Rand, rows, cols int, density float64) *CSR {
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int64, rows+1)}
	for i := range rows {
		if i != rows/2 {
			for j := range cols {
				if rng.Float64() < density {
					m.Indices = append(m.Indices, int32(j))
					m.Values = append(m.Values, rng.NormFloat64())
				}
			}
		}
		m.Indptr[i+1] = int64(len(m.Indices))
	}
	return m
}

func TestCSRDenseAndRowSquaredNorms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := randomCSR(rng, 30, 12, 0.3)
	d := m.Dense()
	norms := m.RowSquaredNorms()
	for i := range m.Rows {
		row := mat.Row(nil, i, d)
		if want := floats.Dot(row, row); math.Abs(norms[i]-want) > 1e-12*want {
			t.Errorf("row %d: ‖a‖² = %v, want %v", i, norms[i], want)
		}
	}
	if (&CSR{Rows: 0, Cols: 3, Indptr: []int64{0}}).Dense().IsEmpty() != true {
		t.Error("Dense of a 0×3 matrix is not empty")
	}
}

func TestCSRScaleRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	m := randomCSR(rng, 20, 9, 0.4)
	s := make([]float64, m.Rows)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	var want mat.Dense
	want.Mul(mat.NewDiagDense(len(s), s), m.Dense())
	m.ScaleRows(s)
	if !mat.EqualApprox(m.Dense(), &want, 1e-15) {
		t.Error("ScaleRows differs from diag(s)·A")
	}
	defer func() {
		if recover() == nil {
			t.Error("ScaleRows with a short vector did not panic")
		}
	}()
	m.ScaleRows(s[1:])
}

func TestCSRNormalizeRowsByMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := randomCSR(rng, 25, 10, 0.5)
	before := m.Dense()
	norms := m.RowSquaredNorms()
	wantR := math.Sqrt(floats.Max(norms))
	r := m.NormalizeRowsByMax()
	if math.Abs(r-wantR) > 1e-15*wantR {
		t.Errorf("returned %v, want max norm %v", r, wantR)
	}
	var want mat.Dense
	want.Scale(1/wantR, before)
	if !mat.EqualApprox(m.Dense(), &want, 1e-15) {
		t.Error("matrix is not A/R")
	}
	if got := math.Sqrt(floats.Max(m.RowSquaredNorms())); math.Abs(got-1) > 1e-15 {
		t.Errorf("largest row norm after = %v, want 1", got)
	}

	zero := &CSR{Rows: 2, Cols: 2, Indptr: []int64{0, 1, 1}, Indices: []int32{1}, Values: []float64{0}}
	if r := zero.NormalizeRowsByMax(); r != 0 || zero.Values[0] != 0 {
		t.Errorf("zero matrix: returned %v, values %v", r, zero.Values)
	}
}

func TestCSRNormalizeRowsUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m := randomCSR(rng, 25, 10, 0.5)
	before := m.Clone()
	m.NormalizeRowsUnit()
	for i, sq := range m.RowSquaredNorms() {
		if before.RowNNZ(i) == 0 || floats.Norm(mustRow(before, i), 2) == 0 {
			if sq != 0 {
				t.Errorf("zero row %d changed", i)
			}
			continue
		}
		if math.Abs(sq-1) > 1e-14 {
			t.Errorf("row %d: ‖a‖² = %v, want 1", i, sq)
		}
		// Direction is kept: the row is a positive multiple of the old one.
		if c := floats.Dot(mustRow(m, i), mustRow(before, i)); c <= 0 {
			t.Errorf("row %d changed direction", i)
		}
	}
}

func mustRow(m *CSR, i int) []float64 {
	val, _ := m.Row(i)
	return val
}

func TestCSRWithBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := randomCSR(rng, 15, 6, 0.4)
	before := m.Clone()
	b := m.WithBias(2.5)
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	if b.Cols != m.Cols+1 || b.NNZ() != m.NNZ()+int64(m.Rows) {
		t.Fatalf("shape %d cols, %d nnz", b.Cols, b.NNZ())
	}
	want := mat.NewDense(m.Rows, m.Cols+1, nil)
	want.Slice(0, m.Rows, 0, m.Cols).(*mat.Dense).Copy(m.Dense())
	for i := range m.Rows {
		want.Set(i, m.Cols, 2.5)
	}
	if !mat.Equal(b.Dense(), want) {
		t.Error("WithBias differs from [A 2.5·1]")
	}
	if !mat.Equal(m.Dense(), before.Dense()) || m.Cols != before.Cols {
		t.Error("WithBias modified its receiver")
	}
}

func TestCSRSelectRowsAndClone(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m := randomCSR(rng, 10, 7, 0.5)
	rows := []int{9, 0, 5, 5, 3}
	s := m.SelectRows(rows)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := m.Dense()
	for k, i := range rows {
		if !floats.Equal(mat.Row(nil, k, s.Dense()), mat.Row(nil, i, d)) {
			t.Errorf("selected row %d is not row %d", k, i)
		}
	}
	if e := m.SelectRows(nil); e.Rows != 0 || e.Validate() != nil {
		t.Error("selecting no rows does not give a valid empty matrix")
	}
	c := m.Clone()
	c.Values[0] = 1e9
	s.Values[0] = 1e9
	if m.Values[0] == 1e9 {
		t.Error("Clone or SelectRows shares storage with the original")
	}
	defer func() {
		if recover() == nil {
			t.Error("SelectRows out of range did not panic")
		}
	}()
	m.SelectRows([]int{m.Rows})
}

func TestCSRValidateCatchesBrokenMatrices(t *testing.T) {
	good := func() *CSR {
		return &CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 2, 3}, Indices: []int32{0, 2, 1}, Values: []float64{1, 2, 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string]func(*CSR){
		"short Indptr":     func(m *CSR) { m.Indptr = m.Indptr[:2] },
		"column too large": func(m *CSR) { m.Indices[1] = 3 },
		"unsorted":         func(m *CSR) { m.Indices[0], m.Indices[1] = 2, 0 },
		"short Values":     func(m *CSR) { m.Values = m.Values[:2] },
		"pointer past nnz": func(m *CSR) { m.Indptr[1] = 100 },
		"pointer negative": func(m *CSR) { m.Indptr[1] = -1 },
	} {
		m := good()
		spoil(m)
		if m.Validate() == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
	}
}

// TestCSRRowSweepsParallel checks that the row norms and the unit
// normalisation of a matrix large enough to be swept by several goroutines
// equal, bit for bit, those of one goroutine.
func TestCSRRowSweepsParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m := randomCSR(rng, 3001, 400, 0.25) // about 300k nonzeros
	if m.NNZ() < parallelMinNNZ {
		t.Fatalf("%d nonzeros: below parallelMinNNZ, the test would not sweep in parallel", m.NNZ())
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, unit := m.RowSquaredNorms(), m.Clone()
	unit.NormalizeRowsUnit()
	for _, p := range []int{2, 3, 7} {
		runtime.GOMAXPROCS(p)
		if got := m.RowSquaredNorms(); !slices.Equal(got, one) {
			t.Errorf("GOMAXPROCS %d: row norms differ from one goroutine's", p)
		}
		u := m.Clone()
		u.NormalizeRowsUnit()
		if !slices.Equal(u.Values, unit.Values) {
			t.Errorf("GOMAXPROCS %d: unit rows differ from one goroutine's", p)
		}
	}
}

// TestCSRColumnCountsAndAbsRange checks the column counts and the range of
// magnitudes against a direct count, with one goroutine and several, on a
// matrix large enough to be split, narrow (private counters) and wide (by
// column range).
func TestCSRColumnCountsAndAbsRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	m := randomCSR(rng, 3001, 400, 0.25)
	m.Values[7] = -1e-9 // the smallest magnitude, negative
	m.Values[m.NNZ()-1] = 1e6
	want := make([]int64, m.Cols)
	for i := range m.Rows {
		_, idx := m.Row(i)
		for _, j := range idx {
			want[j]++
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, p := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(p)
		if got := m.ColumnCounts(); !slices.Equal(got, want) {
			t.Errorf("GOMAXPROCS %d: column counts differ from a direct count", p)
		}
		// A width far beyond the entries, counted by column range.
		wide := *m
		wide.Cols = 4 * int(m.NNZ())
		if got := wide.ColumnCounts(); len(got) != wide.Cols || !slices.Equal(got[:m.Cols], want) || slices.Max(got[m.Cols:]) != 0 {
			t.Errorf("GOMAXPROCS %d: a wide matrix's column counts differ from a direct count", p)
		}
		if lo, hi := m.AbsRange(); lo != 1e-9 || hi != 1e6 {
			t.Errorf("GOMAXPROCS %d: AbsRange = %g, %g; want 1e-9, 1e6", p, lo, hi)
		}
	}
	if lo, hi := (&CSR{Rows: 1, Cols: 1, Indptr: []int64{0, 0}}).AbsRange(); !math.IsInf(lo, 1) || hi != 0 {
		t.Errorf("empty matrix: AbsRange = %g, %g", lo, hi)
	}
}
