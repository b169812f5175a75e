package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// tol is the agreement required between implementations, relative to the
// sum of the magnitudes of the terms.
const tol = 1e-12

// forEachImpl runs f as a subtest for every implementation this CPU
// supports, so that one test run covers all of them.
func forEachImpl(t *testing.T, f func(t *testing.T, im impl)) {
	for _, im := range supportedImpls() {
		t.Run(im.name, func(t *testing.T) { f(t, im) })
	}
}

// near reports whether got is within tol·mag of want.
func near(got, want, mag float64) bool {
	return math.Abs(got-want) <= tol*mag
}

func randFloats(rng *rand.Rand, s []float64) {
	for i := range s {
		s[i] = rng.NormFloat64()
	}
}

// Naive references: plain sequential loops, the definitions of the kernels.
// Every implementation, the pure-Go twin included, is compared with them;
// the tests of Dot and SparseDot also compare with the twin directly.

func dotNaive(x, y []float64) (sum, mag float64) {
	for i := range x {
		sum += x[i] * y[i]
		mag += math.Abs(x[i] * y[i])
	}
	return sum, mag
}

func sparseDotNaive(val []float64, idx []int32, x []float64) (sum, mag float64) {
	for k, j := range idx {
		sum += val[k] * x[j]
		mag += math.Abs(val[k] * x[j])
	}
	return sum, mag
}

// sparseAxpyNaive applies the update to y and returns, per element of y, the
// magnitude against which the result is compared.
func sparseAxpyNaive(alpha float64, val []float64, idx []int32, y []float64) (mag []float64) {
	mag = make([]float64, len(y))
	for i, v := range y {
		mag[i] = math.Abs(v)
	}
	for k, j := range idx {
		y[j] += alpha * val[k]
		mag[j] += math.Abs(alpha * val[k])
	}
	return mag
}

func TestSupportedImpls(t *testing.T) {
	impls := supportedImpls()
	if impls[0].name != "generic" {
		t.Errorf("first implementation is %q, want generic", impls[0].name)
	}
	var names []string
	for _, im := range impls {
		names = append(names, im.name)
	}
	t.Logf("supported: %v; in use: %s", names, Impl())
	if Impl() != impls[len(impls)-1].name && os.Getenv(envVar) == "" {
		t.Errorf("Impl() = %q, want the best supported, %q", Impl(), impls[len(impls)-1].name)
	}
}

func TestChoose(t *testing.T) {
	impls := supportedImpls()
	best := impls[len(impls)-1].name
	for _, tc := range []struct{ request, want string }{
		{"", best},
		{"generic", "generic"},
		{"no-such-kernels", best},
		{"AVX512", best},
		{best, best},
	} {
		if got := choose(tc.request, impls).name; got != tc.want {
			t.Errorf("choose(%q) = %q, want %q", tc.request, got, tc.want)
		}
	}
	for _, im := range impls {
		if got := choose(im.name, impls).name; got != im.name {
			t.Errorf("choose(%q) = %q", im.name, got)
		}
	}
	// An implementation the CPU lacks falls back to the best one it has.
	if got := choose("avx512", impls[:1]).name; got != "generic" {
		t.Errorf("choose(avx512) without AVX-512 = %q, want generic", got)
	}
}

// TestEnvOverride runs this test binary again with ADASPDC_KERNELS set, to
// check that init honours it.
func TestEnvOverride(t *testing.T) {
	if os.Getenv("KERNELS_TEST_PRINT_IMPL") == "1" {
		fmt.Printf("impl=%s\n", Impl())
		return
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	for _, im := range supportedImpls() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvOverride$")
		cmd.Env = append(os.Environ(), "KERNELS_TEST_PRINT_IMPL=1", envVar+"="+im.name)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s=%s: %v\n%s", envVar, im.name, err, out)
		}
		if want := "impl=" + im.name + "\n"; !strings.HasPrefix(string(out), want) {
			t.Errorf("%s=%s: subprocess printed %q, want prefix %q", envVar, im.name, out, want)
		}
	}
}

