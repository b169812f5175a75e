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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"gonum.org/v1/plot/plotter"
)

// Epsilons are the relative duality gaps (P−D)/max(1,|P|) a scaling sweep
// times: passes and seconds until a run's certificate first reaches each.
var Epsilons = []float64{1e-2, 1e-4, 1e-6, 1e-8}

// ScaleConfig is one scaling sweep: every solver × m × thread count,
// repeated with seeds Seed, Seed+1, ….
type ScaleConfig struct {
	Data      string  // a LIBSVM file or synth:rcv1:ROWS, synth:url:ROWS
	Loss      string  // engine.LossByName
	Lambda    float64 // ≤ 0: 1/n
	Solvers   []string
	Ms        []int
	Threads   []int // empty: DefaultThreads()
	Repeats   int   // ≥ 1
	Seed      uint64
	Tol       float64       // each run stops at this relative gap
	MaxEpochs int           // and after this many epochs
	TimeLimit time.Duration // per run; 0: none
	Command   string        // the command line, recorded in the summary
}

// DefaultThreads returns the powers of two up to runtime.NumCPU(), and
// NumCPU itself when it is not one.
func DefaultThreads() []int {
	var t []int
	for p := 1; p <= runtime.NumCPU(); p *= 2 {
		t = append(t, p)
	}
	if t[len(t)-1] != runtime.NumCPU() {
		t = append(t, runtime.NumCPU())
	}
	return t
}

// Reach is when a run first certified a relative gap at or below one of
// Epsilons; NaN fields when it never did.
type Reach struct {
	Passes      float64
	Seconds     float64 // since the solver's set-up ended, certificates included
	IterSeconds float64 // iterations only
}

// Run is one training run of a sweep.
type Run struct {
	Solver       string
	M            int
	Threads      int // asked for
	ThreadsUsed  int // kept by the solver (fewer when a batch is too small to share)
	Repeat       int
	Seed         uint64
	Epochs       int
	Passes       float64
	Seconds      float64 // the driver's clock at the last certificate
	IterSeconds  float64
	SetupSeconds float64 // the rest of the Train call: set-up before the first certificate
	SecPerPass   float64 // IterSeconds / Passes
	Speedup      float64 // the baseline thread count's median SecPerPass over this run's
	FinalRelGap  float64
	Stop         string
	Err          string
	Reach        []Reach // one per Epsilons
	Trace        []engine.TracePoint
	// SweepNsPerNNZ is the bare sweep on one thread (SweepNsPerNNZ), in
	// nanoseconds per nonzero, measured just before this run, so that a
	// drift in the host's load moves the run and its yardstick together.
	SweepNsPerNNZ float64
	// SweepNsPerNNZT is the bare sweep split over Threads goroutines,
	// measured just before this run too: wall nanoseconds per nonzero of
	// the whole matrix. On one thread it is SweepNsPerNNZ itself.
	SweepNsPerNNZT float64
	// NsPerNNZ is the run's iteration time per epoch per nonzero, in
	// nanoseconds: IterSeconds / Epochs / nnz × 1e9, without set-up and
	// certificates, so that it compares with the sweep, which has neither.
	NsPerNNZ float64
	// XSweep is NsPerNNZ / SweepNsPerNNZ: how many bare one-thread sweeps
	// an epoch costs, whatever the threads the run had, so that runs on
	// different thread counts are set against one yardstick (a run on T
	// threads that scaled perfectly from a sweep-speed epoch would read
	// 1/T).
	XSweep float64
	// XSweepT is NsPerNNZ / SweepNsPerNNZT: the epoch against a sweep on
	// as many threads as the run asked for.
	XSweepT float64
}

// setSweep records the sweeps measured before a run and the run's cost
// per nonzero against them; the fields stay NaN where the run has no
// iteration time or epochs, or the sweep no figure.
func (r *Run) setSweep(sweep1, sweepT float64, nnz int64) {
	r.SweepNsPerNNZ, r.SweepNsPerNNZT = sweep1, sweepT
	r.NsPerNNZ, r.XSweep, r.XSweepT = math.NaN(), math.NaN(), math.NaN()
	if r.Epochs < 1 || nnz < 1 || !(r.IterSeconds > 0) || math.IsInf(r.IterSeconds, 0) {
		return
	}
	r.NsPerNNZ = r.IterSeconds / float64(r.Epochs) / float64(nnz) * 1e9
	if sweep1 > 0 && !math.IsInf(sweep1, 0) {
		r.XSweep = r.NsPerNNZ / sweep1
	}
	if sweepT > 0 && !math.IsInf(sweepT, 0) {
		r.XSweepT = r.NsPerNNZ / sweepT
	}
}

