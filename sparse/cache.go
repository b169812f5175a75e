package sparse

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"sync"
	"unsafe"
)

// The cache layout is documented in doc.go; these constants are its source
// of truth.
const (
	cacheVersion    = 1
	cacheHeaderSize = 48
	// cacheMaxCount bounds rows and nnz in a header so that the payload
	// size computed from them cannot overflow; 2⁴⁰ is far beyond memory.
	cacheMaxCount = 1 << 40
)

var (
	cacheMagic = [8]byte{'A', 'D', 'A', 'S', 'P', 'D', 'C', 0}
	// castagnoli is made on first use, not at start-up: making it took
	// 0.3 ms of every process's initialisation (GODEBUG=inittrace=1),
	// and most processes never touch a cache.
	castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })
	// littleEndian reports whether the machine stores numbers the way the
	// cache does, so that arrays can be written and read without encoding.
	littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
)

// cacheHeader is the decoded fixed-size header.
type cacheHeader struct {
	rows, cols, nnz uint64
	payloadCRC      uint32
}

func (h cacheHeader) payloadSize() int64 {
	return int64(h.rows)*8 + int64(h.rows+1)*8 + int64(h.nnz)*12
}

func (h cacheHeader) encode() []byte {
	b := make([]byte, cacheHeaderSize)
	copy(b, cacheMagic[:])
	binary.LittleEndian.PutUint32(b[8:], cacheVersion)
	binary.LittleEndian.PutUint32(b[12:], 0) // flags: none defined in version 1
	binary.LittleEndian.PutUint64(b[16:], h.rows)
	binary.LittleEndian.PutUint64(b[24:], h.cols)
	binary.LittleEndian.PutUint64(b[32:], h.nnz)
	binary.LittleEndian.PutUint32(b[40:], h.payloadCRC)
	binary.LittleEndian.PutUint32(b[44:], crc32.Checksum(b[:44], castagnoli()))
	return b
}

// compressedCache returns the error for a cache whose first bytes, head,
// are a compression's magic number (a compressed cache, for which "bad
// magic" would be a riddle), or nil.
func compressedCache(head []byte, name string) error {
	if format, tool := compressed(head); format != "" {
		return fmt.Errorf("%s is compressed (%s): decompress it first (%s)", name, format, tool)
	}
	return nil
}

