package sparse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/adaspdc/adaspdc/internal/hugepage"
	"golang.org/x/sync/errgroup"
)

// ReadOptions controls ReadLIBSVM and ReadFile. The zero value infers the
// number of features, fails on the first malformed line and uses one parser
// goroutine per available CPU.
type ReadOptions struct {
	// NumFeatures fixes the number of columns. Zero infers it from the
	// largest index present. A positive value makes an index beyond it an
	// error; a file whose largest index is smaller is fine (a9a.t never
	// uses feature 123 of its 123).
	NumFeatures int
	// SkipInvalid drops malformed lines instead of failing; ReadStats
	// reports how many were dropped and the first reason.
	SkipInvalid bool
	// Threads is the number of parser goroutines; 0 means
	// runtime.GOMAXPROCS(0).
	Threads int
	// MaxLineBytes bounds the length of a line in bytes, without its
	// newline; 0 means DefaultMaxLineBytes. A longer line is refused with
	// its line number as soon as the bound is passed, before it is
	// buffered whole, or earlier by its label (see the package
	// documentation): a stray multi-gigabyte line (a file without
	// newlines, a binary) would otherwise take its size in memory before
	// its first token is read. Under SkipInvalid it is skipped.
	MaxLineBytes int

	// chunkSize overrides the chunk size so that tests can put many chunk
	// boundaries in a small input.
	chunkSize int
}

// ReadStats describes a completed read.
type ReadStats struct {
	// Lines is the number of lines in the input, counting blank and comment
	// lines and a final line without a newline.
	Lines int
	// Skipped is the number of malformed lines dropped under
	// ReadOptions.SkipInvalid.
	Skipped int
	// FirstSkipped is the error of the first dropped line, nil if none.
	FirstSkipped *ParseError
}

// ParseError names file, line (1-based), column (1-based byte column of the
// offending token) and cause. Line and Column are 0 for an error that
// concerns the whole input, such as an input without data.
type ParseError struct {
	File         string
	Line, Column int
	Msg          string
	// Err is the cause that errors.Is can find, where there is one to
	// tell apart: ErrNoDataLines for an input without a data line.
	Err error
}

// ErrNoDataLines is the cause of the ParseError for an input that holds no
// data line at all (empty, or only blank and comment lines). A caller for
// whom an empty part is valid, such as a rank whose share of a file holds
// no line, tells it apart with errors.Is.
var ErrNoDataLines = errors.New("no data lines")

// Unwrap returns the error's cause, if any.
func (e *ParseError) Unwrap() error { return e.Err }

// Error formats the error as "file:line:column: msg", the form compilers use,
// so that editors can jump to the spot: "a9a:17:23: index 0: feature indices
// are 1-based".
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
}

// DefaultMaxLineBytes is the longest line ReadLIBSVM accepts by default,
// 64 MiB: thousands of times the lines of real data (news20's longest,
// with its 1.35 million features, is under 18 KiB), yet little memory to
// hold before refusing a line that is longer.
const DefaultMaxLineBytes = 64 << 20

const (
	// maxIndex is the largest 1-based feature index accepted: stored
	// 0-based it must fit an int32.
	maxIndex = math.MaxInt32
	// defaultChunkSize is the chunk size when the input size is unknown.
	defaultChunkSize = 1 << 20
	// minChunkSize and maxChunkSize bound the chunk size chosen from a known
	// input size: large enough that the per-chunk cost (a goroutine, a
	// read, a few counters) is noise, small enough that every thread gets
	// several chunks to balance the load, and that the chunk buffers (one
	// per thread) are small next to the result.
	minChunkSize = 64 << 10
	maxChunkSize = 1 << 20
	// chunksPerThread is how many chunks each thread gets where the bounds
	// allow: with 4, news20's 9 MB made 9 chunks of 1 MiB for two
	// threads, so one parsed 5 while the other parsed 4.
	chunksPerThread = 16
)

// ReadFile reads a dataset from a file: a binary cache written by WriteCache,
// recognised by its magic number, or else LIBSVM/SVMlight text as read by
// ReadLIBSVM. Errors name the path as given; the dataset's Name is the
// file's base name. For a cache, opt.NumFeatures may widen the matrix; the
// other options do not apply.
func ReadFile(path string, opt ReadOptions) (*Dataset, error) {
	d, _, err := ReadFileStats(path, opt)
	return d, err
}

// ReadFileStats is ReadFile that also reports ReadStats (all zero for a
// cache).
func ReadFileStats(path string, opt ReadOptions) (*Dataset, ReadStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ReadStats{}, err
	}
	defer f.Close()
	head := make([]byte, len(cacheMagic))
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, ReadStats{}, fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	if format, tool := compressed(head); format != "" {
		return nil, ReadStats{}, fmt.Errorf("%s is compressed (%s): decompress it first (%s), or pipe it in (%s -c %s | …)", path, format, tool, tool, path)
	}
	var d *Dataset
	var stats ReadStats
	if bytes.Equal(head, cacheMagic[:]) {
		d, err = readCacheFile(f, path)
		if err == nil {
			err = d.X.applyNumFeatures(opt.NumFeatures, path)
		}
	} else if err = checkReadOptions(opt, path); err == nil {
		if fi, statErr := f.Stat(); statErr == nil && fi.Mode().IsRegular() {
			// A plain file is read in place, by offset, from its start:
			// a large one from a mapping (mappedMinBytes).
			var r io.ReaderAt = io.NewSectionReader(f, 0, fi.Size())
			if m := mapFile(f, fi.Size()); m != nil {
				defer m.close()
				r = m
			}
			d, stats, err = readSized(r, fi.Size(), path, opt)
		} else {
			d, stats, err = readStream(io.MultiReader(bytes.NewReader(head), f), 0, path, opt)
		}
	}
	if err != nil {
		return nil, stats, err
	}
	d.Name = filepath.Base(path)
	return d, stats, nil
}

// ReadLIBSVM reads LIBSVM/SVMlight text ("label idx:val idx:val ..." per
// line, 1-based ascending indices) from r and returns the dataset with
// 0-based column indices. Name is used in errors and as the dataset's Name.
// See the package documentation for the accepted syntax and for how the
// input is parsed in parallel: an r with ReadAt and Seek (a regular
// *os.File, bytes.Reader, strings.Reader, io.SectionReader) is read from
// its current position to its end in two passes that parse straight into
// the result and is left at its end; any other r is streamed. Every syntax
// error is a *ParseError; errors from r are returned wrapped.
func ReadLIBSVM(r io.Reader, name string, opt ReadOptions) (*Dataset, error) {
	d, _, err := ReadLIBSVMStats(r, name, opt)
	return d, err
}

