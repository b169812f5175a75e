package comm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkPartition checks the ranges that shareRange gives the ranks of a
// world of size for data against an independent reference: the first line
// start at or after each nominal cut k·len/size.
func checkPartition(t testing.TB, data []byte, size, bufSize int) {
	t.Helper()
	n := int64(len(data))
	lineStarts := []int64{0}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			lineStarts = append(lineStarts, int64(i+1))
		}
	}
	wantCut := func(k int) int64 {
		nominal := n * int64(k) / int64(size)
		if k == size {
			return n
		}
		for _, s := range lineStarts {
			if s >= nominal {
				return s
			}
		}
		return n
	}
	next := int64(0)
	for rank := range size {
		start, end, firstLine, err := shareRange(bytes.NewReader(data), n, rank, size, bufSize)
		if err != nil {
			t.Fatalf("%q, rank %d of %d: %v", data, rank, size, err)
		}
		if start != next {
			t.Fatalf("%q, rank %d of %d: range [%d, %d) does not start where the previous one ended, %d", data, rank, size, start, end, next)
		}
		if end < start {
			t.Fatalf("%q, rank %d of %d: range [%d, %d) is reversed", data, rank, size, start, end)
		}
		if start != 0 && start != n && data[start-1] != '\n' {
			t.Fatalf("%q, rank %d of %d: range [%d, %d) does not start a line", data, rank, size, start, end)
		}
		if start != wantCut(rank) || end != wantCut(rank+1) {
			t.Fatalf("%q, rank %d of %d: range [%d, %d), want [%d, %d)", data, rank, size, start, end, wantCut(rank), wantCut(rank+1))
		}
		if want := bytes.Count(data[:start], []byte{'\n'}) + 1; firstLine != want {
			t.Fatalf("%q, rank %d of %d: first line %d, want %d", data, rank, size, firstLine, want)
		}
		next = end
	}
	if next != n {
		t.Fatalf("%q, %d ranks: the ranges end at %d of %d bytes", data, size, next, n)
	}
}

func TestShareRangePartitions(t *testing.T) {
	long := strings.Repeat("x", 300)
	inputs := []string{
		"",
		"\n",
		"\n\n\n",
		"a",
		"a\n",
		"abc",
		"a\nb\nc",
		"a\nb\nc\n",
		"+1 1:0.5\n-1 2:1.5\n+1 3:1\n",
		long + "\na\nb\n",
		"a\nb\n" + long,
		"a\n" + long + "\nb\n" + long + "\n\nc",
		"a\r\nb\r\nc\r\n",
	}
	for _, in := range inputs {
		lines := strings.Count(in, "\n") + 1
		for size := 1; size <= lines+4; size++ {
			for _, bufSize := range []int{1, 2, 7, 1 << 16} {
				checkPartition(t, []byte(in), size, bufSize)
			}
		}
	}
}

func TestShareRangeFile(t *testing.T) {
	data, err := os.ReadFile("../testdata/heart_scale")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	cut := filepath.Join(dir, "cut")
	if err := os.WriteFile(whole, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, bytes.TrimRight(data, "\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{whole, cut} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, size := range []int{1, 2, 3, 4, 7, 64, lines - 1, lines, lines + 1, 2 * lines} {
			checkPartition(t, data, size, 4096)
			// ShareRange on the file gives what shareRange gave.
			for rank := range size {
				s, e, l, err := ShareRange(path, rank, size)
				s2, e2, l2, _ := shareRange(bytes.NewReader(data), int64(len(data)), rank, size, 4096)
				if err != nil || s != s2 || e != e2 || l != l2 {
					t.Fatalf("%s, rank %d of %d: ShareRange gives [%d, %d) line %d, %v; want [%d, %d) line %d", path, rank, size, s, e, l, err, s2, e2, l2)
				}
			}
		}
	}
}

func TestShareRangeErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path       string
		rank, size int
		want       string
	}{
		{path, 0, 0, "rank 0 of 0 ranks"},
		{path, 2, 2, "rank 2 of 2 ranks"},
		{path, -1, 2, "rank -1 of 2 ranks"},
		{filepath.Join(dir, "missing"), 0, 1, "no such file"},
		{dir, 0, 1, "not a regular file"},
	} {
		_, _, _, err := ShareRange(tc.path, tc.rank, tc.size)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ShareRange(%s, %d, %d) = %v, want an error containing %q", tc.path, tc.rank, tc.size, err, tc.want)
		}
	}
}

func TestSharePath(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		rank    int
		path    string
		split   bool
	}{
		{"data/a9a", 3, "data/a9a", true},
		{"data/part-%d", 3, "data/part-3", false},
		{"data/part-%d.svm", 12, "data/part-12.svm", false},
		{"d%d/part-%d", 1, "d1/part-1", false},
		{"100%", 0, "100%", true},
	} {
		path, split := SharePath(tc.pattern, tc.rank)
		if path != tc.path || split != tc.split {
			t.Errorf("SharePath(%q, %d) = %q, %v; want %q, %v", tc.pattern, tc.rank, path, split, tc.path, tc.split)
		}
	}
}

func FuzzShareRange(f *testing.F) {
	f.Add([]byte("a\nb\nc"), uint8(2), uint8(1))
	f.Add([]byte("+1 1:0.5\n-1 2:1.5\n\n# c\n"), uint8(7), uint8(3))
	f.Add([]byte(strings.Repeat("x", 40)+"\n\n"), uint8(9), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, size, bufSize uint8) {
		checkPartition(t, data, int(size%32)+1, int(bufSize)+1)
	})
}

func ExampleSharePath() {
	for rank := range 2 {
		fmt.Println(SharePath("train-%d.svm", rank))
	}
	fmt.Println(SharePath("train.svm", 1))
	// Output:
	// train-0.svm false
	// train-1.svm false
	// train.svm true
}
