package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/sparse"
	"gonum.org/v1/plot/plotter"
)

// PeerTargets are the relative suboptimalities (P − P*)/|P*| a peer
// comparison times.
var PeerTargets = []float64{1e-2, 1e-4, 1e-6}

// Objective is a loss and its regularizer: an L2 strength λ, or with L1 >
// 0 an L1 strength (λ = 0), the sparse models LIBLINEAR fits with -s 6
// (logistic) and -s 5 (squared hinge) and scikit-learn with its L1
// penalties and Lasso.
type Objective struct {
	Loss   string
	Lambda float64
	L1     float64
}

// Reg returns the objective's regularizer, as "λ = …" or "l1 = …".
func (o Objective) Reg() string {
	if o.L1 > 0 {
		return fmt.Sprintf("l1 = %g", o.L1)
	}
	return fmt.Sprintf("λ = %g", o.Lambda)
}

// strength returns the regularizer's weight: L1 when set, else λ.
func (o Objective) strength() float64 {
	if o.L1 > 0 {
		return o.L1
	}
	return o.Lambda
}

// PeersConfig is a whole-process comparison with other tools.
type PeersConfig struct {
	Data       []string // LIBSVM files or synth: specs (written to a temporary file for the tools)
	Objectives []Objective
	Tasks      []string      // TaskCV, TaskLambdaAuto: timed on every data set after its objectives
	Ms         []int         // our -m values; the fastest is kept
	Solvers    []string      // our -solver values ("" or "auto": train's own choice); nil: auto only. The fastest is kept
	Threads    int           // our -threads; 0: all cores
	Runs       int           // timed runs per configuration, the median is kept
	RefEpochs  int           // epochs allowed to the reference run
	Timeout    time.Duration // per peer process; a tolerance that takes longer ends that tool's ladder
	Self       string        // the adaspdc binary to time; empty: BuildAdaspdc's
	Python     string        // a python3 that imports sklearn; empty: found on PATH or /usr/bin
	LIBLINEAR  string        // liblinear-train; empty: found on PATH
	Command    string
	// NormalizeUnit scales every row to unit norm before anything runs;
	// the scaled data is written to a temporary file that every tool reads
	// (LIBLINEAR and scikit-learn cannot scale rows themselves).
	NormalizeUnit bool
}

// InstallHint says how to install the peers on Debian and Ubuntu.
const InstallHint = "apt-get install liblinear-tools python3-sklearn"

// PeerTiming is one tool's best time to one target.
type PeerTiming struct {
	Tool    string  // e.g. "liblinear -s 0", "sklearn saga", "adaspdc"
	Setting string  // the tolerance or m that reached the target
	Seconds float64 // whole process, median of Runs; NaN: not reached
	// CPU is the process's user and system time, median of Runs: on a
	// host shared beyond its cores the wall time is mostly waiting, and
	// the CPU time says what each tool itself spent.
	CPU float64
}

// PeerProblem is the comparison on one data set and objective.
type PeerProblem struct {
	Data      string
	Objective Objective
	Rows      int
	Cols      int
	PStar     float64 // the reference optimum
	Bound     float64 // P* − the best dual found: P* is within this of the true optimum
	RefFrom   string
	// Times[tool][target index]
	Tools []string
	Times map[string][]PeerTiming
	Notes []string
}

// PeersResult is a finished comparison.
type PeersResult struct {
	Config   PeersConfig
	Machine  Machine
	Problems []PeerProblem
	Tasks    []PeerTask
	Missing  []string // peers not installed
	Duration time.Duration
	// Interrupted, when set, says what stopped the comparison and after
	// how many problems: Problems then holds only those finished.
	Interrupted string
}

// peerTool is one way of running a peer: a name, the tolerance ladder,
// and how to run it for a tolerance and read back its weights.
type peerTool struct {
	name string
	tols []string
	// run starts the tool on the data file with tolerance tol, writing
	// the model to out; weights reads it back.
	cmd     func(ctx context.Context, data, tol, out string) *exec.Cmd
	weights func(out string) ([]float64, error)
}

// findPython returns a python3 that imports sklearn, or "".
func findPython(given string) string {
	cands := []string{given}
	if given == "" {
		cands = []string{"python3", "/usr/bin/python3"}
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if err := exec.Command(c, "-c", "import sklearn").Run(); err == nil {
			return c
		}
	}
	return ""
}