// ReadLIBSVMStats is ReadLIBSVM that also reports ReadStats.
func ReadLIBSVMStats(r io.Reader, name string, opt ReadOptions) (*Dataset, ReadStats, error) {
	if err := checkReadOptions(opt, name); err != nil {
		return nil, ReadStats{}, err
	}
	if ra, start, end, ok := sizedSource(r); ok {
		return readSized(io.NewSectionReader(ra, start, end-start), end-start, name, opt)
	}
	var size int64
	if r, ok := r.(interface{ Len() int }); ok { // bytes.Buffer
		size = int64(r.Len())
	}
	return readStream(r, size, name, opt)
}

// sizedSource reports whether r can be read by offset: it has ReadAt and
// Seek, and if it is an *os.File, a regular one (a pipe or a terminal has
// no size). start is the current position and end the size; r is left at
// end, where reading it to the end would leave it.
func sizedSource(r io.Reader) (ra io.ReaderAt, start, end int64, ok bool) {
	rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	})
	if !ok {
		return nil, 0, 0, false
	}
	if f, isFile := r.(*os.File); isFile {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return nil, 0, 0, false
		}
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, 0, false
	}
	if end, err = rs.Seek(0, io.SeekEnd); err != nil || end < start {
		rs.Seek(start, io.SeekStart)
		return nil, 0, 0, false
	}
	return rs, start, end, true
}

// checkReadOptions refuses options out of range, before anything is read.
func checkReadOptions(opt ReadOptions, name string) error {
	if opt.NumFeatures < 0 || opt.NumFeatures > maxIndex {
		return fmt.Errorf("%s: NumFeatures %d out of range [0, %d]", name, opt.NumFeatures, maxIndex)
	}
	if opt.Threads < 0 {
		return fmt.Errorf("%s: Threads %d is negative", name, opt.Threads)
	}
	if opt.MaxLineBytes < 0 {
		return fmt.Errorf("%s: MaxLineBytes %d is negative", name, opt.MaxLineBytes)
	}
	return nil
}

// maxLine returns the line-length bound of opt.
func maxLine(opt ReadOptions) int64 {
	if opt.MaxLineBytes > 0 {
		return int64(opt.MaxLineBytes)
	}
	return DefaultMaxLineBytes
}

// longLine is the error of a line longer than limit bytes, given its first
// limit bytes. Its label is judged first, where those bytes hold all of
// it: a stray binary or a file without newlines then fails on its first
// token, as a short line would, and that verdict does not depend on how
// much of the line a reader has seen beyond it. Otherwise the line is too
// long.
func longLine(head []byte, limit int64) (col int, msg string) {
	if col, msg, decided := labelError(head); decided && msg != "" {
		return col, msg
	}
	return 1, "line longer than " + byteSize(limit) + " (ReadOptions.MaxLineBytes): is this a LIBSVM file?"
}

// labelError judges the label of a line from its beginning, head, which
// must not hold the line's end. Where head holds the whole first token
// (a blank, a tab or a '#' follows it), decided is true and msg is what
// parseLine says of that label, "" if it is good or the line has none (a
// comment); otherwise nothing can be said yet. It lets the readers refuse
// a long line by its label before they have read the rest of it.
func labelError(head []byte) (col int, msg string, decided bool) {
	p := 0
	for p < len(head) && isSpace(head[p]) {
		p++
	}
	if p < len(head) && head[p] == '#' {
		return 0, "", true // a comment line
	}
	q := p
	for q < len(head) && !isSpace(head[q]) && head[q] != '#' {
		q++
	}
	if q == len(head) {
		return 0, "", false // the token may go on
	}
	tok := head[p:q]
	if bytes.IndexByte(tok, ':') >= 0 {
		return p + 1, fmt.Sprintf("missing label: the line starts with %s", quote(tok)), true
	}
	if _, msg := parseFinite(tok); msg != "" {
		return p + 1, "label " + msg, true
	}
	return 0, "", true
}

// byteSize formats a number of bytes, in MiB or KiB where it is a whole
// number of them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxMagic is the length of the longest magic number compressed knows.
const maxMagic = 6

// compressed names the compression whose magic number begins head, or "",
// and the tool that undoes it. No LIBSVM file starts with one of these
// bytes: a line starts with a number, a blank, a '#' or a newline.
func compressed(head []byte) (format, tool string) {
	for _, m := range []struct {
		magic        string
		format, tool string
	}{
		{"\x1f\x8b", "gzip", "gunzip"},
		{"BZh", "bzip2", "bunzip2"},
		{"\xfd7zXZ\x00", "xz", "unxz"},
		{"\x28\xb5\x2f\xfd", "zstd", "unzstd"},
		{"PK\x03\x04", "zip", "unzip"},
	} {
		if bytes.HasPrefix(head, []byte(m.magic)) {
			return m.format, m.tool
		}
	}
	return "", ""
}

// errCompressed is the message for compressed input, which ReadLIBSVM
// returns as a ParseError about the whole input, without a line.
type errCompressed struct{ format, tool string }

func (e errCompressed) Error() string {
	return "the input is compressed (" + e.format + "): decompress it first (e.g. " + e.tool + ")"
}

func compressedInput(name, format, tool string) error {
	return &ParseError{File: name, Msg: errCompressed{format, tool}.Error()}
}

// failsAtStart reports whether the first error of a read, fatal or
// skipped, is at the first byte of the input: what compressed input gives,
// as no magic number begins with a number, a blank or a '#'.
func failsAtStart(err error, stats ReadStats) bool {
	pe, ok := err.(*ParseError)
	if !ok || pe.Line == 0 {
		pe = stats.FirstSkipped
	}
	return pe != nil && pe.Line == 1 && pe.Column == 1
}

// threadsAndChunkSize returns the parser goroutines and the chunk size for
// an input of size bytes (0 if unknown).
func threadsAndChunkSize(opt ReadOptions, size int64) (threads, chunkSize int) {
	threads = opt.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	chunkSize = opt.chunkSize
	if chunkSize <= 0 {
		chunkSize = defaultChunkSize
		if size > 0 {
			chunkSize = int(min(max(size/int64(chunksPerThread*threads), minChunkSize), maxChunkSize))
		}
	}
	return threads, chunkSize
}

