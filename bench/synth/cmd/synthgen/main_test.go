package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestWriteReadsBack checks that the written file reads back as the
// generated data, bit for bit, for both shapes.
func TestWriteReadsBack(t *testing.T) {
	for shape, spec := range map[string]synth.Spec{"url": synth.URLLike(300, 3), "rcv1": synth.RCV1Like(300, 3)} {
		path := filepath.Join(t.TempDir(), shape+".svm")
		if err := run(shape, spec.Rows, spec.Seed, path); err != nil {
			t.Fatal(err)
		}
		x, y, err := synth.Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		d, err := sparse.ReadFile(path, sparse.ReadOptions{NumFeatures: spec.Cols})
		if err != nil {
			t.Fatal(err)
		}
		if d.X.Rows != x.Rows || d.X.Cols != x.Cols || !slices.Equal(d.X.Indptr, x.Indptr) ||
			!slices.Equal(d.X.Indices, x.Indices) || !slices.Equal(d.X.Values, x.Values) || !slices.Equal(d.Y, y) {
			t.Errorf("%s: the file does not read back as the generated data", shape)
		}
	}
	if err := run("iris", 10, 1, filepath.Join(t.TempDir(), "x")); err == nil {
		t.Error("unknown shape accepted")
	}
}
