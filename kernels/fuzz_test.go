package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The fuzz tests run every supported implementation on the same input and
// require them to agree with each other and with the naive definitions: on
// the result within tol, or on the exact panic message for bad input.

// fuzzSparse decodes a fuzz input into a sparse row over dim columns. Each
// entry takes four bytes: a 16-bit index, a value byte and a flag byte.
// Flags below 240 fold the index into [0, dim); the others keep it raw,
// minus 8, so that some indices are negative or past the end.
func fuzzSparse(dim int, entries []byte) (val []float64, idx []int32) {
	for ; len(entries) >= 4; entries = entries[4:] {
		j := int32(binary.LittleEndian.Uint16(entries))
		if entries[3] < 240 {
			j %= int32(dim)
		} else {
			j -= 8
		}
		idx = append(idx, j)
		val = append(val, float64(int8(entries[2]))/8)
	}
	return val, idx
}

// outcome is what one call did: its result, y afterwards, or its panic.
type outcome struct {
	sum   float64
	y     []float64
	panic string
}

// wantPanic returns the panic message expected for idx over n columns, or
// "" if every index is in range.
func wantPanic(idx []int32, n int) string {
	for k, j := range idx {
		if j < 0 || int(j) >= n {
			return fmt.Sprintf("kernels: idx[%d] = %d out of range [0, %d)", k, j, n)
		}
	}
	return ""
}

func capture(f func() (float64, []float64)) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o.panic = fmt.Sprint(r)
		}
	}()
	o.sum, o.y = f()
	return o
}

// agree checks that the outcomes of all implementations match the
// reference: the same panic, or a result and y within tol·mag.
func agree(t *testing.T, kernel string, ref outcome, mag float64, magY []float64, got map[string]outcome) {
	t.Helper()
	for name, o := range got {
		if o.panic != ref.panic {
			t.Fatalf("%s/%s: panic %q, want %q", kernel, name, o.panic, ref.panic)
		}
		if ref.panic != "" {
			continue
		}
		if !near(o.sum, ref.sum, mag) {
			t.Fatalf("%s/%s: result %v, want %v", kernel, name, o.sum, ref.sum)
		}
		for i := range ref.y {
			if !near(o.y[i], ref.y[i], magY[i]) {
				t.Fatalf("%s/%s: y[%d] = %v, want %v", kernel, name, i, o.y[i], ref.y[i])
			}
		}
	}
}

func fuzzVectors(dim int, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	x, y = make([]float64, dim), make([]float64, dim)
	randFloats(rng, x)
	randFloats(rng, y)
	return x, y
}

func addSparseSeeds(f *testing.F) {
	f.Add(uint16(10), []byte{1, 0, 8, 0, 9, 0, 16, 0, 9, 0, 255, 0}, uint64(1))
	f.Add(uint16(300), []byte{10, 0, 8, 0, 11, 0, 8, 0, 12, 0, 8, 0, 13, 0, 8, 0, 44, 1, 8, 250}, uint64(2))
	f.Add(uint16(3), slices.Repeat([]byte{2, 0, 7, 0}, 19), uint64(3))
	f.Add(uint16(47), slices.Repeat([]byte{255, 255, 1, 255}, 5), uint64(4))
	f.Add(uint16(0), []byte{}, uint64(5))
}

func FuzzSparseDot(f *testing.F) {
	addSparseSeeds(f)
	f.Fuzz(func(t *testing.T, dim uint16, entries []byte, seed uint64) {
		d := int(dim%2048) + 1
		val, idx := fuzzSparse(d, entries)
		x, _ := fuzzVectors(d, seed)
		ref := outcome{panic: wantPanic(idx, d)}
		var mag float64
		if ref.panic == "" {
			ref.sum, mag = sparseDotNaive(val, idx, x)
		}
		got := map[string]outcome{}
		for _, im := range supportedImpls() {
			got[im.name] = capture(func() (float64, []float64) { return im.sparseDot(val, idx, x), nil })
		}
		agree(t, "sparseDot", ref, mag, nil, got)
	})
}

func FuzzSparseAxpy(f *testing.F) {
	addSparseSeeds(f)
	f.Fuzz(func(t *testing.T, dim uint16, entries []byte, seed uint64) {
		d := int(dim%2048) + 1
		val, idx := fuzzSparse(d, entries)
		_, y0 := fuzzVectors(d, seed)
		alpha := float64(int8(seed>>8)) / 16
		ref := outcome{panic: wantPanic(idx, d)}
		var magY []float64
		if ref.panic == "" {
			ref.y = slices.Clone(y0)
			magY = sparseAxpyNaive(alpha, val, idx, ref.y)
		}
		got := map[string]outcome{}
		for _, im := range supportedImpls() {
			got[im.name] = capture(func() (float64, []float64) {
				y := slices.Clone(y0)
				im.sparseAxpy(alpha, val, idx, y)
				return 0, y
			})
		}
		agree(t, "sparseAxpy", ref, 0, magY, got)
	})
}