// ScaleResult is a finished sweep.
type ScaleResult struct {
	Config        ScaleConfig
	Machine       Machine
	DataName      string
	Rows, Cols    int
	NNZ           int64
	Lambda        float64
	BaseThreads   int // the thread count speed-ups are measured against
	Runs          []Run
	Started       time.Time
	TotalDuration time.Duration
	// LoadBefore and LoadAfter are the machine's load averages when the
	// sweep started and ended (LoadAverage).
	LoadBefore, LoadAfter string
	// Planned is the number of runs the configuration asks for; fewer are
	// in Runs when the sweep was interrupted.
	Planned int
	// Interrupted, when set, says what stopped the sweep before its end
	// (a signal, say), so that the summary of a partial sweep says so.
	Interrupted string
}

// Validate checks a configuration before any data is read.
func (c *ScaleConfig) Validate() error {
	if len(c.Solvers) == 0 {
		return errors.New("no solvers")
	}
	known := map[string]bool{}
	var names []string
	for _, s := range engine.Solvers() {
		known[string(s.Name)] = true
		names = append(names, string(s.Name))
	}
	for _, s := range c.Solvers {
		if !known[s] {
			return fmt.Errorf("unknown solver %q (registered: %s)", s, strings.Join(names, ", "))
		}
	}
	if len(c.Ms) == 0 {
		return errors.New("no m values")
	}
	for _, m := range c.Ms {
		if m < 1 {
			return fmt.Errorf("m = %d: must be at least 1", m)
		}
	}
	if len(c.Threads) == 0 {
		c.Threads = DefaultThreads()
	}
	for _, t := range c.Threads {
		if t < 1 {
			return fmt.Errorf("threads = %d: must be at least 1", t)
		}
	}
	if c.Repeats < 1 {
		return fmt.Errorf("repeats = %d: must be at least 1", c.Repeats)
	}
	if math.IsNaN(c.Tol) || c.Tol < 0 {
		return fmt.Errorf("tol = %v: must be ≥ 0", c.Tol)
	}
	if c.MaxEpochs < 1 {
		return fmt.Errorf("max epochs = %d: must be at least 1", c.MaxEpochs)
	}
	if _, err := engine.LossByName(c.Loss, 1); err != nil {
		return err
	}
	return nil
}

// never is a stop rule that never stops: with a rule, the driver
// certifies every epoch, which gives the sweep its per-epoch resolution.
func never([]engine.TracePoint) bool { return false }

// Scale runs the sweep. Progress goes to progressOut (nil: none), in place
// when tty is set. Runs the solver refuses or that fail are recorded with
// their error and do not stop the sweep; a cancelled context does, and
// then Scale returns the runs that finished beside the error (a nil result
// only when none did), so that an interrupted sweep of hours can still be
// written: the run the cancellation cut short keeps what it certified, with
// the stop "interrupted".
func Scale(ctx context.Context, cfg ScaleConfig, progressOut io.Writer, tty bool) (*ScaleResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	data, err := LoadData(cfg.Data)
	if err != nil {
		return nil, err
	}
	prob, err := data.Problem(cfg.Loss, cfg.Lambda)
	if err != nil {
		return nil, err
	}
	lambda, _ := prob.Reg.Strengths()
	res := &ScaleResult{
		Config: cfg, Machine: ThisMachine(), DataName: data.Name,
		Rows: data.X.Rows, Cols: data.X.Cols, NNZ: data.X.NNZ(),
		Lambda: lambda, BaseThreads: slices.Min(cfg.Threads), Started: time.Now(),
		LoadBefore: LoadAverage(),
	}
	total := cfg.Repeats * len(cfg.Solvers) * len(cfg.Ms) * len(cfg.Threads)
	res.Planned = total
	prog := newProgress(progressOut, tty, total, "bench scale")
	// Repeats are the outer loop, so that a drift in the machine's load
	// spreads over every configuration instead of biasing one.
	for r := 0; r < cfg.Repeats; r++ {
		for _, s := range cfg.Solvers {
			for _, m := range cfg.Ms {
				for _, t := range cfg.Threads {
					if ctx.Err() != nil {
						return res.interrupt(ctx)
					}
					// The sweeps are timed before every run, not once
					// per sweep, so that each run is set against the
					// host as it was when the run started.
					sweep1 := SweepNsPerNNZ(data.X, 1, sweepReps, sweepMinTime)
					sweepT := sweep1
					if t > 1 {
						sweepT = SweepNsPerNNZ(data.X, t, sweepReps, sweepMinTime)
					}
					run := runOnce(ctx, prob, cfg, s, m, t, r)
					run.setSweep(sweep1, sweepT, res.NNZ)
					if ctx.Err() != nil {
						// A run cut short before its first certificate has
						// nothing to show; one cut short later keeps its
						// trace, marked so that its stop is not mistaken
						// for the solver's own.
						if len(run.Trace) == 0 {
							return res.interrupt(ctx)
						}
						run.Stop = "interrupted"
					}
					res.Runs = append(res.Runs, run)
					what := fmt.Sprintf("%s m=%d threads=%d seed=%d: %.0f passes, %.2fs, gap %.1e, %.3g× sweep", s, m, t, run.Seed, run.Passes, run.Seconds+run.SetupSeconds, run.FinalRelGap, run.XSweep)
					if run.Err != "" {
						what += " (" + firstLine(run.Err) + ")"
					}
					prog.step(what)
				}
			}
		}
	}
	res.finish()
	return res, nil
}

