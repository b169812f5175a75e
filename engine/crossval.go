package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/adaspdc/adaspdc/engine/driver"
	"golang.org/x/sync/errgroup"
)

// Folds splits the rows of a problem with labels b into k folds for
// cross-validation and returns the rows each fold holds out, in increasing
// order. With stratify (for class labels), each class's rows are shuffled
// and dealt to the folds in turn, so that every fold has the class
// proportions of the whole to within one row per class; otherwise all rows
// are shuffled and dealt alike. The split depends only on b, k and seed.
func Folds(b []float64, k int, seed uint64, stratify bool) ([][]int, error) {
	n := len(b)
	if k < 2 || k > n {
		return nil, fmt.Errorf("engine: %d folds for %d rows: want 2 ≤ k ≤ rows", k, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0xf01d5))
	groups := map[float64][]int{}
	var keys []float64
	for i, v := range b {
		key := 0.0
		if stratify {
			key = v
		}
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], i)
	}
	slices.Sort(keys) // map order is random; the deal must not be
	folds := make([][]int, k)
	next := 0
	for _, key := range keys {
		rows := groups[key]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for _, r := range rows {
			folds[next] = append(folds[next], r)
			next = (next + 1) % k
		}
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds, nil
}

// CVScore is the held-out score of one λ: the accuracy (the fraction of
// held-out rows whose margin has the sign of their label) for a
// classification loss, the root-mean-square error for a regression.
type CVScore struct {
	Lambda float64 // the value of the parameter searched: λ, or l1 on an L1 path
	// NonZeros is the mean over the folds of the models' nonzero weights.
	NonZeros float64
	Accuracy float64 // classification; NaN for a regression
	RMSE     float64 // regression; NaN for a classification
	// Gaps are each fold's final relative duality gap: every fold's model
	// is certified like any other run.
	Gaps []float64
}

// better reports whether s is a better score than t.
func (s CVScore) better(t CVScore) bool {
	if !math.IsNaN(s.Accuracy) {
		return s.Accuracy > t.Accuracy
	}
	return s.RMSE < t.RMSE
}

// PathResult is what LambdaPath found: the score of every λ it tried, in
// the order tried, and the index of the best.
type PathResult struct {
	Scores []CVScore
	Best   int
}

// CrossValidate trains on k − 1 folds and scores the held-out fold, for
// each of the k folds, at the problem's own regularizer, and returns the
// pooled score. The folds share the cores (see LambdaPath).
func CrossValidate(ctx context.Context, prob Problem, opt Options, folds [][]int) (CVScore, error) {
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return CVScore{}, fmt.Errorf("engine: cross-validation takes the elastic net, not %s", prob.Reg.Name())
	}
	res, err := LambdaPath(ctx, prob, opt, folds, []float64{en.Lambda}, 0)
	if err != nil {
		return CVScore{}, err
	}
	return res.Scores[0], nil
}

// LambdaPath cross-validates the elastic net's λ over grid, in order
// (from the largest λ down, so that each fold's solution warm-starts the
// next point: at a smaller λ the optimum moves little from the last, and a
// warm start is where Newton's and the coordinate methods' passes are
// saved). Each point is stopped by its own gap, Options.Tol. The path ends
// early once patience points in a row fail to improve on the best score
// (0: never), as LIBLINEAR's search over C ends when the models stop
// changing.
//
// The folds run side by side, each on its share of the threads
// (Options.Threads, or GOMAXPROCS): with k folds and t threads, min(k, t)
// folds at a time with t / min(k, t) threads each, so that two cores pay
// for a search even where one fit is too small to share. The rows of a
// fold's training set are copied once, for the whole path.
func LambdaPath(ctx context.Context, prob Problem, opt Options, folds [][]int, grid []float64, patience int) (*PathResult, error) {
	return regPath(ctx, prob, nil, opt, folds, grid, patience, setLambda)
}

func setLambda(en ElasticNet, v float64) ElasticNet { en.Lambda = v; return en }
func setL1(en ElasticNet, v float64) ElasticNet     { en.L1 = v; return en }

