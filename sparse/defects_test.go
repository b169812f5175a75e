package sparse

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOverflowingRowRefused: a row whose squared norm overflows float64 is
// refused at load time with its line, since every solver squares the rows;
// values whose squares still sum finitely are data like any other.
func TestOverflowingRowRefused(t *testing.T) {
	for _, input := range []string{"-1 2:1\n1 1:1e155 2:1\n", "-1 2:1\n1 1:1e308\n"} {
		_, err := ReadLIBSVM(strings.NewReader(input), "big", ReadOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "overflows") {
			t.Errorf("%q: error %v, want line 2 and the overflow named", input, err)
		}
	}
	if _, err := ReadLIBSVM(strings.NewReader("1 1:1e150 2:1e150\n-1 2:1\n"), "fine", ReadOptions{}); err != nil {
		t.Errorf("values of 1e150 refused: %v", err)
	}
}

// TestCompressedInputNamed: a compressed file is named as such, with the
// tool that decompresses it, instead of failing on its first "label".
func TestCompressedInputNamed(t *testing.T) {
	for _, c := range []struct{ head, format string }{
		{"\x1f\x8b\x08\x00\x00\x00", "gzip"},
		{"BZh91AY&SY", "bzip2"},
		{"\xfd7zXZ\x00\x00", "xz"},
		{"\x28\xb5\x2f\xfd\x00", "zstd"},
		{"PK\x03\x04\x14\x00", "zip"},
	} {
		path := filepath.Join(t.TempDir(), "data."+c.format)
		os.WriteFile(path, []byte(c.head+"more bytes\n"), 0o644)
		_, err := ReadFile(path, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "is compressed ("+c.format+")") {
			t.Errorf("%s: error %v", c.format, err)
		}
	}
}

// TestLongLineRefused: a line past MaxLineBytes is refused with its line
// number, by the sized reader (which then stops reading it) and by the
// streaming one alike, whether the line fits a chunk or spans many.
func TestLongLineRefused(t *testing.T) {
	long := "1 " + strings.Repeat("1:1", 1) + strings.Repeat(" ", 50_000) + "\n"
	input := "+1 1:0.5\n-1 2:1\n" + long + "+1 1:1\n"
	for _, opt := range []ReadOptions{
		{MaxLineBytes: 1000},
		{MaxLineBytes: 1000, Threads: 3, chunkSize: 64},
		{MaxLineBytes: 1000, chunkSize: 100_000},
	} {
		for name, r := range map[string]func() *bytes.Reader{"sized": func() *bytes.Reader { return bytes.NewReader([]byte(input)) }} {
			_, err := ReadLIBSVM(r(), "long", opt)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Msg, "longer than 1000 bytes") {
				t.Errorf("%s, %+v: error %v, want line 3 named", name, opt, err)
			}
		}
		_, err := ReadLIBSVM(streamOnly{bytes.NewReader([]byte(input))}, "long", opt)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Msg, "longer than 1000 bytes") {
			t.Errorf("stream, %+v: error %v, want line 3 named", opt, err)
		}
	}
	if _, err := ReadLIBSVM(strings.NewReader(input), "long", ReadOptions{}); err != nil {
		t.Errorf("a 50 kB line under the default bound: %v", err)
	}
	if _, err := ReadLIBSVM(strings.NewReader(input), "long", ReadOptions{MaxLineBytes: -1}); err == nil {
		t.Error("a negative MaxLineBytes was accepted")
	}
}

// countingReader counts the bytes read through it, by ReadAt or Read.
type countingReader struct {
	r     *bytes.Reader
	bytes atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.bytes.Add(int64(n))
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) { return c.r.Seek(off, whence) }

// longLineInput returns two good lines, a line of about size bytes that
// starts with label, and a good line.
func longLineInput(label string, size int) string {
	return "+1 1:0.5\n-1 2:1\n" + label + " " + strings.Repeat("1:1 ", size/4) + "\n+1 1:1\n"
}

// TestLongLineLabelJudgedFirst: a long line whose label is bad is refused
// for its label as soon as the label has been read, by the sized and the
// streaming readers: they read a chunk or two, not the line (16 times the
// bound here), let alone all of it. (With several threads, the sized
// reader's others plan the chunks ahead meanwhile, each in a buffer of its
// own; how far they get is a race, so only one thread's reading is
// counted.)
func TestLongLineLabelJudgedFirst(t *testing.T) {
	const bound = 64 << 10
	input := []byte(longLineInput("garbage", 16*bound))
	check := func(name string, err error, read int64) {
		t.Helper()
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 1 || pe.Msg != `label "garbage" is not a number` {
			t.Errorf("%s: error %v, want 3:1 and the label", name, err)
		}
		if read >= 0 && read > 3*bound {
			t.Errorf("%s: read %d bytes of a %d-byte input to refuse its third line", name, read, len(input))
		}
	}
	for _, threads := range []int{1, 2} {
		r := &countingReader{r: bytes.NewReader(input)}
		_, err := ReadLIBSVM(r, "long", ReadOptions{MaxLineBytes: bound, Threads: threads})
		read := r.bytes.Load()
		if threads > 1 {
			read = -1
		}
		check(fmt.Sprintf("sized, %d threads", threads), err, read)
		r = &countingReader{r: bytes.NewReader(input)}
		_, err = ReadLIBSVM(streamOnly{r}, "long", ReadOptions{MaxLineBytes: bound, Threads: threads, chunkSize: 16 << 10})
		check(fmt.Sprintf("stream, %d threads", threads), err, r.bytes.Load())
	}
	// Past the bound, a label is judged on the bytes within it: one that
	// has not ended there makes the line too long.
	_, err := ReadLIBSVM(strings.NewReader("1 1:1\n"+strings.Repeat("x", 100)+" 1:1\n"), "long", ReadOptions{MaxLineBytes: 50})
	if err == nil || err.Error() != "long:2:1: line longer than 50 bytes (ReadOptions.MaxLineBytes): is this a LIBSVM file?" {
		t.Errorf("a label longer than the bound: %v", err)
	}
}