// TestDenseTails covers every length up to 1000 with the slices ending just
// before an inaccessible page, so that any access past the end crashes.
func TestDenseTails(t *testing.T) {
	const maxN = 1000
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(1, 2))
		xs, ys := guardedFloat64s(t, maxN), guardedFloat64s(t, maxN)
		for n := 0; n <= maxN; n++ {
			x, y := xs[maxN-n:], ys[maxN-n:]
			randFloats(rng, x)
			randFloats(rng, y)
			want, mag := dotNaive(x, y)
			twin := genericImpl.dot(x, y)
			if got := im.dot(x, y); !near(got, want, mag) || !near(got, twin, mag) {
				t.Fatalf("n=%d: dot = %v, want %v (pure-Go twin %v)", n, got, want, twin)
			}
			alpha := rng.NormFloat64()
			y0 := slices.Clone(y)
			im.axpy(alpha, x, y)
			for i := range y {
				want := y0[i] + alpha*x[i]
				if !near(y[i], want, math.Abs(y0[i])+math.Abs(alpha*x[i])) {
					t.Fatalf("n=%d: axpy y[%d] = %v, want %v", n, i, y[i], want)
				}
			}
		}
	})
}

// TestDenseOffsets starts the slices 1..7 elements into their backing arrays
// and checks that the elements around them are left alone.
func TestDenseOffsets(t *testing.T) {
	const sentinel = -12345.0
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(3, 4))
		for n := 0; n <= 260; n++ {
			for off := 1; off <= 7; off++ {
				xb := make([]float64, n+off+8)
				yb := make([]float64, n+off+8)
				for i := range yb {
					yb[i] = sentinel
				}
				x, y := xb[off:off+n], yb[off:off+n]
				randFloats(rng, x)
				randFloats(rng, y)
				want, mag := dotNaive(x, y)
				if got := im.dot(x, y); !near(got, want, mag) {
					t.Fatalf("n=%d off=%d: dot = %v, want %v", n, off, got, want)
				}
				alpha := rng.NormFloat64()
				y0 := slices.Clone(y)
				im.axpy(alpha, x, y)
				for i := range y {
					want := y0[i] + alpha*x[i]
					if !near(y[i], want, math.Abs(y0[i])+math.Abs(alpha*x[i])) {
						t.Fatalf("n=%d off=%d: axpy y[%d] = %v, want %v", n, off, i, y[i], want)
					}
				}
				for i, v := range yb {
					if (i < off || i >= off+n) && v != sentinel {
						t.Fatalf("n=%d off=%d: axpy wrote yb[%d] outside y", n, off, i)
					}
				}
			}
		}
	})
}

// A pattern generates nnz column indices below dim.
type pattern struct {
	name string
	gen  func(rng *rand.Rand, nnz, dim int) []int32
}

var patterns = []pattern{
	{"sorted", func(rng *rand.Rand, nnz, dim int) []int32 {
		idx := distinct(rng, nnz, dim)
		slices.Sort(idx)
		return idx
	}},
	{"permuted", distinct},
	{"random", func(rng *rand.Rand, nnz, dim int) []int32 {
		idx := make([]int32, nnz)
		for k := range idx {
			idx[k] = int32(rng.IntN(dim))
		}
		return idx
	}},
	{"repeats", func(rng *rand.Rand, nnz, dim int) []int32 {
		// Three columns, so nearly every block of eight repeats one, and
		// always the last column, to reach the end of x.
		idx := make([]int32, nnz)
		for k := range idx {
			idx[k] = int32(dim - 1 - rng.IntN(min(3, dim)))
		}
		return idx
	}},
	{"one-column", func(rng *rand.Rand, nnz, dim int) []int32 {
		idx := make([]int32, nnz)
		j := int32(rng.IntN(dim))
		for k := range idx {
			idx[k] = j
		}
		return idx
	}},
}

// distinct returns min(nnz, dim) distinct indices below dim in random order,
// including dim-1 when nnz > 0 so that the last element of x is used.
func distinct(rng *rand.Rand, nnz, dim int) []int32 {
	perm := rng.Perm(dim)[:min(nnz, dim)]
	idx := make([]int32, len(perm))
	for k, j := range perm {
		idx[k] = int32(j)
	}
	if len(idx) > 0 && !slices.Contains(idx, int32(dim-1)) {
		idx[rng.IntN(len(idx))] = int32(dim - 1)
	}
	return idx
}