// finish records the sweep's duration and the load at its end, and sets
// the speed-ups, which need every run of a configuration.
func (res *ScaleResult) finish() {
	res.TotalDuration = time.Since(res.Started)
	res.LoadAfter = LoadAverage()
	res.fillSpeedups()
}

// interrupt ends a sweep whose context was cancelled: the runs that
// finished come back with an error naming the cause, or only the error
// when no run finished.
func (res *ScaleResult) interrupt(ctx context.Context) (*ScaleResult, error) {
	cause := context.Cause(ctx)
	if len(res.Runs) == 0 {
		return nil, fmt.Errorf("interrupted before the first run ended: %w", cause)
	}
	res.Interrupted = cause.Error()
	res.finish()
	return res, fmt.Errorf("interrupted after %d of %d runs: %w", len(res.Runs), res.Planned, cause)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

func runOnce(ctx context.Context, prob engine.Problem, cfg ScaleConfig, solver string, m, threads, repeat int) Run {
	seed := cfg.Seed + uint64(repeat)
	run := Run{Solver: solver, M: m, Threads: threads, Repeat: repeat, Seed: seed,
		Passes: math.NaN(), Seconds: math.NaN(), IterSeconds: math.NaN(), SetupSeconds: math.NaN(),
		SecPerPass: math.NaN(), Speedup: math.NaN(), FinalRelGap: math.NaN(),
		SweepNsPerNNZ: math.NaN(), SweepNsPerNNZT: math.NaN(), NsPerNNZ: math.NaN(), XSweep: math.NaN(), XSweepT: math.NaN()}
	opt := engine.DefaultOptions()
	opt.Solver = engine.Solver(solver)
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.M = m })
	opt.Threads = threads
	opt.Seed = seed
	opt.Tol = cfg.Tol
	opt.MaxEpochs = cfg.MaxEpochs
	opt.TimeLimit = cfg.TimeLimit
	opt.StopRule = never
	// A fresh heap for every run keeps one run's garbage out of the next
	// one's timings.
	runtime.GC()
	start := time.Now()
	_, r, err := engine.Train(ctx, prob, opt)
	wall := time.Since(start).Seconds()
	if err != nil {
		run.Err = err.Error()
	}
	run.Reach = make([]Reach, len(Epsilons))
	for i := range run.Reach {
		run.Reach[i] = Reach{math.NaN(), math.NaN(), math.NaN()}
	}
	if r == nil || len(r.Trace) == 0 {
		if run.Err == "" {
			run.Err = "no certificate"
		}
		return run
	}
	f := r.Final
	run.ThreadsUsed = r.Threads
	run.Epochs, run.Passes, run.Seconds, run.IterSeconds = f.Epoch, f.Passes, f.Seconds, f.IterSeconds
	run.SetupSeconds = math.Max(0, wall-f.Seconds)
	run.FinalRelGap = f.RelGap
	run.Stop = r.Stop
	if f.Passes > 0 {
		run.SecPerPass = f.IterSeconds / f.Passes
	}
	run.Trace = r.Trace
	for i, eps := range Epsilons {
		for _, tp := range r.Trace {
			if tp.RelGap <= eps {
				run.Reach[i] = Reach{tp.Passes, tp.Seconds, tp.IterSeconds}
				break
			}
		}
	}
	return run
}