// sklearnScript fits one scikit-learn estimator without intercept and
// writes its weights, one per line. argv: data, features, tool, C (or
// alpha), tol, out.
const sklearnScript = `
import sys, time, numpy as np
from sklearn.datasets import load_svmlight_file
path, d, tool, c, tol, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
X, y = load_svmlight_file(path, n_features=d)
t = time.perf_counter()
if tool == "ridge-sag":
    from sklearn.linear_model import Ridge
    m = Ridge(alpha=c, solver="sag", tol=tol, max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
elif tool == "lasso":
    from sklearn.linear_model import Lasso
    m = Lasso(alpha=c, tol=tol, max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
elif tool == "linearsvc-l1":
    from sklearn.svm import LinearSVC
    m = LinearSVC(penalty="l1", loss="squared_hinge", C=c, tol=tol, dual=False, max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
elif tool.startswith("l1-"):
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression(penalty="l1", solver=tool[3:], C=c, tol=tol, max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
elif tool.startswith("linearsvc"):
    from sklearn.svm import LinearSVC
    m = LinearSVC(loss="squared_hinge", C=c, tol=tol, dual=(tool == "linearsvc-dual"), max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
else:
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression(solver=tool, C=c, tol=tol, max_iter=1000000, fit_intercept=False).fit(X, y)
    w = m.coef_.ravel()
np.savetxt(out, w, fmt="%.17g")
print("fit_seconds", time.perf_counter() - t)
`

// BuildAdaspdc builds the adaspdc command of this module into dir with the
// go tool, run from the module's source tree, and returns the binary's
// path: the binary users run, which a peer comparison times. (adaspdc-bench
// is not it: it links the plotting packages, whose initialisation every
// process would pay, and which adaspdc leaves out.)
func BuildAdaspdc(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "adaspdc")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/adaspdc/adaspdc/cmd/adaspdc").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("peers: building adaspdc to time it (run from the module's directory, or pass its binary: -adaspdc): %v\n%s", err, out)
	}
	return bin, nil
}

// Peers runs the comparison. When ctx is cancelled, the problems that
// finished come back beside the error (a nil result only when none did),
// so that they can still be written.
func Peers(ctx context.Context, cfg PeersConfig, log io.Writer) (*PeersResult, error) {
	if len(cfg.Data) == 0 || len(cfg.Objectives)+len(cfg.Tasks) == 0 || len(cfg.Ms) == 0 || cfg.Runs < 1 {
		return nil, errors.New("peers: need data, objectives or tasks, -m values and at least one run")
	}
	res := &PeersResult{Config: cfg, Machine: ThisMachine()}
	start := time.Now()
	if cfg.Self == "" {
		dir, err := os.MkdirTemp("", "adaspdc-peers-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if cfg.Self, err = BuildAdaspdc(ctx, dir); err != nil {
			return nil, err
		}
	}
	ll := cfg.LIBLINEAR
	if ll == "" {
		ll, _ = exec.LookPath("liblinear-train")
	}
	if ll == "" {
		res.Missing = append(res.Missing, "liblinear-train (apt-get install liblinear-tools)")
	}
	py := findPython(cfg.Python)
	if py == "" {
		res.Missing = append(res.Missing, "python3 with scikit-learn (apt-get install python3-sklearn)")
	}
	if ll == "" && py == "" {
		return res, fmt.Errorf("no peer is installed: %s", InstallHint)
	}
	tmp, err := os.MkdirTemp("", "adaspdc-peers")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, spec := range cfg.Data {
		data, err := LoadData(spec)
		if err != nil {
			return nil, err
		}
		path := spec
		if cfg.NormalizeUnit {
			data.X.NormalizeRowsUnit()
			data.Name += " (unit rows)"
		}
		if strings.HasPrefix(spec, "synth:") || cfg.NormalizeUnit {
			// The tools read files: write the generated or scaled data
			// once, in a form that reads back bit for bit.
			path = filepath.Join(tmp, "data.libsvm")
			if err := writeLIBSVM(path, data); err != nil {
				return nil, err
			}
		}
		for _, obj := range cfg.Objectives {
			if ctx.Err() != nil {
				return res.interrupt(ctx, start)
			}
			pp, err := peersOne(ctx, cfg, data, path, obj, ll, py, tmp, log)
			if ctx.Err() != nil {
				// The problem in progress had its processes killed: its
				// times are not the tools' own.
				return res.interrupt(ctx, start)
			}
			if err != nil {
				return nil, fmt.Errorf("%s, %s %s: %w", data.Name, obj.Loss, obj.Reg(), err)
			}
			res.Problems = append(res.Problems, *pp)
		}
		for _, task := range cfg.Tasks {
			if ctx.Err() != nil {
				return res.interrupt(ctx, start)
			}
			pt, err := peersTask(ctx, cfg, data.Name, path, data.X.Rows, task, ll, log)
			if ctx.Err() != nil {
				return res.interrupt(ctx, start)
			}
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", data.Name, task, err)
			}
			res.Tasks = append(res.Tasks, *pt)
		}
	}
	res.Duration = time.Since(start)
	return res, nil
}

