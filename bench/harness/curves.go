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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// This file is the machinery the real-data reproductions share
// (zhu-storkey-fig2-3, wang-xiao-fig2-3, allen-zhu-hazan): panels of
// suboptimality P(xᵗ) − P* against data passes, one curve per method,
// averaged over solver seeds, against a reference optimum P* certified by a
// duality gap and cached per data set, loss and λ in the output folder.

// CurvePanel is one problem: every curve of the panel is measured on Prob.
type CurvePanel struct {
	Title string // "a9a, logistic, λ = 1e-05"
	Group string // the figure the panel is drawn in (one PNG per group)
	Key   string // identifies the problem in reference.csv
	Prob  engine.Problem
	// RefSolver computes P* when L-BFGS cannot (a non-smooth loss or an L1
	// term); zero: L-BFGS, then AdaSPDC warm-started from it.
	RefSolver engine.Solver
}

// CurveMethod is one curve.
type CurveMethod struct {
	Label     string
	Solver    engine.Solver
	Sampling  engine.Sampling
	Inner     engine.Solver
	StepScale float64
	// Modify, when set, gives the problem the method solves instead of the
	// panel's (a fixed added regularization or smoothing). Its iterates are
	// measured on the panel's problem: the solver cannot hand out its point
	// during a run, so the run is repeated from the start for each
	// checkpoint of Checkpoints (runs with one thread and a seed are
	// deterministic, so each is a prefix of the next).
	Modify func(engine.Problem) engine.Problem
	// Accepts, when set, says whether the method runs on a panel (false:
	// the curve is left out of it, with a note).
	Accepts func(CurvePanel) bool
}

// CurvesConfig is one reproduction.
type CurvesConfig struct {
	Name    string // the reproduction's name: file names and titles
	Title   string // the figure title's first line
	Panels  []CurvePanel
	Methods []CurveMethod
	Passes  int // curves run to this many data passes
	Seeds   int // solver seeds 1…Seeds, averaged
	// RefTol and RefEpochs bound the reference runs (relative gap; epochs
	// of the reference solver).
	RefTol    float64
	RefEpochs int
	// Baseline and Contender name the two methods whose ratio of final
	// suboptimality the summary reports (Baseline / Contender: how many
	// times lower the contender ends).
	Baseline, Contender string
	Intro               string // the summary's description of the experiment
	Command             string
	Out                 string // the output folder (and the reference cache)
}

// curve is one method's mean suboptimality on the pass grid 0…Passes.
type curve struct {
	Mean  []float64
	Final []float64 // per seed, after the last pass
	Note  string    // why it is missing or cut short
}

// CurvesResult holds a reproduction's measurements.
type CurvesResult struct {
	Config   CurvesConfig
	Machine  Machine
	Ref      []Reference // per panel
	Curves   [][]*curve  // [panel][method]; nil: not run on that panel
	Duration time.Duration
	// Interrupted, when set, says what stopped the reproduction and after
	// how many panels: Config.Panels then holds only those finished.
	Interrupted string
}

// Reference is a panel's optimum: P* is the lowest primal value seen
// (reference runs and, after the curves, every run's points), certified
// by the best dual bound D of the reference runs: P* − F* ≤ P* − D.
type Reference struct {
	Key           string
	Primal, Dual  float64
	From          string
	Seconds       float64
	fromCache     bool
	lowestInCurve bool
}

// RelGap is the reference's relative gap (P* − D)/max(1, |P*|).
func (r Reference) RelGap() float64 { return (r.Primal - r.Dual) / math.Max(1, math.Abs(r.Primal)) }

