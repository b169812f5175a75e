package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

// lambdaValue is -lambda: a number, or "auto" for the cross-validated
// search.
type lambdaValue struct {
	v    *float64
	auto *bool
}

func (l lambdaValue) String() string {
	if l.auto != nil && *l.auto {
		return "auto"
	}
	if l.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*l.v, 'g', -1, 64)
}

func (l lambdaValue) Set(s string) error {
	if s == "auto" {
		*l.auto = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a number ≥ 0 or auto")
	}
	*l.v, *l.auto = v, false
	return nil
}

// parseGrid reads -lambda-grid's hi:lo:count.
func parseGrid(s string) ([]float64, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, errors.New("want hi:lo:count")
	}
	hi, err1 := strconv.ParseFloat(parts[0], 64)
	lo, err2 := strconv.ParseFloat(parts[1], 64)
	count, err3 := strconv.Atoi(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, errors.New("want hi:lo:count, two numbers and a whole number")
	}
	if !(hi > 0) || !(lo > 0) || lo > hi || math.IsInf(hi, 0) || count < 1 || count > 1000 {
		return nil, errors.New("want hi ≥ lo > 0, finite, and 1 ≤ count ≤ 1000")
	}
	return engine.LambdaGrid(hi, lo, count), nil
}

// searchPatience is how many grid points in a row may fail to improve on
// the best cross-validated score before the search stops: the score of a
// path rises to a plateau as λ falls and then sinks as the models overfit,
// and its last digits wander on the plateau.
const searchPatience = 5

// searchTol is the relative gap at which the fits of a search stop when
// -tol is not given.
const searchTol = 1e-4

// l1GridPoints is the length of the default L1 path.
const l1GridPoints = 30

// searchLambda runs -cv alone (the score at -lambda) or -lambda auto (the
// search), prints what it finds and returns the best λ.
func searchLambda(ctx context.Context, prob engine.Problem, classesY []float64, opt engine.Options, f trainFlags, grid []float64, stdout, stderr io.Writer) (float64, error) {
	k := f.cv
	if k == 0 {
		k = 5
	}
	strata := prob.B
	if classesY != nil {
		strata = classesY // one-vs-rest: stratify by class
	}
	folds, err := engine.Folds(strata, k, f.seed, prob.Loss.Classification())
	if err != nil {
		return 0, err
	}
	if f.timeLimit > 0 {
		// The limit bounds the whole search, not each fit.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeLimit)
		defer cancel()
		opt.TimeLimit = 0
	}
	opt.Callback = nil
	if !f.tolSet {
		// Held-out scores do not move below a relative gap of 1e-4, and the
		// fits of a search are many: they stop there unless -tol says
		// otherwise (LIBLINEAR's -v and -C run at its default, loose eps).
		opt.Tol = searchTol
	}
	patience := 0
	path, name := engine.LambdaPath, "lambda"
	switch {
	case f.l1Auto:
		path, name = engine.L1Path, "l1"
		patience = searchPatience
		if grid == nil {
			// glmnet's path: from where every weight is zero down to
			// 10⁻⁴ of it.
			hi := engine.L1Max(prob)
			grid = engine.LambdaGrid(hi, hi*1e-4, l1GridPoints)
		}
	case !f.lambdaAuto:
		grid = []float64{f.lambda}
	default:
		patience = searchPatience
		if grid == nil {
			// From λ_max, where LIBLINEAR's search over C starts, halving
			// (C doubling) down to LIBLINEAR's largest C, 1024.
			hi, lo := engine.LambdaMax(prob), 1/(1024*float64(prob.X.Rows))
			count := 1
			if hi > lo {
				count = int(math.Round(math.Log2(hi/lo))) + 1
			}
			grid = engine.LambdaGrid(hi, lo, count)
		}
	}
	if classesY != nil {
		l1 := f.l1Auto
		path = func(ctx context.Context, prob engine.Problem, opt engine.Options, folds [][]int, grid []float64, patience int) (*engine.PathResult, error) {
			return engine.OneVsRestPath(ctx, prob, classesY, opt, folds, grid, patience, l1)
		}
	}
	res, err := path(ctx, prob, opt, folds, grid, patience)
	if err != nil {
		return 0, err
	}
	show := func(s engine.CVScore) string {
		if !math.IsNaN(s.Accuracy) {
			return fmt.Sprintf("cv_accuracy=%.4f%%", 100*s.Accuracy)
		}
		return fmt.Sprintf("cv_rmse=%.6g", s.RMSE)
	}
	search := f.lambdaAuto || f.l1Auto
	if search && !f.quiet {
		for _, s := range res.Scores {
			worst := 0.0
			for _, g := range s.Gaps {
				worst = math.Max(worst, g)
			}
			fmt.Fprintf(stderr, "%s %-12.6g C %-12.6g %s  nonzeros %.1f  largest fold rel_gap %.3g\n", name, s.Lambda, 1/(float64(prob.X.Rows)*s.Lambda), show(s), s.NonZeros, worst)
		}
	}
	best := res.Scores[res.Best]
	if search {
		_, err = fmt.Fprintf(stdout, "best_%s=%.6g %s nonzeros=%.1f folds=%d grid_points=%d\n", name, best.Lambda, show(best), best.NonZeros, k, len(res.Scores))
	} else {
		_, err = fmt.Fprintf(stdout, "%s folds=%d lambda=%.6g\n", show(best), k, best.Lambda)
	}
	return best.Lambda, err
}

// initialWeights reads -init's model and returns its weights in the
// columns the solver sees: remapped to the used columns (remap, when the
// solve left out empty ones), with the bias weight last.
func initialWeights(path string, dim int, bias float64, normalize string, remap []int32) ([]float64, error) {
	w, _, err := initialModel(path, dim, bias, normalize, remap)
	return w, err
}

// initialModel is initialWeights, which also returns the model as read.
func initialModel(path string, dim int, bias float64, normalize string, remap []int32) ([]float64, *engine.Model, error) {
	m, err := modelio.Load(path)
	if err != nil {
		return nil, nil, err
	}
	norm := ""
	if normalize == "unit" {
		norm = "unit"
	}
	switch {
	case m.Dim != dim:
		return nil, nil, fmt.Errorf("-init %s: the model has %d features and the data %d", path, m.Dim, dim)
	case m.Bias != bias:
		return nil, nil, fmt.Errorf("-init %s: the model's bias is %g and -bias is %g", path, m.Bias, bias)
	case m.Normalize != norm:
		return nil, nil, fmt.Errorf("-init %s: the model's rows were normalised %q and -normalize is %q", path, m.Normalize, normalize)
	}
	w := m.Weights
	if remap != nil {
		c := make([]float64, 0, len(remap)+len(w)-dim)
		for _, j := range remap {
			c = append(c, w[j])
		}
		w = append(c, w[dim:]...)
	}
	return w, m, nil
}