// interrupt ends a comparison whose context was cancelled, keeping the
// problems that finished, or returning only the error when none did.
func (res *PeersResult) interrupt(ctx context.Context, start time.Time) (*PeersResult, error) {
	cause := context.Cause(ctx)
	planned := len(res.Config.Data) * (len(res.Config.Objectives) + len(res.Config.Tasks))
	done := len(res.Problems) + len(res.Tasks)
	if done == 0 {
		return nil, fmt.Errorf("interrupted before the first problem was finished: %w", cause)
	}
	res.Duration = time.Since(start)
	res.Interrupted = fmt.Sprintf("%v after %d of %d problems", cause, done, planned)
	return res, fmt.Errorf("interrupted after %d of %d problems: %w", done, planned, cause)
}

func writeLIBSVM(path string, d *Data) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := sparse.WriteLIBSVM(w, &sparse.Dataset{Name: d.Name, X: d.X, Y: d.Y}); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reference certifies P*: our engine to a relative gap of 1e-10, and, when
// LIBLINEAR is there, its tightest model; P* is the lowest primal, and the
// highest dual bounds how far P* can be above the true optimum.
func reference(ctx context.Context, prob engine.Problem, cfg PeersConfig, extra [][]float64) (pstar, bound float64, from string, err error) {
	opt := engine.DefaultOptions()
	opt.Tol = 1e-10
	opt.MaxEpochs = cfg.RefEpochs
	opt.Threads = cfg.Threads
	opt.Solver, _ = engine.AutoSolver(prob, opt) // train's own choice: the fastest we have
	_, r, err := engine.Train(ctx, prob, opt)
	if err != nil && (r == nil || len(r.Trace) == 0) {
		return 0, 0, "", err
	}
	pstar, dual := r.Best.Primal, r.Best.Dual
	from = fmt.Sprintf("adaspdc -solver %s, %d epochs, relative gap %.1e", r.Solver, r.Best.Epoch, r.Best.RelGap)
	for _, w := range extra {
		tp, err := engine.Certify(prob, w)
		if err != nil {
			continue
		}
		if tp.Primal < pstar {
			pstar = tp.Primal
			from = "LIBLINEAR -e 1e-12, certified"
		}
		dual = math.Max(dual, tp.Dual)
	}
	return pstar, pstar - dual, from, nil
}

