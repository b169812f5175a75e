package sparse

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestRepeatedRows plants repeats in a random matrix (rows copied
// exactly, copies with another label, another value or one more entry)
// and checks first against a comparison of every pair, with one goroutine
// and several.
func TestRepeatedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	base := randomCSR(rng, 400, 50, 0.05)
	// Rows drawn from the base's, so that most repeat one.
	var rows []int
	key := []float64{}
	for range 3000 {
		rows = append(rows, rng.IntN(base.Rows))
		key = append(key, float64(rng.IntN(2)))
	}
	m := &CSR{Cols: base.Cols, Indptr: []int64{0}}
	for i, r := range rows {
		val, idx := base.Row(r)
		val, idx = slices.Clone(val), slices.Clone(idx)
		switch {
		case i%97 == 0 && len(val) > 0:
			val[0] += 1e-300 // another value, by one bit at most
			val[0] *= 1 + 1e-15
		case i%89 == 0 && len(idx) > 0 && idx[len(idx)-1] < int32(m.Cols-1):
			idx, val = append(idx, int32(m.Cols-1)), append(val, 1)
		}
		m.Indices, m.Values = append(m.Indices, idx...), append(m.Values, val...)
		m.Indptr = append(m.Indptr, int64(len(m.Indices)))
		m.Rows++
	}
	want := make([]int32, m.Rows)
	repeats := 0
	for i := range m.Rows {
		want[i] = int32(i)
		for f := range i {
			if m.rowsEqual(f, i) && key[f] == key[i] {
				want[i] = int32(f)
				repeats++
				break
			}
		}
	}
	if repeats < m.Rows/2 {
		t.Fatalf("only %d repeats planted", repeats)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, p := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(p)
		first, n := m.RepeatedRows(key)
		if !slices.Equal(first, want) || n != repeats {
			t.Errorf("GOMAXPROCS %d: %d repeats found, want %d; first differs: %v", p, n, repeats, !slices.Equal(first, want))
		}
		// Without a key, rows with different labels repeat too.
		first, n = m.RepeatedRows(nil)
		if n < repeats {
			t.Errorf("GOMAXPROCS %d: %d repeats without a key, fewer than the %d with one", p, n, repeats)
		}
		for i, f := range first {
			if int(f) > i || !m.rowsEqual(int(f), i) {
				t.Fatalf("GOMAXPROCS %d, no key: row %d repeats row %d, which differs or follows it", p, i, f)
			}
		}
	}
}