// sparseCase is one sparse vector (val, idx) with dense x and y of length
// dim. All slices end just before an inaccessible page.
type sparseCase struct {
	val  []float64
	idx  []int32
	x, y []float64
}

// sparseArena hands out guarded slices for sparse cases of up to maxNNZ
// entries and dimension up to maxDim.
type sparseArena struct {
	val, x, y, x2 []float64
	idx           []int32
}

func newSparseArena(t *testing.T, maxNNZ, maxDim int) *sparseArena {
	return &sparseArena{
		val: guardedFloat64s(t, maxNNZ),
		idx: guardedInt32s(t, maxNNZ),
		x:   guardedFloat64s(t, maxDim),
		y:   guardedFloat64s(t, maxDim),
	}
}

func (a *sparseArena) make(rng *rand.Rand, idx []int32, dim int) sparseCase {
	c := sparseCase{
		val: a.val[len(a.val)-len(idx):],
		idx: a.idx[len(a.idx)-len(idx):],
		x:   a.x[len(a.x)-dim:],
		y:   a.y[len(a.y)-dim:],
	}
	copy(c.idx, idx)
	randFloats(rng, c.val)
	randFloats(rng, c.x)
	randFloats(rng, c.y)
	return c
}

// verifySparse runs the three sparse kernels of im on c and compares them
// with the naive references. It leaves c.y as it found it.
func verifySparse(t *testing.T, im impl, c sparseCase, alpha float64) {
	t.Helper()
	want, mag := sparseDotNaive(c.val, c.idx, c.x)
	twin := genericImpl.sparseDot(c.val, c.idx, c.x)
	if got := im.sparseDot(c.val, c.idx, c.x); !near(got, want, mag) || !near(got, twin, mag) {
		t.Fatalf("sparseDot = %v, want %v (pure-Go twin %v; dim %d, idx %v)", got, want, twin, len(c.x), c.idx)
	}

	y0 := slices.Clone(c.y)
	wantY := slices.Clone(c.y)
	magY := sparseAxpyNaive(alpha, c.val, c.idx, wantY)
	im.sparseAxpy(alpha, c.val, c.idx, c.y)
	compareY(t, "sparseAxpy", c.y, wantY, magY)
	copy(c.y, y0)

	if got := im.sparseDotAxpy(alpha, c.val, c.idx, c.x, c.y); !near(got, want, mag) {
		t.Fatalf("sparseDotAxpy = %v, want %v (dim %d, idx %v)", got, want, len(c.x), c.idx)
	}
	compareY(t, "sparseDotAxpy", c.y, wantY, magY)
	copy(c.y, y0)
}

func compareY(t *testing.T, kernel string, got, want, mag []float64) {
	t.Helper()
	for i := range want {
		if !near(got[i], want[i], mag[i]) {
			t.Fatalf("%s: y[%d] = %v, want %v", kernel, i, got[i], want[i])
		}
	}
}

// TestSparse covers every number of entries up to 300 (every tail length of
// every block size), then sizes up to 1000, for each index pattern.
func TestSparse(t *testing.T) {
	sizes := make([]int, 0, 320)
	for n := 0; n <= 300; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 511, 512, 513, 777, 999, 1000)
	const maxDim = 3000
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(5, 6))
		arena := newSparseArena(t, 1000, maxDim)
		for _, p := range patterns {
			for _, nnz := range sizes {
				// The dimension varies from 1 to well above nnz.
				dim := 1 + rng.IntN(min(maxDim, 3*nnz+8))
				idx := p.gen(rng, nnz, dim)
				verifySparse(t, im, arena.make(rng, idx, dim), rng.NormFloat64())
			}
		}
	})
}

// TestSparseOffsets starts val, idx, x and y 1..7 elements into their
// backing arrays and checks that the elements around y are left alone.
func TestSparseOffsets(t *testing.T) {
	const sentinel = -12345.0
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, nnz := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 75, 100} {
			for off := 1; off <= 7; off++ {
				for _, p := range patterns {
					dim := 1 + rng.IntN(2*nnz+4)
					idx := p.gen(rng, nnz, dim)
					vb := make([]float64, len(idx)+off)
					ib := make([]int32, len(idx)+off)
					xb := make([]float64, dim+off+1)
					yb := make([]float64, dim+off+1)
					for i := range yb {
						yb[i] = sentinel
					}
					c := sparseCase{val: vb[off:], idx: ib[off:], x: xb[off : off+dim], y: yb[off : off+dim]}
					copy(c.idx, idx)
					randFloats(rng, c.val)
					randFloats(rng, c.x)
					randFloats(rng, c.y)
					verifySparse(t, im, c, rng.NormFloat64())
					if yb[off-1] != sentinel || yb[off+dim] != sentinel {
						t.Fatalf("%s nnz=%d off=%d: write outside y", p.name, nnz, off)
					}
				}
			}
		}
	})
}

