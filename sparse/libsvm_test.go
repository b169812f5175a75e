package sparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// readString parses s with the given options. A strings.Reader has ReadAt
// and Seek, so this takes the sized reader (two passes, parsing in place).
func readString(s string, opt ReadOptions) (*Dataset, error) {
	return ReadLIBSVM(strings.NewReader(s), "test", opt)
}

// streamOnly hides every method of a reader but Read, so that ReadLIBSVM
// takes the streaming reader, as it does for a pipe.
type streamOnly struct{ io.Reader }

// streamString parses s with the streaming reader.
func streamString(s string, opt ReadOptions) (*Dataset, error) {
	return ReadLIBSVM(streamOnly{strings.NewReader(s)}, "test", opt)
}

// denseRows returns the rows of m as dense slices, for readable comparisons.
func denseRows(m *CSR) [][]float64 {
	out := make([][]float64, m.Rows)
	for i := range out {
		out[i] = make([]float64, m.Cols)
		val, idx := m.Row(i)
		for k, j := range idx {
			out[i][j] = val[k]
		}
	}
	return out
}

func TestReadLIBSVMAcceptedSyntax(t *testing.T) {
	tests := []struct {
		name  string
		input string
		y     []float64
		rows  [][]float64
		nnz   int64
	}{
		{"plain", "1 1:0.5 3:2\n-1 2:1\n", []float64{1, -1}, [][]float64{{0.5, 0, 2}, {0, 1, 0}}, 3},
		{"no final newline", "1 1:0.5\n-1 2:1", []float64{1, -1}, [][]float64{{0.5, 0}, {0, 1}}, 2},
		{"CRLF", "1 1:0.5\r\n-1 2:1\r\n", []float64{1, -1}, [][]float64{{0.5, 0}, {0, 1}}, 2},
		{"CRLF, no final newline", "1 1:0.5\r\n-1 2:1\r", []float64{1, -1}, [][]float64{{0.5, 0}, {0, 1}}, 2},
		{"blank lines", "\n\n1 1:1\n   \n\t\n-1 2:1\n\n", []float64{1, -1}, [][]float64{{1, 0}, {0, 1}}, 2},
		{"whole-line comments", "# header\n1 1:1\n  # indented\n#\n-1 2:1\n", []float64{1, -1}, [][]float64{{1, 0}, {0, 1}}, 2},
		{"trailing comments", "1 1:1 # a comment: with 3:colons\n-1 2:1#glued\n", []float64{1, -1}, [][]float64{{1, 0}, {0, 1}}, 2},
		{"trailing spaces and tabs", "1 1:1   \t\n-1 2:1 \n", []float64{1, -1}, [][]float64{{1, 0}, {0, 1}}, 2},
		{"several spaces and tabs", "1\t\t1:1  \t 2:2\n  -1   2:1\n", []float64{1, -1}, [][]float64{{1, 2}, {0, 1}}, 3},
		{"upper and lower exponents", "1 1:9.8E-02 2:1e3 3:-2.5e+1\n", []float64{1}, [][]float64{{0.098, 1000, -25}}, 3},
		{"explicit zeros are stored", "1 1:0 2:0.000000 3:-0\n", []float64{1}, [][]float64{{0, 0, 0}}, 3},
		{"qid is ignored", "3 qid:1 1:1\n2 qid:12 2:1\n", []float64{3, 2}, [][]float64{{1, 0}, {0, 1}}, 2},
		{"row without features", "-1 \n+1 2:1\n-1\n", []float64{-1, 1, -1}, [][]float64{{0, 0}, {0, 1}, {0, 0}}, 1},
		{"labels 0/1", "0 1:1\n1 1:2\n", []float64{0, 1}, [][]float64{{1}, {2}}, 2},
		{"labels 2.000000/4.000000 with double space", "2.000000  1:1\n4.000000  1:2\n", []float64{2, 4}, [][]float64{{1}, {2}}, 2},
		{"real targets", "24.0 1:1\n21.6 1:2\n-3.5e2 1:3\n", []float64{24, 21.6, -350}, [][]float64{{1}, {2}, {3}}, 3},
		{"leading zeros in index", "1 007:1\n", []float64{1}, [][]float64{{0, 0, 0, 0, 0, 0, 1}}, 1},
		{"point-only forms", "1 1:.5 2:5. 3:+.25\n", []float64{1}, [][]float64{{0.5, 5, 0.25}}, 3},
		{"hexadecimal float as strconv reads it", "1 1:0x1p-2\n", []float64{1}, [][]float64{{0.25}}, 1},
		{"underflow to zero is a number", "1 1:1e-400\n", []float64{1}, [][]float64{{0}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := readString(tc.input, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.X.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := compareWithReference(tc.input, 0, d, nil); err != nil {
				t.Error(err)
			}
			if !reflect.DeepEqual(d.Y, tc.y) {
				t.Errorf("Y = %v, want %v", d.Y, tc.y)
			}
			if got := denseRows(d.X); !reflect.DeepEqual(got, tc.rows) {
				t.Errorf("rows = %v, want %v", got, tc.rows)
			}
			if d.X.NNZ() != tc.nnz {
				t.Errorf("nnz = %d, want %d", d.X.NNZ(), tc.nnz)
			}
		})
	}
}

func TestReadLIBSVMNegativeZeroKeepsItsSign(t *testing.T) {
	d, err := readString("-0 1:-0 2:-0.0e5\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(d.Y, d.X.Values...) {
		if v != 0 || !math.Signbit(v) {
			t.Errorf("got %v (signbit %v), want -0", v, math.Signbit(v))
		}
	}
}

// TestReadLIBSVMErrors checks each malformed case: the error is a
// *ParseError naming the right line and column, with a message that says
// what is wrong.
func TestReadLIBSVMErrors(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		opt       ReadOptions
		line, col int
		msg       string
	}{
		{"index 0", "1 1:1\n-1 0:1\n", ReadOptions{}, 2, 4, "index 0: feature indices are 1-based"},
		{"negative index", "1 -3:1\n", ReadOptions{}, 1, 3, "index -3: feature indices are 1-based"},
		{"descending index", "1 5:1 3:1\n", ReadOptions{}, 1, 7, "index 3 after 5: indices must be strictly ascending"},
		{"duplicate index", "1 5:1 5:2\n", ReadOptions{}, 1, 7, "duplicate index 5"},
		{"missing colon", "1 5 6:1\n", ReadOptions{}, 1, 3, `feature "5" has no ':'`},
		{"missing index", "1 :1\n", ReadOptions{}, 1, 3, `feature ":1" has no index before ':'`},
		{"missing value", "1 2:1 3:\n", ReadOptions{}, 1, 9, "index 3 has no value after ':'"},
		{"value not a number", "1 2:abc\n", ReadOptions{}, 1, 5, `value "abc" is not a number`},
		{"value with two points", "1 2:1.2.3\n", ReadOptions{}, 1, 5, `value "1.2.3" is not a number`},
		{"value with a second colon", "1 2:1:3\n", ReadOptions{}, 1, 5, `value "1:3" is not a number`},
		{"index not an integer", "1 1.5:1\n", ReadOptions{}, 1, 3, `index "1.5" is not a positive integer`},
		{"index with letters", "1 x:1\n", ReadOptions{}, 1, 3, `index "x" is not a positive integer`},
		{"NaN value", "1 1:NaN\n", ReadOptions{}, 1, 5, `value "NaN" is not finite`},
		{"nan value", "1 1:nan\n", ReadOptions{}, 1, 5, `value "nan" is not finite`},
		{"inf value", "1 1:inf\n", ReadOptions{}, 1, 5, `value "inf" is not finite`},
		{"-Inf value", "1 1:-Infinity\n", ReadOptions{}, 1, 5, `value "-Infinity" is not finite`},
		{"overflowing value", "1 1:1e999\n", ReadOptions{}, 1, 5, `value "1e999" overflows float64`},
		{"index beyond int32", "1 2147483648:1\n", ReadOptions{}, 1, 3, "index 2147483648 exceeds the limit 2147483647"},
		{"huge index", "1 99999999999999999999999:1\n", ReadOptions{}, 1, 3, "index 99999999999999999999999 exceeds the limit"},
		{"index beyond NumFeatures", "1 1:1\n1 124:1\n", ReadOptions{NumFeatures: 123}, 2, 3, "index 124 exceeds NumFeatures=123"},
		{"empty input", "", ReadOptions{}, 0, 0, "no data lines"},
		{"only comments and blanks", "# nothing\n\n  \n", ReadOptions{}, 0, 0, "no data lines"},
		{"label not a number", "1 1:1\nyes 1:1\n", ReadOptions{}, 2, 1, `label "yes" is not a number`},
		{"multi-label", "1,2 1:1\n", ReadOptions{}, 1, 1, `label "1,2" is not a number`},
		{"NaN label", "nan 1:1\n", ReadOptions{}, 1, 1, `label "nan" is not finite`},
		{"Inf label", "  +Inf 1:1\n", ReadOptions{}, 1, 3, `label "+Inf" is not finite`},
		{"overflowing label", "1e400 1:1\n", ReadOptions{}, 1, 1, `label "1e400" overflows float64`},
		{"no label", "1 1:1\n1:1 2:1\n", ReadOptions{}, 2, 1, `missing label: the line starts with "1:1"`},
		{"no label, indented", "\t 3:1\n", ReadOptions{}, 1, 3, "missing label"},
		{"qid after a feature", "1 1:1 qid:3\n", ReadOptions{}, 1, 7, "qid must come before the features"},
		{"qid not an integer", "1 qid:x 1:1\n", ReadOptions{}, 1, 7, `qid "x" is not a non-negative integer`},
		{"error after CRLF lines", "1 1:1\r\n1 1:1\r\n1 0:1\r\n", ReadOptions{}, 3, 3, "index 0"},
		{"first of several errors", "1 1:1\n1 0:1\n1 x:1\n", ReadOptions{}, 2, 3, "index 0"},
		{"long token is shortened", "1 1:" + strings.Repeat("z", 100) + "\n", ReadOptions{}, 1, 5, `"` + strings.Repeat("z", 32) + `"… is not a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, opt := range []ReadOptions{tc.opt, {NumFeatures: tc.opt.NumFeatures, Threads: 4, chunkSize: 3}, tc.opt, {NumFeatures: tc.opt.NumFeatures, Threads: 3, chunkSize: 5}} {
				read := readString
				if k >= 2 {
					read = streamString
				}
				d, err := read(tc.input, opt)
				if err == nil {
					t.Fatalf("got %d rows, want an error", d.X.Rows)
				}
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v (%T) is not a *ParseError", err, err)
				}
				if tc.line > 0 {
					if _, line, col := referenceRead(tc.input, tc.opt.NumFeatures); line != tc.line || col != tc.col {
						t.Errorf("the reference reader fails at %d:%d", line, col)
					}
				}
				if pe.File != "test" || pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(pe.Msg, tc.msg) {
					t.Errorf("chunk size %d: got %q (line %d, column %d), want line %d, column %d, message containing %q",
						opt.chunkSize, err, pe.Line, pe.Column, tc.line, tc.col, tc.msg)
				}
			}
		})
	}
}

func TestParseErrorFormat(t *testing.T) {
	e := &ParseError{File: "a9a", Line: 17, Column: 23, Msg: "index 0: feature indices are 1-based"}
	if got, want := e.Error(), "a9a:17:23: index 0: feature indices are 1-based"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &ParseError{File: "empty", Msg: "no data lines"}
	if got, want := e.Error(), "empty: no data lines"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReadLIBSVMBadOptions(t *testing.T) {
	for _, opt := range []ReadOptions{{NumFeatures: -1}, {Threads: -2}, {NumFeatures: math.MaxInt32 + 1}} {
		if _, err := readString("1 1:1\n", opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}

func TestReadLIBSVMNumFeatures(t *testing.T) {
	d, err := readString("1 1:1\n-1 3:1\n", ReadOptions{NumFeatures: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d.X.Cols != 10 {
		t.Errorf("Cols = %d, want 10", d.X.Cols)
	}
	d, err = readString("1 1:1\n-1 3:1\n", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.X.Cols != 3 {
		t.Errorf("inferred Cols = %d, want 3", d.X.Cols)
	}
}

func TestReadLIBSVMReaderError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader("1 1:1\n-1 2:1\n"), iotest.ErrReader(boom))
	_, err := ReadLIBSVM(r, "flaky", ReadOptions{chunkSize: 4})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "flaky: ") {
		t.Errorf("got %v, want %v wrapped with the name", err, boom)
	}
}

// TestReadLIBSVMOneByteReads checks that short reads from the source do not
// change the result: chunking must not depend on how the bytes arrive.
func TestReadLIBSVMOneByteReads(t *testing.T) {
	input := syntheticLIBSVM(rand.New(rand.NewPCG(1, 2)), 200, 50)
	want, err := readString(input, ReadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadLIBSVM(iotest.OneByteReader(strings.NewReader(input)), "test", ReadOptions{Threads: 3, chunkSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	assertSameDataset(t, got, want)
}

// TestReadLIBSVMLineLongerThanChunk checks that a line longer than the chunk
// size grows the buffer instead of being cut.
func TestReadLIBSVMLineLongerThanChunk(t *testing.T) {
	var b strings.Builder
	b.WriteString("1 1:1\n7")
	for j := 1; j <= 1000; j++ {
		fmt.Fprintf(&b, " %d:%d", j, j)
	}
	b.WriteString("\n-1 3:1\n")
	for _, size := range []int{1, 16, 100, 1 << 20} {
		d, err := readString(b.String(), ReadOptions{Threads: 2, chunkSize: size})
		if err != nil {
			t.Fatal(err)
		}
		if d.X.Rows != 3 || d.X.Cols != 1000 || d.X.RowNNZ(1) != 1000 || d.Y[1] != 7 {
			t.Fatalf("chunk %d: got %d rows, %d cols, row 1 has %d entries", size, d.X.Rows, d.X.Cols, d.X.RowNNZ(1))
		}
		val, _ := d.X.Row(1)
		if val[999] != 1000 {
			t.Errorf("chunk %d: last value %v, want 1000", size, val[999])
		}
	}
}

// TestReadLIBSVMErrorLineAcrossChunks puts errors deep in an input cut into
// many chunks, and checks that the line number is counted across chunks and
// that the first error in file order wins even when later chunks also fail.
func TestReadLIBSVMErrorLineAcrossChunks(t *testing.T) {
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("%d %d:1 %d:2.5", i%2, i%7+1, i%7+3))
	}
	lines[2999] = "1 4:1 2:1"
	lines[4000] = "1 0:1"
	lines[4500] = "x 1:1"
	input := strings.Join(lines, "\n") + "\n"
	for _, opt := range []ReadOptions{{Threads: 1}, {Threads: 4, chunkSize: 100}, {Threads: 3, chunkSize: 1 << 12}} {
		_, err := readString(input, opt)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3000 || pe.Column != 7 {
			t.Errorf("%+v: got %v, want an error at test:3000:7", opt, err)
		}
	}
}

func TestReadLIBSVMSkipInvalid(t *testing.T) {
	input := "1 1:1\n1 0:1\n# comment\n-1 2:1 3:x\n-1 2:2\nbad\n"
	d, stats, err := ReadLIBSVMStats(strings.NewReader(input), "test", ReadOptions{SkipInvalid: true, chunkSize: 7, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]float64{{1, 0}, {0, 2}}; !reflect.DeepEqual(denseRows(d.X), want) || !reflect.DeepEqual(d.Y, []float64{1, -1}) {
		t.Errorf("got rows %v labels %v, want %v and [1 -1]", denseRows(d.X), d.Y, want)
	}
	if stats.Lines != 6 || stats.Skipped != 3 {
		t.Errorf("stats = %+v, want 6 lines, 3 skipped", stats)
	}
	if fs := stats.FirstSkipped; fs == nil || fs.Line != 2 || fs.Column != 3 || fs.File != "test" {
		t.Errorf("FirstSkipped = %v, want test:2:3", fs)
	}

	_, stats, err = ReadLIBSVMStats(strings.NewReader("bad\n0:1\n"), "test", ReadOptions{SkipInvalid: true})
	if err == nil || !strings.Contains(err.Error(), "no valid data lines (2 malformed lines skipped)") {
		t.Errorf("all lines invalid: got %v", err)
	}
	if stats.Skipped != 2 {
		t.Errorf("all lines invalid: Skipped = %d, want 2", stats.Skipped)
	}
}

// syntheticLIBSVM returns rows of random sparse data in LIBSVM text with
// assorted spacing, comments, blank lines and line endings, all valid.
func syntheticLIBSVM(rng *rand.Rand, rows, cols int) string {
	var b strings.Builder
	for range rows {
		switch rng.IntN(20) {
		case 0:
			b.WriteString("# comment line\n")
		case 1:
			b.WriteString("\n")
		}
		b.WriteString([]string{"-1", "+1", "1", "0", "2.000000", "24.5"}[rng.IntN(6)])
		j := 0
		for {
			j += 1 + rng.IntN(cols/4+1)
			if j > cols {
				break
			}
			b.WriteString([]string{" ", "  ", "\t"}[rng.IntN(3)])
			v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(10)-5))
			fmt.Fprintf(&b, "%d:%s", j, strconv.FormatFloat(v, []byte("gefE")[rng.IntN(4)], rng.IntN(20)-1, 64))
		}
		b.WriteString([]string{"\n", "\r\n", " \n", " # trailing\n"}[rng.IntN(4)])
	}
	return b.String()
}

func assertSameDataset(t *testing.T, got, want *Dataset) {
	t.Helper()
	if msg := datasetDiff(got, want); msg != "" {
		t.Fatal(msg)
	}
}

// datasetDiff compares two datasets bit for bit (so that −0 and 0 differ)
// and describes the first difference.
func datasetDiff(got, want *Dataset) string {
	g, w := got.X, want.X
	if g.Rows != w.Rows || g.Cols != w.Cols {
		return fmt.Sprintf("shape %d×%d, want %d×%d", g.Rows, g.Cols, w.Rows, w.Cols)
	}
	if !slices.Equal(g.Indptr, w.Indptr) || !slices.Equal(g.Indices, w.Indices) || len(g.Values) != len(w.Values) {
		return "sparsity pattern differs"
	}
	for k := range w.Values {
		if math.Float64bits(g.Values[k]) != math.Float64bits(w.Values[k]) {
			return fmt.Sprintf("value %d is %v, want %v", k, g.Values[k], w.Values[k])
		}
	}
	if len(got.Y) != len(want.Y) {
		return fmt.Sprintf("%d labels, want %d", len(got.Y), len(want.Y))
	}
	for i := range want.Y {
		if math.Float64bits(got.Y[i]) != math.Float64bits(want.Y[i]) {
			return fmt.Sprintf("label %d is %v, want %v", i, got.Y[i], want.Y[i])
		}
	}
	return ""
}

// TestReadLIBSVMParallelMatchesSerial parses the same inputs with one thread
// and one chunk, and with several threads and chunks of many sizes.
func TestReadLIBSVMParallelMatchesSerial(t *testing.T) {
	inputs := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 4 {
		inputs[fmt.Sprintf("synthetic %d", k)] = syntheticLIBSVM(rng, 300, 40)
	}
	heart, err := os.ReadFile(filepath.Join("..", "testdata", "heart_scale"))
	if err != nil {
		t.Fatal(err)
	}
	inputs["heart_scale"] = string(heart)
	for name, input := range inputs {
		serial, err := readString(input, ReadOptions{Threads: 1, chunkSize: len(input) + 1})
		if err != nil {
			t.Fatal(name, err)
		}
		if err := compareWithReference(input, 0, serial, nil); err != nil {
			t.Fatal(name, err)
		}
		for _, chunk := range []int{1, 2, 7, 64, 1000, 4096} {
			for _, threads := range []int{2, 4} {
				for _, read := range []func(string, ReadOptions) (*Dataset, error){readString, streamString} {
					got, err := read(input, ReadOptions{Threads: threads, chunkSize: chunk})
					if err != nil {
						t.Fatal(name, err)
					}
					if msg := datasetDiff(got, serial); msg != "" {
						t.Errorf("%s, chunk %d, %d threads: %s", name, chunk, threads, msg)
					}
				}
			}
		}
	}
}

func TestReadFileNamesAndErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.svm")
	if err := os.WriteFile(path, []byte("1 1:1\n1 2:1 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path, ReadOptions{})
	if err == nil || err.Error() != path+":2:7: index 1 after 2: indices must be strictly ascending" {
		t.Errorf("got %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "absent"), ReadOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: got %v, want os.ErrNotExist", err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("1 1:2"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := ReadFile(short, ReadOptions{})
	if err != nil || d.Name != "short" || d.X.Values[0] != 2 {
		t.Errorf("file shorter than the magic: got %+v, %v", d, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(empty, ReadOptions{}); err == nil || err.Error() != empty+": no data lines" || !errors.Is(err, ErrNoDataLines) {
		t.Errorf("empty file: got %v, want ErrNoDataLines", err)
	}
	if _, err := ReadLIBSVM(strings.NewReader("1 1:x\n"), "bad", ReadOptions{SkipInvalid: true}); errors.Is(err, ErrNoDataLines) || err == nil {
		t.Errorf("only malformed lines, skipped: got %v, want an error other than ErrNoDataLines", err)
	}
}

// TestParseFloatMatchesStrconv compares the fast path with strconv on
// hand-picked and random tokens, bit for bit and in acceptance.
func TestParseFloatMatchesStrconv(t *testing.T) {
	tokens := []string{
		"0", "-0", "+0", "1", "-1", "+1", "0.1", "0.3", "1.5", "22.080000", "1213.000000", "9.8E-02",
		"0.0687023", "-0.320755", "1e22", "1e23", "1e-22", "1e-23", "123456789012345", "1234567890123456",
		"9007199254740993", "0.000000000000000000001", "4.9e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
		".5", "5.", "-.5e1", "1e", "1e+", "e5", ".", "-", "+", "", "1..2", "1e5.5", "0x10", "0x1p-2", "1_0", "inf",
		"NaN", "1e999", "-1e999", "1e-999", "00000000000000000000001", "0.100000000000000000000", "3.14159265358979",
		// 16 to 19 digits after a point (quotient's exact division),
		// halfway cases among them: 2⁵³ + 1 and 2⁵⁴ + 2 lie exactly
		// between two float64s, and ties go to the even one.
		"0.26490647141300877", "-0.39735970711951313", "9007199254740993.0", "18014398509481986.0",
		"9007199254740993.000", "0.9999999999999999999", "0.0000000000000000001", "1844674407.3709551615",
		"9999999999999999999.0", "0.12345678901234567890", "900719925474099.35",
		// decimals within 2⁻¹⁰ of a float64 ulp above a halfway point: they
		// round up only through quotient's sticky bit
		"5.072877754634469217", "4092570198854.971924", "8.981076536562970781",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		v := math.Float64frombits(rng.Uint64())
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		tokens = append(tokens,
			strconv.FormatFloat(v, 'g', -1, 64),
			strconv.FormatFloat(v, 'e', rng.IntN(17), 64),
			strconv.FormatFloat(rng.NormFloat64()*1000, 'f', rng.IntN(12), 64),
			strconv.Itoa(rng.IntN(1<<20)-1<<19),
			// printed float64s in [0, 10): 16 to 19 digits
			strconv.FormatFloat(10*rng.Float64(), 'f', 16+rng.IntN(4), 64),
			strconv.FormatFloat(rng.Float64(), 'g', -1, 64),
		)
	}
	for _, s := range tokens {
		got, gotErr := parseFloat([]byte(s))
		want, wantErr := strconv.ParseFloat(s, 64)
		if (gotErr == nil) != (wantErr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseFloat(%q) = %v, %v; strconv gives %v, %v", s, got, gotErr, want, wantErr)
		}
	}
}

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"1", "-0.5", "9.8E-02", "1e23", "123456789012345", ".5", "0x1p3", "nan", "1e999", "0.26490647141300877", "9007199254740993.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotErr := parseFloat([]byte(s))
		want, wantErr := strconv.ParseFloat(s, 64)
		if (gotErr == nil) != (wantErr == nil) || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseFloat(%q) = %v, %v; strconv gives %v, %v", s, got, gotErr, want, wantErr)
		}
	})
}

// FuzzReadLIBSVM checks on arbitrary input that the reader never panics,
// that a parallel parse cut into tiny chunks agrees with a serial one
// (including on the error), and that a successful parse yields a valid
// matrix that survives a write/read round trip bit for bit.
func FuzzReadLIBSVM(f *testing.F) {
	seeds := []string{
		"+1 1:0.708333 2:1 3:1 4:-0.320755 5:-0.105023 6:-1 7:1 8:-0.419847 9:-1 10:-0.225806 12:1 13:-1\n",
		"2.000000  1:1000025.000000 2:5.000000 3:1.000000\n",
		"-1 6:1 11:-0.731854 12:0.173431 13:0.0 14:0.00027\n-1 \n",
		"24 1:-1 2:-0.64 3:-0.86437\r\n21.6 1:-0.999528\r\n",
		"3 qid:1 1:1 # comment\n\n# whole line\n2 qid:1 2:9.8E-02",
		"1 0:1\n", "1 2:1 1:1\n", "1 1:nan\n", "1 1:1e999\n", "1 1\n", "x 1:1\n", "1:1\n", "1 -1:2\n",
		"1 99999999999:1\n", "1 1:\n", "", "\n\n", "1 1:1 qid:2\n", "1 1:0x1p-3 2:-0\n",
		"1 1:1e154 2:-1e154 3:1\n-1 1:1e200\n", "\x1f\x8b\x08\x00 1:1\n", "\xfd7zXZ\x00\n1 1:1\n",
		"1 1:1\nbad 1:1 2:2 3:3 4:4 5:5 6:6\n-1 2:1\n", "   1 1:0.5 2:0.25 3:0.125 4:1 # long comment\n1 1:1\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, input []byte, numFeatures uint16) {
		opt := ReadOptions{NumFeatures: int(numFeatures % 64)}
		serial, serr := ReadLIBSVM(bytes.NewReader(input), "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 1})
		parallel, perr := ReadLIBSVM(bytes.NewReader(input), "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 4, chunkSize: 5})
		if (serr == nil) != (perr == nil) || (serr != nil && serr.Error() != perr.Error()) {
			t.Fatalf("serial error %v, parallel error %v", serr, perr)
		}
		// The streaming reader (pipes) must agree with the sized one.
		stream, sterr := ReadLIBSVM(streamOnly{bytes.NewReader(input)}, "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 3, chunkSize: 4})
		if (serr == nil) != (sterr == nil) || (serr != nil && serr.Error() != sterr.Error()) {
			t.Fatalf("sized error %v, streaming error %v", serr, sterr)
		}
		if serr == nil {
			if msg := datasetDiff(stream, serial); msg != "" {
				t.Fatalf("streaming differs from sized: %s", msg)
			}
		}
		if err := compareWithReference(string(input), opt.NumFeatures, serial, serr); err != nil {
			t.Fatal(err)
		}
		// Skipping malformed lines must not depend on the chunking either.
		skipSerial, sstats, sserr := ReadLIBSVMStats(bytes.NewReader(input), "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 1, SkipInvalid: true})
		skipParallel, pstats, pserr := ReadLIBSVMStats(bytes.NewReader(input), "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 3, chunkSize: 7, SkipInvalid: true})
		if (sserr == nil) != (pserr == nil) || sstats.Lines != pstats.Lines || sstats.Skipped != pstats.Skipped ||
			(sstats.FirstSkipped == nil) != (pstats.FirstSkipped == nil) ||
			(sstats.FirstSkipped != nil && sstats.FirstSkipped.Error() != pstats.FirstSkipped.Error()) {
			t.Fatalf("SkipInvalid: serial %+v, %v; parallel %+v, %v", sstats, sserr, pstats, pserr)
		}
		skipStream, ststats, psterr := ReadLIBSVMStats(streamOnly{bytes.NewReader(input)}, "fuzz", ReadOptions{NumFeatures: opt.NumFeatures, Threads: 2, chunkSize: 6, SkipInvalid: true})
		if (sserr == nil) != (psterr == nil) || sstats.Lines != ststats.Lines || sstats.Skipped != ststats.Skipped {
			t.Fatalf("SkipInvalid: sized %+v, %v; streaming %+v, %v", sstats, sserr, ststats, psterr)
		}
		if sserr == nil {
			if msg := datasetDiff(skipStream, skipSerial); msg != "" {
				t.Fatalf("SkipInvalid: streaming differs from sized: %s", msg)
			}
			if msg := datasetDiff(skipParallel, skipSerial); msg != "" {
				t.Fatalf("SkipInvalid: parallel differs from serial: %s", msg)
			}
			if err := skipSerial.X.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		// So must a bound on the line length, which the readers apply as
		// they read, before they have a whole line.
		for _, skip := range []bool{false, true} {
			short := ReadOptions{NumFeatures: opt.NumFeatures, MaxLineBytes: 16, SkipInvalid: skip}
			var errs [3]error
			var stats [3]ReadStats
			var ds [3]*Dataset
			for k, o := range []ReadOptions{{Threads: 1}, {Threads: 3, chunkSize: 5}, {Threads: 2, chunkSize: 4}} {
				o.NumFeatures, o.MaxLineBytes, o.SkipInvalid = short.NumFeatures, short.MaxLineBytes, short.SkipInvalid
				var r io.Reader = bytes.NewReader(input)
				if k == 2 {
					r = streamOnly{bytes.NewReader(input)}
				}
				ds[k], stats[k], errs[k] = ReadLIBSVMStats(r, "fuzz", o)
			}
			for k := 1; k < 3; k++ {
				summary := func(k int) string {
					if !skip {
						return fmt.Sprint(errs[k]) // the statistics of a failed read are partial
					}
					return fmt.Sprintf("%v; lines %d, skipped %d, first %v", errs[k], stats[k].Lines, stats[k].Skipped, stats[k].FirstSkipped)
				}
				if summary(k) != summary(0) {
					t.Fatalf("MaxLineBytes 16, SkipInvalid %v, reader %d: %s; serial %s", skip, k, summary(k), summary(0))
				}
				if errs[0] == nil {
					if msg := datasetDiff(ds[k], ds[0]); msg != "" {
						t.Fatalf("MaxLineBytes 16, SkipInvalid %v, reader %d: %s", skip, k, msg)
					}
				}
			}
		}
		if serr != nil {
			var pe *ParseError
			if !errors.As(serr, &pe) {
				t.Fatalf("error %v is not a *ParseError", serr)
			}
			return
		}
		if msg := datasetDiff(parallel, serial); msg != "" {
			t.Fatalf("parallel differs from serial: %s", msg)
		}
		if err := serial.X.Validate(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := WriteLIBSVM(&out, serial); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLIBSVM(bytes.NewReader(out.Bytes()), "fuzz", ReadOptions{NumFeatures: serial.X.Cols, Threads: 2, chunkSize: 16})
		if err != nil {
			t.Fatalf("rereading the written form: %v\n%s", err, out.Bytes())
		}
		if msg := datasetDiff(back, serial); msg != "" {
			t.Fatalf("round trip: %s", msg)
		}
		var again bytes.Buffer
		if err := WriteLIBSVM(&again, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatalf("second write differs:\n%s\nvs\n%s", again.Bytes(), out.Bytes())
		}
	})
}

// TestReadValuesMatchStrconv checks the values the reader parses in line
// (Clinger's fast path, quotient's exact division for 16 to 19 digits, and
// the fallback) against strconv, bit for bit, on printed float64s of every
// length, halfway cases included.
func TestReadValuesMatchStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tokens := []string{"9007199254740993.0", "-18014398509481986.0", "0.26490647141300877", "0.9999999999999999999", "1.0000000000000000000",
		"5.072877754634469217", "-6.674450250329487578", "1995287.113326448598",
		// The lone 1 has a path of its own; its neighbours do not.
		"1", "10", "1.", "1.5", "1e0", "1e-1", "-1", "01", "11"}
	for range 3000 {
		v := rng.Float64() * math.Pow(10, float64(rng.IntN(8)-4))
		if rng.IntN(2) == 0 {
			v = -v
		}
		tokens = append(tokens,
			strconv.FormatFloat(v, 'f', rng.IntN(21), 64),
			strconv.FormatFloat(v, 'g', -1, 64),
			strconv.FormatFloat(v, 'e', rng.IntN(19), 64))
	}
	var b strings.Builder
	for i, tok := range tokens {
		// Lines end after the value, or go on after a tab or a blank.
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "1 %d:%s\n", i+1, tok)
		case 1:
			fmt.Fprintf(&b, "1 %d:%s\t\n", i+1, tok)
		default:
			fmt.Fprintf(&b, "1 %d:%s \r\n", i+1, tok)
		}
	}
	ds, err := ReadLIBSVM(strings.NewReader(b.String()), "values", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range tokens {
		want, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := ds.X.Values[i]; math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("value %q read as %v (%#x), strconv gives %v (%#x)", tok, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
