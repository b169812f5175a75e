package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// LossMultinomial names the multinomial (softmax) logistic objective in
// Objective.Loss,
//
//	P(W) = (1/n) Σₖ (log Σⱼ exp(aₖᵀWⱼ) − aₖᵀW_{cₖ}) + (λ/2)‖W‖²,
//
// one weight vector per class of the raw labels: ours is adaspdc train
// -multiclass multinomial (engine.TrainMultinomial), the peer
// scikit-learn's LogisticRegression with the lbfgs solver, whose
// multinomial loss is the same objective at C = 1/(nλ). LIBLINEAR has no
// softmax solver (its multi-class models are one against the rest or
// Crammer and Singer's), so it sits this objective out.
const LossMultinomial = "multinomial"

// sklearnMultinomialScript fits LogisticRegression(solver="lbfgs") with
// the multinomial loss, no intercept, and writes W class-major (K lines
// of d weights, the classes in sorted order, as ours) and the classes
// after. argv: data, features, C, tol, out.
//
// The multi_class argument is deprecated from scikit-learn 1.5, where the
// multinomial loss is what lbfgs fits for three classes or more, and it
// is passed only to older versions. Two classes are fitted as the binary
// logistic regression at 2C in every version, which is the same problem:
// with W = (−w/2, w/2) the softmax loss is the logistic loss of w and
// ‖W‖² = ‖w‖²/2, and the optimum has that form (its classes sum to zero).
const sklearnMultinomialScript = `
import sys, time, numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
path, d, c, tol, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
t = time.perf_counter()
X, y = load_svmlight_file(path, n_features=d)
read = time.perf_counter() - t
classes = np.unique(y)
t = time.perf_counter()
kw = dict(solver="lbfgs", C=c, tol=tol, max_iter=1000000, fit_intercept=False)
if len(classes) == 2:
    kw["C"] = 2 * c
elif tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 5):
    kw["multi_class"] = "multinomial"
m = LogisticRegression(**kw).fit(X, y)
W = m.coef_
if len(classes) == 2:
    W = np.vstack([-W[0] / 2, W[0] / 2])
np.savetxt(out, W.ravel(), fmt="%.17g")
with open(out + ".classes", "w") as f:
    f.write(" ".join("%.17g" % v for v in m.classes_))
print("read_seconds %.3f fit_seconds %.3f n_iter %d sklearn %s" % (read, time.perf_counter() - t, int(np.max(m.n_iter_)), sklearn.__version__))
`

// multinomialProblem returns the softmax problem of the data at λ, its
// classes in sorted order and each row's class index, as
// engine.TrainMultinomial forms them, and the scalar problem that
// TrainMultinomial takes the data and regularizer from.
func multinomialProblem(data *Data, lambda float64) (objective.Multinomial, engine.Problem, []float64) {
	classes := slices.Clone(data.Y)
	slices.Sort(classes)
	classes = slices.Compact(classes)
	class := make([]int, len(data.Y))
	for i, v := range data.Y {
		class[i], _ = slices.BinarySearch(classes, v)
	}
	reg := engine.ElasticNet{Lambda: lambda}
	mp := objective.Multinomial{X: data.X, Class: class, K: len(classes), Reg: reg}
	prob := engine.Problem{X: data.X, B: data.Y, Loss: engine.Logistic{}, Reg: reg}
	return mp, prob, classes
}

// sklearnMultinomialWeights reads the script's W (class-major, K·d) and
// returns it feature-major, W[j·K + c], as objective.Multinomial stores
// it, after checking that its classes are ours in our order.
func sklearnMultinomialWeights(out string, d int, classes []float64) ([]float64, error) {
	k := len(classes)
	w, err := readWeights(out, d*k)
	if err != nil {
		return nil, err
	}
	got, err := readWeights(out+".classes", k)
	if err != nil {
		return nil, fmt.Errorf("scikit-learn's classes: %w", err)
	}
	if !slices.Equal(got, classes) {
		return nil, fmt.Errorf("scikit-learn's classes %v are not ours %v", got, classes)
	}
	fm := make([]float64, d*k)
	for c := range k {
		for j := range d {
			fm[j*k+c] = w[c*d+j]
		}
	}
	return fm, nil
}

// loosestRuns hands each target to the loosest run of a ladder that
// reaches it: with rel[k] the relative suboptimality of run k, runs loose
// to tight, it calls reach(first, last, k) for each run k that is the
// first at or below the targets PeerTargets[first:last].
func loosestRuns(rel []float64, reach func(first, last, k int)) {
	next := 0
	for k, r := range rel {
		if next == len(PeerTargets) || r > PeerTargets[next] {
			continue
		}
		first := next
		for next < len(PeerTargets) && r <= PeerTargets[next] {
			next++
		}
		reach(first, next, k)
	}
}

// ladderRun is one tolerance of a peer's ladder and the primal objective
// its model reached, by our evaluator.
type ladderRun struct {
	tol    string
	primal float64
	out    string // the script's line: its fit time and iterations
}