// Curves runs the reproduction.
func Curves(ctx context.Context, cfg CurvesConfig, progressOut io.Writer, tty bool) (*CurvesResult, error) {
	if len(cfg.Panels) == 0 || len(cfg.Methods) == 0 || cfg.Passes < 1 || cfg.Seeds < 1 {
		return nil, fmt.Errorf("%s: nothing to run (panels %d, methods %d, passes %d, seeds %d)", cfg.Name, len(cfg.Panels), len(cfg.Methods), cfg.Passes, cfg.Seeds)
	}
	if cfg.RefTol == 0 {
		cfg.RefTol = 1e-10
	}
	if cfg.RefEpochs == 0 {
		cfg.RefEpochs = 5000
	}
	res := &CurvesResult{Config: cfg, Machine: ThisMachine()}
	start := time.Now()
	cache := readReferences(filepath.Join(cfg.Out, "reference.csv"))
	total := 0
	for _, p := range cfg.Panels {
		for _, m := range cfg.Methods {
			if m.Accepts == nil || m.Accepts(p) {
				total += cfg.Seeds
			}
		}
	}
	prog := newProgress(progressOut, tty, total, "bench paper "+cfg.Name)
	for _, p := range cfg.Panels {
		if ctx.Err() != nil {
			return res.interrupt(ctx, start)
		}
		ref, ok := cache[p.Key]
		if !ok {
			var err error
			if ref, err = curveReference(ctx, p, cfg); err != nil {
				if ctx.Err() != nil {
					return res.interrupt(ctx, start)
				}
				return nil, fmt.Errorf("%s: the reference optimum of %s: %w", cfg.Name, p.Title, err)
			}
		} else {
			ref.fromCache = true
		}
		var row []*curve
		for _, m := range cfg.Methods {
			if m.Accepts != nil && !m.Accepts(p) {
				row = append(row, nil)
				continue
			}
			c := &curve{Mean: make([]float64, cfg.Passes+1)}
			for seed := 1; seed <= cfg.Seeds; seed++ {
				if ctx.Err() != nil {
					return res.interrupt(ctx, start)
				}
				primal, err := curveRun(ctx, p, m, uint64(seed), cfg.Passes)
				if ctx.Err() != nil {
					// A curve cut short would bias the mean: its panel is
					// left out whole.
					return res.interrupt(ctx, start)
				}
				if err != nil {
					c.Note = firstLine(err.Error())
				}
				for _, v := range primal {
					if v < ref.Primal {
						ref.Primal, ref.lowestInCurve = v, true
					}
				}
				for i, v := range primal {
					c.Mean[i] += v / float64(cfg.Seeds)
				}
				c.Final = append(c.Final, primal[len(primal)-1])
				prog.step(fmt.Sprintf("%s %s seed %d", p.Title, m.Label, seed))
			}
			row = append(row, c)
		}
		// Primal means to suboptimality, against the final P*.
		for _, c := range row {
			if c == nil {
				continue
			}
			for i := range c.Mean {
				c.Mean[i] -= ref.Primal
			}
			for i := range c.Final {
				c.Final[i] -= ref.Primal
			}
		}
		res.Ref = append(res.Ref, ref)
		res.Curves = append(res.Curves, row)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// interrupt ends a reproduction whose context was cancelled, keeping the
// panels whose every curve finished (and so their references, which are
// the expensive part to recompute), or returning only the error when none
// did.
func (res *CurvesResult) interrupt(ctx context.Context, start time.Time) (*CurvesResult, error) {
	cause := context.Cause(ctx)
	done, planned := len(res.Curves), len(res.Config.Panels)
	if done == 0 {
		return nil, fmt.Errorf("%s: interrupted before the first panel was finished: %w", res.Config.Name, cause)
	}
	res.Config.Panels = res.Config.Panels[:done]
	res.Duration = time.Since(start)
	res.Interrupted = fmt.Sprintf("%v after %d of %d panels", cause, done, planned)
	return res, fmt.Errorf("%s: interrupted after %d of %d panels: %w", res.Config.Name, done, planned, cause)
}

// curveRun returns P(x) on the panel's problem at the pass grid 0…passes:
// the value of the last certificate at or before each grid point (a run
// that stops early, at its tolerance or on an error, keeps its last value;
// NaN before the first certificate).
func curveRun(ctx context.Context, p CurvePanel, m CurveMethod, seed uint64, passes int) ([]float64, error) {
	opt := engine.DefaultOptions()
	opt.Solver = m.Solver
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.Sampling = m.Sampling })
	if m.Inner != "" {
		opt = opt.With(engine.ReductionSettings{Inner: m.Inner})
	}
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.StepScale = m.StepScale })
	opt.Threads, opt.Seed = 1, seed
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.M = 1 })
	opt.StallEpochs = -1
	opt.Tol = 1e-14
	type point struct{ passes, primal float64 }
	var pts []point
	var runErr error
	if m.Modify == nil {
		opt.MaxEpochs = 100 * passes
		opt.StopRule = func(tr []engine.TracePoint) bool { return tr[len(tr)-1].Passes >= float64(passes)-1e-9 }
		_, r, err := engine.Train(ctx, p.Prob, opt)
		runErr = err
		if r != nil {
			for _, tp := range r.Trace {
				pts = append(pts, point{tp.Passes, tp.Primal})
			}
		}
	} else {
		mod := m.Modify(p.Prob)
		for _, k := range Checkpoints(passes) {
			opt.MaxEpochs = k
			model, r, err := engine.Train(ctx, mod, opt)
			if err != nil {
				runErr = err
				break
			}
			cert, err := engine.Certify(p.Prob, model.Weights)
			if err != nil {
				runErr = err
				break
			}
			pts = append(pts, point{r.Final.Passes, cert.Primal})
			if r.Converged {
				break
			}
		}
	}
	out := make([]float64, passes+1)
	j := -1
	for i := range out {
		for j+1 < len(pts) && pts[j+1].passes <= float64(i)+1e-9 {
			j++
		}
		if j < 0 {
			out[i] = math.NaN()
		} else {
			out[i] = pts[j].primal
		}
	}
	return out, runErr
}

