package sparse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sharedData is where the real LIBSVM files live, beside the repository.
var sharedData = filepath.Join("..", "..", "shared", "data")

// sourceShape is one row of the table in SOURCES.md.
type sourceShape struct {
	file                string
	rows, maxIdx, feats int
	nnz                 int64
	labels              string // as written in the table
}

// readSources parses the shape table of SOURCES.md, so that the test checks
// the documented figures themselves rather than a copy of them.
func readSources(t *testing.T) []sourceShape {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(sharedData, "SOURCES.md"))
	if err != nil {
		t.Skipf("shared data absent: %v", err)
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
		if err != nil {
			t.Fatalf("SOURCES.md: %q is not a number", s)
		}
		return n
	}
	var shapes []sourceShape
	for _, line := range strings.Split(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 10 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		published := strings.Split(cells[5], "x")
		shapes = append(shapes, sourceShape{
			file:   strings.Trim(strings.TrimSpace(cells[1]), "`"),
			rows:   num(cells[3]),
			maxIdx: num(cells[4]),
			feats:  num(published[1]),
			nnz:    int64(num(cells[6])),
			labels: strings.TrimSpace(cells[7]),
		})
	}
	if len(shapes) < 14 {
		t.Fatalf("SOURCES.md: found %d table rows, want at least 14", len(shapes))
	}
	return shapes
}

var (
	labelCountRE = regexp.MustCompile(`([-+]?[0-9.]+) \(([0-9]+)\)`)
	distinctRE   = regexp.MustCompile(`^([0-9]+) distinct values, ([-0-9.]+) \.\. ([-0-9.]+)$`)
)

// checkLabels compares label counts with the table's "labels" cell, which
// is either "v (count), v (count)" or "K distinct values, min .. max".
func checkLabels(t *testing.T, y []float64, cell string) {
	t.Helper()
	values, counts := LabelCounts(y)
	if m := distinctRE.FindStringSubmatch(cell); m != nil {
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		if strconv.Itoa(len(values)) != m[1] || values[0] != lo || values[len(values)-1] != hi {
			t.Errorf("labels: %d distinct in [%v, %v], SOURCES.md says %q", len(values), values[0], values[len(values)-1], cell)
		}
		return
	}
	var got []string
	for k, v := range values {
		got = append(got, fmt.Sprintf("%v:%d", v, counts[k]))
	}
	var want []string
	for _, m := range labelCountRE.FindAllStringSubmatch(cell, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		want = append(want, fmt.Sprintf("%v:%s", v, m[2]))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("labels %v, SOURCES.md says %q", got, cell)
	}
}

// TestSharedDataShapes reads every file listed in SOURCES.md and checks rows,
// largest index, nonzeros (explicit zeros count, as the table counts written
// entries) and label counts; then reads it again with the published number
// of features, as a9a.t and a1a need.
func TestSharedDataShapes(t *testing.T) {
	for _, s := range readSources(t) {
		t.Run(s.file, func(t *testing.T) {
			path := filepath.Join(sharedData, s.file)
			d, err := ReadFile(path, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.X.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.X.Rows != s.rows || d.X.Cols != s.maxIdx || d.X.NNZ() != s.nnz || len(d.Y) != s.rows {
				t.Errorf("got %d rows, %d cols, %d nnz; SOURCES.md says %d, %d, %d", d.X.Rows, d.X.Cols, d.X.NNZ(), s.rows, s.maxIdx, s.nnz)
			}
			checkLabels(t, d.Y, s.labels)
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := compareWithReference(string(text), 0, d, nil); err != nil {
				t.Error(err)
			}
			wide, err := ReadFile(path, ReadOptions{NumFeatures: s.feats})
			if err != nil {
				t.Fatal(err)
			}
			if wide.X.Cols != s.feats || wide.X.NNZ() != s.nnz {
				t.Errorf("with NumFeatures=%d: %d cols, %d nnz", s.feats, wide.X.Cols, wide.X.NNZ())
			}
		})
	}
}

// TestSharedDataRoundTrips writes every real file canonically and as a
// cache, and checks that both read back bit for bit and that a second
// canonical write is byte-identical to the first.
func TestSharedDataRoundTrips(t *testing.T) {
	dir := t.TempDir()
	for _, s := range readSources(t) {
		t.Run(s.file, func(t *testing.T) {
			d, err := ReadFile(filepath.Join(sharedData, s.file), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := WriteLIBSVM(&text, d); err != nil {
				t.Fatal(err)
			}
			back, err := ReadLIBSVM(bytes.NewReader(text.Bytes()), s.file, ReadOptions{NumFeatures: d.X.Cols})
			if err != nil {
				t.Fatal(err)
			}
			assertSameDataset(t, back, d)
			var again bytes.Buffer
			if err := WriteLIBSVM(&again, back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), text.Bytes()) {
				t.Error("second canonical write differs from the first")
			}

			cache := filepath.Join(dir, s.file+".cache")
			f, err := os.Create(cache)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteCache(f, d); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			fromCache, err := ReadFile(cache, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			assertSameDataset(t, fromCache, d)
		})
	}
}