// chunk is a piece of the input that ends after a newline (the last one may
// end without), and what parsing it gave.
type chunk struct {
	// The sized reader's plan: where the chunk's bytes are, and the room
	// its rows and entries have in the result (one row per line, one entry
	// per colon), rowCap rows from rowOff and nnzCap entries from nnzOff.
	off            int64
	length         int
	rowOff, rowCap int
	nnzOff, nnzCap int

	lineLimit int64 // ReadOptions.MaxLineBytes, for parseChunk

	// A line that planChunk refused (by its label, or as too long) before
	// reading all of it: it follows the chunk's bytes, which end before
	// it, and parseChunk reports it, with this column and message, after
	// the chunk's lines.
	pendCol int
	pendMsg string

	// Set by parseChunk.
	rows, nnz int   // rows and entries written
	maxIndex  int32 // largest 0-based column index, −1 if none
	lines     int
	skipped   int
	err       *ParseError // first error (SkipInvalid: first skipped line); chunk-local line
	fatal     error       // a read error, or bytes that changed between the passes

	// The streaming reader's arrays of its own, copied into the result at
	// the end.
	labels  []float64
	rowEnds []int64 // rowEnds[i] is the chunk-local nnz after row i
	indices []int32
	values  []float64
}

// firstBad is the index of the earliest chunk known to fail. Chunks after
// it cannot change the outcome, so they are neither read nor parsed.
type firstBad struct{ atomic.Int64 }

func newFirstBad() *firstBad {
	b := &firstBad{}
	b.Store(math.MaxInt64)
	return b
}

// ok reports whether chunk k may still matter.
func (b *firstBad) ok(k int) bool { return b.Load() > int64(k) }

// mark records that chunk k fails.
func (b *firstBad) mark(k int) {
	for old := b.Load(); int64(k) < old && !b.CompareAndSwap(old, int64(k)); old = b.Load() {
	}
}

// readSized is the reader for inputs of known size that can be read by
// offset. A first pass (planChunks) reads the input once in chunk-sized
// pieces on threads goroutines and counts the newlines and colons of each
// chunk; from their prefix sums every chunk gets its room in the result,
// which is then allocated once, at its final size. In the second pass errgroup goroutines
// read their chunks again, each with its own ReadAt, and parse them
// straight into their room. Lines without data and colons that are not
// entries leave gaps, closed at the end by moving rows and entries down in
// place. Peak memory is the result plus a chunk buffer per thread.
func readSized(r io.ReaderAt, size int64, name string, opt ReadOptions) (*Dataset, ReadStats, error) {
	threads, chunkSize := threadsAndChunkSize(opt, size)
	chunks, bufs, err := planChunks(r, size, chunkSize, threads, maxLine(opt), opt.SkipInvalid)
	if c, ok := err.(errCompressed); ok {
		return nil, ReadStats{}, &ParseError{File: name, Msg: c.Error()}
	}
	if err != nil {
		return nil, ReadStats{}, fmt.Errorf("%s: %w", name, err)
	}
	rowCap, nnzCap := 0, 0
	for _, c := range chunks {
		c.rowOff, c.nnzOff = rowCap, nnzCap
		rowCap += c.rowCap
		nnzCap += c.nnzCap
	}
	y := hugepage.Make[float64](rowCap)
	ptr := hugepage.Make[int64](rowCap + 1)
	ind := hugepage.Make[int32](nnzCap)
	val := hugepage.Make[float64](nnzCap)

	bad := newFirstBad()
	var g errgroup.Group
	g.SetLimit(threads)
	// free recycles chunk buffers, starting with the first pass's: SetLimit
	// keeps at most threads in use.
	free := make(chan []byte, threads)
	for _, buf := range bufs {
		if buf != nil { // a goroutine of the first pass that planned no chunk has none
			free <- buf
		}
	}
	for k, c := range chunks {
		if !bad.ok(k) {
			break
		}
		g.Go(func() error {
			if !bad.ok(k) {
				return nil
			}
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			if cap(buf) < c.length {
				buf = hugepage.Make[byte](max(c.length, chunkSize))
			}
			text := buf[:c.length]
			if err := readFull(r, text, c.off); err != nil {
				c.fatal = fmt.Errorf("%s: %w", name, err)
			} else {
				c.lineLimit = maxLine(opt)
				parseChunk(c, text, y[c.rowOff:c.rowOff+c.rowCap], ptr[c.rowOff+1:c.rowOff+1+c.rowCap], int64(c.nnzOff),
					ind[c.nnzOff:c.nnzOff+c.nnzCap], val[c.nnzOff:c.nnzOff+c.nnzCap], opt.NumFeatures, opt.SkipInvalid)
				if c.fatal != nil {
					c.fatal = fmt.Errorf("%s: %w", name, c.fatal)
				}
			}
			if c.fatal != nil || (c.err != nil && !opt.SkipInvalid) {
				bad.mark(k)
			}
			select {
			case free <- buf:
			default:
			}
			return nil
		})
	}
	g.Wait()
	stats, cols, err := summarize(chunks, name, opt)
	if failsAtStart(err, stats) {
		// planChunk looks for a magic number in chunk 0, which only
		// tests make shorter than one.
		head := make([]byte, min(size, maxMagic))
		if readFull(r, head, 0) == nil {
			if format, tool := compressed(head); format != "" {
				return nil, ReadStats{}, compressedInput(name, format, tool)
			}
		}
	}
	if err != nil {
		return nil, stats, err
	}

	// Close the gaps left by lines without data (blank, comment-only,
	// skipped) and by colons that are not entries (qid:, in comments, in
	// skipped lines): in file order, each chunk's rows and entries move down
	// to where the previous chunk's end; the destination never lies after
	// the source, so copy (memmove) and a forward loop are safe in place.
	rows, nnz := 0, 0
	for _, c := range chunks {
		if c.rowOff != rows {
			copy(y[rows:], y[c.rowOff:c.rowOff+c.rows])
		}
		if c.rowOff != rows || c.nnzOff != nnz {
			shift := int64(nnz - c.nnzOff)
			dst := ptr[rows+1 : rows+1+c.rows]
			for i, end := range ptr[c.rowOff+1 : c.rowOff+1+c.rows] {
				dst[i] = end + shift
			}
		}
		if c.nnzOff != nnz {
			copy(ind[nnz:], ind[c.nnzOff:c.nnzOff+c.nnz])
			copy(val[nnz:], val[c.nnzOff:c.nnzOff+c.nnz])
		}
		rows += c.rows
		nnz += c.nnz
	}
	// Unused room stays allocated as capacity beyond the slices' lengths
	// (pages never written cost no memory); only when it exceeds the data
	// (a file of mostly comments holding colons) is the data copied out.
	y, ptr = trim(y, rows), trim(ptr, rows+1)
	ind, val = trim(ind, nnz), trim(val, nnz)
	m := &CSR{Rows: rows, Cols: cols, Indptr: ptr, Indices: ind, Values: val}
	return &Dataset{Name: name, X: m, Y: y}, stats, nil
}

