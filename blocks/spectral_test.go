package blocks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/adaspdc/adaspdc/sparse"
)

// randomCSR returns a rows×cols matrix with each entry present with
// probability density, standard normal values (or |normal| if nonNegative).
func randomCSR(rng *rand.Rand, rows, cols int, density float64, nonNegative bool) *sparse.CSR {
	m := &sparse.CSR{Rows: rows, Cols: cols, Indptr: make([]int64, 1, rows+1)}
	for range rows {
		for j := range cols {
			if rng.Float64() < density {
				v := rng.NormFloat64()
				if nonNegative {
					v = math.Abs(v)
				}
				m.Indices = append(m.Indices, int32(j))
				m.Values = append(m.Values, v)
			}
		}
		m.Indptr = append(m.Indptr, int64(len(m.Values)))
	}
	return m
}

// fromRows builds a CSR matrix from dense rows, storing every nonzero.
func fromRows(cols int, rows [][]float64) *sparse.CSR {
	m := &sparse.CSR{Rows: len(rows), Cols: cols, Indptr: make([]int64, 1, len(rows)+1)}
	for _, r := range rows {
		for j, v := range r {
			if v != 0 {
				m.Indices = append(m.Indices, int32(j))
				m.Values = append(m.Values, v)
			}
		}
		m.Indptr = append(m.Indptr, int64(len(m.Values)))
	}
	return m
}

// denseBlock copies the rows of x listed in rows into a dense q×d matrix.
func denseBlock(x *sparse.CSR, rows []int32) *mat.Dense {
	a := mat.NewDense(len(rows), x.Cols, nil)
	for i, r := range rows {
		vals, idx := x.Row(int(r))
		for k, v := range vals {
			a.Set(i, int(idx[k]), v)
		}
	}
	return a
}

// referenceNorm returns the largest singular value of the block, computed
// densely as the square root of the top eigenvalue of the smaller Gram
// matrix by gonum's mat.EigenSym (LAPACK Dsyev). The top eigenvector v
// certifies it: ‖Av‖/‖v‖ (or ‖Aᵀv‖/‖v‖) is a lower bound on ‖A‖₂, and the
// reference must agree with it.
//
// The reference is not gonum's mat.SVD because, in gonum v0.17.0, its
// largest singular value is unreliable on these sparse matrices: on a
// 1000×300 block it changes with the row order and misses the certified
// lower bound by up to 1e-4 relative, while EigenSym, 20,000 power steps and
// both methods here agree to 1e-12.
func referenceNorm(t *testing.T, x *sparse.CSR, rows []int32) float64 {
	t.Helper()
	a := denseBlock(x, rows)
	q, d := a.Dims()
	var gram mat.SymDense
	var side mat.Matrix = a // v lives on the columns of a: ‖a v‖
	if q < d {
		gram.SymOuterK(1, a) // a aᵀ, q×q
		side = a.T()
	} else {
		gram.SymOuterK(1, a.T()) // aᵀ a, d×d
	}
	var eig mat.EigenSym
	if !eig.Factorize(&gram, true) {
		t.Fatal("reference eigendecomposition failed")
	}
	values := eig.Values(nil)
	top := math.Sqrt(math.Max(values[len(values)-1], 0))
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	v := vecs.ColView(len(values) - 1)
	var av mat.VecDense
	av.MulVec(side, v)
	if bound := av.Norm(2) / mat.Norm(v, 2); relErr(bound, top) > 1e-12 {
		t.Fatalf("reference %.17g disagrees with its certificate %.17g", top, bound)
	}
	return top
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / want
}

// blockCase is a block shape to test: q rows of a d-column matrix.
type blockCase struct {
	name        string
	q, d        int
	density     float64
	nonNegative bool
}

var blockCases = []blockCase{
	{"q1", 1, 40, 0.3, false},
	{"q5-d1", 5, 1, 1, false},
	{"q40-d2", 40, 2, 0.8, false},
	{"q2-d3", 2, 3, 0.7, false},
	{"q5-d3", 5, 3, 0.8, false},
	{"q5-d500", 5, 500, 0.05, true},
	{"q50-d3", 50, 3, 0.9, false},
	{"q50-d40", 50, 40, 0.3, false},
	{"q50-d500", 50, 500, 0.02, true},
	{"q200-d60", 200, 60, 0.2, false},
	{"q200-d500", 200, 500, 0.05, false},
	{"q200-d500-nonneg", 200, 500, 0.01, true},
}

