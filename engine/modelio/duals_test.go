package modelio

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestDualsRoundTrip saves duals and reads them back bit for bit, the
// signed zero and an empty iterate included.
func TestDualsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []*Duals{
		{Loss: "logistic", Data: 0xdeadbeef, Weights: 7, Y: []float64{-0.25, math.Copysign(0, -1), 1e-300, -1}},
		{Loss: "sqhinge", Y: []float64{}},
	} {
		path := filepath.Join(dir, d.Loss+".duals")
		if err := SaveDuals(path, d); err != nil {
			t.Fatal(err)
		}
		got, err := LoadDuals(path)
		if err != nil {
			t.Fatal(err)
		}
		if got.Loss != d.Loss || got.Data != d.Data || got.Weights != d.Weights || len(got.Y) != len(d.Y) {
			t.Fatalf("read %+v, wrote %+v", got, d)
		}
		for k := range d.Y {
			if math.Float64bits(got.Y[k]) != math.Float64bits(d.Y[k]) {
				t.Errorf("dual %d: read %v, wrote %v", k, got.Y[k], d.Y[k])
			}
		}
	}
}

// TestLoadDualsRefuses checks that LoadDuals refuses files cut short,
// changed, of another version or not of SaveDuals, names the file, and
// wraps ErrNoDuals for a missing one.
func TestLoadDualsRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.duals")
	if err := SaveDuals(path, &Duals{Loss: "logistic", Y: []float64{-0.5, -0.25, 0}}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resum := func(b []byte) []byte { // the trailer fixed, so that the check before it is what fails
		b = b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, dualsCRC()))
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-10] ^= 1
	version := append([]byte(nil), good...)
	version[len(dualsMagic)] = 2
	short := append([]byte(nil), good[:len(good)-12]...)
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"empty", "no magic line", nil},
		{"not duals", "no magic line", []byte(`{"loss": "logistic"}`)},
		{"cut short", "checksum", good[:len(good)-1]},
		{"a bit flipped", "checksum", flipped},
		{"version 2", "version 2", resum(version)},
		{"fewer duals", "announces 3 duals", resum(append(short, 0, 0, 0, 0))},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDuals(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one that names %s and says %q", c.name, err, p, c.want)
		}
	}
	if _, err := LoadDuals(filepath.Join(dir, "absent")); !errors.Is(err, ErrNoDuals) {
		t.Errorf("a missing file: %v, want ErrNoDuals", err)
	}
}

// TestDataSum checks that the sum changes with any row, label or weight
// and not with a copy of the same data.
func TestDataSum(t *testing.T) {
	data := func() engine.Problem {
		x := &sparse.CSR{Rows: 3, Cols: 4, Indptr: []int64{0, 2, 3, 5}, Indices: []int32{0, 2, 1, 0, 3}, Values: []float64{1, -2, 0.5, 3, 4}}
		return engine.Problem{X: x, B: []float64{1, -1, 1}}
	}
	base := DataSum(data())
	if again := DataSum(data()); again != base {
		t.Fatalf("two copies: %x and %x", base, again)
	}
	// The parts of a split of the rows add up to the whole's.
	whole := data()
	top := engine.Problem{X: &sparse.CSR{Rows: 1, Cols: 4, Indptr: []int64{0, 2}, Indices: whole.X.Indices[:2], Values: whole.X.Values[:2]}, B: whole.B[:1]}
	rest := engine.Problem{X: &sparse.CSR{Rows: 2, Cols: 4, Indptr: []int64{0, 1, 3}, Indices: whole.X.Indices[2:], Values: whole.X.Values[2:]}, B: whole.B[1:]}
	if got := FinishDataSum(RowsSum(top, 0)+RowsSum(rest, 1), 3, 4); got != base {
		t.Errorf("split 1 + 2: %x, whole %x", got, base)
	}
	if got := FinishDataSum(RowsSum(rest, 0)+RowsSum(top, 2), 3, 4); got == base {
		t.Error("the rows in another order give the same sum")
	}
	for name, change := range map[string]func(p *engine.Problem){
		"a value":      func(p *engine.Problem) { p.X.Values[4] = 4.5 },
		"a column":     func(p *engine.Problem) { p.X.Indices[4] = 2 },
		"a row's end":  func(p *engine.Problem) { p.X.Indptr[1] = 1 },
		"a swap":       func(p *engine.Problem) { p.X.Values[0], p.X.Values[1] = p.X.Values[1], p.X.Values[0] },
		"a label":      func(p *engine.Problem) { p.B[2] = -1 },
		"row weights":  func(p *engine.Problem) { p.SampleWeights = []float64{1, 1, 2} },
		"more columns": func(p *engine.Problem) { p.X.Cols = 5 },
	} {
		p := data()
		change(&p)
		if DataSum(p) == base {
			t.Errorf("%s changed, the sum did not", name)
		}
	}
	// The weights as a model file keeps them: a sparse file reads −0 back
	// as +0. Longer than WeightsSum's buffer, to cover its pieces.
	w := make([]float64, 3000)
	w[1], w[2999] = 1, -2
	negZero := slices.Clone(w)
	negZero[5] = math.Copysign(0, -1)
	other := slices.Clone(w)
	other[2000] = 1e-300
	if WeightsSum(w) != WeightsSum(negZero) || WeightsSum(w) == WeightsSum(other) || WeightsSum(w) == WeightsSum(w[:2999]) {
		t.Error("WeightsSum does not follow the weights as a model file keeps them")
	}
}

// FuzzParseDuals checks that any bytes either fail to parse with an error
// that names the file, or parse into duals that SaveDuals writes back to
// the same bytes.
func FuzzParseDuals(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed")
	if err := SaveDuals(seed, &Duals{Loss: "sqhinge", Data: 3, Weights: 4, Y: []float64{-1, 0.5}}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte(dualsMagic + "\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseDuals(data, "fuzzed")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzzed: ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := SaveDuals(out, d); err != nil {
			t.Fatal(err)
		}
		back, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != string(data) {
			t.Fatalf("parsed %d bytes, wrote back %d other bytes", len(data), len(back))
		}
	})
}
