package harness

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
	"gonum.org/v1/plot/plotter"
)

// One convergence figure per solver family (`adaspdc-bench family`): each
// family's methods run on one problem that suits them, and the figure draws
// the relative suboptimality (P(xₜ) − P*)/max(1, |P*|) of the original
// objective against data passes. P* is the primal value of a reference
// solve that the engine certifies to a relative duality gap of 1e-10, so
// every suboptimality above about 1e-10 is exact to that precision.

// FamilyRun is one curve of a family's figure.
type FamilyRun struct {
	Label   string
	Solver  engine.Solver
	Inner   engine.Solver // for the reductions
	Threads int           // 0: FamilyConfig.Threads
	// Baseline, when set, makes the run a fixed-parameter baseline of a
	// reduction: SDCA on the problem Baseline returns (a fixed added
	// regularization or smoothing), one epoch at a time, each continuing
	// from the last one's duals (SDCASettings.WarmDuals), with the original
	// objective evaluated at every epoch's point.
	Baseline func(engine.Problem) engine.Problem
}

// Family is one figure: its methods on one problem.
type Family struct {
	Name, Title string
	Data        string // file name in FamilyConfig.DataDir
	Loss        string
	// Lambda is the L2 strength (≤ 0: none); L1Frac, when positive, sets
	// L1 = L1Frac·‖Aᵀb‖∞/n (the lasso; at L1Frac = 1 the solution is 0).
	Lambda, L1Frac float64
	Passes         float64 // the pass budget of every run
	Runs           []FamilyRun
	// Reference is the solver (and inner solver) run to a certified
	// relative gap of 1e-10 for P*.
	Reference, RefInner engine.Solver
}

// Families returns the figures `adaspdc-bench family` draws by default.
func Families() []Family {
	return []Family{
		{Name: "sdca", Title: "SDCA family", Data: "a9a", Loss: "logistic", Lambda: 1e-4, Passes: 40,
			Reference: engine.SolverAdaSPDC,
			Runs: []FamilyRun{
				{Label: "sdca", Solver: "sdca"},
				{Label: "sdca-async (2 threads)", Solver: "sdca-async", Threads: 2},
				{Label: "dfsdca", Solver: "dfsdca"},
				{Label: "adaspdc", Solver: engine.SolverAdaSPDC},
			}},
		{Name: "vr", Title: "variance-reduced family", Data: "a9a", Loss: "logistic", Lambda: 1e-4, Passes: 80,
			Reference: engine.SolverAdaSPDC,
			Runs: []FamilyRun{
				{Label: "sag", Solver: "sag"},
				{Label: "saga", Solver: "saga"},
				{Label: "svrg", Solver: "svrg"},
				{Label: "adaspdc", Solver: engine.SolverAdaSPDC},
			}},
		{Name: "wang-xiao", Title: "Wang–Xiao family", Data: "a9a", Loss: "logistic", Lambda: 1e-4, Passes: 60,
			Reference: engine.SolverAdaSPDC,
			Runs: []FamilyRun{
				{Label: "spdc", Solver: engine.SolverSPDC},
				{Label: "wx-adaspdc", Solver: "wx-adaspdc"},
				{Label: "dfspdc", Solver: "dfspdc"},
				{Label: "adfspdc", Solver: "adfspdc"},
				{Label: "bpd", Solver: "bpd"},
				{Label: "adabpd", Solver: "adabpd"},
			}},
		{Name: "pdprox", Title: "Pdprox family (hinge)", Data: "a1a", Loss: "hinge", Lambda: 1e-3, Passes: 1000,
			Reference: "sdca",
			Runs: []FamilyRun{
				{Label: "pdprox-dual", Solver: "pdprox-dual"},
				{Label: "pdprox-primal", Solver: "pdprox-primal"},
				{Label: "pdprox-noproj", Solver: "pdprox-noproj"},
				{Label: "sdca", Solver: "sdca"},
			}},
		{Name: "adaptreg", Title: "AdaptReg on the lasso", Data: "abalone_scale", Loss: "squared", L1Frac: 0.1, Passes: 150,
			Reference: engine.SolverAdaptReg, RefInner: engine.SolverAdaSPDC,
			Runs: []FamilyRun{
				{Label: "adaptreg over adaspdc", Solver: engine.SolverAdaptReg, Inner: engine.SolverAdaSPDC},
				{Label: "adaptreg over sdca", Solver: engine.SolverAdaptReg, Inner: "sdca"},
				{Label: "sdca, fixed sigma = 1e-2 mean|a|^2", Baseline: addedL2(1e-2)},
				{Label: "sdca, fixed sigma = 1e-4 mean|a|^2", Baseline: addedL2(1e-4)},
			}},
		{Name: "adaptsmooth", Title: "AdaptSmooth on the hinge SVM", Data: "a1a", Loss: "hinge", Lambda: 1e-3, Passes: 1000,
			Reference: "sdca",
			Runs: []FamilyRun{
				{Label: "adaptsmooth over adaspdc", Solver: engine.SolverAdaptSmooth, Inner: engine.SolverAdaSPDC},
				{Label: "adaptsmooth over sdca", Solver: engine.SolverAdaptSmooth, Inner: "sdca"},
				{Label: "sdca, fixed smoothing 1e-2", Baseline: smoothedHinge(1e-2)},
				{Label: "sdca, fixed smoothing 1e-4", Baseline: smoothedHinge(1e-4)},
			}},
	}
}