// Checkpoints are the epoch counts at which a modified-problem run is
// measured: 0, 1, 2, 3, 5, 8, … growing by about 1.5× up to passes.
func Checkpoints(passes int) []int {
	ks := []int{0}
	for k := 1; k < passes; k = max(k+1, k*3/2) {
		ks = append(ks, k)
	}
	return append(ks, passes)
}

// curveReference computes P* and a dual bound for a panel.
func curveReference(ctx context.Context, p CurvePanel, cfg CurvesConfig) (Reference, error) {
	start := time.Now()
	ref := Reference{Key: p.Key, Primal: math.Inf(1), Dual: math.Inf(-1)}
	take := func(tp engine.TracePoint, from string) {
		if tp.Primal < ref.Primal {
			ref.Primal = tp.Primal
			ref.From = from
		}
		ref.Dual = math.Max(ref.Dual, tp.Dual)
	}
	var warm []float64
	solver := p.RefSolver
	if solver == "" {
		w, err := lbfgs(p.Prob)
		if err == nil {
			cert, err := engine.Certify(p.Prob, w)
			if err != nil {
				return ref, err
			}
			take(cert, "L-BFGS")
			warm = w
		}
		solver = engine.SolverAdaSPDC
	}
	if !(ref.RelGap() <= cfg.RefTol) {
		opt := engine.DefaultOptions()
		opt.Solver, opt.Tol, opt.MaxEpochs, opt.StallEpochs = solver, cfg.RefTol, cfg.RefEpochs, -1
		opt.WarmStart = warm
		if solver == engine.SolverAdaSPDC {
			opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.StepScale = 2 })
		}
		_, r, err := engine.Train(ctx, p.Prob, opt)
		if r != nil {
			take(r.Best, string(solver))
		}
		if err != nil && math.IsInf(ref.Primal, 0) {
			return ref, err
		}
	}
	ref.Seconds = time.Since(start).Seconds()
	return ref, nil
}

