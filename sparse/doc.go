// Package sparse holds the data side of the engine: compressed-sparse-row
// matrices, datasets with their targets, a parallel reader and a writer for
// LIBSVM/SVMlight text, and a checksummed binary cache.
//
// # Matrices and datasets
//
// A CSR stores row i's 0-based, strictly ascending column indices in
// Indices[Indptr[i]:Indptr[i+1]] and the matching values in Values. Row
// pointers are int64 and column indices int32: the solvers stream Indices
// once per pass, so halving its width halves that traffic, and 2³¹−1
// columns are more than any LIBSVM file has. The row operations
// (RowSquaredNorms, ScaleRows, NormalizeRowsByMax, NormalizeRowsUnit,
// WithBias, SelectRows) are the preprocessing steps of the solvers; Dense
// exists for tests. CompactColumns and GroupColumnsByCount renumber the
// columns (dropping the empty ones; the second puts the most frequent
// first, for the cache) and return the map back to the original columns.
// SortRowsByLength reorders the rows in place within windows of consecutive
// rows, by their number of entries, so that the rows kernels' branches on a
// row's length are predicted; it returns the RowOrder that the caller
// applies to its other arrays by row. Its windows are cut among GOMAXPROCS
// goroutines by nonzeros, each window copied out once to its goroutine's
// buffer and written back in order, so no two goroutines touch one window.
//
// A Dataset pairs a matrix with one raw target per row. BinaryLabels maps
// any two-valued target (−1/+1, 0/1, 1/2, 2/4) to ±1, the larger value
// becoming +1, and returns the LabelMap that undoes it.
//
// # The text format
//
// ReadLIBSVM and ReadFile accept one sample per line:
//
//	label [qid:N] index:value index:value ... [# comment]
//
// in detail:
//
//   - Tokens are separated by any run of spaces and tabs; leading and
//     trailing blanks are ignored.
//   - Lines end in LF or CRLF; the last line may lack its newline.
//   - '#' starts a comment that runs to the end of the line, whether the
//     line holds data or not. Blank and comment-only lines are skipped but
//     counted, so that line numbers in errors match the file.
//   - The label and the values are numbers in any form strconv.ParseFloat
//     accepts ("+1", "2.000000", "9.8E-02", "24.0", "0x1p-3") and must be
//     finite: NaN, Inf and overflowing literals such as 1e999 are errors
//     (a literal that underflows reads as 0, as strconv has it).
//   - Indices are plain decimal integers from 1 to 2³¹−1 (or to
//     ReadOptions.NumFeatures), strictly ascending within a line. They are
//     stored 0-based. Without NumFeatures the column count is the largest
//     index present.
//   - An SVMlight "qid:N" right after the label is checked and ignored.
//   - Explicit zeros ("13:0.0") are kept as stored entries, as LIBLINEAR
//     keeps them, so NNZ counts the entries written in the file (the
//     figures of ../shared/data/SOURCES.md are checked this way).
//   - A row's squared norm Σ v², summed in order, must be finite: the
//     solvers square the rows (norms, step sizes, Hessians), so values up
//     to about 1e154 are fine, 1e155 is not, and two of 1e154 are not
//     either. Such a row is refused with its line, the column of its
//     largest value pointed at, so that the data is scaled rather than a
//     solver failing later. Only a row with a value beyond 1e149 needs its
//     sum formed: fewer than 2³¹ squares of at most 1e298 cannot overflow.
//   - A line may be at most ReadOptions.MaxLineBytes long (64 MiB by
//     default, far beyond real data: news20's longest line is under 18 KiB).
//     Longer input is a file without newlines or not a LIBSVM file at all,
//     and is refused without being buffered (see "Long lines" below).
//   - Compressed input (gzip, bzip2, xz, zstd, zip, by their magic number)
//     is refused as such, with the tool that decompresses it.
//
// Everything else is an error, reported as a *ParseError naming the input,
// the 1-based line and the 1-based byte column of the offending token (of
// the value part for a bad value), e.g.
//
//	a9a:17:23: index 0: feature indices are 1-based
//
// The errors cover a zero, negative or non-integer index, descending or
// duplicate indices, a missing colon, index or value, a value or label that
// is not a number or not finite, an index beyond int32 or NumFeatures, a
// line whose first token is a feature (no label), and an input without any
// data line ("no data lines", with line and column 0). With
// ReadOptions.SkipInvalid malformed lines are dropped instead and counted
// in ReadStats.
//
// Numbers are parsed without allocating. Values of at most 15 digits with
// an optional sign and point (nearly every value in real files) take an
// inline fast path: the digits form an integer below 2⁵³ and 10^k is exact
// for k ≤ 22, so a single IEEE division rounds correctly and gives the same
// bits as strconv.ParseFloat (Clinger's fast path, which strconv itself
// tries first). Other forms go to strconv.ParseFloat on the token bytes
// viewed as a string without a copy. The tests compare both paths with
// strconv bit for bit, on random and fuzzed input.
//
// WriteLIBSVM writes the canonical form: single spaces, 1-based indices, a
// newline after each row, and numbers formatted with
// strconv.FormatFloat(v, 'g', -1, 64), the shortest text that reads back to
// the same bits. Write, read, write is therefore byte-identical, and read
// values are bit-identical.
//
// # Parallel parsing
//
// The input is cut into chunks that end after a newline: a chunk-sized
// piece is read, cut after its last newline, and the incomplete line starts
// the next chunk (a line longer than the chunk size makes its chunk grow).
// Each chunk is tokenized by hand, line by line, in an errgroup goroutine;
// SetLimit(Threads) bounds the chunks in flight and their buffers are
// recycled, so input buffering stays at one chunk per thread however large
// the file. Within a chunk, every row is a line and every entry has a
// colon, so counting the chunk's newlines and colons (vectorised
// bytes.Count) bounds its rows and entries. There are two readers, for two
// kinds of input.
//
// Files, and any reader with ReadAt and Seek (bytes.Reader, strings.Reader,
// io.SectionReader), have a known size and can be read twice. The first
// pass reads the input once, cuts the chunks and counts their newlines and
// colons; this costs about as much as a copy (≈ 13 GB/s here, next to 0.6
// GB/s for the parse), and runs on every thread: chunk k holds the lines
// that start in the k-th chunk-sized piece of the input, so each goroutine
// finds its chunks' ends on its own, by looking one byte back and reading
// on to the end of the last line. Prefix sums of the counts give
// every chunk its room in the result, which is allocated once, at its final
// size. In the second pass each goroutine reads its chunk again (ReadAt,
// concurrently) and parses it straight into its room. Lines without data
// (blank, comment-only, skipped) and colons that are not entries (qid:,
// inside comments) leave room unused at the end of their chunk's share;
// after the parse, the chunks' rows and entries are moved down in place,
// in file order, to close these gaps, which costs nothing when there are
// none. Reading a file therefore needs the result plus one chunk buffer per
// thread (peak resident memory of "adaspdc info" on a 0.56 GB url-like
// matrix: 1.02× the matrix; bench/README.md, "Memory"). Room left over stays
// allocated as capacity past the slices' ends, or, when it is more than
// the data (a file of mostly comments with colons), the data is copied out.
// A file that changes between the two passes gives an error ("the input
// changed while it was read"), never a write out of bounds. A file of
// mappedMinBytes or more is read from a read-only mapping instead of by
// pread, so that the passes' copies out of the page cache are the
// process's and not the kernel's; on Linux the pages are unmapped as soon
// as they are copied, which keeps the resident memory as above, and a
// file cut shorter while it is mapped gives an error, not a SIGBUS.
//
// Pipes and other readers that can be read only once are streamed: the
// calling goroutine reads the chunks, each goroutine counts its chunk and
// parses it into arrays of its own, and when all chunks are done their
// arrays are copied into the result concurrently, so that the peak is about
// twice the result.
//
// The chunk size is a quarter of the input size per thread, clamped to
// [64 KiB, 1 MiB] when the size is known, so that even a 2 MB file is
// split among the threads, and 1 MiB otherwise.
//
// # Long lines
//
// A line longer than a chunk makes the reader read on, in pieces, to find
// its end: the sized reader's first pass to end the chunk where the line
// starts, the streaming reader to grow its buffer. Before each piece both
// judge what they have of the line, so that neither buffers much of a line
// it will refuse: once the line's first token has ended, a bad label
// refuses the line (a binary or compressed file thus fails at its first
// blank), and once more than MaxLineBytes have come without a newline, the
// line is too long. A line too long is judged by its label if the label
// ends within the bound, so the verdict does not depend on chunk sizes. The
// refusal takes the line's place among the errors (an earlier malformed
// line is still the one reported) and SkipInvalid skips it like any other,
// without holding more than a chunk of it: the sized reader's chunks that
// lie inside it find no newline and are dropped, the streaming reader reads
// it through its buffer.
//
// Errors are reported in file order, not in the order goroutines hit them:
// each chunk records its first error with a chunk-local line number, and
// after all chunks finish the earliest failing chunk wins, its line number
// offset by the lines of the chunks before it. Once chunk k is known to
// fail, chunks after k are not parsed (nor, when streaming, read), since
// they cannot change the outcome. The result, error included, is therefore
// the same for any Threads, chunk size and reader; the tests check this with
// chunks of a few bytes, and the fuzz target does on arbitrary input.
//
// # The binary cache
//
// WriteCache stores a dataset so that loading it costs little more than
// reading the file. All integers are little-endian. The layout, version 1:
//
//	offset  size        field
//	0       8           magic "ADASPDC\x00"
//	8       4           format version (uint32) = 1
//	12      4           flags (uint32), none defined: must be 0
//	16      8           rows R (uint64)
//	24      8           cols (uint64)
//	32      8           nnz Z (uint64)
//	40      4           CRC-32C (Castagnoli) of the payload (bytes 48…)
//	44      4           CRC-32C of bytes 0–43
//	48      8·R         labels, float64
//	48+8R   8·(R+1)     row pointers, int64
//	…       8·Z         values, float64
//	…       4·Z         column indices, int32
//
// The int32 array comes last so that every array starts 8-byte aligned
// relative to the file start. The file ends exactly after the payload.
//
// ReadFile recognises a cache by its magic (no LIBSVM line starts with
// "A"). Loading checks the version before anything else (another version is
// refused with a request to rebuild the cache), then the header checksum,
// then that the sizes the header announces are plausible and match the
// file size, all before allocating; then it reads the file in one call,
// checks the payload CRC (hash/crc32 uses the SSE4.2/ARMv8 CRC instructions
// for Castagnoli) and finally validates the decoded dataset (ascending
// in-range indices, monotone row pointers, finite values and labels, rows
// whose squared norms do not overflow, as for text), since
// a checksum only guards against accidents. Any failure, a flipped bit or a
// truncated or extended file included, returns an error and no dataset; the
// tests flip every bit of a small cache and cut it at every length. On a
// little-endian machine the arrays are views of the file buffer (no decode,
// no second copy); elsewhere they are decoded.
//
// # Performance
//
// Measured on a 2-vCPU AMD EPYC guest shared with other jobs, in a moment
// when both cores were free; medians of 8 runs of
//
//	go test -run XXX -bench 'ReadFile|Cache' -benchtime 20x -count 8 ./sparse
//
// ReadFile of LIBSVM text, and of the binary cache of the same data:
//
//	file    text, 1 thread    text, 2 threads    cache    copy of the cache bytes
//	a9a     3.6 ms            2.2 ms             0.90 ms  0.32 ms
//	w8a     5.7 ms            3.6 ms             1.35 ms  0.49 ms
//	news20  11.5 ms           6.8 ms             2.46 ms  0.96 ms
//
// One thread parses 580–750 MiB/s, 7–9× the speed of a plain
// strings/strconv reader. Whole-process, "adaspdc info -data FILE" takes
// 6.0 ms on a9a and 8.2 ms on w8a, against 32.5 ms and 79.5 ms for
// "liblinear-train -e 10 FILE" and 26.1 ms and 38.2 ms for
// liblinear-predict (hyperfine, bench/load/compare.sh). See bench/README.md
// ("Loading") for the spreads, the method and the caveats.
//
// Those figures are from the streaming reader that files went through
// before the sized one. Measured A/B on a loaded host (so only the ratios
// count), the sized reader takes 0.6–0.8× the elapsed and CPU time of a
// ReadFile of a9a, w8a and news20, allocates half as much, and peaks at
// 1.02× the matrix in "adaspdc info" on a 555 MB url-like one, against
// 2.05× before (bench/README.md, "Memory").
package sparse