func peersOne(ctx context.Context, cfg PeersConfig, data *Data, path string, obj Objective, ll, py, tmp string, log io.Writer) (*PeerProblem, error) {
	switch obj.Loss {
	case LossMultinomial:
		return peersMultinomial(ctx, cfg, data, path, obj, py, tmp, log)
	case LossOneVsRest:
		return peersOneVsRest(ctx, cfg, data, obj, ll, tmp, log)
	}
	prob, err := data.Problem(obj.Loss, obj.Lambda)
	if err != nil {
		return nil, err
	}
	if obj.L1 > 0 {
		prob.Reg = engine.ElasticNet{L1: obj.L1}
	}
	var pos float64 // the raw label our +1 stands for
	if prob.Loss.Classification() {
		_, lm, _ := sparse.BinaryLabels(data.Y)
		pos = lm.Pos
	}
	n, d := data.X.Rows, data.X.Cols
	pp := &PeerProblem{Data: data.Name, Objective: obj, Rows: n, Cols: d, Times: map[string][]PeerTiming{}}
	model := filepath.Join(tmp, "model")
	var tools []peerTool
	if ll != "" {
		c := 1 / (float64(n) * obj.strength())
		var solvers []string
		extraArgs := []string{}
		switch {
		case obj.L1 > 0 && obj.Loss == "logistic":
			solvers = []string{"6"} // newGLMNET: ‖w‖₁ + C Σ log-loss, C = 1/(n·l1)
		case obj.L1 > 0 && obj.Loss == "sqhinge":
			solvers = []string{"5"}
		case obj.L1 > 0:
			pp.Notes = append(pp.Notes, "LIBLINEAR has no L1 solver for the "+obj.Loss+" loss")
		case obj.Loss == "logistic":
			solvers = []string{"0", "7"}
		case obj.Loss == "sqhinge":
			solvers = []string{"2", "1"}
		case obj.Loss == "squared":
			solvers = []string{"11", "12"}
			c /= 2 // LIBLINEAR's SVR: ½‖w‖² + C Σ r², so C = 1/(2nλ)
			extraArgs = []string{"-p", "0"}
		default:
			pp.Notes = append(pp.Notes, "LIBLINEAR has no solver for the "+obj.Loss+" loss")
		}
		cs := strconv.FormatFloat(c, 'g', -1, 64)
		for _, s := range solvers {
			tools = append(tools, peerTool{
				name: "liblinear -s " + s,
				tols: []string{"1e-1", "1e-2", "1e-3", "1e-4", "1e-5", "1e-6", "1e-7", "1e-8", "1e-10"},
				cmd: func(ctx context.Context, dataPath, tol, out string) *exec.Cmd {
					args := append([]string{"-q", "-s", s, "-c", cs, "-e", tol}, extraArgs...)
					return exec.CommandContext(ctx, ll, append(args, dataPath, out)...)
				},
				weights: func(out string) ([]float64, error) { return liblinearWeights(out, d, pos) },
			})
		}
	}
	if py != "" {
		c := 1 / (float64(n) * obj.strength())
		var names []string
		switch {
		case obj.L1 > 0 && obj.Loss == "logistic":
			names = []string{"l1-saga", "l1-liblinear"}
		case obj.L1 > 0 && obj.Loss == "sqhinge":
			names = []string{"linearsvc-l1"}
		case obj.L1 > 0 && obj.Loss == "squared":
			names = []string{"lasso"}
			c = obj.L1 // Lasso: (1/2n)‖y − Xw‖² + α‖w‖₁, α = l1
		case obj.Loss == "logistic":
			names = []string{"saga", "lbfgs", "liblinear"}
		case obj.Loss == "sqhinge":
			names = []string{"linearsvc-dual", "linearsvc-primal"}
		case obj.Loss == "squared":
			names = []string{"ridge-sag"}
			c = float64(n) * obj.Lambda // Ridge: ‖y − Xw‖² + α‖w‖², α = nλ
		}
		cs := strconv.FormatFloat(c, 'g', -1, 64)
		for _, name := range names {
			tools = append(tools, peerTool{
				name: "sklearn " + name,
				tols: []string{"1e-1", "1e-2", "1e-3", "1e-4", "1e-5", "1e-6", "1e-8", "1e-10"},
				cmd: func(ctx context.Context, dataPath, tol, out string) *exec.Cmd {
					return exec.CommandContext(ctx, py, "-c", sklearnScript, dataPath, strconv.Itoa(d), name, cs, tol, out)
				},
				weights: func(out string) ([]float64, error) { return readWeights(out, d) },
			})
		}
	}

	// The reference, with LIBLINEAR's tightest model as a second candidate.
	var extra [][]float64
	if ll != "" && len(tools) > 0 && strings.HasPrefix(tools[0].name, "liblinear") {
		// Within the timeout of one tool run: on url-shaped data with 1M
		// rows -s 0 at -e 1e-12 ran for more than 5 minutes.
		rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err := tools[0].cmd(rctx, path, "1e-12", model).Run()
		cancel()
		if err == nil {
			if w, err := tools[0].weights(model); err == nil {
				extra = append(extra, w)
			}
		}
	}
	fmt.Fprintf(log, "peers: %s %s %s: certifying the reference optimum…\n", data.Name, obj.Loss, obj.Reg())
	pp.PStar, pp.Bound, pp.RefFrom, err = reference(ctx, prob, cfg, extra)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "peers: P* = %.12g (within %.1e; %s)\n", pp.PStar, pp.Bound, pp.RefFrom)
	reached := func(w []float64, target float64) (bool, float64) {
		tp, err := engine.Certify(prob, w)
		if err != nil {
			return false, math.NaN()
		}
		rel := (tp.Primal - pp.PStar) / math.Abs(pp.PStar)
		return rel <= target, rel
	}

	// The timings are taken last, in rounds (timeInRounds), so that a busy
	// moment of the shared host falls on every tool alike.
	var jobs []timedJob
	for _, tool := range tools {
		pp.Tools = append(pp.Tools, tool.name)
		times := make([]PeerTiming, len(PeerTargets))
		for i := range times {
			times[i] = PeerTiming{Tool: tool.name, Seconds: math.NaN()}
		}
		ti := 0 // the tightest target not yet reached
		for _, tol := range tool.tols {
			if ti == len(PeerTargets) {
				break
			}
			tctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			out, err := tool.cmd(tctx, path, tol, model).CombinedOutput()
			timedOut := tctx.Err() != nil
			cancel()
			if timedOut {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s with tolerance %s ran past the %v limit: tighter tolerances not tried", tool.name, tol, cfg.Timeout))
				break
			}
			if err != nil {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s with tolerance %s failed: %v: %s", tool.name, tol, err, firstLine(strings.TrimSpace(string(out)))))
				break
			}
			w, err := tool.weights(model)
			if err != nil {
				pp.Notes = append(pp.Notes, fmt.Sprintf("%s: %v", tool.name, err))
				break
			}
			_, rel := reached(w, 0)
			if ti < len(PeerTargets) && rel <= PeerTargets[ti] {
				first := ti
				for ti < len(PeerTargets) && rel <= PeerTargets[ti] {
					ti++
				}
				last := ti
				jobs = append(jobs, timedJob{
					mk: func() *exec.Cmd { return tool.cmd(ctx, path, tol, model) },
					set: func(sec, cpu float64) {
						for i := first; i < last; i++ {
							times[i] = PeerTiming{Tool: tool.name, Setting: "tol " + tol, Seconds: sec, CPU: cpu}
						}
					},
				})
			}
			fmt.Fprintf(log, "peers: %s tol %s: relative suboptimality %.2e\n", tool.name, tol, rel)
		}
		pp.Times[tool.name] = times
	}

	// Ours: the fastest m to each target, whole process, stopped by
	// -target-primal or by its own certificate (ourStops).
	ours := make([]PeerTiming, len(PeerTargets))
	for i := range ours {
		ours[i] = PeerTiming{Tool: "adaspdc", Seconds: math.NaN()}
	}
	solvers := cfg.Solvers
	if len(solvers) == 0 {
		solvers = []string{"auto"}
	}
	for i, target := range PeerTargets {
		for _, solver := range solvers {
			for mi, m := range cfg.Ms {
				if solver == SolverNewton && mi > 0 {
					break // newton has no blocks: -m does not apply
				}
				tp := pp.PStar + target*math.Abs(pp.PStar)
				for _, stop := range ourStops(pp.PStar, target) {
					args := append([]string{"train", "-quiet", "-data", path, "-loss", obj.Loss,
						"-lambda", strconv.FormatFloat(obj.Lambda, 'g', -1, 64), "-l1", strconv.FormatFloat(obj.L1, 'g', -1, 64),
						"-threads", strconv.Itoa(cfg.Threads), "-max-epochs", "5000", "-time-limit", cfg.Timeout.String()}, stop.args...)
					auto := solver == "" || solver == "auto"
					setting := fmt.Sprintf("m=%d", m)
					switch {
					case auto && m == 1:
						setting = "auto" // no -m: train's own choice
					case solver != SolverNewton:
						args = append(args, "-m", strconv.Itoa(m))
					}
					if !auto {
						args = append(args, "-solver", solver)
						setting = solver + " " + setting
						if solver == SolverNewton {
							setting = solver
						}
					}
					setting += ", " + stop.name
					mk := func() *exec.Cmd { return exec.CommandContext(ctx, cfg.Self, args...) }
					out, err := mk().CombinedOutput()
					if err != nil {
						// Status 3: stopped short of the target; others: failed.
						continue
					}
					if p := outputField(string(out), "primal"); !(p <= tp) {
						continue
					}
					jobs = append(jobs, timedJob{mk: mk, set: func(sec, cpu float64) {
						if math.IsNaN(ours[i].Seconds) || sec < ours[i].Seconds {
							ours[i] = PeerTiming{Tool: "adaspdc", Setting: setting, Seconds: sec, CPU: cpu}
						}
					}})
				}
			}
		}
	}
	timeInRounds(cfg.Runs, jobs)
	for i, target := range PeerTargets {
		fmt.Fprintf(log, "peers: adaspdc to %g: %.3fs (%s)\n", target, ours[i].Seconds, ours[i].Setting)
	}
	pp.Times["adaspdc"] = ours
	return pp, nil
}