// trim returns s[:n] with its capacity cut to n, as a copy if more than
// half of s would be unused.
func trim[E any](s []E, n int) []E {
	if len(s)-n > n+minChunkSize {
		return slices.Clone(s[:n])
	}
	return s[:n:n]
}

// planChunks is the sized reader's first pass. It cuts the input into
// chunks that end at newlines, and counts the newlines and colons of each,
// which bound its rows and entries. Chunk k holds the lines that start in
// [k·chunkSize, (k+1)·chunkSize): it begins after the first newline at or
// after k·chunkSize − 1 and ends after the first newline at or after
// (k+1)·chunkSize − 1, or at the end of the input. So each chunk is found
// without the others' help, and threads goroutines plan them, each reading
// its chunks into a buffer of its own: serial, this pass took 5 ms of the
// 25 ms that reading news20's 9 MB took on two threads. A chunk inside a
// line longer than chunkSize is empty and dropped; the chunk where such a
// line starts reads on to its end, unless planChunk refuses the line
// first. Unless skipInvalid, no chunk after one that ends at a refused
// line is planned or kept: the read fails at that line or before. It
// returns the buffers for the second pass to reuse.
func planChunks(r io.ReaderAt, size int64, chunkSize, threads int, limit int64, skipInvalid bool) ([]*chunk, [][]byte, error) {
	nominal := int((size + int64(chunkSize) - 1) / int64(chunkSize))
	planned := make([]*chunk, nominal)
	bufs := make([][]byte, min(threads, nominal))
	var next atomic.Int64
	refused := newFirstBad() // the first chunk known to end at a refused line
	var g errgroup.Group
	for t := range bufs {
		g.Go(func() error {
			for {
				// Chunks are taken in increasing order, so every chunk
				// before one that is taken is planned to its end.
				k := int(next.Add(1) - 1)
				if k >= nominal || refused.Load() < int64(k) {
					return nil
				}
				c, err := planChunk(r, size, chunkSize, k, &bufs[t], limit)
				if err != nil {
					next.Store(int64(nominal)) // the others stop at their next chunk
					return err
				}
				planned[k] = c
				if c != nil && c.pendMsg != "" && !skipInvalid {
					refused.mark(k)
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	chunks := planned[:0]
	for k, c := range planned {
		if refused.Load() < int64(k) {
			break
		}
		if c != nil {
			chunks = append(chunks, c)
		}
	}
	return chunks, bufs, nil
}

// planTail is the first piece that planChunk reads beyond a chunk to find
// the end of its last line.
const planTail = 4 << 10

// errShorter is the error of a read that finds the input shorter than its
// size was when reading began.
var errShorter = fmt.Errorf("%w (it got shorter)", errChanged)

// readFull reads len(b) bytes at off, or fails: with errShorter where the
// input ends first.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = errShorter
	}
	return err
}

// planChunk plans chunk k of planChunks, reading into *buf (grown where
// it is short, and kept for the next chunk); nil if the chunk is empty.
//
// The last line that starts in the chunk is read on to its end in pieces
// that double, from planTail to maxPiece, so that the usual short line
// costs one small read. Only the counts are needed here (the second pass
// reads the chunk again), so the pieces are read into a scratch buffer and
// dropped, except while the line's label is still undecided (see
// labelError), where they are kept to judge it. A line is thus never
// buffered here beyond its first token, and its fate is judged before each
// piece: a bad label, once its token has ended, or more than limit bytes,
// refuse the line there (see longLine), and the chunk then ends before it,
// with the refusal pending (chunk.pendMsg) for parseChunk to report in its
// place among the chunk's errors. A refused line is not part of any chunk:
// those after it begin after its newline, wherever it is, and planChunk
// reads no more of it.
func planChunk(r io.ReaderAt, size int64, chunkSize, k int, buf *[]byte, limit int64) (*chunk, error) {
	lo := int64(k) * int64(chunkSize)
	hi := min(size, lo+int64(chunkSize))
	from := max(0, lo-1) // a chunk after the first looks one byte back for its start
	if cap(*buf) < chunkSize+1+planTail {
		*buf = hugepage.Make[byte](chunkSize + 1 + planTail)
	}
	text := (*buf)[:hi-from]
	if err := readFull(r, text, from); err != nil {
		return nil, err
	}
	if k == 0 {
		if format, tool := compressed(text); format != "" {
			return nil, errCompressed{format, tool}
		}
	}
	start := 0
	if k > 0 {
		// The first newline at or after lo − 1 ends the line that chunk
		// k − 1 holds; one at hi − 1 or later would end this chunk too.
		nl := bytes.IndexByte(text[:len(text)-1], '\n')
		if nl < 0 {
			return nil, nil
		}
		start = nl + 1
	}
	// The line that straddles hi starts after the chunk's last newline.
	last := start
	if nl := bytes.LastIndexByte(text[start:], '\n'); nl >= 0 {
		last += nl + 1
	}
	c := &chunk{off: from + int64(start)}
	rows := bytes.Count(text[start:], []byte{'\n'})
	colons := bytes.Count(text[start:], []byte{':'})
	end := hi
	lineLen := int64(len(text) - last) // of the last line, so far
	ended := lineLen == 0              // it ended with the chunk
	labelDone := false                 // its label is judged, and good
	var scratch []byte
	for more := int64(planTail); end < size && !ended; more = min(2*more, maxPiece) {
		if !labelDone {
			// text[last:] is the whole of the line so far.
			line := text[last:]
			col, msg, decided := labelError(line[:min(int64(len(line)), limit)])
			if msg != "" {
				return c.refuse(text, start, last, buf, col, msg), nil
			}
			labelDone = decided
		}
		if lineLen > limit {
			line := text[last:]
			col, msg := longLine(line[:min(int64(len(line)), limit)], limit)
			return c.refuse(text, start, last, buf, col, msg), nil
		}
		// Read no more than it takes to pass the limit.
		n := int(min(more, size-end, limit+1-lineLen))
		var tail []byte
		if labelDone {
			if cap(scratch) < n {
				// The buffer's spare room serves the first, small pieces.
				if scratch = text[len(text):cap(text)]; cap(scratch) < n {
					scratch = make([]byte, more)
				}
			}
			tail = scratch[:n]
		} else {
			text = slices.Grow(text, n)
			tail = text[len(text) : len(text)+n]
		}
		if err := readFull(r, tail, end); err != nil {
			return nil, err
		}
		if nl := bytes.IndexByte(tail, '\n'); nl >= 0 {
			tail, ended = tail[:nl+1], true
		}
		rows += bytes.Count(tail, []byte{'\n'})
		colons += bytes.Count(tail, []byte{':'})
		end += int64(len(tail))
		lineLen += int64(len(tail))
		if !labelDone {
			text = text[:len(text)+len(tail)]
		}
	}
	// The last line is whole: it ends with a newline or the input.
	if content := lineLen - int64(b2i(ended)); content > limit {
		line := text[last:]
		col, msg := longLine(line[:min(int64(len(line)), limit)], limit)
		return c.refuse(text, start, last, buf, col, msg), nil
	}
	*buf = text[:0]
	c.length = int(end - c.off)
	c.rowCap, c.nnzCap = rows, colons
	if !ended && lineLen > 0 {
		c.rowCap++ // the last line lacks its newline (the input ends)
	}
	return c, nil
}

// maxPiece bounds the pieces in which planChunk reads a long line.
const maxPiece = 1 << 20

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// refuse ends c with the lines text[start:last], which precede a line
// refused with col and msg, and keeps text's buffer in *buf.
func (c *chunk) refuse(text []byte, start, last int, buf *[]byte, col int, msg string) *chunk {
	*buf = text[:0]
	text = text[start:last]
	c.length = len(text)
	c.rowCap = bytes.Count(text, []byte{'\n'})
	c.nnzCap = bytes.Count(text, []byte{':'})
	c.pendCol, c.pendMsg = col, msg
	return c
}

// readStream is the reader for inputs that can only be read once, front to
// back (pipes, sockets, readers without ReadAt). The calling goroutine cuts
// the input into chunks that end at a newline and hands each to an errgroup
// goroutine, which counts its newlines and colons and parses it into arrays
// of its own; SetLimit bounds the chunks in flight, so input buffering stays
// at a few chunks. After all chunks are parsed, prefix sums over their row
// and nonzero counts place each chunk in the result, and the chunks are
// copied there concurrently. Peak memory is therefore about twice the
// result: the chunks' arrays and the result they are copied into.
//
// A line longer than a chunk makes the buffer grow until it holds the
// line's end; as in planChunk, the part read so far is judged before each
// growth, and a line refused by its label or its length (see longLine)
// becomes a chunk of its own that holds just the error, so that errors
// still come out in the order of the lines. Under SkipInvalid the rest of
// such a line is read through the buffer and dropped.
func readStream(r io.Reader, size int64, name string, opt ReadOptions) (*Dataset, ReadStats, error) {
	head := make([]byte, maxMagic)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, ReadStats{}, fmt.Errorf("%s: %w", name, err)
	}
	if format, tool := compressed(head[:n]); format != "" {
		return nil, ReadStats{}, compressedInput(name, format, tool)
	}
	r = io.MultiReader(bytes.NewReader(head[:n]), r)

	threads, chunkSize := threadsAndChunkSize(opt, size)
	var (
		chunks  []*chunk
		bad     = newFirstBad()
		g       errgroup.Group
		readErr error
	)
	g.SetLimit(threads)
	// free recycles chunk buffers: at most threads+1 are in use at a time.
	free := make(chan []byte, min(threads, 64)+1)
	recycle := func(buf []byte) {
		select {
		case free <- buf[:cap(buf)]:
		default:
		}
	}
	var carry []byte // the unterminated last line of the previous read
	limit := maxLine(opt)
	for k := 0; bad.ok(k); k++ {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = hugepage.Make[byte](chunkSize)
		}
		if len(carry) >= len(buf) {
			buf = hugepage.Make[byte](2 * len(carry))
		}
		n := copy(buf, carry)
		carry = carry[:0]
		eof := false
		var refusedCol int
		var refused string // why the line at the start of buf is refused
		for {
			m, err := io.ReadFull(r, buf[n:])
			n += m
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				eof = true
			} else if err != nil {
				readErr = fmt.Errorf("%s: %w", name, err)
			}
			if eof || readErr != nil || bytes.LastIndexByte(buf[:n], '\n') >= 0 {
				break
			}
			// buf[:n] is the beginning of a line that goes on.
			if col, msg, _ := labelError(buf[:min(int64(n), limit)]); msg != "" {
				refusedCol, refused = col, msg
				break
			}
			if int64(n) > limit {
				refusedCol, refused = longLine(buf[:limit], limit)
				break
			}
			// A single line longer than the buffer: grow and read on, to
			// no more than it takes to pass the limit (straight to it from
			// half of it, rather than to the limit and then one byte more).
			grown := 2 * int64(len(buf))
			if grown >= limit {
				grown = limit + 1
			}
			buf = append(hugepage.Make[byte](int(grown))[:0], buf[:n]...)
			buf = buf[:cap(buf)]
		}
		if readErr != nil {
			break
		}
		if refused != "" {
			c := &chunk{maxIndex: -1, lines: 1, err: &ParseError{Line: 1, Column: refusedCol, Msg: refused}}
			chunks = append(chunks, c)
			if !opt.SkipInvalid {
				break // the chunks before may still hold an earlier error
			}
			c.skipped = 1
			carry, eof, readErr = skipLine(r, buf, carry)
			recycle(buf)
			if readErr != nil {
				readErr = fmt.Errorf("%s: %w", name, readErr)
				break
			}
			if eof && len(carry) == 0 {
				break
			}
			continue
		}
		cut := n
		if !eof {
			cut = bytes.LastIndexByte(buf[:n], '\n') + 1
			carry = append(carry, buf[cut:n]...)
		}
		if cut == 0 {
			break
		}
		c := &chunk{}
		chunks = append(chunks, c)
		text := buf[:cut]
		g.Go(func() error {
			if bad.ok(k) {
				parseOwn(c, text, opt)
				if c.err != nil && !opt.SkipInvalid {
					bad.mark(k)
				}
			}
			recycle(text)
			return nil
		})
		if eof {
			break
		}
	}
	g.Wait()
	if readErr != nil {
		return nil, ReadStats{}, readErr
	}
	stats, cols, err := summarize(chunks, name, opt)
	if err != nil {
		return nil, stats, err
	}
	return concatenate(chunks, name, cols, threads), stats, nil
}

