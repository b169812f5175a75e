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
}

// Error formats the error as "file:line:column: msg", the form compilers use,
// so that editors can jump to the spot: "a9a:17:23: index 0: feature indices
// are 1-based".
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column) + ": " + e.Msg
}

const (
	// maxIndex is the largest 1-based feature index accepted: stored
	// 0-based it must fit an int32.
	maxIndex = math.MaxInt32
	// defaultChunkSize is the chunk size when the input size is unknown.
	defaultChunkSize = 1 << 20
	// minChunkSize and maxChunkSize bound the chunk size chosen from a known
	// input size: large enough that the per-chunk cost (a goroutine, a few
	// allocations, one copy into the final matrix) is noise, small enough
	// that every thread gets several chunks to balance the load.
	minChunkSize = 64 << 10
	maxChunkSize = 4 << 20
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
	var d *Dataset
	var stats ReadStats
	if bytes.Equal(head, cacheMagic[:]) {
		d, err = readCacheFile(f, path)
		if err == nil {
			err = d.X.applyNumFeatures(opt.NumFeatures, path)
		}
	} else {
		var size int64
		if fi, statErr := f.Stat(); statErr == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		d, stats, err = readLIBSVM(io.MultiReader(bytes.NewReader(head), f), size, path, opt)
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
// input is parsed in parallel. Every syntax error is a *ParseError; errors
// from r are returned wrapped.
func ReadLIBSVM(r io.Reader, name string, opt ReadOptions) (*Dataset, error) {
	d, _, err := ReadLIBSVMStats(r, name, opt)
	return d, err
}

// ReadLIBSVMStats is ReadLIBSVM that also reports ReadStats.
func ReadLIBSVMStats(r io.Reader, name string, opt ReadOptions) (*Dataset, ReadStats, error) {
	var size int64
	switch r := r.(type) {
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		size = int64(r.Len())
	case *os.File:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	return readLIBSVM(r, size, name, opt)
}

// chunkResult is what one parser goroutine produces from one chunk: the rows
// of the chunk with chunk-local row ends, the line count, and the first
// error in the chunk, whose line is chunk-local.
type chunkResult struct {
	labels   []float64
	rowEnds  []int64 // rowEnds[i] is the local nnz after row i
	indices  []int32
	values   []float64
	maxIndex int32 // largest 0-based column index, −1 if none
	lines    int
	skipped  int
	err      *ParseError // first error (SkipInvalid: first skipped line)
}

// readLIBSVM is the parallel reader. The calling goroutine cuts the input
// into chunks that end at a newline and hands each to an errgroup goroutine;
// SetLimit bounds the chunks in flight, so memory stays at a few chunks
// beyond the result however large the input. After all chunks are parsed,
// prefix sums over their row and nonzero counts place each chunk in the final
// matrix, and the chunks are copied there concurrently.
func readLIBSVM(r io.Reader, size int64, name string, opt ReadOptions) (*Dataset, ReadStats, error) {
	if opt.NumFeatures < 0 || opt.NumFeatures > maxIndex {
		return nil, ReadStats{}, fmt.Errorf("%s: NumFeatures %d out of range [0, %d]", name, opt.NumFeatures, maxIndex)
	}
	if opt.Threads < 0 {
		return nil, ReadStats{}, fmt.Errorf("%s: Threads %d is negative", name, opt.Threads)
	}
	threads := opt.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	chunkSize := opt.chunkSize
	if chunkSize <= 0 {
		chunkSize = defaultChunkSize
		if size > 0 {
			chunkSize = int(min(max(size/int64(4*threads), minChunkSize), maxChunkSize))
		}
	}

	var (
		results []*chunkResult
		// firstBad is the index of the earliest chunk known to hold an
		// error. Chunks after it cannot change the outcome, so they are
		// neither read nor parsed.
		firstBad atomic.Int64
		g        errgroup.Group
		readErr  error
	)
	firstBad.Store(math.MaxInt64)
	g.SetLimit(threads)
	// free recycles chunk buffers: at most threads+1 are in use at a time.
	free := make(chan []byte, min(threads, 64)+1)
	var carry []byte // the unterminated last line of the previous read
	for k := 0; firstBad.Load() > int64(k); k++ {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = make([]byte, chunkSize)
		}
		if len(carry) >= len(buf) {
			buf = make([]byte, 2*len(carry))
		}
		n := copy(buf, carry)
		carry = carry[:0]
		eof := false
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
			// A single line longer than the buffer: grow and read on.
			buf = slices.Grow(buf[:n], len(buf))
			buf = buf[:cap(buf)]
		}
		if readErr != nil {
			break
		}
		cut := n
		if !eof {
			cut = bytes.LastIndexByte(buf[:n], '\n') + 1
			carry = append(carry, buf[cut:n]...)
		}
		if cut == 0 {
			break
		}
		res := &chunkResult{}
		results = append(results, res)
		chunk, index := buf[:cut], int64(k)
		g.Go(func() error {
			if firstBad.Load() > index {
				parseChunk(res, chunk, opt.NumFeatures, opt.SkipInvalid)
				if res.err != nil && !opt.SkipInvalid {
					for old := firstBad.Load(); index < old && !firstBad.CompareAndSwap(old, index); old = firstBad.Load() {
					}
				}
			}
			select {
			case free <- chunk[:cap(chunk)]:
			default:
			}
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
	return assemble(results, name, opt, threads)
}

// assemble reports the first error in file order or concatenates the chunks.
func assemble(results []*chunkResult, name string, opt ReadOptions, threads int) (*Dataset, ReadStats, error) {
	var stats ReadStats
	rowOff := make([]int, len(results)+1)
	nnzOff := make([]int64, len(results)+1)
	maxIdx := int32(-1)
	for k, res := range results {
		if res.err != nil {
			res.err.File = name
			res.err.Line += stats.Lines
			if !opt.SkipInvalid {
				return nil, stats, res.err
			}
			if stats.FirstSkipped == nil {
				stats.FirstSkipped = res.err
			}
		}
		stats.Lines += res.lines
		stats.Skipped += res.skipped
		rowOff[k+1] = rowOff[k] + len(res.labels)
		nnzOff[k+1] = nnzOff[k] + int64(len(res.indices))
		maxIdx = max(maxIdx, res.maxIndex)
	}
	rows, nnz := rowOff[len(results)], nnzOff[len(results)]
	if rows == 0 {
		msg := "no data lines"
		if stats.Skipped > 0 {
			msg = fmt.Sprintf("no valid data lines (%d malformed lines skipped)", stats.Skipped)
		}
		return nil, stats, &ParseError{File: name, Msg: msg}
	}
	cols := int(maxIdx) + 1
	if opt.NumFeatures > 0 {
		cols = opt.NumFeatures
	}
	m := &CSR{
		Rows:    rows,
		Cols:    cols,
		Indptr:  make([]int64, rows+1),
		Indices: make([]int32, nnz),
		Values:  make([]float64, nnz),
	}
	y := make([]float64, rows)
	var g errgroup.Group
	g.SetLimit(threads)
	for k, res := range results {
		g.Go(func() error {
			copy(y[rowOff[k]:], res.labels)
			copy(m.Indices[nnzOff[k]:], res.indices)
			copy(m.Values[nnzOff[k]:], res.values)
			ptr := m.Indptr[rowOff[k]+1:]
			for i, end := range res.rowEnds {
				ptr[i] = nnzOff[k] + end
			}
			return nil
		})
	}
	g.Wait()
	return &Dataset{Name: name, X: m, Y: y}, stats, nil
}

// parseChunk parses complete lines. It keeps no reference to chunk, whose
// buffer is recycled once it returns.
func parseChunk(res *chunkResult, chunk []byte, numFeatures int, skipInvalid bool) {
	// Counting newlines and colons first bounds the rows and nonzeros (every
	// entry has a colon), so the output is allocated once and written by
	// index; bytes.Count is vectorised and costs little next to the parse.
	maxRows := bytes.Count(chunk, []byte{'\n'}) + 1
	indices := make([]int32, bytes.Count(chunk, []byte{':'}))
	values := make([]float64, len(indices))
	labels := make([]float64, 0, maxRows)
	rowEnds := make([]int64, 0, maxRows)
	limit := int64(maxIndex)
	if numFeatures > 0 {
		limit = int64(numFeatures)
	}
	nnz := 0
	maxIdx := int32(-1)
	for len(chunk) > 0 {
		res.lines++
		line := chunk
		if nl := bytes.IndexByte(chunk, '\n'); nl >= 0 {
			line, chunk = chunk[:nl], chunk[nl+1:]
		} else {
			chunk = nil
		}
		label, n, col, msg := parseLine(line, limit, indices[nnz:], values[nnz:])
		switch {
		case n > 0:
			nnz += n
			maxIdx = max(maxIdx, indices[nnz-1])
			fallthrough
		case n == 0:
			labels = append(labels, label)
			rowEnds = append(rowEnds, int64(nnz))
			continue
		case msg == "":
			continue // blank or comment-only line
		}
		if res.err == nil {
			res.err = &ParseError{Line: res.lines, Column: col, Msg: msg}
		}
		if !skipInvalid {
			break
		}
		res.skipped++
	}
	res.labels, res.rowEnds = labels, rowEnds
	res.indices, res.values = indices[:nnz], values[:nnz]
	res.maxIndex = maxIdx
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// parseLine parses one line without its newline. It writes the line's
// entries to the front of ind and val, which have room for one per colon in
// the line, and returns the label and the number of entries. A blank or
// comment-only line gives n = −1 and no message; a malformed one gives n = −1,
// the 1-based column of the offending token and the cause.
//
// The output is passed as local slices rather than appended to the
// chunkResult so that the compiler keeps lengths and positions in registers
// instead of reloading them through a pointer after every store.
func parseLine(line []byte, limit int64, ind []int32, val []float64) (label float64, n, col int, msg string) {
	if k := len(line); k > 0 && line[k-1] == '\r' {
		line = line[:k-1]
	}
	if h := bytes.IndexByte(line, '#'); h >= 0 {
		line = line[:h]
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
		// Values like 1, 0.708333 or -0.5 are parsed right here: a call
		// per value would make the compiler spill and reload every live
		// variable around it, as Go's calling convention has no
		// callee-saved registers. With at most 15 digits the digits form an
		// integer below 2⁵³ and 10^frac is exact, so the one division
		// rounds correctly and matches strconv.ParseFloat bit for bit
		// (Clinger's fast path, as in scanFloat).
		neg := p < len(line) && line[p] == '-'
		if neg {
			p++
		}
		var mant uint64
		digitStart := p
		for p < len(line) && line[p]-'0' <= 9 {
			mant = mant*10 + uint64(line[p]-'0')
			p++
		}
		digits, frac := p-digitStart, 0
		if p < len(line) && line[p] == '.' {
			p++
			fracStart := p
			for p < len(line) && line[p]-'0' <= 9 {
				mant = mant*10 + uint64(line[p]-'0')
				p++
			}
			frac = p - fracStart
			digits += frac
		}
		var v float64
		if digits > 0 && digits <= 15 && (p == len(line) || isSpace(line[p])) {
			v = float64(int64(mant))
			if frac > 0 {
				v /= exactPow10[frac]
			}
			if neg {
				v = -v
			}
		} else {
			// Exponents, long mantissas, malformed tokens: parseFloat
			// handles them and strconv judges what is valid.
			for p < len(line) && !isSpace(line[p]) {
				p++
			}
			vtok := line[vstart:p]
			if len(vtok) == 0 {
				return 0, -1, vstart + 1, fmt.Sprintf("index %d has no value after ':'", idx)
			}
			if v, msg = parseFinite(vtok); msg != "" {
				return 0, -1, vstart + 1, "value " + msg
			}
		}
		ind[n] = int32(idx - 1)
		val[n] = v
		n++
	}
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