// ourStop is one way of stopping our run at a target: its flags and its
// name in the tables.
type ourStop struct {
	name string
	args []string
}

// ourStops are the two stops our runs are timed with at a target
// (P − P*)/|P*| ≤ target, the faster of which counts:
//   - "target": -tol -1 -target-primal P*(1 + target), which certifies
//     every epoch to stop at the first primal at or below it, as the
//     peers' tolerance ladders stop at their loosest setting that reaches
//     it;
//   - "certified": -tol g, g = target·P*/max(1, P*(1 + target)), the run
//     a user makes: its relative gap is gap/max(1, |P|), so at its stop
//     P − P* ≤ gap ≤ g·max(1, P) ≤ target·P*, proved by its own
//     certificate, and it needs no certificate where the gap's rate
//     predicts the stop is epochs away (sdca's certificates take a third
//     of an epoch on wide rows).
//
// For P* ≤ 0 only the first applies: a relative gap proves nothing about
// a target relative to |P*| there without knowing P's sign.
func ourStops(pStar, target float64) []ourStop {
	tp := pStar + target*math.Abs(pStar)
	stops := []ourStop{{"target", []string{"-tol", "-1", "-target-primal", strconv.FormatFloat(tp, 'g', 17, 64)}}}
	if pStar > 0 {
		g := target * pStar / math.Max(1, tp)
		stops = append(stops, ourStop{"certified", []string{"-tol", strconv.FormatFloat(g, 'g', 17, 64)}})
	}
	return stops
}