// TestSparseAxpyAccumulates applies many rows to the same y, as a solver
// does, and compares with the naive updates.
func TestSparseAxpyAccumulates(t *testing.T) {
	const dim, rows = 64, 200
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(9, 10))
		y, want := make([]float64, dim), make([]float64, dim)
		x := make([]float64, dim)
		randFloats(rng, x)
		mag := make([]float64, dim)
		for r := range rows {
			p := patterns[r%len(patterns)]
			idx := p.gen(rng, rng.IntN(40), dim)
			val := make([]float64, len(idx))
			randFloats(rng, val)
			alpha := rng.NormFloat64()
			if r%2 == 0 {
				im.sparseAxpy(alpha, val, idx, y)
			} else {
				im.sparseDotAxpy(alpha, val, idx, x, y)
			}
			for k, j := range idx {
				want[j] += alpha * val[k]
				mag[j] += math.Abs(alpha * val[k])
			}
		}
		compareY(t, "accumulated", y, want, mag)
	})
}

// badIndices are out of range for a dimension dim.
func badIndices(dim int) []int32 {
	return []int32{int32(dim), int32(dim + 7), -1, -int32(dim), math.MinInt32, math.MaxInt32}
}

// TestSparseBadIndex puts one out-of-range index at every position of rows
// of up to 40 entries. Every kernel must panic naming it, without touching memory
// outside x and y (x and y end at an inaccessible page, and y starts after
// a sentinel), and SparseAxpy may only have applied a prefix of the
// updates. Small integers keep every sum exact, so prefixes compare exactly.
func TestSparseBadIndex(t *testing.T) {
	const dim, maxNNZ = 50, 40
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(11, 12))
		val, idxs := guardedFloat64s(t, maxNNZ), guardedInt32s(t, maxNNZ)
		xs, ys := guardedFloat64s(t, dim), guardedFloat64s(t, dim+1)
		x, y := xs, ys[1:]
		for nnz := 1; nnz <= maxNNZ; nnz++ {
			for bad := 0; bad < nnz; bad++ {
				for _, j := range badIndices(dim) {
					v, idx := val[maxNNZ-nnz:], idxs[maxNNZ-nnz:]
					for k := range idx {
						idx[k] = int32(rng.IntN(dim))
						v[k] = float64(rng.IntN(7) - 3)
					}
					idx[bad] = j
					for i := range x {
						x[i] = float64(rng.IntN(7) - 3)
					}
					const sentinel = 1e300
					ys[0] = sentinel
					for i := range y {
						y[i] = float64(rng.IntN(7) - 3)
					}
					y0 := slices.Clone(y)
					want := fmt.Sprintf("kernels: idx[%d] = %d out of range [0, %d)", bad, j, dim)
					mustPanic(t, want, func() { im.sparseDot(v, idx, x) })
					mustPanic(t, want, func() { im.sparseAxpy(2, v, idx, y) })
					checkPrefix(t, "sparseAxpy", 2, v, idx, y0, y, bad)
					copy(y, y0)
					mustPanic(t, want, func() { im.sparseDotAxpy(2, v, idx, x, y) })
					checkPrefix(t, "sparseDotAxpy", 2, v, idx, y0, y, bad)
					if t.Failed() {
						t.FailNow()
					}
					if ys[0] != sentinel {
						t.Fatalf("write before y with idx[%d] = %d", bad, j)
					}
				}
			}
		}
	})
}

// checkPrefix checks that y is y0 updated by the entries k < m of (val, idx)
// for some m <= bad.
func checkPrefix(t *testing.T, kernel string, alpha float64, val []float64, idx []int32, y0, y []float64, bad int) {
	t.Helper()
	want := slices.Clone(y0)
	for m := 0; m <= bad; m++ {
		if slices.Equal(y, want) {
			return
		}
		if m < bad {
			want[idx[m]] += alpha * val[m]
		}
	}
	t.Fatalf("%s with bad idx[%d]: y is not y0 plus a prefix of the updates", kernel, bad)
}