// skipLine reads r, through buf, to the end of the current line, and
// returns what follows the newline in what it read (in carry's storage) and
// whether r ended.
func skipLine(r io.Reader, buf, carry []byte) ([]byte, bool, error) {
	buf = buf[:cap(buf)]
	for {
		n, err := io.ReadFull(r, buf)
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return carry[:0], false, err
		}
		if nl := bytes.IndexByte(buf[:n], '\n'); nl >= 0 {
			return append(carry[:0], buf[nl+1:n]...), eof, nil
		}
		if eof {
			return carry[:0], true, nil
		}
	}
}

// parseOwn parses a chunk of the streaming reader into arrays of its own,
// sized by counting newlines and colons (vectorised bytes.Count), so that
// they are allocated once and written by index.
func parseOwn(c *chunk, text []byte, opt ReadOptions) {
	rowCap := bytes.Count(text, []byte{'\n'}) + 1
	nnzCap := bytes.Count(text, []byte{':'})
	c.labels, c.rowEnds = hugepage.Make[float64](rowCap), hugepage.Make[int64](rowCap)
	c.indices, c.values = hugepage.Make[int32](nnzCap), hugepage.Make[float64](nnzCap)
	c.lineLimit = maxLine(opt)
	parseChunk(c, text, c.labels, c.rowEnds, 0, c.indices, c.values, opt.NumFeatures, opt.SkipInvalid)
}