// refLadder is P* while the peers' ladders are scored: our certified
// optimum, lowered by any peer's model whose primal is below it, and the
// highest certified dual, which bounds how far above the true optimum P*
// can be.
type refLadder struct {
	pstar, dual float64
	below       string // the model that went below our optimum, if one did
}

// add scores a model of primal p and certified dual d, named by who, and
// reports whether it reaches the tightest target against P*.
func (r *refLadder) add(p, d float64, who string) bool {
	if p < r.pstar {
		r.pstar, r.below = p, who
	}
	r.dual = max(r.dual, d)
	return r.rel(p) <= PeerTargets[len(PeerTargets)-1]
}

// rel returns the relative suboptimality of primal p against P*.
func (r *refLadder) rel(p float64) float64 { return (p - r.pstar) / math.Abs(r.pstar) }

// set gives pp its P*, the bound and, where a peer's model lowered P*,
// which one.
func (r *refLadder) set(pp *PeerProblem) {
	if r.below != "" {
		pp.RefFrom += fmt.Sprintf("; %s below it, certified", r.below)
	}
	pp.PStar, pp.Bound = r.pstar, r.pstar-r.dual
}

// timedJob is a command to time and what to do with its median wall and
// CPU times.
type timedJob struct {
	mk  func() *exec.Cmd
	set func(seconds, cpu float64)
}

// timeInRounds runs every job once per round, runs rounds, and hands each
// job the median wall and CPU times of its runs that succeeded (NaN if
// none did).
// Timing the jobs one after another, runs times each, let a busy minute of
// a shared host land on one tool alone and move its median by half while
// the others' barely moved; in rounds, such a minute falls on every tool.
func timeInRounds(runs int, jobs []timedJob) {
	t := make([][]float64, len(jobs))
	cpu := make([][]float64, len(jobs))
	for range runs {
		for k, j := range jobs {
			start := time.Now()
			c := j.mk()
			if err := c.Run(); err == nil {
				t[k] = append(t[k], time.Since(start).Seconds())
				cpu[k] = append(cpu[k], (c.ProcessState.UserTime() + c.ProcessState.SystemTime()).Seconds())
			}
		}
	}
	for k, j := range jobs {
		j.set(summarize(t[k]).Median, summarize(cpu[k]).Median)
	}
}

func outputField(out, key string) float64 {
	for _, tok := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(tok, key+"="); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return math.NaN()
}

// liblinearWeights reads a LIBLINEAR model file (modelio.LoadLIBLINEAR)
// whose problem is ours: two-class or regression, no bias, at most d
// features. The weights come back oriented towards our +1, the larger raw
// label pos (LIBLINEAR's point towards its first label), with zeros for
// the trailing features LIBLINEAR never saw.
func liblinearWeights(path string, d int, pos float64) ([]float64, error) {
	m, err := modelio.LoadLIBLINEAR(path)
	if err != nil {
		return nil, err
	}
	switch {
	case m.Classes() > 2:
		return nil, fmt.Errorf("%s: %d classes: only two-class models can be compared", path, m.Classes())
	case m.Bias != 0:
		return nil, fmt.Errorf("%s: the model has a bias term; the comparison runs without one", path)
	case m.Dim > d:
		return nil, fmt.Errorf("%s: %d weights for %d features", path, m.Dim, d)
	}
	w := make([]float64, d)
	copy(w, m.Weights)
	if m.Labels != nil && m.Labels[1] != pos {
		for j := range w {
			w[j] = -w[j]
		}
	}
	return w, nil
}