// lbfgs minimises a smooth L2-regularised objective from 0 by L-BFGS
// (gonum's), to the limits of float64.
func lbfgs(prob engine.Problem) ([]float64, error) {
	en, ok := prob.Reg.AsElasticNet()
	if !ok || en.L1 != 0 || en.Center != nil || en.Weights != nil || !(en.Lambda > 0) || prob.Loss.Gamma() == 0 {
		return nil, errors.New("L-BFGS: only for a smooth loss with a plain L2 regularizer")
	}
	x := prob.X
	n := float64(x.Rows)
	z := make([]float64, x.Rows)
	margins := func(w []float64) {
		for k := range z {
			val, idx := x.Row(k)
			var s float64
			for i, j := range idx {
				s += val[i] * w[j]
			}
			z[k] = s
		}
	}
	fn := func(w []float64) float64 {
		margins(w)
		var f, ww float64
		for k, zk := range z {
			f += prob.Loss.Value(zk, prob.B[k])
		}
		for _, v := range w {
			ww += v * v
		}
		return f/n + en.Lambda/2*ww
	}
	grad := func(g, w []float64) {
		margins(w)
		for j := range g {
			g[j] = en.Lambda * w[j]
		}
		for k, zk := range z {
			d := prob.Loss.Deriv(zk, prob.B[k]) / n
			val, idx := x.Row(k)
			for i, j := range idx {
				g[j] += d * val[i]
			}
		}
	}
	// The stop: the objective no longer falls by a relative 1e-16 over ten
	// iterations (the limits of float64), or 20000 iterations.
	res, err := optimize.Minimize(optimize.Problem{Func: fn, Grad: grad}, make([]float64, x.Cols),
		&optimize.Settings{MajorIterations: 20000, Converger: &optimize.FunctionConverge{Relative: 1e-16, Iterations: 10}},
		&optimize.LBFGS{})
	if res == nil {
		return nil, fmt.Errorf("L-BFGS: %w", err)
	}
	// Near the optimum the line search can fail on rounding; the best point
	// found is still returned, and its certificate says what it is worth.
	for _, v := range res.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("L-BFGS: a non-finite point (%v)", err)
		}
	}
	return res.X, nil
}

func readReferences(path string) map[string]Reference {
	out := map[string]Reference{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return out
	}
	for _, r := range rows[1:] {
		if len(r) < 5 {
			continue
		}
		p, err1 := strconv.ParseFloat(r[1], 64)
		d, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		s, _ := strconv.ParseFloat(r[4], 64)
		out[r[0]] = Reference{Key: r[0], Primal: p, Dual: d, From: r[3], Seconds: s}
	}
	return out
}

