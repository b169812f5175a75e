//go:build unix

package sparse

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMappedFileShrinks: a file cut shorter while it is mapped makes a read
// of its lost pages an error (errChanged), not a fault that ends the
// process; the pages that remain read as before.
func TestMappedFileShrinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	content := bytes.Repeat([]byte("1 1:0.5 7:2\n"), 4096) // 48 KiB
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := mapAny(f, int64(len(content)))
	if m == nil {
		t.Fatal("mapAny: no mapping")
	}
	defer m.close()
	head := make([]byte, 100)
	if n, err := m.ReadAt(head, 0); n != len(head) || err != nil || !bytes.Equal(head, content[:100]) {
		t.Fatalf("ReadAt before: %d, %v", n, err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	tail := make([]byte, 100)
	if _, err := m.ReadAt(tail, int64(len(content)-200)); !errors.Is(err, errChanged) {
		t.Fatalf("ReadAt past the new end: %v, want errChanged", err)
	}
	if n, err := m.ReadAt(head, 0); n != len(head) || err != nil {
		t.Fatalf("ReadAt of a page that remains: %d, %v", n, err)
	}
}

// TestReadFileMapped: a file above mappedMinBytes, read from its mapping,
// gives the dataset that streaming its text gives.
func TestReadFileMapped(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < mappedMinBytes+1000; i++ {
		fmt.Fprintf(&b, "%d %d:%g %d:1 %d:0.25\n", 2*(i%2)-1, i%7+1, float64(i)/3, i%1000+10, 5000+i%3)
	}
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m := mapFile(f, int64(b.Len()))
	f.Close()
	if m == nil {
		t.Fatal("mapFile: no mapping for a file above mappedMinBytes")
	}
	m.close()
	got, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadLIBSVM(onlyReader{bytes.NewReader(b.Bytes())}, "big", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.X.Rows != want.X.Rows || got.X.Cols != want.X.Cols || !slices.Equal(got.Y, want.Y) ||
		!slices.Equal(got.X.Indptr, want.X.Indptr) || !slices.Equal(got.X.Indices, want.X.Indices) || !slices.Equal(got.X.Values, want.X.Values) {
		t.Fatalf("the mapped read differs from the streamed one: %d×%d against %d×%d", got.X.Rows, got.X.Cols, want.X.Rows, want.X.Cols)
	}
}

// onlyReader hides every method but Read, so that ReadLIBSVM streams.
type onlyReader struct{ r *bytes.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