// readWeights reads one weight a line (numpy.savetxt).
func readWeights(path string, d int) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w []float64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		w = append(w, v)
	}
	if len(w) != d {
		return nil, fmt.Errorf("%s: %d weights for %d features", path, len(w), d)
	}
	return w, nil
}

// best returns the fastest peer's timing to target index i.
func (pp *PeerProblem) best(i int) PeerTiming {
	b := PeerTiming{Seconds: math.NaN()}
	for _, t := range pp.Tools {
		if s := pp.Times[t][i]; !math.IsNaN(s.Seconds) && (math.IsNaN(b.Seconds) || s.Seconds < b.Seconds) {
			b = s
		}
	}
	return b
}

// Write puts peers.md (the ratio table and every tool's times) and one
// figure per problem (peers_N.png/.svg) in dir.
func (res *PeersResult) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# bench peers: whole-process time to a relative suboptimality\n\nMeasured on this machine:\n\n%s\n```sh\n%s\n```\n\n", res.Machine.Markdown(), res.Config.Command)
	if len(res.Problems) > 0 {
		b.WriteString("Every tool runs as a whole process (reading the file included; Python's start-up and imports included for scikit-learn) " +
			"on the same objective without a bias term, C = 1/(nλ), or 1/(n·l1) for an L1 objective (scikit-learn's Lasso: α = l1). A tool reaches a target (P − P*)/|P*| by tightening its own stopping " +
			"tolerance step by step; its weights are evaluated with our objective (engine.Certify). P* is the lowest primal among our " +
			"engine run to a relative duality gap of 1e-10 and LIBLINEAR at -e 1e-12; the bound says how far above the true optimum it can be. " +
			fmt.Sprintf("Times are medians of %d runs, taken in rounds that run every timed command of the problem once; ours is the fastest of the solvers {%s} and m among {%s} (newton: no m), stopped by -target-primal P*(1 + target) or by its own duality gap at target·P* (-tol), whichever is faster (the setting says which). Ratio = ours / best peer; the target is ≤ 0.5.\n\n", res.Config.Runs, strings.Join(ourSolvers(res.Config.Solvers), ", "), joinInts(res.Config.Ms)))
	}
	if slices.ContainsFunc(res.Problems, func(pp PeerProblem) bool { return pp.Objective.Loss == LossOneVsRest }) {
		b.WriteString("For the one-vs-rest objective (ovr), P is the sum of the classes' objectives on the fitted rows (every 7th row is held out for the accuracy in the notes), P* our engine's sum with every class at a relative gap of 1e-10, and ours runs a -tol ladder as the peers do.\n\n")
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(&b, "Not installed, so not compared: %s.\n\n", strings.Join(res.Missing, "; "))
	}
	if res.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted** (%s): only the problems below, which finished, are compared.\n\n", res.Interrupted)
	}
	if len(res.Problems) > 0 {
		b.WriteString("| data | loss | λ (or l1) | P* (bound) |")
		for _, t := range PeerTargets {
			fmt.Fprintf(&b, " ≤ %s: ours | best peer | ratio |", epsName(t))
		}
		b.WriteString("\n|---|---|---:|---:|" + strings.Repeat("---:|---|---:|", len(PeerTargets)) + "\n")
	}
	for _, pp := range res.Problems {
		fmt.Fprintf(&b, "| %s | %s | %s | %.10g (%.0e) |", pp.Data, pp.Objective.Loss, regCell(pp.Objective), pp.PStar, pp.Bound)
		for i := range PeerTargets {
			o, p := pp.Times["adaspdc"][i], pp.best(i)
			fmt.Fprintf(&b, " %s | %s | %s |", secCell(o), peerCell(p), ratioCell(o.Seconds, p.Seconds))
		}
		b.WriteString("\n")
	}
	if len(res.Tasks) > 0 {
		fmt.Fprintf(&b, "\nTasks: the logistic loss with an intercept (ours -bias 1, LIBLINEAR -B 1), whole processes, medians of %d runs taken in rounds; ratio = ours / LIBLINEAR, the goal ≤ 0.5 with results as good.\n\n"+
			"| data | task | ours | LIBLINEAR -s 0 | ratio | ours found | LIBLINEAR found |\n|---|---|---:|---:|---:|---|---|\n", res.Config.Runs)
		for _, pt := range res.Tasks {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", pt.Data, taskName(pt.Task), taskSeconds(pt.Ours), taskSeconds(pt.Peer),
				ratioCell(pt.Ours.Seconds, pt.Peer.Seconds), pt.OursResult, pt.PeerResult)
		}
		for _, pt := range res.Tasks {
			for _, n := range pt.Notes {
				fmt.Fprintf(&b, "\n- %s, %s: %s", pt.Data, pt.Task, n)
			}
		}
		b.WriteString("\n")
	}
	for pi, pp := range res.Problems {
		fmt.Fprintf(&b, "\n## %s, %s, %s (n = %d, d = %d)\n\nReference: %s.\n\n| tool |", pp.Data, pp.Objective.Loss, pp.Objective.Reg(), pp.Rows, pp.Cols, pp.RefFrom)
		for _, t := range PeerTargets {
			fmt.Fprintf(&b, " ≤ %s |", epsName(t))
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(PeerTargets)) + "\n")
		fig := figure{Title: fmt.Sprintf("%s, %s loss, %s: whole-process seconds to a relative suboptimality\n%s", pp.Data, pp.Objective.Loss, pp.Objective.Reg(), res.Machine.Short()),
			XLabel: "target (P − P*)/|P*|", YLabel: "seconds (whole process)", LogX: true, LogY: true}
		for ti, tool := range append([]string{"adaspdc"}, pp.Tools...) {
			fmt.Fprintf(&b, "| %s |", tool)
			var xy plotter.XYs
			for i, t := range pp.Times[tool] {
				fmt.Fprintf(&b, " %s |", secCell(t))
				xy = append(xy, plotter.XY{X: PeerTargets[i], Y: t.Seconds})
			}
			b.WriteString("\n")
			fig.Lines = append(fig.Lines, series{Label: tool, XY: xy, Color: ti, Dashes: min(ti, 1), Points: true})
		}
		for _, n := range pp.Notes {
			fmt.Fprintf(&b, "\n- %s", n)
		}
		base := fmt.Sprintf("peers_%d", pi+1)
		if err := fig.save(dir, base); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n![%s](%s.png)\n", base, base)
	}
	fmt.Fprintf(&b, "\nLoad average (1, 5, 15 min) at the end: %s on %d cores; above the core count, other processes shared the cores.\n", LoadAverage(), res.Machine.Cores)
	return os.WriteFile(filepath.Join(dir, "peers.md"), []byte(b.String()), 0o644)
}