// TestBlockMethodsAgainstDense checks both methods, on both sides (q < d and
// q > d), against the SVD, including blocks with repeated and zero rows.
func TestBlockMethodsAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := newWorkspace(500)
	for _, bc := range blockCases {
		for _, variant := range []string{"plain", "repeated", "zero-rows"} {
			x := randomCSR(rng, bc.q, bc.d, bc.density, bc.nonNegative)
			rows := make([]int32, bc.q)
			for i := range rows {
				rows[i] = int32(i)
			}
			switch variant {
			case "repeated":
				// Every row duplicates one of the first few: rank ≤ 3.
				for i := range rows {
					rows[i] = int32(i % min(3, bc.q))
				}
			case "zero-rows":
				// Empty every other row.
				for i := 0; i < bc.q; i += 2 {
					lo, hi := x.Indptr[i], x.Indptr[i+1]
					for k := lo; k < hi; k++ {
						x.Values[k] = 0 // stored zeros: must be harmless too
					}
				}
			}
			want := referenceNorm(t, x, rows)
			for _, how := range []method{methodAuto, methodDense, methodLanczos} {
				got, err := ws.blockNorm(x, rows, 1e-6, how)
				if err != nil {
					t.Fatalf("%s/%s/method %d: %v", bc.name, variant, how, err)
				}
				if e := relErr(got, want); e > 1e-6 {
					t.Errorf("%s/%s/method %d: got %.15g, want %.15g (relative error %.2g)",
						bc.name, variant, how, got, want, e)
				}
			}
			for j, l := range ws.colLocal {
				if l != -1 {
					t.Fatalf("%s/%s: column map not restored at column %d", bc.name, variant, j)
				}
			}
		}
	}
}

// TestLanczosClusteredSpectrum uses nearly orthogonal rows whose norms are
// spread evenly: the Gram matrix is close to diagonal with its top
// eigenvalues packed together, the case where the power method's Rayleigh
// quotient converges only like 1/k.
func TestLanczosClusteredSpectrum(t *testing.T) {
	const q, d = 250, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([][]float64, q)
	for i := range rows {
		rows[i] = make([]float64, d)
		scale := 1 + float64(i)/q
		for k := range 4 {
			rows[i][(8*i+k)%d] = scale / 2
		}
		rows[i][rng.IntN(d)] += 0.01 // weak coupling between rows
	}
	x := fromRows(d, rows)
	block := make([]int32, q)
	for i := range block {
		block[i] = int32(i)
	}
	want := referenceNorm(t, x, block)
	ws := newWorkspace(d)
	got, err := ws.blockNorm(x, block, 1e-6, methodLanczos)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got, want); e > 1e-6 {
		t.Errorf("got %.15g, want %.15g (relative error %.2g) after %d Lanczos steps", got, want, e, ws.lanczosSteps)
	}
	t.Logf("%d Lanczos steps for a %d-row block", ws.lanczosSteps, q)
}