// summarize walks the parsed chunks in file order and returns the first
// failure (a read error, or the earliest parse error with its line number
// made global by adding the lines of the chunks before it), or else the
// statistics and the number of columns. Every chunk before a failing one
// was parsed: a chunk is skipped only after an earlier one failed.
func summarize(chunks []*chunk, name string, opt ReadOptions) (ReadStats, int, error) {
	var stats ReadStats
	rows := 0
	maxIdx := int32(-1)
	for _, c := range chunks {
		if c.fatal != nil {
			return stats, 0, c.fatal
		}
		if c.err != nil {
			c.err.File = name
			c.err.Line += stats.Lines
			if !opt.SkipInvalid {
				return stats, 0, c.err
			}
			if stats.FirstSkipped == nil {
				stats.FirstSkipped = c.err
			}
		}
		stats.Lines += c.lines
		stats.Skipped += c.skipped
		rows += c.rows
		maxIdx = max(maxIdx, c.maxIndex)
	}
	if rows == 0 {
		if stats.Skipped > 0 {
			return stats, 0, &ParseError{File: name, Msg: fmt.Sprintf("no valid data lines (%d malformed lines skipped)", stats.Skipped)}
		}
		return stats, 0, &ParseError{File: name, Msg: ErrNoDataLines.Error(), Err: ErrNoDataLines}
	}
	cols := int(maxIdx) + 1
	if opt.NumFeatures > 0 {
		cols = opt.NumFeatures
	}
	return stats, cols, nil
}

// concatenate copies the streaming reader's chunks into one dataset.
func concatenate(chunks []*chunk, name string, cols, threads int) *Dataset {
	rowOff := make([]int, len(chunks)+1)
	nnzOff := make([]int64, len(chunks)+1)
	for k, c := range chunks {
		rowOff[k+1] = rowOff[k] + c.rows
		nnzOff[k+1] = nnzOff[k] + int64(c.nnz)
	}
	rows, nnz := rowOff[len(chunks)], nnzOff[len(chunks)]
	m := &CSR{
		Rows:    rows,
		Cols:    cols,
		Indptr:  hugepage.Make[int64](rows + 1),
		Indices: hugepage.Make[int32](int(nnz)),
		Values:  hugepage.Make[float64](int(nnz)),
	}
	y := hugepage.Make[float64](rows)
	var g errgroup.Group
	g.SetLimit(threads)
	for k, c := range chunks {
		g.Go(func() error {
			copy(y[rowOff[k]:], c.labels[:c.rows])
			copy(m.Indices[nnzOff[k]:], c.indices[:c.nnz])
			copy(m.Values[nnzOff[k]:], c.values[:c.nnz])
			ptr := m.Indptr[rowOff[k]+1:]
			for i, end := range c.rowEnds[:c.rows] {
				ptr[i] = nnzOff[k] + end
			}
			return nil
		})
	}
	g.Wait()
	return &Dataset{Name: name, X: m, Y: y}
}

// errNoRoom is parseLine's message for a line with more entries than its
// window has room for, and errChanged the error it becomes: a chunk's room
// comes from counting its bytes, so this only happens if the bytes changed
// between the count and the parse (a file written to while it is read).
const errNoRoom = "\x00no room"

var errChanged = errors.New("the input changed while it was read")

// parseChunk parses the complete lines of text into the room it is given:
// row i's label goes to labels[i] and its end (base plus the entries so far)
// to ends[i], its entries to ind and val after the previous rows'. The room
// must hold a row per line and an entry per colon of text. It records in c
// the rows and entries written, the lines, the largest index and the first
// error. It keeps no reference to text, whose buffer is recycled once it
// returns.
func parseChunk(c *chunk, text []byte, labels []float64, ends []int64, base int64, ind []int32, val []float64, numFeatures int, skipInvalid bool) {
	limit := int64(maxIndex)
	if numFeatures > 0 {
		limit = int64(numFeatures)
	}
	ends = ends[:len(labels)]
	val = val[:len(ind)]
	rows, nnz := 0, 0
	maxIdx := int32(-1)
	// Most files hold no comment: one search of the chunk for '#' spares
	// each line its own.
	comments := bytes.IndexByte(text, '#') >= 0
	for len(text) > 0 {
		c.lines++
		line := text
		if nl := bytes.IndexByte(text, '\n'); nl >= 0 {
			line, text = text[:nl], text[nl+1:]
		} else {
			text = nil
		}
		var label float64
		var n, col int
		var msg string
		// Solvers square the rows' values (norms, step sizes, Hessians):
		// a row whose squared norm overflows cannot be trained on, and is
		// best refused here, where its line is known. Finite values
		// compare as their bit patterns without the sign bit, so the
		// largest magnitude (big) is an integer max, without a chain of
		// floating-point additions; only a row with a value beyond
		// hugeValue can overflow, and only such a row has its norm summed.
		var big uint64
		ok := false
		if c.lineLimit <= 0 || int64(len(line)) <= c.lineLimit {
			if !comments {
				label, n, big, ok = parseLineFast(line, limit, ind[nnz:], val[nnz:])
			}
			if !ok {
				label, n, col, msg = parseLine(line, comments, limit, ind[nnz:], val[nnz:])
				for _, v := range val[nnz:max(nnz, nnz+n)] {
					big = max(big, math.Float64bits(v)&^(1<<63))
				}
			}
		} else {
			n = -1
			col, msg = longLine(line[:c.lineLimit], c.lineLimit)
		}
		if n > 0 {
			if big > hugeValueBits {
				if k := overflowingEntry(val[nnz : nnz+n]); k >= 0 {
					n, col, msg = -1, valueColumn(line, k), fmt.Sprintf("the squared norm of the row overflows float64 (values up to %g in magnitude; their squares must sum below %.3g): scale the features", math.Abs(val[nnz+k]), math.MaxFloat64)
				}
			}
		}
		if n >= 0 {
			if rows == len(labels) {
				c.fatal = errChanged
				break
			}
			if n > 0 {
				nnz += n
				maxIdx = max(maxIdx, ind[nnz-1])
			}
			labels[rows] = label
			ends[rows] = base + int64(nnz)
			rows++
			continue
		}
		if msg == "" {
			continue // blank or comment-only line
		}
		if msg == errNoRoom {
			c.fatal = errChanged
			break
		}
		if c.err == nil {
			c.err = &ParseError{Line: c.lines, Column: col, Msg: msg}
		}
		if !skipInvalid {
			break
		}
		c.skipped++
	}
	if c.pendMsg != "" && c.fatal == nil && (c.err == nil || skipInvalid) {
		// The line that planChunk refused comes after the chunk's lines.
		c.lines++
		if c.err == nil {
			c.err = &ParseError{Line: c.lines, Column: c.pendCol, Msg: c.pendMsg}
		}
		if skipInvalid {
			c.skipped++
		}
	}
	c.rows, c.nnz, c.maxIndex = rows, nnz, maxIdx
}