// TestLongLineBoundedReading: a line many times the bound (valid label) is
// refused with its line and the bound, after reading little more than the
// bound of it (counted with one thread, as in TestLongLineLabelJudgedFirst),
// and the error names the bound in MiB or KiB where it is a whole number of
// them.
func TestLongLineBoundedReading(t *testing.T) {
	const bound = 64 << 10
	input := []byte(longLineInput("1", 16*bound))
	for _, threads := range []int{1, 2} {
		for _, stream := range []bool{false, true} {
			r := &countingReader{r: bytes.NewReader(input)}
			var src io.Reader = r
			if stream {
				src = streamOnly{r}
			}
			_, err := ReadLIBSVM(src, "long", ReadOptions{MaxLineBytes: bound, Threads: threads, chunkSize: 16 << 10})
			if err == nil || err.Error() != "long:3:1: line longer than 64 KiB (ReadOptions.MaxLineBytes): is this a LIBSVM file?" {
				t.Errorf("stream %v, %d threads: error %v", stream, threads, err)
			}
			if read := r.bytes.Load(); (stream || threads == 1) && read > 4*bound {
				t.Errorf("stream %v, %d threads: read %d bytes to refuse a line longer than %d", stream, threads, read, bound)
			}
		}
	}
	if got := byteSize(DefaultMaxLineBytes); got != "64 MiB" {
		t.Errorf("the default bound reads %q", got)
	}
}

// TestLongLineInOrder: a line refused for its length or its label while
// the readers plan their work does not jump the queue: an error on an
// earlier line is the one reported, and under SkipInvalid the long lines
// are skipped like any malformed line, the others read.
func TestLongLineInOrder(t *testing.T) {
	long := strings.Repeat(" 1:1", 300)
	input := "+1 1:0.5\n-1 2:x\n1" + long + "\nbad" + long + "\n+1 3:1\n"
	opts := []ReadOptions{
		{MaxLineBytes: 100, Threads: 1},
		{MaxLineBytes: 100, Threads: 3, chunkSize: 64},
		{MaxLineBytes: 100, Threads: 2, chunkSize: 7},
		{MaxLineBytes: 100, Threads: 2, chunkSize: 1000},
	}
	for _, opt := range opts {
		for _, stream := range []bool{false, true} {
			var r io.Reader = strings.NewReader(input)
			if stream {
				r = streamOnly{r}
			}
			_, err := ReadLIBSVM(r, "order", opt)
			if err == nil || err.Error() != `order:2:6: value "x" is not a number` {
				t.Errorf("stream %v, %+v: error %v, want line 2's", stream, opt, err)
			}
			opt := opt
			opt.SkipInvalid = true
			r = strings.NewReader(input)
			if stream {
				r = streamOnly{r}
			}
			d, stats, err := ReadLIBSVMStats(r, "order", opt)
			if err != nil || d.X.Rows != 2 || !slices.Equal(d.Y, []float64{1, 1}) || d.X.Cols != 3 ||
				stats.Lines != 5 || stats.Skipped != 3 || stats.FirstSkipped.Line != 2 {
				t.Errorf("stream %v, %+v, SkipInvalid: %v, %+v", stream, opt, err, stats)
			}
		}
	}
}

// TestOverflowPointsAtTheValue: the refusal of a row whose squared norm
// overflows points at its largest value and names its size; values whose
// squares, alone or summed, stay finite are accepted.
func TestOverflowPointsAtTheValue(t *testing.T) {
	_, err := ReadLIBSVM(strings.NewReader("-1 2:1\n-1 2:1\n1 qid:3 1:2 3:1e155 4:-1e154\n"), "big", ReadOptions{})
	want := "big:3:15: the squared norm of the row overflows float64 (values up to 1e+155 in magnitude; their squares must sum below 1.8e+308): scale the features"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
	_, err = ReadLIBSVM(strings.NewReader("1 1:1e154 2:-1.5e154\n"), "big", ReadOptions{})
	if pe, ok := err.(*ParseError); !ok || pe.Line != 1 || pe.Column != 13 {
		t.Errorf("two values whose squares sum past MaxFloat64: error %v, want 1:13", err)
	}
	for _, input := range []string{"1 1:1e154\n", "1 1:1.3e154\n", "1 1:1e150 2:-1e150 3:1e-300\n", "1 1:9e153 2:9e153\n"} {
		if _, err := ReadLIBSVM(strings.NewReader(input), "fine", ReadOptions{}); err != nil {
			t.Errorf("%q refused: %v", input, err)
		}
	}
}