// TestSpectralNormsSingleRowExact checks that one-row blocks get the plain
// square root of the sum of squares, to the last bit, including rows whose
// plain sum of squares would overflow or underflow.
func TestSpectralNormsSingleRowExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomCSR(rng, 300, 80, 0.2, false)
	p, err := Contiguous(x.Rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	norms, err := SpectralNorms(x, p, 1e-6, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x.Rows {
		vals, _ := x.Row(i)
		sum := 0.0
		for _, v := range vals {
			sum += v * v
		}
		want := math.Sqrt(sum)
		if e := relErr(norms[i], want); e > 1e-15 {
			t.Errorf("row %d: got %.17g, want %.17g", i, norms[i], want)
		}
	}

	extreme := fromRows(3, [][]float64{
		{3e200, 4e200, 0},
		{3e-200, 0, 4e-200},
		{0, 0, 0},
	})
	p, _ = Contiguous(3, 1)
	norms, err = SpectralNorms(extreme, p, 1e-6, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{5e200, 5e-200, 0} {
		if e := relErr(norms[i], want); e > 1e-15 {
			t.Errorf("row %d: got %v, want %v", i, norms[i], want)
		}
	}
}

// TestSpectralNormsScaledBlocks checks that blocks of extreme magnitude,
// solved densely (12×30) or by Lanczos (60×50), are computed without
// overflow or underflow, whether or not they are outside the unscaled range.
func TestSpectralNormsScaledBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, base := range []*sparse.CSR{randomCSR(rng, 12, 30, 0.4, false), randomCSR(rng, 60, 50, 0.3, false)} {
		block := make([]int32, base.Rows)
		for i := range block {
			block[i] = int32(i)
		}
		want := referenceNorm(t, base, block)
		p, _ := Contiguous(base.Rows, base.Rows)
		for _, scale := range []float64{0x1p900, 0x1p399, 0x1p-399, 0x1p-900, 1e-310} {
			x := *base
			x.Values = make([]float64, len(base.Values))
			for k, v := range base.Values {
				x.Values[k] = v * scale
			}
			norms, err := SpectralNorms(&x, p, 1e-6, 1)
			if err != nil {
				t.Fatal(err)
			}
			if scale == 1e-310 {
				// Subnormal entries carry few significant bits; only the
				// order of magnitude is meaningful.
				if norms[0] <= 0 || relErr(norms[0], want*scale) > 1e-2 {
					t.Errorf("%d rows, scale %g: got %g, want about %g", base.Rows, scale, norms[0], want*scale)
				}
				continue
			}
			if e := relErr(norms[0], want*scale); e > 1e-6 {
				t.Errorf("%d rows, scale %g: got %g, want %g", base.Rows, scale, norms[0], want*scale)
			}
		}
	}
}

// TestSpectralNormsPartitions runs the public function over whole
// partitions, checking blocks against the dense reference and that the result does
// not depend on the number of goroutines.
func TestSpectralNormsPartitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := randomCSR(rng, 1000, 300, 0.03, true)
	// Make a few rows zero and a few duplicates.
	for i := 0; i < 20; i++ {
		lo, hi := x.Indptr[i], x.Indptr[i+1]
		clear(x.Values[lo:hi])
	}
	sq := make([]float64, x.Rows)
	for i := range x.Rows {
		vals, _ := x.Row(i)
		for _, v := range vals {
			sq[i] += v * v
		}
	}
	for _, size := range []int{1, 2, 5, 33, 50, 200, 1000} {
		shuffled, err := Shuffled(x.Rows, size, uint64(size))
		if err != nil {
			t.Fatal(err)
		}
		byNorm, err := ByNorm(sq, size, 1)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range map[string]*Partition{"shuffled": shuffled, "bynorm": byNorm} {
			one, err := SpectralNorms(x, p, 1e-6, 1)
			if err != nil {
				t.Fatal(err)
			}
			many, err := SpectralNorms(x, p, 1e-6, 3)
			if err != nil {
				t.Fatal(err)
			}
			for b := range p.NumBlocks() {
				if one[b] != many[b] {
					t.Fatalf("size %d %s block %d: 1 thread %v, 3 threads %v", size, name, b, one[b], many[b])
				}
				if size > 50 && b%3 != 0 {
					continue // the reference for every large block would be slow
				}
				want := referenceNorm(t, x, p.Block(b))
				if e := relErr(one[b], want); e > 1e-6 {
					t.Errorf("size %d %s block %d: got %.15g, want %.15g", size, name, b, one[b], want)
				}
			}
		}
	}
}

// TestSpectralNormsZeroBlock checks that all-zero blocks, with or without
// stored zeros, get R = 0.
func TestSpectralNormsZeroBlock(t *testing.T) {
	x := fromRows(4, [][]float64{{0, 0, 0, 0}, {0, 0, 0, 0}, {1, 2, 0, 0}, {0, 0, 0, 0}})
	x.Indices = append(x.Indices, 1) // a stored zero in the last row
	x.Values = append(x.Values, 0)
	x.Indptr[4]++
	p := &Partition{Order: []int32{0, 1, 3, 2}, Start: []int{0, 3, 4}}
	norms, err := SpectralNorms(x, p, 1e-6, 0)
	if err != nil {
		t.Fatal(err)
	}
	if norms[0] != 0 || norms[1] != math.Sqrt(5) {
		t.Errorf("got %v, want [0 %v]", norms, math.Sqrt(5))
	}
}