// fillSpeedups sets each run's speed-up: the median seconds per pass of
// the runs with the same solver and m on BaseThreads threads, over its own.
func (res *ScaleResult) fillSpeedups() {
	for i := range res.Runs {
		r := &res.Runs[i]
		var base []float64
		for _, o := range res.Runs {
			if o.Solver == r.Solver && o.M == r.M && o.Threads == res.BaseThreads {
				base = append(base, o.SecPerPass)
			}
		}
		if b := summarize(base); b.N > 0 && r.SecPerPass > 0 {
			r.Speedup = b.Median / r.SecPerPass
		}
	}
}

// Write puts runs.csv, the four figures (PNG and SVG) and summary.md in dir.
func (res *ScaleResult) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := res.writeCSV(filepath.Join(dir, "runs.csv")); err != nil {
		return err
	}
	if err := res.writePlots(dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(res.summary()), 0o644)
}

// sweepCSVHeader are the columns of runs.csv that set each run against
// the bare sweep (the Run fields of the same names). They come after the
// machine's columns because they were added later: readers that index
// the older columns by position keep working.
var sweepCSVHeader = []string{"sweep_ns_per_nnz", "ns_per_nnz", "x_sweep", "sweep_ns_per_nnz_T", "x_sweep_T"}

// ScaleCSVHeader lists the columns of runs.csv.
func ScaleCSVHeader() []string {
	h := []string{"data", "rows", "cols", "nnz", "loss", "lambda", "solver", "m", "threads", "threads_used",
		"repeat", "seed", "epochs", "passes", "seconds", "iter_seconds", "setup_seconds", "sec_per_pass",
		"speedup", "final_rel_gap", "stop", "error"}
	for _, eps := range Epsilons {
		e := epsName(eps)
		h = append(h, "passes_to_"+e, "seconds_to_"+e, "iter_seconds_to_"+e)
	}
	h = append(h, machineCSVHeader...)
	return append(h, sweepCSVHeader...)
}

func epsName(eps float64) string { return strconv.FormatFloat(eps, 'e', 0, 64) }