// OneVsRestPath is LambdaPath (or, with l1, L1Path) for a problem of three
// classes or more: each fold's model is TrainOneVsRest's on the raw labels
// y, scored by the class it predicts. Its fits start cold at every point.
func OneVsRestPath(ctx context.Context, prob Problem, y []float64, opt Options, folds [][]int, grid []float64, patience int, l1 bool) (*PathResult, error) {
	if len(y) != rowsOf(prob) {
		return nil, fmt.Errorf("engine: %d labels for %d rows", len(y), rowsOf(prob))
	}
	set := setLambda
	if l1 {
		set = setL1
	}
	return regPath(ctx, prob, y, opt, folds, grid, patience, set)
}

// L1Path is LambdaPath over the elastic net's L1 strength, with λ fixed:
// the path of sparse models, from L1Max (where every weight is zero) down.
// Each point's fits are warm-started from the last, which for newGLMNET
// also means that its shrinking starts from the last support.
func L1Path(ctx context.Context, prob Problem, opt Options, folds [][]int, grid []float64, patience int) (*PathResult, error) {
	return regPath(ctx, prob, nil, opt, folds, grid, patience, setL1)
}

// L1Max returns the smallest L1 strength at which w = 0 is optimal for
// prob with its λ: ‖∇L(0)‖∞ = ‖(1/n) Σₖ φ′(0, bₖ) aₖ‖∞.
func L1Max(prob Problem) float64 {
	g := make([]float64, prob.X.Cols)
	for k := range prob.X.Rows {
		val, idx := prob.X.Row(k)
		d := prob.Loss.Deriv(0, prob.B[k]) / float64(prob.X.Rows)
		for p, j := range idx {
			g[j] += d * val[p]
		}
	}
	var m float64
	for _, v := range g {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// regPath is the path of LambdaPath, L1Path and OneVsRestPath: set returns
// the regularizer at a grid value; y, when not nil, are the raw labels of a
// one-vs-rest problem. The folds of a grid point run side by side, each
// warm-started from its own fit at the point before.
func regPath(ctx context.Context, prob Problem, y []float64, opt Options, folds [][]int, grid []float64, patience int, set func(ElasticNet, float64) ElasticNet) (*PathResult, error) {
	if err := prob.Validate(); err != nil {
		return nil, err
	}
	en, ok := prob.Reg.AsElasticNet()
	if !ok {
		return nil, fmt.Errorf("engine: the λ path takes the elastic net, not %s", prob.Reg.Name())
	}
	if len(grid) == 0 {
		return nil, errors.New("engine: the λ path has no grid")
	}
	fs, err := splitFolds(prob, y, folds)
	if err != nil {
		return nil, err
	}
	k := len(fs)
	budget := driver.ThreadBudget(opt.Threads)
	parallel := min(k, budget)
	opt.Threads, opt.Callback = max(1, budget/parallel), nil
	res := &PathResult{}
	stale := 0
	for _, lam := range grid {
		if !(lam >= 0) || math.IsInf(lam, 0) {
			return nil, fmt.Errorf("engine: λ = %v in the grid: want finite values ≥ 0", lam)
		}
		reg := set(en, lam)
		scores := make([]foldScore, k)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(parallel)
		for f := range fs {
			g.Go(func() error {
				sc, err := fs[f].fit(gctx, prob, y, reg, opt)
				if err != nil {
					return fmt.Errorf("fold %d of %d at λ = %g: %w", f+1, k, lam, err)
				}
				scores[f] = sc
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		score := CVScore{Lambda: lam, Accuracy: math.NaN(), RMSE: math.NaN(), Gaps: make([]float64, k)}
		var c, s float64
		for f, sc := range scores {
			c += sc.correct
			s += sc.sse
			score.NonZeros += float64(sc.nonzeros) / float64(k)
			score.Gaps[f] = sc.gap
		}
		if prob.Loss.Classification() {
			score.Accuracy = c / float64(prob.X.Rows)
		} else {
			score.RMSE = math.Sqrt(s / float64(prob.X.Rows))
		}
		res.Scores = append(res.Scores, score)
		if len(res.Scores) == 1 || score.better(res.Scores[res.Best]) {
			res.Best, stale = len(res.Scores)-1, 0
		} else if stale++; patience > 0 && stale >= patience {
			break
		}
	}
	return res, nil
}

// pathFold is one fold of a path: its training problem, the raw labels of
// its training rows for one-vs-rest, its held-out rows, and the weights of
// its last fit, from which the next grid point starts.
type pathFold struct {
	train  Problem
	labels []float64
	test   []int
	warm   []float64
}

// foldScore is what one fold's fit scores on its held-out rows.
type foldScore struct {
	correct, sse float64
	nonzeros     int
	gap          float64 // the fit's relative gap (the largest of its classes')
}

// splitFolds checks the folds (rows in range, none held out twice) and
// builds each fold's training problem from the rows it does not hold out.
func splitFolds(prob Problem, y []float64, folds [][]int) ([]pathFold, error) {
	held := make([]bool, prob.X.Rows)
	for _, f := range folds {
		for _, r := range f {
			if r < 0 || r >= prob.X.Rows || held[r] {
				return nil, fmt.Errorf("engine: fold row %d is out of range or held out twice", r)
			}
			held[r] = true
		}
	}
	fs := make([]pathFold, len(folds))
	for f, test := range folds {
		in := make([]bool, prob.X.Rows)
		for _, r := range test {
			in[r] = true
		}
		rows := make([]int, 0, prob.X.Rows-len(test))
		for r := range prob.X.Rows {
			if !in[r] {
				rows = append(rows, r)
			}
		}
		pick := func(v []float64) []float64 {
			out := make([]float64, len(rows))
			for i, r := range rows {
				out[i] = v[r]
			}
			return out
		}
		tp := prob
		tp.X, tp.B = prob.X.SelectRows(rows), pick(prob.B)
		if prob.SampleWeights != nil {
			tp.SampleWeights = pick(prob.SampleWeights)
		}
		fs[f] = pathFold{train: tp, test: test}
		if y != nil {
			fs[f].labels = pick(y)
		}
	}
	return fs, nil
}

// fit trains the fold at the regularizer reg (one-vs-rest when y is not
// nil, from scratch; otherwise warm-started from the fold's last fit) and
// scores the model on the held-out rows of prob.
func (fd *pathFold) fit(ctx context.Context, prob Problem, y []float64, reg Regularizer, opt Options) (foldScore, error) {
	var sc foldScore
	p := fd.train
	p.Reg = reg
	var model *Model
	if y != nil {
		opt.WarmStart = nil
		m, rs, err := TrainOneVsRest(ctx, p, fd.labels, opt, nil)
		if err != nil {
			return sc, err
		}
		for _, c := range rs {
			if c.Result != nil {
				sc.gap = math.Max(sc.gap, c.Result.Model.RelGap)
			}
		}
		model = m
	} else {
		opt.WarmStart = fd.warm
		m, r, err := Train(ctx, p, opt)
		if err != nil {
			return sc, err
		}
		fd.warm, sc.gap, model = m.Weights, r.Model.RelGap, m
	}
	for _, v := range model.Weights {
		if v != 0 {
			sc.nonzeros++
		}
	}
	for _, row := range fd.test {
		val, idx := prob.X.Row(row)
		switch {
		case y != nil:
			if model.Predict(val, idx) == y[row] {
				sc.correct++
			}
		case prob.Loss.Classification():
			if (model.Margin(val, idx) > 0) == (prob.B[row] > 0) {
				sc.correct++
			}
		default:
			z := model.Margin(val, idx)
			sc.sse += (z - prob.B[row]) * (z - prob.B[row])
		}
	}
	return sc, nil
}

// LambdaGrid returns the geometric grid of count values from hi down to lo.
func LambdaGrid(hi, lo float64, count int) []float64 {
	if count <= 1 {
		return []float64{hi}
	}
	g := make([]float64, count)
	ratio := math.Pow(lo/hi, 1/float64(count-1))
	for i := range g {
		g[i] = hi * math.Pow(ratio, float64(i))
	}
	g[count-1] = lo
	return g
}

// LambdaMax returns where the automatic λ search starts for prob: LIBLINEAR's
// starting C (its find_parameter_C) turned into λ = 1/(nC): C₀ is 1/(n·
// max‖aₖ‖²) for the logistic loss and half that for the squared losses,
// rounded down to a power of two; so λ_max = 2^⌈log₂ max‖aₖ‖²⌉ (twice that
// for the squared losses). Above it the models are all but constant.
func LambdaMax(prob Problem) float64 {
	var m float64
	for _, sq := range prob.X.RowSquaredNorms() {
		m = math.Max(m, sq)
	}
	if m == 0 {
		return 1
	}
	if _, lr := prob.Loss.(Logistic); !lr {
		m *= 2
	}
	return math.Exp2(math.Ceil(math.Log2(m)))
}