func TestSpectralNormsErrors(t *testing.T) {
	good := fromRows(3, [][]float64{{1, 0, 2}, {0, 3, 0}})
	p, _ := Contiguous(2, 2)
	nan := fromRows(3, [][]float64{{1, 0, 2}, {0, math.NaN(), 0}})
	inf := fromRows(3, [][]float64{{math.Inf(-1), 0, 2}, {0, 1, 0}})
	badIndex := fromRows(3, [][]float64{{1, 0, 2}, {0, 3, 0}})
	badIndex.Indices[2] = 7
	single, _ := Contiguous(2, 1)
	huge := fromRows(2, [][]float64{{math.MaxFloat64, math.MaxFloat64}, {1, 0}})
	tests := []struct {
		name string
		x    *sparse.CSR
		p    *Partition
		tol  float64
		want string
	}{
		{"nil matrix", nil, p, 1e-6, "nil matrix"},
		{"nil partition", good, nil, 1e-6, "nil partition"},
		{"wrong size partition", good, &Partition{Order: []int32{0, 1, 2}, Start: []int{0, 3}}, 1e-6, "3 samples, want 2"},
		{"column out of range", badIndex, p, 1e-6, "invalid matrix"},
		{"zero tolerance", good, p, 0, "tolerance"},
		{"negative tolerance", good, p, -1, "tolerance"},
		{"NaN tolerance", good, p, math.NaN(), "tolerance"},
		{"tolerance 1", good, p, 1, "tolerance"},
		{"NaN entry", nan, p, 1e-6, "block 0: sample 1: entry 0 is NaN"},
		{"NaN entry single-row block", nan, single, 1e-6, "block 1: sample 1: entry 0 is NaN"},
		{"Inf entry", inf, p, 1e-6, "sample 0: entry 0 is -Inf"},
		{"norm overflows, one row", huge, single, 1e-6, "block 0: spectral norm exceeds"},
		{"norm overflows, block", huge, p, 1e-6, "block 0: spectral norm exceeds"},
	}
	for _, tc := range tests {
		_, err := SpectralNorms(tc.x, tc.p, tc.tol, 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestTopEigenpair(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var s tridiagScratch
	// Matrices for which T−θI is exactly singular in floating point, so
	// the inverse iteration must nudge its shift.
	for _, c := range []struct {
		alpha, beta     []float64
		theta, lastComp float64
	}{
		{[]float64{1, 1}, []float64{1}, 2, 1 / math.Sqrt2},
		{[]float64{3, 1}, []float64{0}, 3, 0},
		{[]float64{1, 3}, []float64{0}, 3, 1},
		// The zero matrix needs an absolute nudge; every unit vector is
		// an eigenvector, and inverse iteration from all-ones keeps it.
		{[]float64{0, 0}, []float64{0}, 0, 1 / math.Sqrt2},
		// Huge entries: the inverse iteration must not overflow.
		{[]float64{1e300, 1e300}, []float64{1e300}, 2e300, 1 / math.Sqrt2},
	} {
		theta, last := s.topEigenpair(c.alpha, c.beta)
		if math.Abs(theta-c.theta) > 1e-15*c.theta+1e-300 || math.Abs(last-c.lastComp) > 1e-12 {
			t.Errorf("α=%v β=%v: got (%v, %v), want (%v, %v)", c.alpha, c.beta, theta, last, c.theta, c.lastComp)
		}
	}
	for _, k := range []int{1, 2, 3, 10, 60} {
		alpha := make([]float64, k)
		beta := make([]float64, k-1)
		sym := mat.NewSymDense(k, nil)
		for i := range k {
			alpha[i] = rng.NormFloat64()
			sym.SetSym(i, i, alpha[i])
			if i > 0 {
				beta[i-1] = rng.NormFloat64()
				sym.SetSym(i-1, i, beta[i-1])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(sym, true) {
			t.Fatal("reference eigendecomposition failed")
		}
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		theta, last := s.topEigenpair(alpha, beta)
		wantTheta := eig.Values(nil)[k-1]
		wantLast := math.Abs(vecs.At(k-1, k-1))
		if math.Abs(theta-wantTheta) > 1e-13*math.Max(1, math.Abs(wantTheta)) {
			t.Errorf("k=%d: θ=%.17g, want %.17g", k, theta, wantTheta)
		}
		if math.Abs(last-wantLast) > 1e-8 {
			t.Errorf("k=%d: last component %.17g, want %.17g", k, last, wantLast)
		}
	}
}

// BenchmarkSpectralNorms runs SpectralNorms on a synthetic matrix shaped like
// rcv1 (20,242 × 47,236, about 75 nonzeros per row, non-negative entries,
// unit rows) for several block sizes, on all CPUs.
func BenchmarkSpectralNorms(b *testing.B) {
	x := rcv1Like(20242, 47236, 75)
	for _, size := range []int{1, 8, 64} {
		p, err := Shuffled(x.Rows, size, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			for b.Loop() {
				if _, err := SpectralNorms(x, p, DefaultTolerance, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBlockMethods compares the dense and Lanczos methods on one
// thread over rcv1-like blocks of several sizes; it is how denseLimit was
// chosen.
func BenchmarkBlockMethods(b *testing.B) {
	x := rcv1Like(20242, 47236, 75)
	for _, size := range []int{8, 16, 24, 32, 64} {
		p, err := Shuffled(x.Rows, size, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, how := range []struct {
			name string
			m    method
		}{{"dense", methodDense}, {"lanczos", methodLanczos}} {
			b.Run(fmt.Sprintf("size=%d/%s", size, how.name), func(b *testing.B) {
				ws := newWorkspace(x.Cols)
				const blocksPerOp = 64
				for b.Loop() {
					for blk := range blocksPerOp {
						if _, err := ws.blockNorm(x, p.Block(blk), DefaultTolerance, how.m); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*blocksPerOp), "ns/block")
			})
		}
	}
}

// rcv1Like returns a rows×cols matrix with about nnzPerRow non-negative
// entries per row, column popularity skewed like word frequencies, and rows
// scaled to unit norm, as in the LIBSVM copy of rcv1.
func rcv1Like(rows, cols, nnzPerRow int) *sparse.CSR {
	rng := rand.New(rand.NewPCG(42, 43))
	m := &sparse.CSR{Rows: rows, Cols: cols, Indptr: make([]int64, 1, rows+1)}
	seen := make(map[int32]bool)
	var idx []int32
	for range rows {
		k := max(1, nnzPerRow/2+rng.IntN(nnzPerRow))
		clear(seen)
		idx = idx[:0]
		for len(idx) < k {
			// A Zipf-like draw: small column indices are common words.
			j := int32(math.Pow(float64(cols), rng.Float64())) - 1
			if !seen[j] {
				seen[j] = true
				idx = append(idx, j)
			}
		}
		slices.Sort(idx)
		sum := 0.0
		start := len(m.Values)
		for _, j := range idx {
			v := rng.ExpFloat64()
			m.Indices = append(m.Indices, j)
			m.Values = append(m.Values, v)
			sum += v * v
		}
		for k := start; k < len(m.Values); k++ {
			m.Values[k] /= math.Sqrt(sum)
		}
		m.Indptr = append(m.Indptr, int64(len(m.Values)))
	}
	return m
}

// TestSpectralNormsContext checks that a done context stops the norms with
// an error carrying its cause, and that a live one changes nothing.
func TestSpectralNormsContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := randomCSR(rng, 400, 60, 0.2, false)
	p, err := Contiguous(x.Rows, 20)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("time limit")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	for _, threads := range []int{1, 3} {
		norms, err := SpectralNormsContext(ctx, x, p, 1e-6, threads)
		if !errors.Is(err, cause) || norms != nil {
			t.Errorf("threads %d, cancelled context: norms %v, error %v; want nil and one wrapping %q", threads, norms, err, cause)
		}
	}
	want, err := SpectralNorms(x, p, 1e-6, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SpectralNormsContext(context.Background(), x, p, 1e-6, 2)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("live context: %v, %v; want %v", got, err, want)
	}
}