// num formats a measurement for the CSV: empty when there is none.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func (res *ScaleResult) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(ScaleCSVHeader())
	mach := res.Machine.csvFields()
	for _, r := range res.Runs {
		rec := []string{res.DataName, fmt.Sprint(res.Rows), fmt.Sprint(res.Cols), fmt.Sprint(res.NNZ),
			res.Config.Loss, num(res.Lambda), r.Solver, fmt.Sprint(r.M), fmt.Sprint(r.Threads), fmt.Sprint(r.ThreadsUsed),
			fmt.Sprint(r.Repeat), fmt.Sprint(r.Seed), fmt.Sprint(r.Epochs), num(r.Passes), num(r.Seconds),
			num(r.IterSeconds), num(r.SetupSeconds), num(r.SecPerPass), num(r.Speedup), num(r.FinalRelGap),
			r.Stop, firstLine(r.Err)}
		for _, reach := range r.Reach {
			rec = append(rec, num(reach.Passes), num(reach.Seconds), num(reach.IterSeconds))
		}
		rec = append(rec, mach...)
		w.Write(append(rec, num(r.SweepNsPerNNZ), num(r.NsPerNNZ), num(r.XSweep), num(r.SweepNsPerNNZT), num(r.XSweepT)))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// title is the two-line title every figure carries: the problem and the
// machine.
func (res *ScaleResult) title(what string) string {
	return fmt.Sprintf("%s\n%s, %s loss, λ = %.3g (n = %d, d = %d)\n%s", what, res.DataName, res.Config.Loss, res.Lambda, res.Rows, res.Cols, res.Machine.Short())
}

// traceRun returns the run whose trace a convergence plot draws for a
// configuration: the first repeat that has one.
func (res *ScaleResult) traceRun(solver string, m, threads int) *Run {
	for i := range res.Runs {
		r := &res.Runs[i]
		if r.Solver == solver && r.M == m && r.Threads == threads && len(r.Trace) > 0 {
			return r
		}
	}
	return nil
}

func (res *ScaleResult) writePlots(dir string) error {
	cfg := res.Config
	maxT := slices.Max(cfg.Threads)
	// Statistical efficiency: gap against passes, on the baseline thread
	// count (passes barely depend on threads).
	style := ""
	if len(cfg.Solvers) > 1 {
		style = "; line style by solver"
	}
	passes := figure{Title: res.title(fmt.Sprintf("relative duality gap vs passes (%d thread(s), seed %d%s)", res.BaseThreads, cfg.Seed, style)),
		XLabel: "passes over the data", YLabel: "relative duality gap", LogY: true}
	// The threads are told apart by dashes 2·solver and 2·solver+1: solid
	// and dashed for the first solver only, so the title names the styles
	// only where they are those two.
	threadStyles := fmt.Sprintf("solid: %d thread(s), dashed: %d", res.BaseThreads, maxT)
	switch {
	case maxT == res.BaseThreads:
		threadStyles = fmt.Sprintf("%d thread(s)", maxT)
	case len(cfg.Solvers) > 1:
		threadStyles = fmt.Sprintf("%d and %d thread(s) told apart by line style, as the legend shows", res.BaseThreads, maxT)
	}
	seconds := figure{Title: res.title(fmt.Sprintf("relative duality gap vs iteration seconds (%s)", threadStyles)),
		XLabel: "seconds in iterations (set-up and certificates excluded)", YLabel: "relative duality gap", LogX: true, LogY: true}
	for si, s := range cfg.Solvers {
		for mi, m := range cfg.Ms {
			if r := res.traceRun(s, m, res.BaseThreads); r != nil {
				passes.Lines = append(passes.Lines, series{Label: fmt.Sprintf("%s m=%d", s, m), XY: traceXY(r.Trace, false), Color: mi, Dashes: si})
				seconds.Lines = append(seconds.Lines, series{Label: fmt.Sprintf("%s m=%d, %d thr", s, m, res.BaseThreads), XY: traceXY(r.Trace, true), Color: mi, Dashes: 2 * si})
			}
			if maxT != res.BaseThreads {
				if r := res.traceRun(s, m, maxT); r != nil {
					seconds.Lines = append(seconds.Lines, series{Label: fmt.Sprintf("%s m=%d, %d thr", s, m, maxT), XY: traceXY(r.Trace, true), Color: mi, Dashes: 2*si + 1})
				}
			}
		}
	}
	speedup := res.speedupFigure()
	// Statistical efficiency against m: passes to each tolerance.
	toEps := figure{Title: res.title(fmt.Sprintf("passes to a relative gap vs m (%d thread(s), median of %d)", res.BaseThreads, cfg.Repeats)),
		XLabel: "m (blocks per iteration)", YLabel: "passes", LogX: true, LogY: true, XTicks: intsAsFloats(cfg.Ms)}
	for si, s := range cfg.Solvers {
		for ei, eps := range Epsilons {
			var xy plotter.XYs
			for _, m := range cfg.Ms {
				i := ei
				sp := summarize(res.collect(s, m, res.BaseThreads, func(r Run) float64 { return r.Reach[i].Passes }))
				xy = append(xy, plotter.XY{X: float64(m), Y: sp.Median})
			}
			toEps.Lines = append(toEps.Lines, series{Label: fmt.Sprintf("%s gap ≤ %s", s, epsName(eps)), XY: xy, Color: ei, Dashes: si, Points: true})
		}
	}
	for _, f := range []struct {
		fig  figure
		base string
	}{{passes, "suboptimality_vs_passes"}, {seconds, "suboptimality_vs_seconds"}, {speedup, "speedup_vs_threads"}, {toEps, "passes_to_eps_vs_m"}} {
		if err := f.fig.save(dir, f.base); err != nil {
			return err
		}
	}
	return nil
}

// speedupFigure is the hardware efficiency: seconds per pass against
// threads, as a speed-up over BaseThreads. A configuration any of whose
// runs kept fewer workers than asked for did not run on the threads it is
// plotted at: its "speed-up" is the noise of a run on fewer, so it is left
// out, and the title says how many were (summary.md names them).
func (res *ScaleResult) speedupFigure() figure {
	cfg := res.Config
	what := fmt.Sprintf("speed-up of seconds per pass against %d thread(s) (ratio of medians, %d repeat(s))", res.BaseThreads, cfg.Repeats)
	if n := len(res.fewerWorkers()); n > 0 {
		what += fmt.Sprintf("\n%d configuration(s) that used fewer workers than asked for are left out (summary.md names them)", n)
	}
	f := figure{Title: res.title(what), XLabel: "threads asked for", YLabel: "speed-up", IdealLabel: "ideal", XTicks: intsAsFloats(cfg.Threads)}
	for _, t := range cfg.Threads {
		f.Ideal = append(f.Ideal, plotter.XY{X: float64(t), Y: float64(t) / float64(res.BaseThreads)})
	}
	for si, s := range cfg.Solvers {
		for mi, m := range cfg.Ms {
			var xy plotter.XYs
			for _, t := range cfg.Threads {
				if res.ranOnFewer(s, m, t) {
					continue
				}
				xy = append(xy, plotter.XY{X: float64(t), Y: res.speedup(s, m, t)})
			}
			f.Lines = append(f.Lines, series{Label: fmt.Sprintf("%s m=%d", s, m), XY: xy, Color: mi, Dashes: si, Points: true})
		}
	}
	return f
}

// fewerWorkers names the configurations any of whose runs kept fewer
// workers than asked for, as "adaspdc m=1 threads=2".
func (res *ScaleResult) fewerWorkers() []string {
	var fewer []string
	for _, s := range res.Config.Solvers {
		for _, m := range res.Config.Ms {
			for _, t := range res.Config.Threads {
				if res.ranOnFewer(s, m, t) {
					fewer = append(fewer, fmt.Sprintf("%s m=%d threads=%d", s, m, t))
				}
			}
		}
	}
	return fewer
}

func traceXY(trace []engine.TracePoint, bySeconds bool) plotter.XYs {
	xy := make(plotter.XYs, 0, len(trace))
	for _, tp := range trace {
		x := tp.Passes
		if bySeconds {
			x = tp.IterSeconds
		}
		xy = append(xy, plotter.XY{X: x, Y: tp.RelGap})
	}
	return xy
}

// collect returns f of every run of a configuration, one per repeat.
func (res *ScaleResult) collect(solver string, m, threads int, f func(Run) float64) []float64 {
	var v []float64
	for _, r := range res.Runs {
		if r.Solver == solver && r.M == m && r.Threads == threads {
			if r.Err != "" && len(r.Trace) == 0 {
				v = append(v, math.NaN())
				continue
			}
			v = append(v, f(r))
		}
	}
	return v
}

func (res *ScaleResult) summary() string {
	cfg := res.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# bench scale: %s, %s loss, λ = %.4g\n\n", res.DataName, cfg.Loss, res.Lambda)
	fmt.Fprintf(&b, "Measured on this machine (every figure below comes from it, and from no other):\n\n%s\n", res.Machine.Markdown())
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", cfg.Command)
	if res.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted** (%s) after %d of %d runs: the tables and figures below cover only the runs that finished, "+
			"so configurations may have fewer repeats than asked for, and a run marked `interrupted` was cut short.\n\n",
			res.Interrupted, len(res.Runs), res.Planned)
	}
	fmt.Fprintf(&b, "Data: %s, n = %d rows, d = %d columns, %d nonzeros. Solvers %s; m ∈ {%s}; threads ∈ {%s}; %d repeat(s) with seeds %d–%d; each run stops at a relative gap of %g or after %d epochs",
		res.DataName, res.Rows, res.Cols, res.NNZ, strings.Join(cfg.Solvers, ", "), joinInts(cfg.Ms), joinInts(cfg.Threads),
		cfg.Repeats, cfg.Seed, cfg.Seed+uint64(cfg.Repeats)-1, cfg.Tol, cfg.MaxEpochs)
	if cfg.TimeLimit > 0 {
		fmt.Fprintf(&b, " or %v", cfg.TimeLimit)
	}
	fmt.Fprintf(&b, ". Every epoch is certified. Sweep time %v, started %s. Load average (1, 5, 15 min) %s at the start and %s at the end, on %d cores: "+
		"a load above the core count means other processes shared the cores, and times and speed-ups are then pessimistic.\n\n",
		res.TotalDuration.Round(time.Second), res.Started.Format(time.RFC3339), res.LoadBefore, res.LoadAfter, res.Machine.Cores)
	b.WriteString("Cells give the median over the repeats and, in brackets, the range; (k/N) means only k of N runs reached the gap. " +
		"*Passes* measure statistical efficiency (they grow with m); *seconds per pass* and *speed-up* measure hardware efficiency " +
		"(they depend on the threads the solver kept, `used`, which can be fewer than asked for when a batch is too small to share). " +
		"Seconds to a gap count iterations only, without set-up and certificates.\n\n")

	b.WriteString("## Passes to a relative duality gap (statistical efficiency)\n\n")
	fmt.Fprintf(&b, "On %d thread(s).\n\n| solver | m |", res.BaseThreads)
	for _, eps := range Epsilons {
		fmt.Fprintf(&b, " ≤ %s |", epsName(eps))
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(Epsilons)) + "\n")
	for _, s := range cfg.Solvers {
		for _, m := range cfg.Ms {
			fmt.Fprintf(&b, "| %s | %d |", s, m)
			for i := range Epsilons {
				fmt.Fprintf(&b, " %s |", summarize(res.collect(s, m, res.BaseThreads, func(r Run) float64 { return r.Reach[i].Passes })).format("%.0f"))
			}
			b.WriteString("\n")
		}
	}

	if fewer := res.fewerWorkers(); len(fewer) > 0 {
		b.WriteString("\n**Ran on fewer workers than asked for** (a batch too small to share, or one worker timed faster), and so left out of the speed-up figure, " +
			"their speed-up marked * in the table below, being the noise of runs on fewer workers: " + strings.Join(fewer, ", ") + ".\n")
	}
	b.WriteString("\n## Seconds per pass and speed-up (hardware efficiency)\n\n")
	b.WriteString("| solver | m | threads | used | s/pass | speed-up | iteration s to ≤ 1e-04 | to ≤ 1e-06 | to ≤ 1e-08 | stop |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range cfg.Solvers {
		for _, m := range cfg.Ms {
			for _, t := range cfg.Threads {
				fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s |", s, m, t, res.usedCell(s, m, t),
					summarize(res.collect(s, m, t, func(r Run) float64 { return r.SecPerPass })).format("%.3g"),
					res.speedupCell(s, m, t))
				for i := 1; i < len(Epsilons); i++ {
					fmt.Fprintf(&b, " %s |", summarize(res.collect(s, m, t, func(r Run) float64 { return r.Reach[i].IterSeconds })).format("%.3g"))
				}
				fmt.Fprintf(&b, " %s |\n", res.stops(s, m, t))
			}
		}
	}
	res.sweepTable(&b)
	var failed []string
	for _, r := range res.Runs {
		if r.Err != "" {
			failed = append(failed, fmt.Sprintf("- %s m=%d threads=%d seed=%d: %s", r.Solver, r.M, r.Threads, r.Seed, firstLine(r.Err)))
		}
	}
	if len(failed) > 0 {
		b.WriteString("\n## Runs that failed or were refused\n\n" + strings.Join(failed, "\n") + "\n")
	}
	b.WriteString("\n## Figures\n\n")
	for _, f := range []string{"suboptimality_vs_passes", "passes_to_eps_vs_m", "suboptimality_vs_seconds", "speedup_vs_threads"} {
		fmt.Fprintf(&b, "![%s](%s.png)\n\n", f, f)
	}
	b.WriteString("The convergence figures draw the first repeat of each configuration; `runs.csv` has every run, one row each, with its seed and the machine.\n")
	return b.String()
}