// hugeValue bounds the values of a row whose squared norm may overflow: a
// row has fewer than 2³¹ entries (its column indices are distinct int32s),
// so if none exceeds hugeValue in magnitude its squared norm is at most
// 2³¹·10²⁹⁸ ≈ 2.1·10³⁰⁷, under MaxFloat64 ≈ 1.8·10³⁰⁸ with room to spare
// for rounding. Only rows with a larger value need their norm summed.
const hugeValue = 1e149

var hugeValueBits = math.Float64bits(hugeValue)

// overflowingEntry returns −1 if Σ v² over val, summed in order as the
// solvers sum it, is finite, and otherwise the index of the first entry
// of the largest magnitude, for the error to point at.
func overflowingEntry(val []float64) int {
	var sq float64
	for _, v := range val {
		sq += v * v
	}
	if !math.IsInf(sq, 0) {
		return -1
	}
	k := 0
	for i, v := range val {
		if math.Abs(v) > math.Abs(val[k]) {
			k = i
		}
	}
	return k
}

// valueColumn returns the 1-based column where the value of entry k (the
// k-th index:value pair, from 0) of a line that parseLine accepted begins.
func valueColumn(line []byte, k int) int {
	if h := bytes.IndexByte(line, '#'); h >= 0 {
		line = line[:h]
	}
	for p, tokens := 0, 0; p < len(line); {
		if isSpace(line[p]) {
			p++
			continue
		}
		start := p
		for p < len(line) && !isSpace(line[p]) {
			p++
		}
		tokens++
		if tokens == 1 || bytes.HasPrefix(line[start:p], []byte("qid:")) {
			continue // the label, or a query id (only before the features)
		}
		if k == 0 {
			return start + bytes.IndexByte(line[start:p], ':') + 2
		}
		k--
	}
	return 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// parseLine parses one line without its newline. It writes the line's
// entries to the front of ind and val, which have the same length and
// should have room for one per colon in the line, and returns the label and
// the number of entries. A blank or comment-only line gives n = −1 and no
// message; a malformed one gives n = −1, the 1-based column of the
// offending token and the cause; a line with more entries than ind has
// room for gives n = −1 and errNoRoom. comments is false where the text
// the line comes from holds no '#', which spares the search for one.
//
// The output is passed as local slices rather than through the chunk so
// that the compiler keeps lengths and positions in registers instead of
// reloading them through a pointer after every store.
func parseLine(line []byte, comments bool, limit int64, ind []int32, val []float64) (label float64, n, col int, msg string) {
	val = val[:len(ind)]
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	if comments {
		if h := bytes.IndexByte(line, '#'); h >= 0 {
			line = line[:h]
		}
	}
	p := 0
	for p < len(line) && isSpace(line[p]) {
		p++
	}
	if p == len(line) {
		return 0, -1, 0, "" // blank or comment-only line
	}

	start := p
	for p < len(line) && !isSpace(line[p]) {
		p++
	}
	tok := line[start:p]
	if bytes.IndexByte(tok, ':') >= 0 {
		return 0, -1, start + 1, fmt.Sprintf("missing label: the line starts with %s", quote(tok))
	}
	label, msg = parseFinite(tok)
	if msg != "" {
		return 0, -1, start + 1, "label " + msg
	}

	prev := int64(0) // previous 1-based index; 0 before the first feature
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return label, n, 0, ""
		}
		start = p
		// Index: digits up to the colon. The common case is handled
		// inline; anything else is diagnosed by badIndex.
		var idx int64
		for p < len(line) && line[p]-'0' <= 9 {
			if idx <= maxIndex {
				idx = idx*10 + int64(line[p]-'0')
			}
			p++
		}
		if p == start || p == len(line) || line[p] != ':' {
			if isQID(line[start:], prev) {
				for p < len(line) && !isSpace(line[p]) {
					p++
				}
				if msg := checkQID(line[start+4 : p]); msg != "" {
					return 0, -1, start + 5, msg
				}
				continue
			}
			col, msg = badIndex(line, start)
			return 0, -1, col, msg
		}
		if idx == 0 {
			return 0, -1, start + 1, "index 0: feature indices are 1-based"
		}
		if idx > limit {
			if limit == maxIndex {
				return 0, -1, start + 1, fmt.Sprintf("index %s exceeds the limit %d", line[start:p], maxIndex)
			}
			return 0, -1, start + 1, fmt.Sprintf("index %s exceeds NumFeatures=%d", line[start:p], limit)
		}
		if idx <= prev {
			if idx == prev {
				return 0, -1, start + 1, fmt.Sprintf("duplicate index %d", idx)
			}
			return 0, -1, start + 1, fmt.Sprintf("index %d after %d: indices must be strictly ascending", idx, prev)
		}
		prev = idx
		p++ // the colon
		vstart := p
		// A value of 1 alone, binary data's every value (w8a's, a9a's),
		// skips the token's scan; values like 0.708333 or -0.5 take
		// exactDecimal, whose result matches strconv.ParseFloat bit for
		// bit; long mantissas, huge exponents and malformed tokens go to
		// parseFinite, where strconv judges what is valid.
		var v float64
		if p < len(line) && line[p] == '1' && (p+1 == len(line) || isSpace(line[p+1])) {
			v = 1
			p++
		} else {
			for p < len(line) && !isSpace(line[p]) {
				p++
			}
			vtok := line[vstart:p]
			if len(vtok) == 0 {
				return 0, -1, vstart + 1, fmt.Sprintf("index %d has no value after ':'", idx)
			}
			var ok bool
			if v, ok = exactDecimal(vtok); !ok {
				if v, msg = parseFinite(vtok); msg != "" {
					return 0, -1, vstart + 1, "value " + msg
				}
			}
		}
		if n == len(ind) {
			return 0, -1, start + 1, errNoRoom
		}
		ind[n] = int32(idx - 1)
		val[n] = v
		n++
	}
}

