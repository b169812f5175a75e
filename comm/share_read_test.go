package comm_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/sparse"
)

// readShares reads every rank's share of path with the project's LIBSVM
// reader and concatenates the rows in rank order.
func readShares(t *testing.T, path string, size, cols int) *sparse.Dataset {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all := &sparse.Dataset{X: &sparse.CSR{Cols: cols, Indptr: []int64{0}}}
	for rank := range size {
		start, end, _, err := comm.ShareRange(path, rank, size)
		if err != nil {
			t.Fatal(err)
		}
		if start == end {
			continue
		}
		d, err := sparse.ReadLIBSVM(io.NewSectionReader(f, start, end-start), path, sparse.ReadOptions{NumFeatures: cols, Threads: 1})
		if err != nil {
			t.Fatalf("rank %d of %d, bytes [%d, %d): %v", rank, size, start, end, err)
		}
		all.Y = append(all.Y, d.Y...)
		base := all.X.NNZ()
		for _, p := range d.X.Indptr[1:] {
			all.X.Indptr = append(all.X.Indptr, base+p)
		}
		all.X.Indices = append(all.X.Indices, d.X.Indices...)
		all.X.Values = append(all.X.Values, d.X.Values...)
		all.X.Rows += d.X.Rows
	}
	return all
}

// TestSharesMakeTheFile reads each rank's byte range with sparse.ReadLIBSVM
// through an io.SectionReader: the concatenated rows are the file's rows.
func TestSharesMakeTheFile(t *testing.T) {
	data, err := os.ReadFile("../testdata/heart_scale")
	if err != nil {
		t.Fatal(err)
	}
	noNewline := filepath.Join(t.TempDir(), "heart_scale_cut")
	if err := os.WriteFile(noNewline, bytes.TrimRight(data, "\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"../testdata/heart_scale", noNewline} {
		want, err := sparse.ReadFile(path, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 2, 3, 5, 16, want.X.Rows, want.X.Rows + 30} {
			got := readShares(t, path, size, want.X.Cols)
			if got.X.Rows != want.X.Rows || !slices.Equal(got.Y, want.Y) ||
				!slices.Equal(got.X.Indptr, want.X.Indptr) ||
				!slices.Equal(got.X.Indices, want.X.Indices) ||
				!slices.Equal(got.X.Values, want.X.Values) {
				t.Errorf("%s, %d ranks: the shares' rows (%d) differ from the file's (%d)", path, size, got.X.Rows, want.X.Rows)
			}
		}
	}
}

// TestShareLineNumbers shows how a rank names the true line of an error:
// sparse.ReadLIBSVM numbers the lines of what it is given from 1, so the
// rank adds firstLine−1.
func TestShareLineNumbers(t *testing.T) {
	var text strings.Builder
	const bad = 37
	for line := 1; line <= 50; line++ {
		if line == bad {
			text.WriteString("+1 2:1 1:3\n") // descending indices
		} else {
			text.WriteString("-1 1:0.5 3:2\n")
		}
	}
	path := filepath.Join(t.TempDir(), "bad.svm")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 4
	failed := 0
	for rank := range size {
		start, end, firstLine, err := comm.ShareRange(path, rank, size)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sparse.ReadLIBSVM(io.NewSectionReader(f, start, end-start), path, sparse.ReadOptions{})
		var pe *sparse.ParseError
		if !errors.As(err, &pe) {
			continue
		}
		failed++
		if pe.Line == bad {
			t.Errorf("rank %d: the reader already names line %d; ReadLIBSVM may have learnt a first line number", rank, bad)
		}
		if got := pe.Line + firstLine - 1; got != bad {
			t.Errorf("rank %d: error %v at line %d of the file, want %d", rank, err, got, bad)
		}
	}
	if failed != 1 {
		t.Errorf("%d ranks failed, want 1", failed)
	}
}