// ranOnFewer reports whether any run of a configuration kept fewer workers
// than the threads asked for.
func (res *ScaleResult) ranOnFewer(solver string, m, threads int) bool {
	for _, u := range res.collect(solver, m, threads, func(r Run) float64 { return float64(r.ThreadsUsed) }) {
		if u < float64(threads) {
			return true
		}
	}
	return false
}

// speedup is the median seconds per pass on BaseThreads over the median
// on threads, for one solver and m: exactly 1 on BaseThreads.
func (res *ScaleResult) speedup(solver string, m, threads int) float64 {
	base := summarize(res.collect(solver, m, res.BaseThreads, func(r Run) float64 { return r.SecPerPass }))
	this := summarize(res.collect(solver, m, threads, func(r Run) float64 { return r.SecPerPass }))
	if base.N == 0 || this.N == 0 {
		return math.NaN()
	}
	return base.Median / this.Median
}

// usedCell gives the workers a configuration's runs kept: one count when
// they agree, the smallest and the largest otherwise (a median of 1.5
// workers would round to a count no run used).
func (res *ScaleResult) usedCell(solver string, m, threads int) string {
	u := summarize(res.collect(solver, m, threads, func(r Run) float64 { return float64(r.ThreadsUsed) }))
	switch {
	case u.N == 0:
		return "–"
	case u.Min == u.Max:
		return fmt.Sprintf("%.0f", u.Min)
	}
	return fmt.Sprintf("%.0f–%.0f", u.Min, u.Max)
}

