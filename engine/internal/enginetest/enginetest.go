// Package enginetest holds the data the engine's tests share: generated
// problems and the real data sets beside the project.
package enginetest

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
	"gonum.org/v1/gonum/mat"
)

// SharedPath returns the path of a data set: the copy bundled in the
// project's testdata/ where there is one (heart_scale, housing_scale), so
// that a bare clone runs the tests that read it, and otherwise the file in
// the shared folder beside the project root (../shared/data), wherever the
// calling test's package sits in the tree.
func SharedPath(name string) string {
	if p := BundledPath(name); isFile(p) {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	return filepath.Join(root, "..", "shared", "data", name)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// Fig1Data is the synthetic ridge problem of the paper's Fig. 1: rows
// aₖ ~ N(0, Σ) with Σⱼⱼ = j⁻², targets bₖ = aₖᵀx° + noise.
func Fig1Data(n, d int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	xo := make([]float64, d)
	for j := range xo {
		xo[j] = rng.NormFloat64()
	}
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	for k := 0; k < n; k++ {
		var z float64
		for j := 0; j < d; j++ {
			v := rng.NormFloat64() / float64(j+1)
			x.Indices = append(x.Indices, int32(j))
			x.Values = append(x.Values, v)
			z += v * xo[j]
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = z + 0.1*rng.NormFloat64()
	}
	return x, b
}

// SparseData draws a random sparse classification problem with skewed
// feature frequencies, like text data.
func SparseData(n, d, perRow int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	seen := make(map[int32]bool)
	for k := 0; k < n; k++ {
		clear(seen)
		cols := make([]int32, 0, perRow)
		for len(cols) < perRow {
			// Zipf-like: low indices are frequent.
			j := int32(float64(d) * math.Pow(rng.Float64(), 3))
			if !seen[j] {
				seen[j] = true
				cols = append(cols, j)
			}
		}
		slices.Sort(cols)
		var z float64
		for _, j := range cols {
			v := rng.Float64() + 0.1
			x.Indices = append(x.Indices, j)
			x.Values = append(x.Values, v)
			z += v * w[j]
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		if z+0.3*rng.NormFloat64() > 0 {
			b[k] = 1
		} else {
			b[k] = -1
		}
	}
	return x, b
}

// SharedData loads a binary-labelled file from ../shared/data, skipping the
// test when the folder is absent.
func SharedData(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := SharedPath(name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y, _, err := sparse.BinaryLabels(ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	return ds.X, y
}

// RelDiff returns ‖a − b‖/‖b‖.
func RelDiff(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / math.Max(den, 1e-300))
}

// Model is the part of a trained model the family tests read.
type Model struct {
	Weights []float64
}

// Train runs the solver opt.Solver names on prob (none: the first
// registered that takes it), as engine.Train does once it has picked the
// solver, for the tests of a solver family, which
// cannot import engine (engine imports them). It returns a nil model
// where engine.Train does.
func Train(ctx context.Context, prob objective.Problem, opt driver.Options) (*Model, *driver.Result, error) {
	if err := prob.Validate(); err != nil {
		return nil, nil, err
	}
	if err := opt.ValidateFor(prob.X.Rows); err != nil {
		return nil, nil, err
	}
	e := driver.Lookup(opt.Solver)
	if opt.Solver == "" {
		// As engine.Train with the automatic choice off: the first
		// registered solver that takes the problem.
		for _, c := range driver.Entries() {
			o := opt
			o.Solver = c.Name
			if c.Accepts(prob, o.WithDefaults()) == nil {
				e = c
				break
			}
		}
	}
	if e == nil {
		return nil, nil, fmt.Errorf("enginetest: solver %q is not registered or takes no such problem (registered: %s)", opt.Solver, driver.Names())
	}
	opt.Solver = e.Name
	if err := e.Accepts(prob, opt.WithDefaults()); err != nil {
		return nil, nil, err
	}
	w, res, err := driver.Solve(ctx, e, prob, opt)
	if w == nil {
		return nil, res, err
	}
	return &Model{Weights: w}, res, err
}

// SharedRegression loads a regression file from ../shared/data with its raw
// targets, skipping the test when the folder is absent.
func SharedRegression(t testing.TB, name string) (*sparse.CSR, []float64) {
	t.Helper()
	path := SharedPath(name)
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		t.Skipf("%s not available: %v", path, err)
	}
	return ds.X, ds.Y
}

// DenseColumns returns the columns of x as dense vectors.
func DenseColumns(x *sparse.CSR) [][]float64 {
	cols := make([][]float64, x.Cols)
	for j := range cols {
		cols[j] = make([]float64, x.Rows)
	}
	for k := 0; k < x.Rows; k++ {
		val, idx := x.Row(k)
		for i, j := range idx {
			cols[j][k] = val[i]
		}
	}
	return cols
}

// LossTestName names a loss with its parameter, for test messages.
func LossTestName(l objective.Loss) string {
	switch l := l.(type) {
	case objective.SmoothHinge:
		return fmt.Sprintf("%s(S=%g)", l.Name(), l.S)
	case objective.EpsInsensitive:
		return fmt.Sprintf("%s(ε=%g)", l.Name(), l.Epsilon)
	case objective.Quantile:
		return fmt.Sprintf("%s(q=%g)", l.Name(), l.Q)
	}
	return l.Name()
}

// EpochData loads the thread benchmarks' data: a file of ../shared/data,
// news20 binarised with unit rows (long sparse rows, 62k features), or
// "urllike", synth.URLLike with 100k rows (3.2 M features).
func EpochData(b *testing.B, name string) (*sparse.CSR, []float64) {
	switch name {
	case "news20":
		x, y := News20Binary(b)
		x.NormalizeRowsUnit()
		return x, y
	case "urllike":
		x, y, err := synth.Generate(synth.URLLike(100_000, 1))
		if err != nil {
			b.Fatal(err)
		}
		return x, y
	}
	return SharedData(b, name)
}

// News20Binary loads news20 (multiclass) binarised as label ≤ 10 → −1,
// otherwise +1, skipping when ../shared/data is absent.
func News20Binary(b testing.TB) (*sparse.CSR, []float64) {
	path := SharedPath("news20")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s not available", path)
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	y := make([]float64, len(ds.Y))
	for i, v := range ds.Y {
		y[i] = 1
		if v <= 10 {
			y[i] = -1
		}
	}
	return ds.X, y
}

// ReferenceLasso solves min (1/2n)‖Ax − b‖² + l1‖x‖₁ by cyclic coordinate
// descent on dense columns, then polishes the solution on its support and
// sign pattern by solving the optimality equations
// (A_SᵀA_S/n) x_S = A_Sᵀb/n − l1·sign(x_S) exactly, and checks the result
// with kktViolation. It is meant for a handful of columns.
func ReferenceLasso(t *testing.T, x *sparse.CSR, b []float64, l1 float64) []float64 {
	t.Helper()
	n, d := x.Rows, x.Cols
	cols := DenseColumns(x)
	norm2 := make([]float64, d)
	for j, c := range cols {
		for _, v := range c {
			norm2[j] += v * v
		}
		norm2[j] /= float64(n)
	}
	w := make([]float64, d)
	res := make([]float64, n) // Ax − b
	for k := range res {
		res[k] = -b[k]
	}
	prob := objective.Problem{X: x, B: b, Loss: objective.Squared{}, Reg: objective.ElasticNet{L1: l1}}
	cd := func(cycles int) {
		for range cycles {
			for j, c := range cols {
				if norm2[j] == 0 {
					continue
				}
				var g float64
				for k, v := range c {
					g += v * res[k]
				}
				g /= float64(n)
				v := w[j] - g/norm2[j]
				nw := math.Copysign(math.Max(math.Abs(v)-l1/norm2[j], 0), v)
				if dw := nw - w[j]; dw != 0 {
					for k, a := range c {
						res[k] += dw * a
					}
					w[j] = nw
				}
			}
		}
	}
	for range 200 {
		cd(100)
		if KktViolation(prob, w) < 1e-8 {
			break
		}
	}
	// Polish: Newton on the support with the signs fixed.
	var s []int
	for j, v := range w {
		if v != 0 {
			s = append(s, j)
		}
	}
	m := len(s)
	g := make([][]float64, m)
	for a, ja := range s {
		g[a] = make([]float64, m+1)
		for c, jc := range s {
			var sum float64
			for k, v := range cols[ja] {
				sum += v * cols[jc][k]
			}
			g[a][c] = sum / float64(n)
		}
		var rhs float64
		for k, v := range cols[ja] {
			rhs += v * b[k]
		}
		g[a][m] = rhs/float64(n) - l1*math.Copysign(1, w[ja])
	}
	sol := SolveDense(g)
	polished := make([]float64, d)
	consistent := true
	for a, ja := range s {
		polished[ja] = sol[a]
		if math.Signbit(sol[a]) != math.Signbit(w[ja]) || sol[a] == 0 {
			consistent = false
		}
	}
	if consistent && KktViolation(prob, polished) <= KktViolation(prob, w) {
		w = polished
	}
	if v := KktViolation(prob, w); v > 1e-12 {
		t.Fatalf("reference lasso: KKT violation %.3g, want ≤ 1e-12", v)
	}
	return w
}

// KktViolation returns the largest violation of the elastic-net optimality
// conditions at x: with gⱼ = (1/n)Σₖ φ'(aₖᵀx)aₖⱼ + λxⱼ, a zero coordinate
// needs |gⱼ| ≤ l1 and a non-zero one gⱼ + l1·sign(xⱼ) = 0.
func KktViolation(prob objective.Problem, x []float64) float64 {
	n := prob.X.Rows
	grad := make([]float64, len(x))
	for k := 0; k < n; k++ {
		val, idx := prob.X.Row(k)
		z := kernels.SparseDot(val, idx, x)
		kernels.SparseAxpy(prob.Loss.Deriv(z, prob.B[k])/float64(n), val, idx, grad)
	}
	en, _ := prob.Reg.AsElasticNet()
	worst := 0.0
	for j, xj := range x {
		l1, lam, shift := en.Coord(j)
		g := grad[j] + lam*xj - shift
		var v float64
		switch {
		case xj > 0:
			v = math.Abs(g + l1)
		case xj < 0:
			v = math.Abs(g - l1)
		default:
			v = math.Max(0, math.Abs(g)-l1)
		}
		worst = math.Max(worst, v)
	}
	return worst
}

// SolveDense solves the m×m system held in the augmented m×(m+1) matrix a
// by Gaussian elimination with partial pivoting; a is overwritten.
func SolveDense(a [][]float64) []float64 {
	m := len(a)
	for c := 0; c < m; c++ {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < m; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= m; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, m)
	for r := m - 1; r >= 0; r-- {
		sum := a[r][m]
		for k := r + 1; k < m; k++ {
			sum -= a[r][k] * x[k]
		}
		x[r] = sum / a[r][r]
	}
	return x
}

// FirstRows returns the first n rows of x as a CSR of their own (the
// slices are shared).
func FirstRows(x *sparse.CSR, b []float64, n int) (*sparse.CSR, []float64) {
	return &sparse.CSR{Rows: n, Cols: x.Cols, Indptr: x.Indptr[:n+1], Indices: x.Indices[:x.Indptr[n]], Values: x.Values[:x.Indptr[n]]}, b[:n]
}

// BundledPath returns the path of a data set bundled with the project
// (testdata/ at the root), which every clone has.
func BundledPath(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", name)
}

// ForceWorkers turns off the worker rules that would give most runs on
// small data one worker (a worker per driver.MinBatchWork nonzeros, and
// the timed choice of driver.CalibrateWorkers), so that tests that ask
// for thread counts exercise the concurrent paths (under -race too). The
// test packages call it from init.
func ForceWorkers() {
	driver.MinBatchWork = 1
	driver.CalibrateWorkers = false
}

// ProductionWorkers sets the worker rules as Train has them outside tests
// and returns a function that restores the tests' setting.
func ProductionWorkers() func() {
	driver.MinBatchWork, driver.CalibrateWorkers = driver.DefaultMinBatchWork, true
	return ForceWorkers
}

// RidgeClosedFormCentred solves (AᵀA/n + λI)x = Aᵀb/n + λc with gonum.
func RidgeClosedFormCentred(x *sparse.CSR, b []float64, lam float64, c []float64) []float64 {
	n, d := x.Rows, x.Cols
	a := mat.NewSymDense(d, nil)
	rhs := mat.NewVecDense(d, nil)
	for k := 0; k < n; k++ {
		val, idx := x.Row(k)
		for p, i := range idx {
			rhs.SetVec(int(i), rhs.AtVec(int(i))+val[p]*b[k]/float64(n))
			for q, j := range idx {
				if j >= i {
					a.SetSym(int(i), int(j), a.At(int(i), int(j))+val[p]*val[q]/float64(n))
				}
			}
		}
	}
	for j := 0; j < d; j++ {
		a.SetSym(j, j, a.At(j, j)+lam)
		rhs.SetVec(j, rhs.AtVec(j)+lam*c[j])
	}
	var sol mat.VecDense
	var chol mat.Cholesky
	chol.Factorize(a)
	if err := chol.SolveVecTo(&sol, rhs); err != nil {
		panic(err)
	}
	return sol.RawVector().Data
}

// ReadLIBLINEARWeights reads the weight vector of a LIBLINEAR model file
// for d features, flipping its sign when LIBLINEAR's first label is −1
// (its decision value is positive for the first label of the model's
// "label" line; sparse.BinaryLabels maps the file's +1 to our +1).
func ReadLIBLINEARWeights(path string, d int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sign := 1.0
	var w []float64
	inW := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "label "):
			if fields := strings.Fields(line); len(fields) > 1 && fields[1] == "-1" {
				sign = -1
			}
		case line == "w":
			inW = true
		case inW && line != "":
			v, err := strconv.ParseFloat(strings.Fields(line)[0], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			w = append(w, sign*v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// LIBLINEAR stores as many weights as the largest feature index it
	// saw; our d can be the same or larger.
	if len(w) > d {
		return nil, fmt.Errorf("%s: %d weights for %d features", path, len(w), d)
	}
	for len(w) < d {
		w = append(w, 0)
	}
	return w, nil
}

// LassoMaxL1 returns ‖Aᵀb‖∞/n, the smallest L1 weight at which the lasso's
// solution is 0.
func LassoMaxL1(x *sparse.CSR, b []float64) float64 {
	worst := 0.0
	for _, c := range DenseColumns(x) {
		var s float64
		for k, v := range c {
			s += v * b[k]
		}
		worst = math.Max(worst, math.Abs(s)/float64(x.Rows))
	}
	return worst
}

// AdaSPDCOptions returns the default options with their defaults filled in
// and AdaSPDC named, where many tests start from.
func AdaSPDCOptions() driver.Options {
	o := driver.DefaultOptions()
	o.Solver = "adaspdc"
	return o.WithDefaults()
}

// RawCountData draws a two-class text-like problem in raw counts, as
// news20 is before any scaling. The first topics columns are topic words,
// the first half of them the +1 class's, the second half the −1 class's;
// the next d − topics are a common vocabulary drawn with Zipf-like
// frequencies, so that many of its columns hold one or two rows. A
// document's length is log-uniform on [4, maxLen], a third of its words
// are its class's topic words, and a word's count is heavy-tailed,
// P(count ≥ c) = c^−2.2 (news20: 78% ones, a count of 20 or more in a
// thousand). A fraction flip of the documents carry the other class's
// label (misfiled), and each of them own words of its own besides, columns
// after the first d that only it holds, each twice. Row norms range over
// two orders of magnitude; a long misfiled document is misclassified by a
// margin of tens once the topic words' weights grow, and only then do its
// own words' gradients, 2|φ′|/n, pass l1 = 1/n, with curvature 4φ″/n.
func RawCountData(n, d, topics, maxLen, own int, flip float64, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	b := make([]float64, n)
	counts := make(map[int32]float64)
	half := topics / 2
	for k := range n {
		clear(counts)
		class := rng.IntN(2) // 0: +1, 1: −1
		words := int(4 * math.Pow(float64(maxLen)/4, rng.Float64()))
		for range words {
			var j int32
			if rng.IntN(3) == 0 {
				j = int32(class*half + rng.IntN(half))
			} else {
				// Zipf-like: low indices are frequent.
				j = int32(topics + int(float64(d-topics)*math.Pow(rng.Float64(), 4)))
			}
			counts[j] += math.Min(math.Floor(math.Pow(1-rng.Float64(), -1/2.2)), 1000)
		}
		b[k] = float64(1 - 2*class)
		if rng.Float64() < flip {
			b[k] = -b[k]
			for range own {
				counts[int32(x.Cols)] = 2
				x.Cols++
			}
		}
		cols := make([]int32, 0, len(counts))
		for j := range counts {
			cols = append(cols, j)
		}
		slices.Sort(cols)
		for _, j := range cols {
			x.Indices = append(x.Indices, j)
			x.Values = append(x.Values, counts[j])
		}
		x.Indptr[k+1] = int64(len(x.Indices))
	}
	return x, b
}

// Shares cuts prob's rows into p contiguous shares (the first rows·r/p to
// rows·(r+1)/p), each a problem of its own whose X has only the columns up
// to its largest index, as a rank that read its part of a file would have
// it.
func Shares(prob objective.Problem, p int) []objective.Problem {
	x := prob.X
	out := make([]objective.Problem, p)
	for r := range p {
		lo, hi := x.Rows*r/p, x.Rows*(r+1)/p
		a, b := x.Indptr[lo], x.Indptr[hi]
		indptr := make([]int64, hi-lo+1)
		for k := range indptr {
			indptr[k] = x.Indptr[lo+k] - a
		}
		cols := 0
		for _, j := range x.Indices[a:b] {
			cols = max(cols, int(j)+1)
		}
		q := prob
		q.X = &sparse.CSR{Rows: hi - lo, Cols: cols, Indptr: indptr, Indices: x.Indices[a:b], Values: x.Values[a:b]}
		q.B = prob.B[lo:hi]
		if prob.SampleWeights != nil {
			q.SampleWeights = prob.SampleWeights[lo:hi]
		}
		out[r] = q
	}
	return out
}