// TestCacheRefusesOverflowingRows: a cache cannot hold a row that the text
// reader would refuse: WriteCache will not write one, and ReadCache refuses
// one written by an older version (made here by hand).
func TestCacheRefusesOverflowingRows(t *testing.T) {
	d := &Dataset{Name: "big", Y: []float64{1, -1}, X: &CSR{Rows: 2, Cols: 2, Indptr: []int64{0, 1, 3},
		Indices: []int32{0, 0, 1}, Values: []float64{1e200 / 1e60, 1e155, 1}}}
	var b bytes.Buffer
	if err := WriteCache(&b, d); err == nil || !strings.Contains(err.Error(), "squared norm of row 1 overflows") {
		t.Errorf("WriteCache: %v", err)
	}
	d.X.Values[1] = 1 // write a good cache, then make it bad
	b.Reset()
	if err := WriteCache(&b, d); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	payload := raw[cacheHeaderSize:]
	binary.LittleEndian.PutUint64(payload[(2+3+1)*8:], math.Float64bits(1e155)) // y, Indptr, then Values[1]
	h, err := decodeCacheHeader(raw[:cacheHeaderSize], "big")
	if err != nil {
		t.Fatal(err)
	}
	h.payloadCRC = crc32.Checksum(payload, castagnoli())
	_, err = ReadCache(bytes.NewReader(append(h.encode(), payload...)), "big")
	if err == nil || !strings.Contains(err.Error(), "cache holds an invalid dataset: the squared norm of row 1 overflows float64") {
		t.Errorf("ReadCache: %v", err)
	}
}

// TestCompressedReaderNamed: compressed input given to ReadLIBSVM, sized or
// streamed, or to ReadCache, is named as such, not read as a bad label or
// a foreign cache; ReadFile says it of a compressed cache too.
func TestCompressedReaderNamed(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("+1 1:0.5\n-1 2:1\n"))
	zw.Close()
	heads := map[string]string{"gzip": gz.String(), "bzip2": "BZh91AY&SY", "xz": "\xfd7zXZ\x00\x00", "zstd": "\x28\xb5\x2f\xfd\x00", "zip": "PK\x03\x04\x14\x00"}
	for format, head := range heads {
		for _, opt := range []ReadOptions{{}, {SkipInvalid: true}, {chunkSize: 2, Threads: 2}} {
			want := "in: the input is compressed (" + format + "): decompress it first (e.g. "
			if _, err := ReadLIBSVM(strings.NewReader(head), "in", opt); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, sized, %+v: %v", format, opt, err)
			}
			if _, err := ReadLIBSVM(streamOnly{strings.NewReader(head)}, "in", opt); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, streamed, %+v: %v", format, opt, err)
			}
		}
		if _, err := ReadCache(strings.NewReader(head), "in"); err == nil || !strings.HasPrefix(err.Error(), "in is compressed ("+format+")") {
			t.Errorf("%s, ReadCache: %v", format, err)
		}
	}
	// A gzipped cache, by ReadFile and ReadCache.
	var cache, zcache bytes.Buffer
	if err := WriteCache(&cache, smallDataset(t)); err != nil {
		t.Fatal(err)
	}
	zw = gzip.NewWriter(&zcache)
	zw.Write(cache.Bytes())
	zw.Close()
	path := filepath.Join(t.TempDir(), "small.cache.gz")
	if err := os.WriteFile(path, zcache.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path, ReadOptions{}); err == nil || !strings.Contains(err.Error(), "is compressed (gzip)") {
		t.Errorf("ReadFile of a gzipped cache: %v", err)
	}
	if _, err := ReadCache(bytes.NewReader(zcache.Bytes()), "small.cache.gz"); err == nil || err.Error() != "small.cache.gz is compressed (gzip): decompress it first (gunzip)" {
		t.Errorf("ReadCache of a gzipped cache: %v", err)
	}
}

// TestLongLineNotBuffered: the sized reader refuses a line longer than the
// bound without holding the bound's worth of it: it counts the line in
// pieces, keeping only its first token, so its allocations are a chunk
// buffer and the pieces, far below the 16 MiB bound.
func TestLongLineNotBuffered(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 32 MiB line")
	}
	const bound = 16 << 20
	input := []byte(longLineInput("1", 2*bound))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadLIBSVM(bytes.NewReader(input), "long", ReadOptions{MaxLineBytes: bound, Threads: 1})
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "long:3:1: line longer than 16 MiB (ReadOptions.MaxLineBytes): is this a LIBSVM file?" {
		t.Errorf("error %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > bound/2 {
		t.Errorf("allocated %d bytes to refuse a line longer than %d", got, bound)
	}
}
