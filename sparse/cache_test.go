package sparse

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// smallDataset is a few rows of heart_scale with an empty row, −0 and a
// denormal mixed in.
func smallDataset(t testing.TB) *Dataset {
	t.Helper()
	input := "+1 1:0.708333 2:1 3:1 4:-0.320755 13:-1\n-1 \n-1 2:-0 5:4.9e-324 13:1e150\n+1 1:0.166667 12:-1\n"
	d, err := readString(input, ReadOptions{NumFeatures: 14})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func encodeCache(t testing.TB, d *Dataset) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteCache(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCacheRoundTrip(t *testing.T) {
	d := smallDataset(t)
	enc := encodeCache(t, d)
	if want := cacheHeaderSize + 8*4 + 8*5 + 12*d.X.NNZ(); int64(len(enc)) != want {
		t.Errorf("cache is %d bytes, want %d", len(enc), want)
	}
	got, err := ReadCache(bytes.NewReader(enc), "small")
	if err != nil {
		t.Fatal(err)
	}
	assertSameDataset(t, got, d)
	if got.Name != "small" {
		t.Errorf("Name = %q", got.Name)
	}
	// Short reads must not matter.
	got, err = ReadCache(iotest.HalfReader(bytes.NewReader(enc)), "small")
	if err != nil {
		t.Fatal(err)
	}
	assertSameDataset(t, got, d)

	// ReadFile recognises the cache by its magic.
	path := filepath.Join(t.TempDir(), "small.cache")
	if err := os.WriteFile(path, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertSameDataset(t, got, d)
	if got.Name != "small.cache" {
		t.Errorf("Name = %q, want the base name", got.Name)
	}
	// The loaded arrays are independent: appending must not clobber others.
	got.Y = append(got.Y, 42)
	got.X.Indptr = append(got.X.Indptr, 42)
	if got.X.Indptr[0] != 0 || got.X.Values[0] != d.X.Values[0] {
		t.Error("appending to a loaded array changed another")
	}
}

func TestCacheEmptyMatrix(t *testing.T) {
	d := &Dataset{Name: "empty", X: &CSR{Rows: 0, Cols: 3, Indptr: []int64{0}}, Y: nil}
	got, err := ReadCache(bytes.NewReader(encodeCache(t, d)), "empty")
	if err != nil {
		t.Fatal(err)
	}
	if got.X.Rows != 0 || got.X.Cols != 3 || len(got.Y) != 0 || got.X.Validate() != nil {
		t.Errorf("got %+v", got.X)
	}
}

func TestCacheNumFeatures(t *testing.T) {
	d := smallDataset(t)
	path := filepath.Join(t.TempDir(), "c")
	if err := os.WriteFile(path, encodeCache(t, d), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path, ReadOptions{NumFeatures: 20})
	if err != nil || got.X.Cols != 20 || got.X.Validate() != nil {
		t.Fatalf("widening: %v, %v", got, err)
	}
	got, err = ReadFile(path, ReadOptions{NumFeatures: 13})
	if err != nil || got.X.Cols != 13 {
		t.Fatalf("narrowing to the largest index: %v, %v", got, err)
	}
	if _, err := ReadFile(path, ReadOptions{NumFeatures: 12}); err == nil || !strings.Contains(err.Error(), "index 13 exceeds NumFeatures=12") {
		t.Errorf("narrowing below the largest index: got %v", err)
	}
}

// TestCacheDetectsEveryFlippedByte flips each byte of a cache in turn, in
// every bit, and checks that both readers refuse every result.
func TestCacheDetectsEveryFlippedByte(t *testing.T) {
	enc := encodeCache(t, smallDataset(t))
	dir := t.TempDir()
	path := filepath.Join(dir, "flipped")
	for k := range enc {
		for bit := range 8 {
			bad := bytes.Clone(enc)
			bad[k] ^= 1 << bit
			if d, err := ReadCache(bytes.NewReader(bad), "flipped"); err == nil {
				t.Fatalf("byte %d bit %d flipped: ReadCache accepted it (%d rows)", k, bit, d.X.Rows)
			}
			if k < len(cacheMagic) {
				continue // no longer a cache: ReadFile would try the text reader
			}
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFile(path, ReadOptions{}); err == nil {
				t.Fatalf("byte %d bit %d flipped: ReadFile accepted it", k, bit)
			}
		}
	}
}

func TestCacheRefusesTruncatedAndExtended(t *testing.T) {
	enc := encodeCache(t, smallDataset(t))
	path := filepath.Join(t.TempDir(), "cut")
	for n := range len(enc) {
		if _, err := ReadCache(bytes.NewReader(enc[:n]), "cut"); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("cut to %d bytes: got %v, want a truncation error", n, err)
		}
		if n < len(cacheMagic) {
			continue
		}
		if err := os.WriteFile(path, enc[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path, ReadOptions{}); err == nil {
			t.Fatalf("cut to %d bytes: ReadFile accepted it", n)
		}
	}
	long := append(bytes.Clone(enc), 0)
	if _, err := ReadCache(bytes.NewReader(long), "long"); err == nil || !strings.Contains(err.Error(), "bytes after") {
		t.Errorf("trailing byte: got %v", err)
	}
	if err := os.WriteFile(path, long, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path, ReadOptions{}); err == nil {
		t.Error("trailing byte: ReadFile accepted it")
	}
}

// resealHeader recomputes the header checksum after a deliberate edit, so
// that the test reaches the check behind it.
func resealHeader(b []byte) {
	binary.LittleEndian.PutUint32(b[44:], crc32.Checksum(b[:44], castagnoli()))
}

func TestCacheRefusesOtherVersionsAndFlags(t *testing.T) {
	enc := encodeCache(t, smallDataset(t))
	stale := bytes.Clone(enc)
	binary.LittleEndian.PutUint32(stale[8:], cacheVersion+1)
	resealHeader(stale)
	if _, err := ReadCache(bytes.NewReader(stale), "stale"); err == nil || !strings.Contains(err.Error(), "version 2, this program reads version 1") {
		t.Errorf("other version: got %v", err)
	}
	flagged := bytes.Clone(enc)
	binary.LittleEndian.PutUint32(flagged[12:], 1)
	resealHeader(flagged)
	if _, err := ReadCache(bytes.NewReader(flagged), "flagged"); err == nil || !strings.Contains(err.Error(), "unknown flags") {
		t.Errorf("unknown flag: got %v", err)
	}
}

// TestCacheRefusesLyingHeaders checks headers whose checksums are right but
// whose sizes are impossible or do not match the payload: they must fail
// before any large allocation.
func TestCacheRefusesLyingHeaders(t *testing.T) {
	enc := encodeCache(t, smallDataset(t))
	for _, tc := range []struct {
		name     string
		off      int
		value    uint64
		contains string
	}{
		{"huge rows", 16, 1 << 50, "impossible shape"},
		{"huge nnz", 32, 1 << 39, "truncated"},
		{"huge cols", 24, 1 << 40, "impossible shape"},
		{"one more row", 16, 5, "truncated"},
	} {
		bad := bytes.Clone(enc)
		binary.LittleEndian.PutUint64(bad[tc.off:], tc.value)
		resealHeader(bad)
		if _, err := ReadCache(bytes.NewReader(bad), "lying"); err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.contains)
		}
	}
}

// TestCacheRefusesInvalidContent writes caches whose checksums are right but
// whose content is not a valid dataset, as a hand-made file could be.
func TestCacheRefusesInvalidContent(t *testing.T) {
	d := smallDataset(t)
	for _, tc := range []struct {
		name  string
		spoil func(*Dataset)
	}{
		{"column out of range", func(d *Dataset) { d.X.Indices[0] = 99 }},
		{"unsorted columns", func(d *Dataset) { d.X.Indices[0], d.X.Indices[1] = d.X.Indices[1], d.X.Indices[0] }},
		{"decreasing row pointer", func(d *Dataset) { d.X.Indptr[2] = 0 }},
		{"row pointer past nnz", func(d *Dataset) { d.X.Indptr[1] = 1 << 40 }},
		// Row 2 starts the second half that a goroutine validates alone.
		{"negative row pointer mid-matrix", func(d *Dataset) { d.X.Indptr[2] = -1 }},
		{"NaN value", func(d *Dataset) { d.X.Values[1] = math.NaN() }},
		{"infinite label", func(d *Dataset) { d.Y[0] = math.Inf(-1) }},
	} {
		bad := &Dataset{X: d.X.Clone(), Y: append([]float64(nil), d.Y...)}
		tc.spoil(bad)
		var b bytes.Buffer
		// WriteCache refuses such a dataset, so the file is forged from
		// its parts.
		if err := WriteCache(&b, bad); err == nil {
			t.Errorf("%s: WriteCache accepted it", tc.name)
		}
		forged := forgeCache(bad)
		if _, err := ReadCache(bytes.NewReader(forged), "forged"); err == nil || !strings.Contains(err.Error(), "invalid dataset") {
			t.Errorf("%s: got %v, want an invalid-dataset error", tc.name, err)
		}
	}
}

// forgeCache encodes d without WriteCache's checks.
func forgeCache(d *Dataset) []byte {
	m := d.X
	var payload []byte
	for _, a := range [][]byte{encodeLE(d.Y), encodeLE(m.Indptr), encodeLE(m.Values), encodeLE(m.Indices)} {
		payload = append(payload, a...)
	}
	h := cacheHeader{rows: uint64(m.Rows), cols: uint64(m.Cols), nnz: uint64(len(m.Indices)), payloadCRC: crc32.Checksum(payload, castagnoli())}
	return append(h.encode(), payload...)
}

// TestPortableEncodingMatchesNative checks that the encode/decode loops used
// on big-endian machines produce exactly the bytes of the native views used
// on little-endian ones (this machine), so both write the same files.
func TestPortableEncodingMatchesNative(t *testing.T) {
	if !littleEndian {
		t.Skip("the native views are only used on little-endian machines")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	f := make([]float64, 100)
	i64 := make([]int64, 100)
	i32 := make([]int32, 100)
	for k := range f {
		f[k] = rng.NormFloat64()
		i64[k] = rng.Int64() - math.MaxInt64/2
		i32[k] = rng.Int32() - math.MaxInt32/2
	}
	if !bytes.Equal(asBytes(f), encodeLE(f)) || !bytes.Equal(asBytes(i64), encodeLE(i64)) || !bytes.Equal(asBytes(i32), encodeLE(i32)) {
		t.Fatal("encodeLE differs from the native bytes")
	}
	if !reflect.DeepEqual(decodeLE[float64](encodeLE(f)), f) || !reflect.DeepEqual(decodeLE[int64](encodeLE(i64)), i64) ||
		!reflect.DeepEqual(decodeLE[int32](encodeLE(i32)), i32) {
		t.Fatal("decodeLE does not invert encodeLE")
	}
	// A misaligned buffer must be decoded, not viewed.
	buf := make([]byte, 8*len(f)+1)
	copy(buf[1:], encodeLE(f))
	if !reflect.DeepEqual(fromBytes[float64](buf[1:]), f) {
		t.Fatal("misaligned fromBytes differs")
	}
}

// FuzzReadCache feeds ReadCache caches whose header and checksums are right
// but whose arrays are arbitrary bytes, the case a checksum cannot catch: it
// must never panic, and whatever it accepts must be a valid dataset.
func FuzzReadCache(f *testing.F) {
	d := smallDataset(f)
	var b bytes.Buffer
	if err := WriteCache(&b, d); err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(d.X.Rows), uint8(d.X.NNZ()), uint8(d.X.Cols), b.Bytes()[cacheHeaderSize:])
	f.Add(uint8(0), uint8(0), uint8(0), make([]byte, 8))
	f.Fuzz(func(t *testing.T, rows, nnz, cols uint8, payload []byte) {
		h := cacheHeader{rows: uint64(rows), cols: uint64(cols), nnz: uint64(nnz)}
		// Pad or cut the bytes to the announced size, then seal them.
		payload = append(payload, make([]byte, max(0, int(h.payloadSize())-len(payload)))...)[:h.payloadSize()]
		h.payloadCRC = crc32.Checksum(payload, castagnoli())
		got, err := ReadCache(bytes.NewReader(append(h.encode(), payload...)), "fuzz")
		if err != nil {
			return
		}
		if err := got.check(); err != nil {
			t.Fatalf("accepted an invalid dataset: %v", err)
		}
	})
}