func FuzzSparseDotAxpy(f *testing.F) {
	addSparseSeeds(f)
	f.Fuzz(func(t *testing.T, dim uint16, entries []byte, seed uint64) {
		d := int(dim%2048) + 1
		val, idx := fuzzSparse(d, entries)
		x, y0 := fuzzVectors(d, seed)
		// Some inputs shorten y, so that it, not x, bounds the indices.
		y0 = y0[:d-int(seed%3)%d]
		n := min(len(x), len(y0))
		alpha := float64(int8(seed>>8)) / 16
		ref := outcome{panic: wantPanic(idx, n)}
		var mag float64
		var magY []float64
		if ref.panic == "" {
			ref.sum, mag = sparseDotNaive(val, idx, x)
			ref.y = slices.Clone(y0)
			magY = sparseAxpyNaive(alpha, val, idx, ref.y)
		}
		got := map[string]outcome{}
		for _, im := range supportedImpls() {
			got[im.name] = capture(func() (float64, []float64) {
				y := slices.Clone(y0)
				return im.sparseDotAxpy(alpha, val, idx, x, y), y
			})
		}
		agree(t, "sparseDotAxpy", ref, mag, magY, got)
	})
}

// FuzzDense checks Dot and Axpy at any length and starting offset.
func FuzzDense(f *testing.F) {
	f.Add(uint16(0), uint8(0), uint64(1))
	f.Add(uint16(37), uint8(3), uint64(2))
	f.Add(uint16(1000), uint8(7), uint64(3))
	f.Fuzz(func(t *testing.T, n uint16, off uint8, seed uint64) {
		length, o := int(n%4096), int(off%8)
		xb, yb := fuzzVectors(length+o, seed)
		x, y0 := xb[o:], yb[o:]
		alpha := float64(int8(seed>>8)) / 16
		var ref outcome
		var mag float64
		ref.sum, mag = dotNaive(x, y0)
		ref.y = slices.Clone(y0)
		magY := make([]float64, length)
		for i := range ref.y {
			ref.y[i] += alpha * x[i]
			magY[i] = math.Abs(y0[i]) + math.Abs(alpha*x[i])
		}
		got := map[string]outcome{}
		for _, im := range supportedImpls() {
			got[im.name] = capture(func() (float64, []float64) {
				y := slices.Clone(y0)
				im.axpy(alpha, x, y)
				return im.dot(x, y0), y
			})
		}
		agree(t, "dot+axpy", ref, mag, magY, got)
	})
}

// FuzzSparseLanes runs the lanes kernels of every implementation on the
// same rows, at a lane count taken from the seed: they must give the pure-Go
// twin's bits, or its panic.
func FuzzSparseLanes(f *testing.F) {
	addSparseSeeds(f)
	f.Fuzz(func(t *testing.T, dim uint16, entries []byte, seed uint64) {
		w := []int{1, 2, 4, 8}[seed%4]
		d := int(dim%512) + 1
		val, idx := fuzzSparse(d, entries)
		v, o0 := fuzzVectors(d*w, seed)
		u, _ := fuzzVectors(w, seed+1)
		run := func(dot func([]float64, []int32, []float64, []float64), axpy func([]float64, []float64, []int32, []float64)) (t, o []float64, msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			t, o = make([]float64, w), slices.Clone(o0)
			dot(val, idx, v, t)
			axpy(u, val, idx, o)
			return t, o, ""
		}
		refT, refO, refPanic := run(sparseDotLanesGeneric, sparseAxpyLanesGeneric)
		if want := wantPanic(idx, d); refPanic != want {
			t.Fatalf("the twin: panic %q, want %q", refPanic, want)
		}
		for _, im := range supportedImpls() {
			gotT, gotO, msg := run(im.sparseDotLanes, im.sparseAxpyLanes)
			if msg != refPanic {
				t.Fatalf("%s, %d lanes: panic %q, the twin's %q", im.name, w, msg, refPanic)
			}
			if msg != "" {
				continue
			}
			for i := range refT {
				if math.Float64bits(gotT[i]) != math.Float64bits(refT[i]) {
					t.Fatalf("%s, %d lanes: dot lane %d is %v, the twin's %v", im.name, w, i, gotT[i], refT[i])
				}
			}
			for i := range refO {
				if math.Float64bits(gotO[i]) != math.Float64bits(refO[i]) {
					t.Fatalf("%s, %d lanes: axpy element %d is %v, the twin's %v", im.name, w, i, gotO[i], refO[i])
				}
			}
		}
	})
}
