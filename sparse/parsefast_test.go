package sparse

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// agreeWithParseLine fails t unless parseLineFast either declines line or
// writes exactly what parseLine writes for it, without a message, and
// returns the largest magnitude's bits of what it wrote. It reports
// whether the fast path took the line.
func agreeWithParseLine(t *testing.T, line []byte, limit int64) bool {
	t.Helper()
	room := len(line)/2 + 1 // an entry takes at least "1:1 "
	fi, fv := make([]int32, room), make([]float64, room)
	label, n, big, ok := parseLineFast(line, limit, fi, fv)
	if !ok {
		return false
	}
	si, sv := make([]int32, room), make([]float64, room)
	wlabel, wn, col, msg := parseLine(line, false, limit, si, sv)
	if msg != "" || wn < 0 {
		t.Fatalf("%q: the fast path took a line parseLine refuses (column %d: %s)", line, col, msg)
	}
	if math.Float64bits(label) != math.Float64bits(wlabel) || n != wn {
		t.Fatalf("%q: fast path label %v, %d entries; parseLine %v, %d", line, label, n, wlabel, wn)
	}
	var wbig uint64
	for k := range n {
		if fi[k] != si[k] || math.Float64bits(fv[k]) != math.Float64bits(sv[k]) {
			t.Fatalf("%q: entry %d: fast path %d:%v, parseLine %d:%v", line, k, fi[k], fv[k], si[k], sv[k])
		}
		wbig = max(wbig, math.Float64bits(sv[k])&^(1<<63))
	}
	if big != wbig {
		t.Fatalf("%q: largest magnitude's bits %#x, want %#x", line, big, wbig)
	}
	return true
}

// TestParseLineFast checks the fast path against parseLine on lines it
// must take, lines it must leave to parseLine, and every line of the real
// files at hand, which hold no comment, so that it must take them all.
func TestParseLineFast(t *testing.T) {
	take := []string{
		"+1 1:0.708333 2:1 3:1 4:-0.320755 13:-1", "-1 6:1 11:-0.731854 12:0.173431 13:0.0 14:0.00027",
		"2 1:1000025.000000 2:5.000000", "0 3:1", "-0 3:1", "1", "  1\t2:1  3:.5 4:5.\r", "4 7:0.26490647141300877",
		"1 2147483647:1", "1 1:9007199254740991", "24.0 1:1", "+2.5 1:-.5", "1e3 1:1e5 2:+1 3:2.22045e-16 4:9.8E-02", "2.000000  1:1000025.000000", "123456789012345 1:1", "1 1:-0",
	}
	for _, s := range take {
		if !agreeWithParseLine(t, []byte(s), maxIndex) {
			t.Errorf("%q: the fast path declined", s)
		}
	}
	leave := []string{
		"", "   ", "x 1:1", "1:1", "+ 1:1", "- 1:1", ".", "12345678901234567890 1:1", "1 qid:3 1:1",
		"1 2:1 1:1", "1 1:1 1:1", "1 0:1", "1 -1:1", "1 1:", "1 1:x", "1 1:1e400", "1 1:1e-400", "1 1:nan", "1 1:inf", "1 1:0x10", "1 :1",
		"1 1234567890123456789:1", "1 1:12345678901234567890", "1 1:9007199254740993", "1 1\v2:1", "1 1:1#c",
		"1 1:123456789012345678", "1 2147483648:1", "1 999999999999999999:1",
	}
	for _, s := range leave {
		if agreeWithParseLine(t, []byte(s), maxIndex) {
			t.Errorf("%q: the fast path took a line it must leave to parseLine", s)
		}
	}
	if agreeWithParseLine(t, []byte("1 5:1"), 4) {
		t.Errorf("an index beyond NumFeatures: the fast path took it")
	}
	files, _ := filepath.Glob("../testdata/*_scale")
	for _, name := range []string{"a9a", "w8a", "heart_scale", "breast-cancer", "mushrooms"} {
		files = append(files, filepath.Join("..", "..", "shared", "data", name))
	}
	for _, path := range files {
		text, err := os.ReadFile(path)
		if err != nil {
			continue // the shared data are beside the project, not in it
		}
		lines := bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
		taken := 0
		for _, line := range lines {
			if agreeWithParseLine(t, line, maxIndex) {
				taken++
			}
		}
		if taken != len(lines) {
			t.Errorf("%s: the fast path took %d of %d lines", path, taken, len(lines))
		}
	}
}

// FuzzParseLineFast checks on arbitrary lines that the fast path never
// panics and, where it takes a line, agrees with parseLine bit for bit.
func FuzzParseLineFast(f *testing.F) {
	for _, s := range []string{"+1 1:0.708333 2:1 3:1", "-1 6:1 11:-0.7 12:0.17\r", "2 1:1000025.000000", "1 qid:2 1:1", "0 1:.5 2:5. 3:-0"} {
		f.Add([]byte(s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, line []byte, numFeatures uint16) {
		if bytes.ContainsAny(line, "\n#") {
			return // parseChunk hands the fast path lines of text without comments
		}
		limit := int64(maxIndex)
		if numFeatures > 0 {
			limit = int64(numFeatures)
		}
		agreeWithParseLine(t, line, limit)
	})
}