// Write puts reference.csv, curves.csv, one PNG and SVG per panel group
// and summary.md in the output folder.
func (res *CurvesResult) Write() error {
	cfg := res.Config
	dir := cfg.Out
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The cache keeps entries of panels not run this time.
	refs := readReferences(filepath.Join(dir, "reference.csv"))
	for _, r := range res.Ref {
		if old, ok := refs[r.Key]; ok {
			r.Primal, r.Dual = math.Min(r.Primal, old.Primal), math.Max(r.Dual, old.Dual)
		}
		refs[r.Key] = r
	}
	var rows [][]string
	for k, r := range refs {
		rows = append(rows, []string{k, strconv.FormatFloat(r.Primal, 'g', 17, 64), strconv.FormatFloat(r.Dual, 'g', 17, 64), r.From, strconv.FormatFloat(r.Seconds, 'f', 1, 64)})
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	if err := writeCSVFile(filepath.Join(dir, "reference.csv"), []string{"key", "primal", "dual", "from", "seconds"}, rows); err != nil {
		return err
	}
	rows = nil
	mach := res.Machine.csvFields()
	for pi, p := range cfg.Panels {
		for mi, m := range cfg.Methods {
			c := res.Curves[pi][mi]
			if c == nil {
				continue
			}
			for i, v := range c.Mean {
				if i%5 == 0 || i == len(c.Mean)-1 {
					rows = append(rows, append([]string{p.Key, m.Label, strconv.Itoa(i), strconv.FormatFloat(v, 'g', 6, 64)}, mach...))
				}
			}
		}
	}
	if err := writeCSVFile(filepath.Join(dir, "curves.csv"), append([]string{"problem", "method", "passes", "mean_suboptimality"}, machineCSVHeader...), rows); err != nil {
		return err
	}
	for _, g := range res.groups() {
		if err := res.plotGroup(dir, g); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(res.markdown()), 0o644)
}

func writeCSVFile(path string, header []string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// groups lists the panel groups in order of first appearance.
func (res *CurvesResult) groups() []string {
	var gs []string
	for _, p := range res.Config.Panels {
		if !slices.Contains(gs, p.Group) {
			gs = append(gs, p.Group)
		}
	}
	return gs
}

// FileBase is the file name (without extension) of a group's figure.
func (res *CurvesResult) FileBase(group string) string {
	r := strings.NewReplacer(" ", "-", ",", "", "/", "-", "=", "")
	if group == "" {
		return res.Config.Name
	}
	return res.Config.Name + "-" + strings.ToLower(r.Replace(group))
}

// plotGroup draws a group's panels three to a row.
func (res *CurvesResult) plotGroup(dir, group string) error {
	cfg := res.Config
	const cols = 3
	var panels [][]figure
	k := 0
	for pi, p := range cfg.Panels {
		if p.Group != group {
			continue
		}
		f := figure{Title: p.Title, XLabel: "passes", YLabel: "P(x) − P*", LogY: true}
		floor := 1e-15 * math.Max(1, math.Abs(res.Ref[pi].Primal))
		for mi, m := range cfg.Methods {
			c := res.Curves[pi][mi]
			if c == nil {
				continue
			}
			xy := make(plotter.XYs, 0, len(c.Mean))
			for i, v := range c.Mean {
				if !math.IsNaN(v) {
					xy = append(xy, plotter.XY{X: float64(i), Y: math.Max(v, floor)})
				}
			}
			if len(xy) > 0 {
				f.Lines = append(f.Lines, series{Label: m.Label, XY: xy, Color: mi})
			}
		}
		if k%cols == 0 {
			panels = append(panels, nil)
		}
		panels[len(panels)-1] = append(panels[len(panels)-1], f)
		k++
	}
	if len(panels) == 0 {
		return nil
	}
	for len(panels) > 1 && len(panels[len(panels)-1]) < cols {
		panels[len(panels)-1] = append(panels[len(panels)-1], figure{})
	}
	// At least two panels' width, so that the title's machine line fits.
	w := vg.Length(max(len(panels[0]), 2))*3.3*vg.Inch + 1.2*vg.Inch
	h := vg.Length(len(panels))*2.6*vg.Inch + 0.6*vg.Inch
	title := fmt.Sprintf("%s %s, mean of %d seed(s)\n%s", cfg.Title, group, cfg.Seeds, res.Machine.Short())
	return savePanels(dir, res.FileBase(group), title, panels, w, h)
}

// Factor returns how many times lower the contender's mean final
// suboptimality is than the baseline's on panel pi (NaN when either is
// missing).
func (res *CurvesResult) Factor(pi int) float64 {
	return res.FactorOf(pi, res.Config.Baseline, res.Config.Contender)
}

// FactorOf is Factor for any two labels: baseline / contender.
func (res *CurvesResult) FactorOf(pi int, baseline, contender string) float64 {
	b, c := res.final(pi, baseline), res.final(pi, contender)
	return b / c
}

// final is the mean suboptimality of a method after the last pass, floored
// at the reference's precision.
func (res *CurvesResult) final(pi int, label string) float64 {
	for mi, m := range res.Config.Methods {
		if m.Label == label && res.Curves[pi][mi] != nil {
			mean := res.Curves[pi][mi].Mean
			return math.Max(mean[len(mean)-1], res.floor(pi))
		}
	}
	return math.NaN()
}

// floor is the smallest suboptimality the reference can resolve: its gap,
// or the precision of P in float64.
func (res *CurvesResult) floor(pi int) float64 {
	r := res.Ref[pi]
	return math.Max(math.Max(r.Primal-r.Dual, 0), 1e-15*math.Max(1, math.Abs(r.Primal)))
}

func (res *CurvesResult) markdown() string {
	cfg := res.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nMeasured on this machine:\n\n%s\n```sh\n%s\n```\n\n", cfg.Title, res.Machine.Markdown(), cfg.Command)
	if res.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted** (%s): only the panels below, whose every curve finished, are shown.\n\n", res.Interrupted)
	}
	fmt.Fprintf(&b, "%s\n\nOne sample per iteration (m = 1), one thread, %d passes, solver seeds 1–%d averaged. Run time %v.\n\n",
		cfg.Intro, cfg.Passes, cfg.Seeds, res.Duration.Round(time.Second))
	fmt.Fprintf(&b, "P* is the lowest objective value seen (reference runs and every curve's points), certified by the best dual bound D of the reference runs "+
		"(reference.csv caches both per problem; a cached value is reused on the next run). Suboptimalities below the column \"P* − D\" are below what the reference resolves, and are shown as that value.\n\n")
	fmt.Fprintf(&b, "Mean P(x) − P* after %d passes:\n\n| problem | P* | P* − D | reference |", cfg.Passes)
	for _, m := range cfg.Methods {
		fmt.Fprintf(&b, " %s |", m.Label)
	}
	factor := cfg.Baseline != "" && cfg.Contender != ""
	if factor {
		fmt.Fprintf(&b, " %s / %s |", cfg.Baseline, cfg.Contender)
	}
	b.WriteString("\n|---|---:|---:|---|" + strings.Repeat("---:|", len(cfg.Methods)))
	if factor {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	var notes []string
	for pi, p := range cfg.Panels {
		r := res.Ref[pi]
		from := r.From
		if r.fromCache {
			from += " (cached)"
		}
		if r.lowestInCurve {
			from += "; a curve went lower"
		}
		fmt.Fprintf(&b, "| %s | %.12g | %.1e | %s |", p.Title, r.Primal, math.Max(r.Primal-r.Dual, 0), from)
		for mi, m := range cfg.Methods {
			c := res.Curves[pi][mi]
			if c == nil {
				b.WriteString(" – |")
				continue
			}
			v := c.Mean[len(c.Mean)-1]
			fl := res.floor(pi)
			if v <= fl {
				fmt.Fprintf(&b, " ≤%.1e |", fl)
			} else {
				fmt.Fprintf(&b, " %.2e |", v)
			}
			if c.Note != "" {
				notes = append(notes, fmt.Sprintf("%s, %s: %s", p.Title, m.Label, c.Note))
			}
		}
		if factor {
			fmt.Fprintf(&b, " %.3g× |", res.Factor(pi))
		}
		b.WriteString("\n")
	}
	if factor {
		fmt.Fprintf(&b, "\nThe last column is how many times lower %s ends than %s (both floored at the reference's resolution, so a ratio of 1 can mean both are at the floor).\n", cfg.Contender, cfg.Baseline)
	}
	if len(notes) > 0 {
		b.WriteString("\nRuns that ended with an error (their curve holds the last certified value):\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\n")
	for _, g := range res.groups() {
		base := res.FileBase(g)
		fmt.Fprintf(&b, "![%s](%s.png)\n\n", base, base)
	}
	return b.String()
}

// lossParam formats a λ for keys and titles.
func lambdaName(l float64) string { return strconv.FormatFloat(l, 'g', 3, 64) }