// TestSparseDotAxpyBound checks that SparseDotAxpy bounds indices by the
// shorter of x and y.
func TestSparseDotAxpyBound(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		val := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
		for _, lens := range [][2]int{{10, 9}, {9, 10}} {
			x, y := make([]float64, lens[0]), make([]float64, lens[1])
			im.sparseDotAxpy(1, val, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8}, x, y)
			mustPanic(t, "kernels: idx[8] = 9 out of range [0, 9)", func() {
				im.sparseDotAxpy(1, val, []int32{0, 1, 2, 3, 4, 5, 6, 7, 9}, x, y)
			})
		}
	})
}

// mustPanic calls f and checks that it panics with the message want.
func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("no panic, want %q", want)
			return
		}
		if msg := fmt.Sprint(r); msg != want {
			t.Errorf("panic %q, want %q", msg, want)
		}
	}()
	f()
}

// TestExportedPanics checks the programming errors the exported functions
// reject, under every implementation.
func TestExportedPanics(t *testing.T) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	forEachImpl(t, func(t *testing.T, im impl) {
		use(im)
		x, y := make([]float64, 20), make([]float64, 20)
		val := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
		idx := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		badIdx := []int32{0, 1, 2, 3, 4, 5, 6, 20, 8, -3}

		mustPanic(t, errShortY, func() { Dot(x, y[:19]) })
		mustPanic(t, errShortY, func() { Axpy(1, x, y[:19]) })
		mustPanic(t, errOverlap, func() { Axpy(1, x[1:], x) })
		mustPanic(t, errOverlap, func() { Axpy(1, x[:19], x[1:]) })
		mustPanic(t, errLength, func() { SparseDot(val[:9], idx, x) })
		mustPanic(t, errLength, func() { SparseAxpy(1, val, idx[:9], y) })
		mustPanic(t, errLength, func() { SparseDotAxpy(1, val[:9], idx, x, y) })
		mustPanic(t, errOverlap, func() { SparseDotAxpy(1, val, idx, x, x) })
		mustPanic(t, errOverlap, func() { SparseDotAxpy(1, val, idx, x[5:], x[:15]) })
		mustPanic(t, errOverlap, func() { SparseDotAxpy(1, val, idx, x[:15], x[5:]) })
		want := "kernels: idx[7] = 20 out of range [0, 20)"
		mustPanic(t, want, func() { SparseDot(val, badIdx, x) })
		mustPanic(t, want, func() { SparseAxpy(1, val, badIdx, y) })
		mustPanic(t, want, func() { SparseDotAxpy(1, val, badIdx, x, y) })
		mustPanic(t, "kernels: idx[7] = 20 out of range [0, 15)", func() {
			SparseDotAxpy(1, val, badIdx, x[:15], y)
		})

		// What is allowed: y longer than x, y aliasing x exactly, x and y
		// disjoint parts of one array, empty inputs.
		for i := range x {
			x[i] = float64(i)
		}
		if got := Dot(x[:3], x); got != 5 {
			t.Errorf("Dot(x[:3], x) = %v, want 5", got)
		}
		Axpy(1, x[:4], x[:4])
		if !slices.Equal(x[:5], []float64{0, 2, 4, 6, 4}) {
			t.Errorf("Axpy(1, x, x) gave %v", x[:5])
		}
		Axpy(0, x[:10], x[10:])
		Axpy(0, x[10:], x[:10])
		if got := SparseDotAxpy(1, val[:2], idx[:2], x[:10], x[10:]); got != 4 || x[10] != 11 || x[11] != 13 {
			t.Errorf("SparseDotAxpy on disjoint halves = %v, y = %v; want 4, [11 13 ...]", got, x[10:12])
		}
		if Dot(nil, nil) != 0 || SparseDot(nil, nil, nil) != 0 || SparseDotAxpy(1, nil, nil, nil, nil) != 0 {
			t.Error("empty inputs give a non-zero result")
		}
		Axpy(1, nil, nil)
		SparseAxpy(1, nil, nil, nil)
	})
}