// peersMultinomial is peersOne for the softmax objective: the reference by
// our L-BFGS to a relative gap of 1e-10, scikit-learn's lbfgs ladder scored
// with objective.MultinomialEvaluator (its tightest model a second
// candidate for P*), and ours stopped by -target-primal.
func peersMultinomial(ctx context.Context, cfg PeersConfig, data *Data, path string, obj Objective, py, tmp string, log io.Writer) (*PeerProblem, error) {
	if obj.L1 > 0 || !(obj.Lambda > 0) {
		return nil, errors.New("the multinomial objective takes λ > 0 and no L1 term")
	}
	mp, prob, classes := multinomialProblem(data, obj.Lambda)
	if err := mp.Validate(); err != nil {
		return nil, err
	}
	n, d, k := data.X.Rows, data.X.Cols, len(classes)
	pp := &PeerProblem{Data: data.Name, Objective: obj, Rows: n, Cols: d, Times: map[string][]PeerTiming{}}
	pp.Notes = append(pp.Notes, fmt.Sprintf("%d classes, %d weights; LIBLINEAR has no softmax solver and is not compared", k, d*k))
	workers := cfg.Threads
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	eval := objective.NewMultinomialEvaluator(mp, workers)

	fmt.Fprintf(log, "peers: %s %s %s: certifying the reference optimum…\n", data.Name, obj.Loss, obj.Reg())
	opt := engine.DefaultOptions()
	opt.Tol = 1e-10
	opt.MaxEpochs = cfg.RefEpochs
	opt.Threads = cfg.Threads
	_, r, err := engine.TrainMultinomial(ctx, prob, data.Y, opt)
	if err != nil && (r == nil || len(r.Trace) == 0) {
		return nil, err
	}
	ref := refLadder{pstar: r.Best.Primal, dual: r.Best.Dual}
	pp.RefFrom = fmt.Sprintf("adaspdc -multiclass multinomial -solver %s, %d epochs, relative gap %.1e", r.Solver, r.Best.Epoch, r.Best.RelGap)

	model := filepath.Join(tmp, "model")
	var runs []ladderRun
	var tool string
	if py == "" {
		pp.Notes = append(pp.Notes, "scikit-learn is not installed: ours alone is timed")
	} else {
		tool = "sklearn lbfgs multinomial"
		pp.Tools = append(pp.Tools, tool)
		cs := strconv.FormatFloat(1/(float64(n)*obj.Lambda), 'g', -1, 64)
		mk := func(ctx context.Context, tol string) *exec.Cmd {
			return exec.CommandContext(ctx, py, "-c", sklearnMultinomialScript, path, strconv.Itoa(d), cs, tol, model)
		}
		// Loose to tight; a run that reaches the tightest target against
		// the reference ends the ladder. scikit-learn's tol bounds the
		// largest gradient entry of its own objective, which some versions
		// (1.2 among them) sum over the rows rather than average: on a few
		// thousand rows tol 1e-2 already lands near 1e-7, so the ladder
		// starts far looser.
		for _, tol := range []string{"1e2", "1e1", "1", "1e-1", "1e-2", "1e-3", "1e-4", "1e-5", "1e-6", "1e-7", "1e-8", "1e-9", "1e-10", "1e-12"} {
			tctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			out, err := mk(tctx, tol).CombinedOutput()
			timedOut := tctx.Err() != nil
			cancel()
			if timedOut {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s with tolerance %s ran past the %v limit: tighter tolerances not tried", tool, tol, cfg.Timeout))
				break
			}
			if err != nil {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s with tolerance %s failed: %v: %s", tool, tol, err, lastLine(strings.TrimSpace(string(out)))))
				break
			}
			w, err := sklearnMultinomialWeights(model, d, classes)
			if err != nil {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s: %v", tool, err))
				break
			}
			c, err := eval.At(w)
			if err != nil {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s: %v", tool, err))
				break
			}
			runs = append(runs, ladderRun{tol: tol, primal: c.Primal, out: strings.TrimSpace(string(out))})
			fmt.Fprintf(log, "peers: %s tol %s: relative suboptimality %.2e (%s)\n", tool, tol, ref.rel(c.Primal), strings.TrimSpace(string(out)))
			if ref.add(c.Primal, c.Dual, "scikit-learn's lbfgs at tol "+tol) {
				break
			}
		}
	}
	ref.set(pp)
	fmt.Fprintf(log, "peers: P* = %.12g (within %.1e; %s)\n", pp.PStar, pp.Bound, pp.RefFrom)

	// The peer's loosest tolerance to reach each target, against the final
	// P* (a peer's model below our reference moves it).
	var jobs []timedJob
	if tool != "" {
		times := make([]PeerTiming, len(PeerTargets))
		for i := range times {
			times[i] = PeerTiming{Tool: tool, Seconds: math.NaN()}
		}
		cs := strconv.FormatFloat(1/(float64(n)*obj.Lambda), 'g', -1, 64)
		rel := make([]float64, len(runs))
		for k, run := range runs {
			rel[k] = (run.primal - pp.PStar) / math.Abs(pp.PStar)
		}
		loosestRuns(rel, func(first, last, k int) {
			run, tol := runs[k], runs[k].tol
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s tol %s: P = %.12g, relative suboptimality %.1e (%s)", tool, tol, run.primal, rel[k], run.out))
			jobs = append(jobs, timedJob{
				mk: func() *exec.Cmd {
					return exec.CommandContext(ctx, py, "-c", sklearnMultinomialScript, path, strconv.Itoa(d), cs, tol, model)
				},
				set: func(sec, cpu float64) {
					for i := first; i < last; i++ {
						times[i] = PeerTiming{Tool: tool, Setting: "tol " + tol, Seconds: sec, CPU: cpu}
					}
				},
			})
		})
		pp.Times[tool] = times
	}

	// Ours: the fastest solver to each target, whole process, stopped by
	// -target-primal. Neither multinomial solver takes -m (lbfgs has no
	// blocks; sdca's multinomial step is one row at a time).
	ours := make([]PeerTiming, len(PeerTargets))
	for i := range ours {
		ours[i] = PeerTiming{Tool: "adaspdc", Seconds: math.NaN()}
	}
	ourRuns := make([]string, len(PeerTargets)) // the summary line of the fastest
	var skipped []string
	for i, target := range PeerTargets {
		for _, solver := range ourSolvers(cfg.Solvers) {
			auto := solver == "" || solver == "auto"
			if !auto && !engine.IsMultinomialSolver(engine.Solver(solver)) {
				if i == 0 {
					skipped = append(skipped, solver)
				}
				continue
			}
			tp := pp.PStar + target*math.Abs(pp.PStar)
			args := []string{"train", "-quiet", "-data", path, "-multiclass", "multinomial", "-loss", "logistic",
				"-lambda", strconv.FormatFloat(obj.Lambda, 'g', -1, 64),
				"-threads", strconv.Itoa(cfg.Threads), "-tol", "-1", "-max-epochs", "100000", "-time-limit", cfg.Timeout.String(),
				"-target-primal", strconv.FormatFloat(tp, 'g', 17, 64)}
			setting := "auto"
			if !auto {
				args = append(args, "-solver", solver)
				setting = solver
			}
			mk := func() *exec.Cmd { return exec.CommandContext(ctx, cfg.Self, args...) }
			out, err := mk().CombinedOutput()
			if err != nil {
				fmt.Fprintf(log, "peers: adaspdc %s to %g: not reached: %v: %s\n", setting, target, err, lastLine(strings.TrimSpace(string(out))))
				continue
			}
			// The summary prints the primal to 12 digits: allow its rounding.
			if p := outputField(string(out), "primal"); !(p <= tp+1e-11*math.Abs(tp)) {
				continue
			}
			summary := strings.TrimSpace(string(out))
			fmt.Fprintf(log, "peers: adaspdc %s to %g: %s\n", setting, target, summary)
			jobs = append(jobs, timedJob{mk: mk, set: func(sec, cpu float64) {
				if math.IsNaN(ours[i].Seconds) || sec < ours[i].Seconds {
					ours[i] = PeerTiming{Tool: "adaspdc", Setting: setting, Seconds: sec, CPU: cpu}
					ourRuns[i] = summary
				}
			}})
		}
	}
	if len(skipped) > 0 {
		pp.Notes = append(pp.Notes, fmt.Sprintf("solvers %s do not take the multinomial loss: not timed", strings.Join(skipped, ", ")))
	}
	timeInRounds(cfg.Runs, jobs)
	for i, target := range PeerTargets {
		o, p := ours[i], pp.best(i)
		if !math.IsNaN(o.Seconds) && !math.IsNaN(p.Seconds) {
			pp.Notes = append(pp.Notes, fmt.Sprintf("to %s, CPU seconds (user + system, median): ours %.2f (%s), %s %.2f (%s): ratio %.2f",
				epsName(target), o.CPU, o.Setting, p.Tool, p.CPU, p.Setting, o.CPU/p.CPU))
		}
	}
	for i, target := range PeerTargets {
		if ourRuns[i] != "" {
			p := outputField(ourRuns[i], "primal")
			pp.Notes = append(pp.Notes, fmt.Sprintf("adaspdc to %s: P = %.12g, relative suboptimality %.1e (its first run: %s)", epsName(target), p, (p-pp.PStar)/math.Abs(pp.PStar), ourRuns[i]))
		}
	}
	for i, target := range PeerTargets {
		fmt.Fprintf(log, "peers: adaspdc to %g: %.3fs (%s); best peer %s\n", target, ours[i].Seconds, ours[i].Setting, peerCell(pp.best(i)))
	}
	pp.Times["adaspdc"] = ours
	return pp, nil
}

// lastLine returns the last line of s: a Python traceback ends with the
// error.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
