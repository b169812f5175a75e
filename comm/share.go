package comm

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// SharePath returns the file that rank reads for the data path or pattern
// given on the command line. A pattern with %d names one file per rank:
// every %d is replaced by the rank ("part-%d" gives "part-3" for rank 3),
// and split is false, since the rank reads that file whole. Any other path
// is one file that the ranks share: it is returned unchanged with split
// true, and each rank reads the byte range that ShareRange gives it.
func SharePath(pattern string, rank int) (path string, split bool) {
	if strings.Contains(pattern, "%d") {
		return strings.ReplaceAll(pattern, "%d", strconv.Itoa(rank)), false
	}
	return pattern, true
}

// ShareRange returns rank's share of a text file split among size ranks:
// the bytes [start, end) of the file, and the 1-based number of the line
// that begins at start.
//
// The file is cut into size contiguous ranges of about equal length, each
// cut moved forward to just after the next newline, so that every line
// (the last one may lack its newline) lies whole in exactly one range.
// Rank 0's range starts at 0, the last rank's ends at the file's size, and
// each range ends where the next begins. A range is empty (start == end)
// when a line spans its whole nominal share, as it is for some ranks when
// there are more ranks than lines; firstLine is then the number of the next
// line.
//
// firstLine comes from counting the newlines before start, so ShareRange
// reads the file from its beginning to the end of the range. A reader of the range adds firstLine−1 to the
// line numbers it reports to name the lines of the whole file.
func ShareRange(path string, rank, size int) (start, end int64, firstLine int, err error) {
	if size < 1 || rank < 0 || rank >= size {
		return 0, 0, 0, fmt.Errorf("comm: ShareRange: rank %d of %d ranks", rank, size)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, 0, 0, fmt.Errorf("comm: ShareRange: %s is not a regular file", path)
	}
	start, end, firstLine, err = shareRange(f, fi.Size(), rank, size, 1<<16)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("comm: ShareRange: %s: %w", path, err)
	}
	return start, end, firstLine, nil
}

// shareRange is ShareRange on the first n bytes of r, reading bufSize bytes
// at a time.
func shareRange(r io.ReaderAt, n int64, rank, size, bufSize int) (start, end int64, firstLine int, err error) {
	buf := make([]byte, bufSize)
	start, err = cut(r, n, rank, size, buf)
	if err != nil {
		return 0, 0, 0, err
	}
	end, err = cut(r, n, rank+1, size, buf)
	if err != nil {
		return 0, 0, 0, err
	}
	lines, err := countNewlines(r, start, buf)
	if err != nil {
		return 0, 0, 0, err
	}
	return start, end, lines + 1, nil
}

// cut returns where range k of size begins: the first line start at or
// after the nominal cut k·n/size. Range 0 begins at 0 and range size (one
// past the last) at n.
func cut(r io.ReaderAt, n int64, k, size int, buf []byte) (int64, error) {
	if k == 0 {
		return 0, nil
	}
	if k == size {
		return n, nil
	}
	// k·n/size without overflow: n < 2⁶³ and k < size.
	hi, lo := bits.Mul64(uint64(n), uint64(k))
	q, _ := bits.Div64(hi, lo, uint64(size))
	nominal := int64(q)
	if nominal == 0 {
		return 0, nil
	}
	// A line starts at nominal if the byte before it is a newline: look for
	// the first newline at or after nominal−1.
	for off := nominal - 1; off < n; {
		m := int(min(int64(len(buf)), n-off))
		got, err := r.ReadAt(buf[:m], off)
		if got < m {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(m)
	}
	return n, nil
}

// countNewlines returns the number of newlines in the first n bytes of r.
func countNewlines(r io.ReaderAt, n int64, buf []byte) (int, error) {
	count := 0
	for off := int64(0); off < n; {
		m := int(min(int64(len(buf)), n-off))
		got, err := r.ReadAt(buf[:m], off)
		if got < m {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		count += bytes.Count(buf[:m], []byte{'\n'})
		off += int64(m)
	}
	return count, nil
}
