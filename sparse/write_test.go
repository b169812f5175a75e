package sparse

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestWriteLIBSVMCanonicalForm(t *testing.T) {
	d, err := readString("+1 1:0.50 3:2.000000 # c\r\n\n2.000000  2:9.8E-02 4:-0\n-1 \n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLIBSVM(&b, d); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "1 1:0.5 3:2\n2 2:0.098 4:-0\n-1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteRefusesInvalidDatasets(t *testing.T) {
	valid := func() *Dataset {
		return &Dataset{Name: "v", X: &CSR{Rows: 1, Cols: 2, Indptr: []int64{0, 1}, Indices: []int32{1}, Values: []float64{3}}, Y: []float64{1}}
	}
	for name, spoil := range map[string]func(*Dataset){
		"nil matrix":      func(d *Dataset) { d.X = nil },
		"missing label":   func(d *Dataset) { d.Y = nil },
		"NaN value":       func(d *Dataset) { d.X.Values[0] = math.NaN() },
		"infinite label":  func(d *Dataset) { d.Y[0] = math.Inf(1) },
		"column too wide": func(d *Dataset) { d.X.Indices[0] = 2 },
	} {
		d := valid()
		spoil(d)
		var b bytes.Buffer
		if err := WriteLIBSVM(&b, d); err == nil {
			t.Errorf("%s: WriteLIBSVM accepted it", name)
		}
		if err := WriteCache(&b, d); err == nil {
			t.Errorf("%s: WriteCache accepted it", name)
		}
		if b.Len() != 0 {
			t.Errorf("%s: %d bytes written before the error", name, b.Len())
		}
	}
	if err := WriteLIBSVM(&bytes.Buffer{}, nil); err == nil {
		t.Error("nil dataset accepted")
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestWritePropagatesWriterErrors(t *testing.T) {
	d, err := readString(strings.Repeat("1 1:1 2:2 3:3\n", 10000), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if err := WriteLIBSVM(failingWriter{boom}, d); !errors.Is(err, boom) {
		t.Errorf("WriteLIBSVM: got %v", err)
	}
	if err := WriteCache(failingWriter{boom}, d); !errors.Is(err, boom) {
		t.Errorf("WriteCache: got %v", err)
	}
}