// decodeCacheHeader checks everything the header alone can tell, so that
// nothing is allocated on the word of a corrupt or foreign header.
func decodeCacheHeader(b []byte, name string) (cacheHeader, error) {
	var h cacheHeader
	if len(b) < cacheHeaderSize {
		return h, fmt.Errorf("%s: cache truncated: %d-byte header, want %d", name, len(b), cacheHeaderSize)
	}
	if !bytes.Equal(b[:8], cacheMagic[:]) {
		if err := compressedCache(b, name); err != nil {
			return h, err
		}
		return h, fmt.Errorf("%s: not an adaspdc cache (bad magic)", name)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != cacheVersion {
		return h, fmt.Errorf("%s: cache format version %d, this program reads version %d: rebuild the cache from the text file", name, v, cacheVersion)
	}
	if got, want := crc32.Checksum(b[:44], castagnoli()), binary.LittleEndian.Uint32(b[44:]); got != want {
		return h, fmt.Errorf("%s: cache header corrupt (checksum %08x, stored %08x)", name, got, want)
	}
	if f := binary.LittleEndian.Uint32(b[12:]); f != 0 {
		return h, fmt.Errorf("%s: cache has unknown flags %#x", name, f)
	}
	h.rows = binary.LittleEndian.Uint64(b[16:])
	h.cols = binary.LittleEndian.Uint64(b[24:])
	h.nnz = binary.LittleEndian.Uint64(b[32:])
	h.payloadCRC = binary.LittleEndian.Uint32(b[40:])
	if h.rows >= cacheMaxCount || h.nnz >= cacheMaxCount || h.cols > maxIndex+1 {
		return h, fmt.Errorf("%s: cache header claims an impossible shape %d×%d with %d nonzeros", name, h.rows, h.cols, h.nnz)
	}
	if int64(h.payloadSize()) > math.MaxInt-cacheHeaderSize {
		return h, fmt.Errorf("%s: cache payload of %d bytes does not fit in memory", name, h.payloadSize())
	}
	return h, nil
}

// WriteCache writes d in the binary cache format (see the package
// documentation): a versioned, checksummed header followed by the label,
// row-pointer, value and column arrays in little-endian order. ReadCache and
// ReadFile load it back bit for bit. The dataset's Name is not stored. It
// returns an error, before writing anything, if d is not a valid dataset.
func WriteCache(w io.Writer, d *Dataset) error {
	if err := d.check(); err != nil {
		return err
	}
	m := d.X
	arrays := [][]byte{
		asBytes(d.Y), asBytes(m.Indptr), asBytes(m.Values), asBytes(m.Indices),
	}
	var crc uint32
	for _, a := range arrays {
		crc = crc32.Update(crc, castagnoli(), a)
	}
	h := cacheHeader{rows: uint64(m.Rows), cols: uint64(m.Cols), nnz: uint64(m.NNZ()), payloadCRC: crc}
	if _, err := w.Write(h.encode()); err != nil {
		return err
	}
	for _, a := range arrays {
		if _, err := w.Write(a); err != nil {
			return err
		}
	}
	return nil
}

// ReadCache reads a cache written by WriteCache from r, which must end where
// the cache ends. Name is used in errors and as the dataset's Name. A cache
// that is truncated, has trailing bytes, fails its checksums, has another
// format version or decodes to an invalid matrix is refused with an error;
// no partially read dataset is ever returned.
//
// Memory is allocated as the payload arrives, not as the header announces, so
// a lying header on a short stream fails without a huge allocation.
func ReadCache(r io.Reader, name string) (*Dataset, error) {
	head := make([]byte, cacheHeaderSize)
	if n, err := io.ReadFull(r, head); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if err := compressedCache(head[:n], name); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s: cache truncated: %d-byte header, want %d", name, n, cacheHeaderSize)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h, err := decodeCacheHeader(head, name)
	if err != nil {
		return nil, err
	}
	size := cacheHeaderSize + int(h.payloadSize())
	const step = 16 << 20
	buf := make([]byte, cacheHeaderSize, min(size, cacheHeaderSize+step))
	copy(buf, head)
	var crc uint32
	for len(buf) < size {
		if len(buf) == cap(buf) {
			// Double, but never past the announced size.
			buf = slices.Grow(buf, min(size-len(buf), len(buf)))
		}
		n, err := io.ReadFull(r, buf[len(buf):min(cap(buf), size)])
		crc = crc32.Update(crc, castagnoli(), buf[len(buf):len(buf)+n])
		buf = buf[:len(buf)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%s: cache truncated: %d payload bytes, header announces %d", name, len(buf)-cacheHeaderSize, h.payloadSize())
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if n, _ := io.ReadFull(r, make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("%s: cache has bytes after the %d-byte payload", name, h.payloadSize())
	}
	return decodeCache(buf, h, crc, name)
}

// readCacheFile loads a cache from f, whose first len(cacheMagic) bytes have
// been consumed, in one read of exactly the file's size.
func readCacheFile(f *os.File, name string) (*Dataset, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		// Not a plain file: fall back to the streaming reader.
		return ReadCache(io.MultiReader(bytes.NewReader(cacheMagic[:]), f), name)
	}
	size := fi.Size()
	if size < cacheHeaderSize {
		return nil, fmt.Errorf("%s: cache truncated: %d bytes, the header alone is %d", name, size, cacheHeaderSize)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%s: cache of %d bytes does not fit in memory", name, size)
	}
	head := make([]byte, cacheHeaderSize)
	copy(head, cacheMagic[:])
	if _, err := io.ReadFull(f, head[len(cacheMagic):]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h, err := decodeCacheHeader(head, name)
	if err != nil {
		return nil, err
	}
	if want := cacheHeaderSize + h.payloadSize(); size != want {
		return nil, fmt.Errorf("%s: cache is %d bytes, header announces %d", name, size, want)
	}
	buf := make([]byte, size)
	copy(buf, head)
	if _, err := io.ReadFull(f, buf[cacheHeaderSize:]); err != nil {
		return nil, fmt.Errorf("%s: cache shorter than its size: %w", name, err)
	}
	crc := crc32.Checksum(buf[cacheHeaderSize:], castagnoli())
	if n, _ := io.ReadFull(f, make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("%s: cache grew while being read", name)
	}
	return decodeCache(buf, h, crc, name)
}

// decodeCache checks the payload checksum crc, computed by the caller, and
// the decoded matrix, and returns the dataset. On a little-endian machine
// the arrays alias buf, which must not be used afterwards; elsewhere they
// are decoded into fresh slices.
func decodeCache(buf []byte, h cacheHeader, crc uint32, name string) (*Dataset, error) {
	if crc != h.payloadCRC {
		return nil, fmt.Errorf("%s: cache payload corrupt (checksum %08x, stored %08x)", name, crc, h.payloadCRC)
	}
	payload := buf[cacheHeaderSize:]
	rows, nnz := int(h.rows), int(h.nnz)
	yBytes, rest := payload[:rows*8], payload[rows*8:]
	ptrBytes, rest := rest[:(rows+1)*8], rest[(rows+1)*8:]
	valBytes, idxBytes := rest[:nnz*8], rest[nnz*8:]
	m := &CSR{
		Rows:    rows,
		Cols:    int(h.cols),
		Indptr:  fromBytes[int64](ptrBytes),
		Values:  fromBytes[float64](valBytes),
		Indices: fromBytes[int32](idxBytes),
	}
	d := &Dataset{Name: name, X: m, Y: fromBytes[float64](yBytes)}
	// The checksum only guards against accidents; a well-formed file can
	// still hold a matrix that would make the solvers index out of range,
	// so the dataset is validated too. The passes only read, so they are
	// split between two goroutines: the rows' structure in two halves, the
	// finiteness check (about half the cost of a structural half) with
	// the second.
	if err := m.validateShape(); err != nil {
		return nil, fmt.Errorf("%s: cache holds an invalid dataset: %w", name, err)
	}
	half := rows / 2
	var secondHalf, finite error
	suspect := -1 // the first value that is not finite or beyond hugeValue
	var wg sync.WaitGroup
	wg.Go(func() {
		secondHalf = m.validateRows(half, rows)
		if k := firstNonFinite(d.Y); k >= 0 {
			finite = fmt.Errorf("label of row %d is %v", k, d.Y[k])
		} else {
			suspect = firstBeyond(m.Values, hugeValue)
		}
	})
	firstHalf := m.validateRows(0, half)
	wg.Wait()
	err := cmp.Or(firstHalf, secondHalf, finite)
	if err == nil && suspect >= 0 {
		err = m.checkValuesFrom(suspect)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cache holds an invalid dataset: %w", name, err)
	}
	return d, nil
}

// firstBeyond returns the index of the first value of s that is not finite
// or exceeds bound in magnitude, or −1: one comparison per value, as cheap
// as a test for finiteness alone.
func firstBeyond(s []float64, bound float64) int {
	for k, v := range s {
		if !(math.Abs(v) <= bound) {
			return k
		}
	}
	return -1
}

// checkValuesFrom checks the values of a valid matrix from entry k, the
// first that firstBeyond flagged, on: that they are finite, and that no
// row's squared norm overflows, the rule ReadLIBSVM applies to text, since
// the solvers square the rows. Only the rows with a value beyond hugeValue
// are summed.
func (m *CSR) checkValuesFrom(k int) error {
	if j := firstNonFinite(m.Values[k:]); j >= 0 {
		return fmt.Errorf("stored value %d is %v", k+j, m.Values[k+j])
	}
	first := sort.Search(m.Rows, func(i int) bool { return m.Indptr[i+1] > int64(k) })
	for i := first; i < m.Rows; i++ {
		val, _ := m.Row(i)
		if firstBeyond(val, hugeValue) < 0 {
			continue
		}
		if j := overflowingEntry(val); j >= 0 {
			return fmt.Errorf("the squared norm of row %d overflows float64 (values up to %g in magnitude): scale the features", i, math.Abs(val[j]))
		}
	}
	return nil
}

// applyNumFeatures widens the matrix to numFeatures columns, or fails if a
// stored column index does not fit; 0 keeps the matrix as it is.
func (m *CSR) applyNumFeatures(numFeatures int, name string) error {
	if numFeatures == 0 || numFeatures == m.Cols {
		return nil
	}
	if numFeatures < 0 || numFeatures > maxIndex {
		return fmt.Errorf("%s: NumFeatures %d out of range [0, %d]", name, numFeatures, maxIndex)
	}
	if numFeatures < m.Cols {
		for _, j := range m.Indices {
			if int(j) >= numFeatures {
				return fmt.Errorf("%s: index %d exceeds NumFeatures=%d", name, j+1, numFeatures)
			}
		}
	}
	m.Cols = numFeatures
	return nil
}

// number is the element type of a cache array.
type number interface{ int32 | int64 | float64 }

// asBytes returns the little-endian bytes of s: a view of s itself on a
// little-endian machine, an encoded copy elsewhere.
func asBytes[T number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
	}
	return encodeLE(s)
}

// fromBytes returns the elements stored little-endian in b: a view of b
// itself on a little-endian machine when b is suitably aligned, a decoded
// copy otherwise.
func fromBytes[T number](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if n == 0 {
		return []T{}
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	return decodeLE[T](b)
}

// encodeLE and decodeLE are the portable forms of asBytes and fromBytes.
func encodeLE[T number](s []T) []byte {
	var zero T
	switch any(zero).(type) {
	case int32:
		b := make([]byte, 4*len(s))
		for k, v := range s {
			binary.LittleEndian.PutUint32(b[4*k:], uint32(v))
		}
		return b
	case int64:
		b := make([]byte, 8*len(s))
		for k, v := range s {
			binary.LittleEndian.PutUint64(b[8*k:], uint64(v))
		}
		return b
	default:
		b := make([]byte, 8*len(s))
		for k, v := range s {
			binary.LittleEndian.PutUint64(b[8*k:], math.Float64bits(float64(v)))
		}
		return b
	}
}

func decodeLE[T number](b []byte) []T {
	var zero T
	switch any(zero).(type) {
	case int32:
		s := make([]T, len(b)/4)
		for k := range s {
			s[k] = T(int32(binary.LittleEndian.Uint32(b[4*k:])))
		}
		return s
	case int64:
		s := make([]T, len(b)/8)
		for k := range s {
			s[k] = T(int64(binary.LittleEndian.Uint64(b[8*k:])))
		}
		return s
	default:
		s := make([]T, len(b)/8)
		for k := range s {
			s[k] = T(math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:])))
		}
		return s
	}
}