// parseLineFast is parseLine for the lines most files are made of, in one
// loop with no diagnosis: a label, then index:value pairs whose indices
// have at most 18 digits and ascend, the label and the values taking the
// exact decimal path (exactDecimal), separated by spaces or tabs. It
// writes what parseLine would write, and returns with the largest value's
// bits without the sign (big) and ok; on anything else, a blank line
// included, it returns ok = false having written nothing that the caller
// keeps, and parseLine, which finds the cause, takes the line. The text
// must hold no comment. Why a second parser: parseLine's diagnoses (qid, the index
// bound checked at each digit, the messages) keep its loop's state on the
// stack, and the values' magnitudes took a second pass of their own; the
// lines that need none of that take this loop, which keeps its state in
// registers and notes the largest magnitude as it writes.
func parseLineFast(line []byte, limit int64, ind []int32, val []float64) (label float64, n int, big uint64, ok bool) {
	val = val[:len(ind)]
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	p := 0
	for p < len(line) && isSpace(line[p]) {
		p++
	}
	start := p
	for p < len(line) && !isSpace(line[p]) {
		p++
	}
	// The label, where it takes the exact decimal path as a value does;
	// any other label is parseLine's to read.
	label, ok = exactDecimal(line[start:p])
	if !ok {
		return 0, 0, 0, false
	}
	prev := uint64(0)
	ulimit := uint64(limit)
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return label, n, big, true
		}
		start = p
		var idx uint64
		for p < len(line) && line[p]-'0' <= 9 {
			idx = idx*10 + uint64(line[p]-'0')
			p++
		}
		if p == start || p-start > 18 || p == len(line) || line[p] != ':' || idx <= prev || idx > ulimit {
			return 0, 0, 0, false
		}
		prev = idx
		p++ // the colon
		var v float64
		if p < len(line) && line[p] == '1' && (p+1 == len(line) || isSpace(line[p+1])) {
			v = 1
			p++
		} else {
			vstart := p
			for p < len(line) && !isSpace(line[p]) {
				p++
			}
			if v, ok = exactDecimal(line[vstart:p]); !ok {
				return 0, 0, 0, false
			}
		}
		if n == len(ind) {
			return 0, 0, 0, false
		}
		ind[n] = int32(idx - 1)
		val[n] = v
		big = max(big, math.Float64bits(v)&^(1<<63))
		n++
	}
}

// exactDecimal returns the value of tok where scanFloat's exact path takes
// the whole token, which is then what parseFinite would return: the
// values and labels of most files (1, 0.708333, -0.5, 24.0, 9.8E-02).
// ok is false for every other token, which parseFinite reads or refuses.
func exactDecimal(tok []byte) (v float64, ok bool) {
	v, end, ok := scanFloat(tok, 0)
	return v, ok && end == len(tok)
}

// parseFinite parses a number that must be finite. On failure it returns a
// message that completes "label " or "value ".
func parseFinite(tok []byte) (float64, string) {
	v, err := parseFloat(tok)
	switch {
	case err == nil && !math.IsNaN(v) && !math.IsInf(v, 0):
		return v, ""
	case errors.Is(err, strconv.ErrRange):
		return 0, quote(tok) + " overflows float64"
	case err != nil:
		return 0, quote(tok) + " is not a number"
	}
	return 0, quote(tok) + " is not finite"
}

// isQID reports whether the token at the start of rest is an SVMlight query
// id, which may only come before the first feature.
func isQID(rest []byte, prev int64) bool {
	return prev == 0 && bytes.HasPrefix(rest, []byte("qid:"))
}

// checkQID validates the digits of a qid token, which is otherwise ignored.
func checkQID(digits []byte) string {
	if len(digits) == 0 {
		return "qid has no value"
	}
	for _, c := range digits {
		if c-'0' > 9 {
			return fmt.Sprintf("qid %s is not a non-negative integer", quote(digits))
		}
	}
	return ""
}

// badIndex explains why the feature token starting at line[start] is not
// "index:value".
func badIndex(line []byte, start int) (int, string) {
	end := start
	for end < len(line) && !isSpace(line[end]) {
		end++
	}
	tok := line[start:end]
	colon := bytes.IndexByte(tok, ':')
	if colon < 0 {
		return start + 1, fmt.Sprintf("feature %s has no ':' (want index:value)", quote(tok))
	}
	idx := tok[:colon]
	switch {
	case len(idx) == 0:
		return start + 1, fmt.Sprintf("feature %s has no index before ':'", quote(tok))
	case bytes.Equal(idx, []byte("qid")):
		return start + 1, "qid must come before the features"
	}
	if n, err := strconv.ParseInt(string(idx), 10, 64); err == nil && n <= 0 {
		return start + 1, fmt.Sprintf("index %d: feature indices are 1-based", n)
	}
	if len(idx) > 1 && idx[0] == '-' && allDigits(idx[1:]) {
		return start + 1, fmt.Sprintf("index %s: feature indices are 1-based", quote(idx))
	}
	return start + 1, fmt.Sprintf("index %s is not a positive integer", quote(idx))
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c-'0' > 9 {
			return false
		}
	}
	return true
}

// quote returns b as a Go string literal, shortened if it is long, so that a
// runaway token does not make a runaway message.
func quote(b []byte) string {
	const maxShown = 32
	if len(b) > maxShown {
		return strconv.Quote(string(b[:maxShown])) + "…"
	}
	return strconv.Quote(string(b))
}