// taskName says what a task runs, for the tasks' table.
func taskName(task string) string {
	switch task {
	case TaskCV:
		return "5-fold cross-validation at C = 1 (`-cv 5` against `-v 5`)"
	case TaskLambdaAuto:
		return "search over λ, 5 folds (`-lambda auto` against `-C -v 5`)"
	}
	return task
}

// taskSeconds is a task's time: wall seconds, median of the runs.
func taskSeconds(t PeerTiming) string {
	if math.IsNaN(t.Seconds) {
		return "not timed"
	}
	return fmt.Sprintf("%.3fs", t.Seconds)
}

// regCell is the summary's regularizer column: λ, or "l1 …" for an L1
// objective.
func regCell(o Objective) string {
	if o.L1 > 0 {
		return fmt.Sprintf("l1 %g", o.L1)
	}
	return fmt.Sprintf("%g", o.Lambda)
}

func secCell(t PeerTiming) string {
	if math.IsNaN(t.Seconds) {
		return "not reached"
	}
	return fmt.Sprintf("%.3fs (%s)", t.Seconds, t.Setting)
}

func peerCell(t PeerTiming) string {
	if math.IsNaN(t.Seconds) {
		return "not reached"
	}
	if t.Tool == "adaspdc" || t.Tool == "" {
		return secCell(t)
	}
	return fmt.Sprintf("%.3fs (%s, %s)", t.Seconds, t.Tool, t.Setting)
}

func ratioCell(ours, peer float64) string {
	if math.IsNaN(ours) || math.IsNaN(peer) {
		return "–"
	}
	return fmt.Sprintf("%.2f", ours/peer)
}

// SolverNewton is the engine's Newton method, which takes no -m.
const SolverNewton = string(engine.SolverNewton)

// ourSolvers returns the solvers a peers run tries: auto when none is named.
func ourSolvers(s []string) []string {
	if len(s) == 0 {
		return []string{"auto"}
	}
	return s
}
