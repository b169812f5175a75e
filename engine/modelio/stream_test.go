package modelio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

// marshalledModel is the struct that Save once handed to encoding/json:
// the reference for the bytes that the streamed writer must reproduce.
type marshalledModel struct {
	engine.Model
	Weights       []float64 `json:"weights,omitempty"`
	NonzeroIndex  []int     `json:"nonzero_index,omitempty"`
	NonzeroWeight []float64 `json:"nonzero_weight,omitempty"`
}

// marshalModel is Save's document as encoding/json wrote it: the model
// built whole in memory, the sparse form's arrays copied out.
func marshalModel(m *engine.Model) ([]byte, error) {
	out := marshalledModel{Model: *m, Weights: m.Weights}
	nnz := 0
	for _, w := range m.Weights {
		if w != 0 {
			nnz++
		}
	}
	if len(m.Weights) > 0 && float64(nnz) < sparseFraction*float64(len(m.Weights)) {
		out.Weights = nil
		out.NonzeroIndex, out.NonzeroWeight = make([]int, 0, nnz), make([]float64, 0, nnz)
		for j, w := range m.Weights {
			if w != 0 {
				out.NonzeroIndex = append(out.NonzeroIndex, j)
				out.NonzeroWeight = append(out.NonzeroWeight, w)
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	err := enc.Encode(out)
	return b.Bytes(), err
}

// specialValues are the floats whose text encoding/json formats with care:
// both sides of its exponent-form cutoffs (1e-6, 1e21), exponents of one
// and three digits, subnormals, negative zero and the extremes.
var specialValues = []float64{
	1e-300, math.Copysign(0, -1), 0, 1e-6, math.Nextafter(1e-6, 0), 9.99e-7, 1e-7, -1e-9, 1.5e-10,
	1e21, math.Nextafter(1e21, 0), 1e20, -1e22, 1e100, math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 0.1, 1.0 / 3, -2.0 / 3, 123456789012345680,
	1, -1, 100, 0.5, math.Pi, 5e-324,
}

// randomWidths returns n weights whose magnitudes spread over the whole
// float64 range, with exact zeros where zeroEvery divides the index.
func randomWidths(n, zeroEvery int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	w := make([]float64, n)
	for j := range w {
		if zeroEvery > 0 && j%zeroEvery != 0 {
			continue
		}
		switch j % 3 {
		case 0:
			w[j] = rng.NormFloat64()
		case 1:
			w[j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
		default:
			if v := math.Float64frombits(rng.Uint64()); !math.IsNaN(v) && !math.IsInf(v, 0) {
				w[j] = v
			}
		}
	}
	return w
}

// streamModels are models of every shape Save writes: binary, one-vs-rest,
// multinomial, regression, with and without a bias, dense and sparse, all
// zeros and no weights at all, and names that JSON must escape.
func streamModels() map[string]*engine.Model {
	special := append([]float64{}, specialValues...)
	ovr := randomWidths(3*(len(special)+1), 0, 1)
	copy(ovr, special)
	sparseW := make([]float64, 5000)
	for j := 0; j < len(sparseW); j += 7 {
		sparseW[j] = specialValues[j%len(specialValues)]
	}
	sparseW[len(sparseW)-1] = -0.125
	return map[string]*engine.Model{
		"binary-bias":   {Loss: "logistic", Lambda: 1e-300, L1: 0, Bias: 1, Labels: []float64{-1, 1}, Dim: len(special) - 1, Weights: special},
		"binary-nobias": {Loss: "sqhinge", Lambda: 0.001, Labels: []float64{2, 4}, Dim: len(special), Weights: special},
		"negative-bias": {Loss: "hinge", Lambda: 1e-7, Bias: -2.5, Labels: []float64{0, 1}, Dim: 2, Weights: []float64{0.25, -0, 1e21}},
		"multiclass":    {Loss: "logistic", Lambda: 0.5, Bias: 1, Labels: []float64{1, 2.5, 3e30}, Dim: len(special), Weights: ovr},
		"multinomial": {Loss: "logistic", Lambda: 1.0 / 3, Labels: []float64{-7, 0, 7}, Dim: 1000,
			Weights: randomWidths(3000, 0, 2), Multinomial: true},
		"regression-unit": {Loss: "squared", Lambda: 2, L1: 1e-6, Bias: 0.5, Normalize: "unit", Dim: 999, Weights: randomWidths(1000, 0, 3)},
		"sparse-l1":       {Loss: "logistic", Lambda: 0.1, L1: 0.01, Bias: 1, Labels: []float64{-1, 1}, Dim: len(sparseW) - 1, Weights: sparseW},
		"sparse-ovr":      {Loss: "logistic", Lambda: 0.1, L1: 0.01, Labels: []float64{1, 2, 3}, Dim: 4000, Weights: randomWidths(12000, 11, 4)},
		"all-zero":        {Loss: "logistic", Lambda: 1e3, L1: 5, Labels: []float64{-1, 1}, Dim: 10, Weights: make([]float64, 10)},
		"no-weights":      {Loss: "squared", Lambda: 1, Dim: 0, Weights: []float64{}},
		"nil-weights":     {Loss: "squared", Lambda: 1, Dim: 0},
		"empty-labels":    {Loss: "squared", Lambda: 1, Labels: []float64{}, Dim: 1, Weights: []float64{3}},
		"escaped-names":   {Loss: "a<b>&\"c\"\\\u2028\x01\xff", Normalize: "é\t\n", Lambda: math.Copysign(0, -1), Dim: 1, Weights: []float64{1}},
		"one-weight":      {Loss: "absolute", Lambda: 1, Dim: 1, Weights: []float64{-1e-300}},
		"certified": {Loss: "logistic", Lambda: 1e-5, Labels: []float64{-1, 1}, Dim: 2, Weights: []float64{0.5, -2},
			Certificate: &engine.ModelCertificate{Primal: 0.32293307671433, Dual: -1e-7}},
		"certified-sparse": {Loss: "logistic", Lambda: 1e-5, Labels: []float64{-1, 1}, Dim: 10, Weights: []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 3},
			Certificate: &engine.ModelCertificate{Primal: 1e21, Dual: math.Copysign(0, -1)}},
	}
}

// TestStreamedJSONByteIdentical: the streamed writer's file is, byte for
// byte, what encoding/json wrote for the same model, so that files written
// before and after compare equal and tools that diff models see nothing.
func TestStreamedJSONByteIdentical(t *testing.T) {
	dir := t.TempDir()
	for name, m := range streamModels() {
		want, err := marshalModel(m)
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		if name == "all-zero" {
			// encoding/json omitted both empty arrays, and Load refused
			// the file; the streamed writer keeps them.
			want = bytes.Replace(want, []byte(`"dim": 10`), []byte(`"dim": 10,
 "nonzero_index": [],
 "nonzero_weight": []`), 1)
		}
		var got bytes.Buffer
		if err := writeJSON(&got, m); err != nil {
			t.Fatalf("%s: writeJSON: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: streamed document differs from encoding/json's at byte %d:\n got %q\nwant %q",
				name, firstDiff(got.Bytes(), want), excerpt(got.Bytes(), want), excerpt(want, got.Bytes()))
			continue
		}
		path := filepath.Join(dir, name+".json")
		if err := Save(path, m); err != nil {
			t.Fatalf("%s: Save: %v", name, err)
		}
		if file, _ := os.ReadFile(path); !bytes.Equal(file, want) {
			t.Errorf("%s: Save's file differs from encoding/json's document", name)
		}
	}
}

// TestStreamedJSONRefusesNonFinite: a number JSON cannot hold is refused
// with encoding/json's error, wherever it is.
func TestStreamedJSONRefusesNonFinite(t *testing.T) {
	for _, m := range []*engine.Model{
		{Loss: "logistic", Lambda: math.NaN(), Dim: 1, Weights: []float64{1}},
		{Loss: "logistic", Lambda: 1, Bias: math.Inf(1), Dim: 1, Weights: []float64{1, 2}},
		{Loss: "logistic", Lambda: 1, Labels: []float64{math.Inf(-1), 1}, Dim: 1, Weights: []float64{1}},
		{Loss: "logistic", Lambda: 1, Dim: 3, Weights: []float64{1, 2, math.NaN()}},
		{Loss: "logistic", Lambda: 1, Dim: 8, Weights: []float64{0, 0, 0, 0, 0, 0, 0, math.Inf(-1)}}, // sparse
	} {
		_, want := marshalModel(m)
		err := writeJSON(io.Discard, m)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("%+v: error %v, want encoding/json's %v", m, err, want)
		}
	}
}

// TestSaveAllocationsDoNotGrowWithWidth: writing a model of a million
// weights, in either format and either JSON form, allocates a small
// buffer, not the document: a run that saves the model of a wide problem
// still holds the data it trained on, and the document's text is about
// three times the weights' size.
func TestSaveAllocationsDoNotGrowWithWidth(t *testing.T) {
	const n = 1_000_000
	const budget = 1 << 20
	dir := t.TempDir()
	dense := &engine.Model{Loss: "logistic", Lambda: 1e-6, Bias: 1, Labels: []float64{-1, 1}, Dim: n - 1, Weights: randomWidths(n, 0, 5)}
	sparse := &engine.Model{Loss: "logistic", Lambda: 1e-6, L1: 1e-3, Labels: []float64{-1, 1}, Dim: n, Weights: randomWidths(n, 5, 6)}
	ovr := &engine.Model{Loss: "sqhinge", Lambda: 1e-6, Labels: []float64{1, 2, 3, 4}, Dim: n / 4, Weights: randomWidths(n, 0, 7)}
	for _, tc := range []struct {
		name string
		save func(string, *engine.Model) error
		m    *engine.Model
	}{
		{"json-dense", Save, dense},
		{"json-sparse", Save, sparse},
		{"json-ovr", Save, ovr},
		{"liblinear", SaveLIBLINEAR, dense},
		{"liblinear-ovr", SaveLIBLINEAR, ovr},
	} {
		path := filepath.Join(dir, tc.name)
		if err := tc.save(path, tc.m); err != nil { // warms up what runs once
			t.Fatalf("%s: %v", tc.name, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := tc.save(path, tc.m)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		fi, _ := os.Stat(path)
		if got := after.TotalAlloc - before.TotalAlloc; got > budget {
			t.Errorf("%s: writing a model of %d weights (a file of %d bytes) allocated %d bytes; want at most %d, independent of the width",
				tc.name, len(tc.m.Weights), fi.Size(), got, budget)
		}
	}
}

// failingWriter accepts limit bytes, then fails every write.
type failingWriter struct {
	limit, written int
}

var errWriterFull = errors.New("the writer is full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.written+len(p) > w.limit {
		n := w.limit - w.written
		w.written = w.limit
		return n, errWriterFull
	}
	w.written += len(p)
	return len(p), nil
}

// TestStreamedJSONWriteErrors: a write that fails midway, once part of the
// document has gone out, is reported, not swallowed by the buffer.
func TestStreamedJSONWriteErrors(t *testing.T) {
	m := &engine.Model{Loss: "logistic", Lambda: 1, Labels: []float64{-1, 1}, Dim: 200_000, Weights: randomWidths(200_000, 0, 8)}
	for _, limit := range []int{0, 10, 100_000, 1_000_000} {
		if err := writeJSON(&failingWriter{limit: limit}, m); !errors.Is(err, errWriterFull) {
			t.Errorf("a writer that fails after %d bytes: writeJSON returned %v, want its error", limit, err)
		}
	}
}

// TestFailedStreamLeavesTargetUntouched: a Save that fails after part of
// the model has reached the temporary file (here a NaN at the end of a
// million weights, found only once the first megabytes are on disk) leaves
// the old model in place and no temporary file behind.
func TestFailedStreamLeavesTargetUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := Save(path, smallModelForStream()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	w := randomWidths(1_000_000, 0, 9)
	w[len(w)-1] = math.NaN()
	bad := &engine.Model{Loss: "logistic", Lambda: 1, Labels: []float64{-1, 1}, Dim: len(w), Weights: w}
	err := Save(path, bad)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != path || pe.Op != "write" || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("Save of a NaN after a million weights: %v; want a write *os.PathError for %s naming the NaN", err, path)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("a failed Save changed %s", path)
	}

	// A write function that fails after writing leaves nothing either.
	err = WriteFileAtomic(path, func(w io.Writer) error {
		if _, err := w.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil {
			return err
		}
		return errWriterFull
	})
	if !errors.Is(err, errWriterFull) {
		t.Errorf("WriteFileAtomic: %v, want the write function's error", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("a failed WriteFileAtomic changed %s", path)
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestLoadAfterStreamedSave: models written by the streamed writer read
// back bit for bit, in both forms.
func TestLoadAfterStreamedSave(t *testing.T) {
	dir := t.TempDir()
	for name, m := range streamModels() {
		if m.Validate() != nil {
			continue // Save writes what Load refuses (no weights, odd names)
		}
		path := filepath.Join(dir, name+".json")
		if err := Save(path, m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got.Weights) != len(m.Weights) {
			t.Fatalf("%s: %d weights read, %d written", name, len(got.Weights), len(m.Weights))
		}
		for j := range m.Weights {
			if math.Float64bits(got.Weights[j]) != math.Float64bits(m.Weights[j]) && !(m.Weights[j] == 0 && got.Weights[j] == 0) {
				t.Fatalf("%s: weight %d read %v, written %v", name, j, got.Weights[j], m.Weights[j])
			}
		}
		if cap(got.Weights) != len(got.Weights) {
			t.Errorf("%s: Load's weights have capacity %d for %d: the decoder grew the slice", name, cap(got.Weights), len(got.Weights))
		}
	}
}

func smallModelForStream() *engine.Model {
	return &engine.Model{Loss: "logistic", Lambda: 0.1, Bias: 1, Labels: []float64{2, 4}, Dim: 3, Weights: []float64{0.5, -1.25, 0, 0.75}}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// excerpt returns a's bytes around its first difference from b.
func excerpt(a, b []byte) []byte {
	i := firstDiff(a, b)
	return a[max(0, i-40):min(len(a), i+40)]
}