// speedupCell is the ratio of medians with the range of the runs' own
// speed-ups (each against the baseline's median) in brackets, marked * for
// a configuration that ran on fewer workers than asked for, whose ratio is
// no speed-up.
func (res *ScaleResult) speedupCell(solver string, m, threads int) string {
	per := summarize(res.collect(solver, m, threads, func(r Run) float64 { return r.Speedup }))
	if per.N == 0 {
		return "–"
	}
	per.Median = res.speedup(solver, m, threads)
	if res.ranOnFewer(solver, m, threads) {
		return per.format("%.2f") + " *"
	}
	return per.format("%.2f")
}

// stops lists how the runs of a configuration ended, e.g. "tol×3".
func (res *ScaleResult) stops(solver string, m, threads int) string {
	count := map[string]int{}
	var order []string
	for _, r := range res.Runs {
		if r.Solver == solver && r.M == m && r.Threads == threads {
			s := r.Stop
			if r.Err != "" && s == "" {
				s = "error"
			}
			if count[s] == 0 {
				order = append(order, s)
			}
			count[s]++
		}
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%s×%d", s, count[s]))
	}
	return strings.Join(parts, " ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func intsAsFloats(v []int) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

// sweepTable writes the table that sets each configuration's iteration
// time per nonzero against the bare sweep, with the sweeps' own figures in
// its caption, so that a reader comparing m and thread counts sees how far
// each is from the memory-bound yardstick on the same host at the same
// time.
func (res *ScaleResult) sweepTable(b *strings.Builder) {
	cfg := res.Config
	b.WriteString("\n## Iteration time against the bare sweep (hardware efficiency)\n\n")
	var one []float64
	perT := map[int][]float64{}
	for _, r := range res.Runs {
		one = append(one, r.SweepNsPerNNZ)
		if r.Threads > 1 {
			perT[r.Threads] = append(perT[r.Threads], r.SweepNsPerNNZT)
		}
	}
	fmt.Fprintf(b, "The bare sweep (one `kernels.SparseDot` and one `kernels.SparseAxpy` per row, every row in file order, "+
		"into a scratch vector; the median of at least %d sweeps over at least %v, timed in this process before every run) took **%s ns per nonzero on one thread**",
		sweepReps, sweepMinTime, summarize(one).format("%.3g"))
	for _, t := range cfg.Threads {
		if v, ok := perT[t]; ok {
			fmt.Fprintf(b, ", %s on %d threads (each sweeping a contiguous share of the rows into its own vector; wall time per nonzero of the matrix)",
				summarize(v).format("%.3g"), t)
		}
	}
	b.WriteString(" (median over the runs [range]). *ns/nnz* is a run's iteration seconds (no set-up, no certificates) per epoch per nonzero; " +
		"*× sweep* divides it by the **one-thread** sweep measured before the same run, on every thread count, so that a run on T threads " +
		"that kept a sweep-speed epoch and scaled perfectly would read 1/T; *× T-thread sweep* divides it by the sweep on the run's own " +
		"thread count (the same as × sweep on one thread).\n\n")
	b.WriteString("| solver | m | threads | used | ns/nnz | × sweep | × T-thread sweep |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range cfg.Solvers {
		for _, m := range cfg.Ms {
			for _, t := range cfg.Threads {
				fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s |\n", s, m, t, res.usedCell(s, m, t),
					summarize(res.collect(s, m, t, func(r Run) float64 { return r.NsPerNNZ })).format("%.3g"),
					summarize(res.collect(s, m, t, func(r Run) float64 { return r.XSweep })).format("%.3g"),
					summarize(res.collect(s, m, t, func(r Run) float64 { return r.XSweepT })).format("%.3g"))
			}
		}
	}
}