// addedL2 returns the lasso with (σ/2)‖x‖² added, σ = frac·L̄ with
// L̄ = (1/n)Σ‖aₖ‖²: the fixed-σ problem AdaptReg's stages approach.
func addedL2(frac float64) func(engine.Problem) engine.Problem {
	return func(p engine.Problem) engine.Problem {
		var s float64
		for _, q := range p.X.RowSquaredNorms() {
			s += q
		}
		en, _ := p.Reg.AsElasticNet()
		en.Lambda += frac * s / float64(p.X.Rows)
		p.Reg = en
		return p
	}
}

// smoothedHinge returns the problem with the hinge smoothed at s.
func smoothedHinge(s float64) func(engine.Problem) engine.Problem {
	return func(p engine.Problem) engine.Problem {
		p.Loss = engine.SmoothHinge{S: s}
		return p
	}
}

// FamilyConfig says which families run, where their data are, and how.
type FamilyConfig struct {
	DataDir  string
	Families []Family // empty: Families()
	// PassScale multiplies every family's pass budget; 0: 1.
	PassScale float64
	Threads   int // workers of the runs that name none; 0: 1
	Seed      uint64
	Command   string
}

// FamilyCurve is one run's suboptimality after each certified epoch.
type FamilyCurve struct {
	Run    FamilyRun
	Passes []float64
	Subopt []float64
	Err    string // why the run failed, if it did
}

// FamilyResult is one family's figure data.
type FamilyResult struct {
	Family   Family
	N, D     int
	L1       float64
	PStar    float64 // the reference's primal
	RefGap   float64 // its certified relative gap
	RefNote  string
	Curves   []FamilyCurve
	Duration time.Duration
}

// FamilyThresholds are the suboptimalities the summary reports passes to.
var FamilyThresholds = []float64{1e-2, 1e-4, 1e-6}

// RunFamilies runs every family of cfg in turn; progress lines go to
// progressOut (nil: none). On an error, or when ctx is cancelled, the
// families that finished come back beside the error, so that they can
// still be written.
func RunFamilies(ctx context.Context, cfg FamilyConfig, progressOut io.Writer) ([]*FamilyResult, error) {
	fams := cfg.Families
	if len(fams) == 0 {
		fams = Families()
	}
	var out []*FamilyResult
	for _, f := range fams {
		r, err := RunFamily(ctx, cfg, f, progressOut)
		if ctx.Err() != nil {
			// The family in progress was cut short, whatever it
			// returned: its curves would end early for no reason of
			// their own.
			return out, fmt.Errorf("interrupted after %d of %d families: %w", len(out), len(fams), context.Cause(ctx))
		}
		if err != nil {
			return out, fmt.Errorf("family %s: %w", f.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// familyProblem loads the family's data and builds its problem.
func familyProblem(dir string, f Family) (engine.Problem, float64, error) {
	ds, err := sparse.ReadFile(filepath.Join(dir, f.Data), sparse.ReadOptions{})
	if err != nil {
		return engine.Problem{}, 0, err
	}
	loss, err := engine.LossByName(f.Loss, 1)
	if err != nil {
		return engine.Problem{}, 0, err
	}
	b := ds.Y
	if loss.Classification() {
		if b, _, err = sparse.BinaryLabels(ds.Y); err != nil {
			return engine.Problem{}, 0, fmt.Errorf("%s: %w", f.Data, err)
		}
	}
	en := engine.ElasticNet{Lambda: math.Max(f.Lambda, 0)}
	if f.L1Frac > 0 {
		// ‖Aᵀb‖∞/n: the L1 weight at which the lasso's solution is 0.
		atb := make([]float64, ds.X.Cols)
		for k := 0; k < ds.X.Rows; k++ {
			val, idx := ds.X.Row(k)
			for p, j := range idx {
				atb[j] += val[p] * b[k]
			}
		}
		var worst float64
		for _, v := range atb {
			worst = math.Max(worst, math.Abs(v))
		}
		en.L1 = f.L1Frac * worst / float64(ds.X.Rows)
	}
	return engine.Problem{X: ds.X, B: b, Loss: loss, Reg: en}, en.L1, nil
}

// RunFamily runs one family: the reference solve, then every run to the
// pass budget (or a certified relative gap of 1e-11).
func RunFamily(ctx context.Context, cfg FamilyConfig, f Family, progressOut io.Writer) (*FamilyResult, error) {
	start := time.Now()
	prob, l1, err := familyProblem(cfg.DataDir, f)
	if err != nil {
		return nil, err
	}
	res := &FamilyResult{Family: f, N: prob.X.Rows, D: prob.X.Cols, L1: l1}
	scale := cfg.PassScale
	if scale <= 0 {
		scale = 1
	}
	budget := f.Passes * scale

	ref := engine.DefaultOptions()
	ref.Solver = f.Reference
	if f.RefInner != "" {
		ref = ref.With(engine.ReductionSettings{Inner: f.RefInner})
	}
	ref.Tol, ref.MaxEpochs, ref.Threads, ref.Seed = 1e-10, 100000, 1, 1
	ref.StallEpochs = 5000
	_, rr, err := engine.Train(ctx, prob, ref)
	if err != nil {
		return nil, fmt.Errorf("reference %s: %w", f.Reference, err)
	}
	if !rr.Converged {
		return nil, fmt.Errorf("reference %s stopped on %s at relative gap %.3g, short of 1e-10", f.Reference, rr.Stop, rr.Final.RelGap)
	}
	res.PStar, res.RefGap = rr.Final.Primal, rr.Final.RelGap
	res.RefNote = fmt.Sprintf("%s", f.Reference)
	if f.RefInner != "" {
		res.RefNote += " over " + string(f.RefInner)
	}
	res.RefNote += fmt.Sprintf(", %d epochs, certified relative gap %.2g", rr.Final.Epoch, rr.Final.RelGap)
	if progressOut != nil {
		fmt.Fprintf(progressOut, "family %s: P* = %.12g (%s)\n", f.Name, res.PStar, res.RefNote)
	}
	denom := math.Max(1, math.Abs(res.PStar))
	for _, run := range f.Runs {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		c := FamilyCurve{Run: run}
		threads := run.Threads
		if threads == 0 {
			threads = max(cfg.Threads, 1)
		}
		var err error
		if run.Baseline != nil {
			c.Passes, c.Subopt, err = baselineCurve(ctx, prob, run.Baseline(prob), budget, cfg.Seed, res.PStar)
		} else {
			c.Passes, c.Subopt, err = familyCurve(ctx, prob, run, threads, budget, cfg.Seed, res.PStar)
		}
		for i := range c.Subopt {
			c.Subopt[i] /= denom
		}
		if err != nil {
			c.Err = err.Error()
		}
		if progressOut != nil {
			last := math.NaN()
			if len(c.Subopt) > 0 {
				last = c.Subopt[len(c.Subopt)-1]
			}
			fmt.Fprintf(progressOut, "family %s: %s: %.3g after %.4g passes %s\n", f.Name, run.Label, last, lastOr(c.Passes), c.Err)
		}
		res.Curves = append(res.Curves, c)
	}
	res.Duration = time.Since(start)
	return res, nil
}

func lastOr(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return v[len(v)-1]
}

// familyCurve runs a registered solver with every epoch certified until
// the budget of passes, and returns P(xₜ) − P* after each epoch.
func familyCurve(ctx context.Context, prob engine.Problem, run FamilyRun, threads int, budget float64, seed uint64, pstar float64) ([]float64, []float64, error) {
	opt := engine.DefaultOptions()
	opt.Solver = run.Solver
	if run.Inner != "" {
		opt = opt.With(engine.ReductionSettings{Inner: run.Inner})
	}
	opt.Threads, opt.Seed = threads, seed
	opt.Tol = 1e-11
	opt.MaxEpochs = int(math.Ceil(budget)) + 1
	opt.StallEpochs = -1
	opt.StopRule = func(tr []engine.TracePoint) bool { return tr[len(tr)-1].Passes >= budget }
	_, r, err := engine.Train(ctx, prob, opt)
	var passes, sub []float64
	if r != nil {
		for _, tp := range r.Trace {
			passes = append(passes, tp.Passes)
			sub = append(sub, tp.Primal-pstar)
		}
	}
	return passes, sub, err
}

// baselineCurve runs SDCA on stage (the problem with a fixed added
// regularization or smoothing) one epoch at a time, each from the last
// one's duals, and returns the original objective's P(xₜ) − P* after each.
func baselineCurve(ctx context.Context, prob, stage engine.Problem, budget float64, seed uint64, pstar float64) ([]float64, []float64, error) {
	cert, err := engine.Certify(prob, make([]float64, prob.X.Cols))
	if err != nil {
		return nil, nil, err
	}
	passes, sub := []float64{0}, []float64{cert.Primal - pstar}
	var duals []float64
	for e := 1; float64(e) <= budget; e++ {
		opt := engine.DefaultOptions()
		opt.Solver, opt.Threads, opt.Seed = "sdca", 1, seed+uint64(e)
		opt.Tol, opt.MaxEpochs, opt.StallEpochs = -1, 1, -1
		opt = opt.With(engine.SDCASettings{WarmDuals: duals})
		m, r, err := engine.Train(ctx, stage, opt)
		if err != nil {
			return passes, sub, err
		}
		duals = r.Duals
		c, err := engine.Certify(prob, m.Weights)
		if err != nil {
			return passes, sub, err
		}
		passes = append(passes, float64(e))
		sub = append(sub, c.Primal-pstar)
	}
	return passes, sub, nil
}

// PassesTo returns the passes after which the curve first stays at or
// below eps (NaN: never within the budget).
func (c FamilyCurve) PassesTo(eps float64) float64 {
	at := math.NaN()
	for i, v := range c.Subopt {
		switch {
		case !(v <= eps):
			at = math.NaN()
		case math.IsNaN(at):
			at = c.Passes[i]
		}
	}
	return at
}

// Write puts NAME.csv, NAME.png, NAME.svg and summary.md in dir.
func (res *FamilyResult) Write(dir, command string, mach Machine) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := res.Family.Name
	if err := res.writeCSV(filepath.Join(dir, name+".csv")); err != nil {
		return err
	}
	fig := figure{
		Title:  fmt.Sprintf("%s: %s (n = %d, d = %d)\n%s", res.Family.Title, res.problemText(), res.N, res.D, mach.Short()),
		XLabel: "passes", YLabel: "(P(x) − P*) / max(1, |P*|)", LogY: true,
	}
	floor := 1e-12
	for i, c := range res.Curves {
		xy := make(plotter.XYs, 0, len(c.Passes))
		for k, p := range c.Passes {
			xy = append(xy, plotter.XY{X: p, Y: math.Max(c.Subopt[k], floor)})
		}
		if len(xy) == 0 {
			continue
		}
		fig.Lines = append(fig.Lines, series{Label: c.Run.Label, XY: xy, Color: i})
	}
	if len(fig.Lines) == 0 {
		return errors.New("family " + name + ": no run produced a curve")
	}
	if err := fig.save(dir, name); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(res.Markdown(command, mach)), 0o644)
}

// problemText describes the family's problem in one line.
func (res *FamilyResult) problemText() string {
	f := res.Family
	s := f.Data + ", " + f.Loss
	if f.Lambda > 0 {
		s += fmt.Sprintf(", lambda = %g", f.Lambda)
	}
	if res.L1 > 0 {
		s += fmt.Sprintf(", L1 = %.4g (%g max|A'b|/n)", res.L1, f.L1Frac)
	}
	return s
}

func (res *FamilyResult) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"solver", "pass", "suboptimality"})
	for _, c := range res.Curves {
		for i, p := range c.Passes {
			w.Write([]string{c.Run.Label, strconv.FormatFloat(p, 'g', 6, 64), strconv.FormatFloat(c.Subopt[i], 'g', 6, 64)})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Markdown is the family's summary: the problem, the reference, the
// command and the passes to each threshold.
func (res *FamilyResult) Markdown(command string, mach Machine) string {
	var b strings.Builder
	f := res.Family
	fmt.Fprintf(&b, "# %s\n\n%s\n```sh\n%s\n```\n\n", f.Title, mach.Markdown(), command)
	fmt.Fprintf(&b, "Problem: %s; n = %d, d = %d. Suboptimality (P(xₜ) − P*)/max(1, |P*|) of the original objective after every certified epoch, "+
		"P* = %.12g from %s (so values below about %.0e are at the reference's precision). Pass budget %g; run time %v.\n\n",
		res.problemText(), res.N, res.D, res.PStar, res.RefNote, math.Max(res.RefGap, 1e-12), f.Passes, res.Duration.Round(time.Second))
	b.WriteString(FamilyTable([]*FamilyResult{res}))
	fmt.Fprintf(&b, "\n![%s](%s.png)\n", f.Name, f.Name)
	return b.String()
}

// FamilyTable is a Markdown table of the passes to each threshold of
// every run of the results ("—": not within the budget).
func FamilyTable(results []*FamilyResult) string {
	var b strings.Builder
	b.WriteString("| family | problem | solver |")
	for _, eps := range FamilyThresholds {
		fmt.Fprintf(&b, " passes to %.0e |", eps)
	}
	b.WriteString(" last |\n|---|---|---|" + strings.Repeat("---:|", len(FamilyThresholds)+1) + "\n")
	for _, res := range results {
		for _, c := range res.Curves {
			fmt.Fprintf(&b, "| %s | %s | %s |", res.Family.Name, res.problemText(), c.Run.Label)
			for _, eps := range FamilyThresholds {
				if p := c.PassesTo(eps); math.IsNaN(p) {
					b.WriteString(" — |")
				} else {
					fmt.Fprintf(&b, " %.4g |", p)
				}
			}
			if c.Err != "" {
				fmt.Fprintf(&b, " error: %s |\n", strings.ReplaceAll(c.Err, "|", "/"))
			} else {
				fmt.Fprintf(&b, " %.2g after %.4g |\n", lastOr(c.Subopt), lastOr(c.Passes))
			}
		}
	}
	return b.String()
}
