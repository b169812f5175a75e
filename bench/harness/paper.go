package harness

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Papers lists the reproductions `adaspdc-bench paper` knows, with what
// each needs (empty: it runs).
var Papers = []struct{ Name, About, Needs string }{
	{"zhu-storkey-fig1", "ridge on synthetic data, n = d = 1000, λ ∈ {1e-3 … 1e-6}: AdaSPDC, SPDC, SPDC non-uniform, SDCA, SAG", ""},
	{"zhu-storkey-fig2-3", "smoothed hinge and logistic on w8a, a9a, ijcnn1, news20 (binarised), λ ∈ {1e-5, 1e-6, 1e-7}: the same five methods", ""},
	{"wang-xiao-fig2-3", "ridge and logistic, rows with R = 1, λ ∈ {1/n, 1e-2/n, 1e-4/n}: ADF-SPDC, DF-SPDC, SPDC, SVRG, SAGA", ""},
	{"allen-zhu-hazan", "AdaptReg against fixed σ (lasso), AdaptSmooth against fixed smoothing (hinge), over AdaSPDC", ""},
}

// Fig1Config is the Zhu & Storkey (2015) Fig. 1 experiment: ridge
// regression on n = d = 1000 Gaussian rows with Σⱼⱼ = j⁻², x⋄ = 1 and
// N(0, 1) noise, suboptimality J(xᵗ) − J(x*) against passes.
type Fig1Config struct {
	N, D     int
	Lambdas  []float64
	Passes   int
	Seeds    int    // solver seeds 1…Seeds, averaged
	DataSeed uint64 // the data are drawn once
	// Methods are the curves to draw; empty: Fig1Methods(). Those whose
	// solver is not registered are skipped with a note.
	Methods []Fig1Method
	Command string
}

// Fig1Method is one curve: a registered solver with options.
type Fig1Method struct {
	Label    string
	Solver   engine.Solver
	Sampling engine.Sampling
}

// Fig1Methods are the paper's five methods, under the names the engine
// registers (or would register) them.
func Fig1Methods() []Fig1Method {
	return []Fig1Method{
		{"AdaSPDC", engine.SolverAdaSPDC, ""},
		{"SPDC", engine.SolverSPDC, ""},
		{"SPDC non-uniform", engine.SolverSPDC, engine.SamplingImportance},
		{"SDCA", "sdca", ""},
		{"SAG", "sag", ""},
	}
}

// DefaultFig1 is the paper's set-up.
func DefaultFig1() Fig1Config {
	return Fig1Config{N: 1000, D: 1000, Lambdas: []float64{1e-3, 1e-4, 1e-5, 1e-6}, Passes: 300, Seeds: 10, DataSeed: 1}
}

// Fig1Data draws the rows aₖ ~ N(0, Σ), Σⱼⱼ = j⁻², and targets
// bₖ = aₖᵀx⋄ + εₖ with x⋄ = 1 and εₖ ~ N(0, 1), as in Zhang & Xiao's and
// Zhu & Storkey's ridge experiments.
func Fig1Data(n, d int, seed uint64) (*sparse.CSR, []float64) {
	rng := rand.New(rand.NewPCG(seed, 0xf161))
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1), Indices: make([]int32, 0, n*d), Values: make([]float64, 0, n*d)}
	b := make([]float64, n)
	for k := 0; k < n; k++ {
		var z float64
		for j := 0; j < d; j++ {
			v := rng.NormFloat64() / float64(j+1)
			x.Indices = append(x.Indices, int32(j))
			x.Values = append(x.Values, v)
			z += v // x⋄ⱼ = 1
		}
		x.Indptr[k+1] = int64(len(x.Indices))
		b[k] = z + rng.NormFloat64()
	}
	return x, b
}

// RidgeOptimum solves (AᵀA/n + λI)x = Aᵀb/n by Cholesky, with one step of
// iterative refinement, which matters at λ = 1e-6 where the system's
// condition number is about 1e6.
func RidgeOptimum(x *sparse.CSR, b []float64, lambda float64) ([]float64, error) {
	n, d := x.Rows, x.Cols
	a := x.Dense()
	h := mat.NewSymDense(d, nil)
	h.SymOuterK(1/float64(n), a.T())
	for j := 0; j < d; j++ {
		h.SetSym(j, j, h.At(j, j)+lambda)
	}
	rhs := mat.NewVecDense(d, nil)
	rhs.MulVec(a.T(), mat.NewVecDense(n, slices.Clone(b)))
	rhs.ScaleVec(1/float64(n), rhs)
	var chol mat.Cholesky
	if ok := chol.Factorize(h); !ok {
		return nil, errors.New("ridge optimum: the system is not positive definite")
	}
	var sol, res, delta mat.VecDense
	if err := chol.SolveVecTo(&sol, rhs); err != nil {
		return nil, err
	}
	res.MulVec(h, &sol)
	res.SubVec(rhs, &res)
	if err := chol.SolveVecTo(&delta, &res); err != nil {
		return nil, err
	}
	sol.AddVec(&sol, &delta)
	return mat.Col(nil, 0, &sol), nil
}

// Fig1Result holds the averaged curves: Mean[λ index][method index][pass].
type Fig1Result struct {
	Config  Fig1Config
	Machine Machine
	Methods []Fig1Method // those that ran
	Skipped []string     // notes on those that did not
	PStar   []float64    // J(x*) per λ
	Mean    [][][]float64
	// Final holds every seed's suboptimality after the last pass:
	// Final[λ][method][seed].
	Final    [][][]float64
	Duration time.Duration
	// Interrupted, when set, says what stopped the experiment and after
	// how many λ values: Config.Lambdas then holds only those finished.
	Interrupted string
}

// registered reports whether the engine has a solver called name.
func registered(name engine.Solver) bool {
	for _, s := range engine.Solvers() {
		if s.Name == name {
			return true
		}
	}
	return false
}

// Fig1 runs the experiment: for each λ, method and seed, Passes epochs of
// one sample per iteration, every epoch certified, the primal objective
// minus J(x*) averaged over the seeds.
func Fig1(ctx context.Context, cfg Fig1Config, progressOut io.Writer, tty bool) (*Fig1Result, error) {
	if cfg.N < 1 || cfg.D < 1 || cfg.Passes < 1 || cfg.Seeds < 1 || len(cfg.Lambdas) == 0 {
		return nil, fmt.Errorf("fig1: bad configuration %+v", cfg)
	}
	methods := cfg.Methods
	if len(methods) == 0 {
		methods = Fig1Methods()
	}
	res := &Fig1Result{Config: cfg, Machine: ThisMachine()}
	for _, m := range methods {
		if registered(m.Solver) {
			res.Methods = append(res.Methods, m)
		} else {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: no solver %q is registered (adaspdc solvers lists them); not drawn", m.Label, m.Solver))
		}
	}
	if len(res.Methods) == 0 {
		return nil, errors.New("fig1: none of the methods' solvers is registered")
	}
	start := time.Now()
	x, b := Fig1Data(cfg.N, cfg.D, cfg.DataSeed)
	prog := newProgress(progressOut, tty, len(cfg.Lambdas)*len(res.Methods)*cfg.Seeds, "bench paper zhu-storkey-fig1")
	for _, lam := range cfg.Lambdas {
		prob := engine.Problem{X: x, B: b, Loss: engine.Squared{}, Reg: engine.ElasticNet{Lambda: lam}}
		xs, err := RidgeOptimum(x, b, lam)
		if err != nil {
			return nil, err
		}
		cert, err := engine.Certify(prob, xs)
		if err != nil {
			return nil, err
		}
		res.PStar = append(res.PStar, cert.Primal)
		var means, finals [][]float64
		for _, m := range res.Methods {
			mean := make([]float64, cfg.Passes+1)
			var final []float64
			for seed := 1; seed <= cfg.Seeds; seed++ {
				if ctx.Err() != nil {
					return res.interrupt(ctx, start)
				}
				curve, err := fig1Run(ctx, prob, m, uint64(seed), cfg.Passes, cert.Primal)
				if ctx.Err() != nil {
					// A curve cut short would bias the mean: the λ it
					// belongs to is left out whole.
					return res.interrupt(ctx, start)
				}
				if err != nil {
					return nil, fmt.Errorf("fig1: %s at λ = %g, seed %d: %w", m.Label, lam, seed, err)
				}
				for i, v := range curve {
					mean[i] += v / float64(cfg.Seeds)
				}
				final = append(final, curve[len(curve)-1])
				prog.step(fmt.Sprintf("λ=%g %s seed %d: %.3g after %d passes", lam, m.Label, seed, curve[len(curve)-1], cfg.Passes))
			}
			means = append(means, mean)
			finals = append(finals, final)
		}
		res.Mean = append(res.Mean, means)
		res.Final = append(res.Final, finals)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// interrupt ends an experiment whose context was cancelled, keeping the
// λ values whose every curve finished (an average over some of the seeds
// would not be the figure's), or returning only the error when none did.
func (res *Fig1Result) interrupt(ctx context.Context, start time.Time) (*Fig1Result, error) {
	cause := context.Cause(ctx)
	done, planned := len(res.Mean), len(res.Config.Lambdas)
	if done == 0 {
		return nil, fmt.Errorf("interrupted before the first λ was finished: %w", cause)
	}
	res.PStar = res.PStar[:done]
	res.Config.Lambdas = res.Config.Lambdas[:done]
	res.Duration = time.Since(start)
	res.Interrupted = fmt.Sprintf("%v after %d of %d λ values", cause, done, planned)
	return res, fmt.Errorf("interrupted after %d of %d λ values: %w", done, planned, cause)
}

// fig1Run returns J(xᵗ) − J(x*) after each of passes epochs (entry 0: the
// start). A run that stops early keeps its last value.
func fig1Run(ctx context.Context, prob engine.Problem, m Fig1Method, seed uint64, passes int, pstar float64) ([]float64, error) {
	opt := engine.DefaultOptions()
	opt.Solver = m.Solver
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.Sampling = m.Sampling })
	opt = opt.WithCoordinate(func(c *engine.CoordinateSettings) { c.M = 1 })
	opt.Threads = 1
	opt.Seed = seed
	opt.Tol = -1
	opt.MaxEpochs = passes
	opt.StallEpochs = -1
	opt.StopRule = never
	_, r, err := engine.Train(ctx, prob, opt)
	if err != nil {
		return nil, err
	}
	curve := make([]float64, passes+1)
	for i := range curve {
		curve[i] = math.NaN()
	}
	for _, tp := range r.Trace {
		if tp.Epoch <= passes {
			curve[tp.Epoch] = tp.Primal - pstar
		}
	}
	for i := 1; i <= passes; i++ {
		if math.IsNaN(curve[i]) {
			curve[i] = curve[i-1]
		}
	}
	return curve, nil
}

// Write puts fig1.png, fig1.svg, fig1.csv (the averaged curves every 5
// passes) and fig1.md (the final values) in dir.
func (res *Fig1Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := res.Config
	var panels [][]figure
	for li, lam := range cfg.Lambdas {
		f := figure{Title: fmt.Sprintf("λ = %g", lam), XLabel: "passes", YLabel: "J(x) − J(x*)", LogY: true}
		for mi, m := range res.Methods {
			xy := make(plotter.XYs, 0, len(res.Mean[li][mi]))
			for p, v := range res.Mean[li][mi] {
				// Rounding can put J(xᵗ) a hair below J(x*); the plot
				// floors at the precision of J.
				xy = append(xy, plotter.XY{X: float64(p), Y: math.Max(v, 1e-16*math.Max(1, math.Abs(res.PStar[li])))})
			}
			f.Lines = append(f.Lines, series{Label: m.Label, XY: xy, Color: mi, Dashes: 0})
		}
		if li%2 == 0 {
			panels = append(panels, nil)
		}
		panels[len(panels)-1] = append(panels[len(panels)-1], f)
	}
	// A lone last panel gets an empty neighbour so the grid is full.
	if last := panels[len(panels)-1]; len(panels) > 1 && len(last) == 1 {
		panels[len(panels)-1] = append(last, figure{Title: ""})
	}
	title := fmt.Sprintf("Zhu & Storkey (2015) Fig. 1: ridge, n = %d, d = %d, Sigma_jj = j^-2, mean of %d seeds\n%s", cfg.N, cfg.D, cfg.Seeds, res.Machine.Short())
	if err := savePanels(dir, "fig1", title, panels, 9*vg.Inch, 7*vg.Inch); err != nil {
		return err
	}
	if err := res.writeCSV(filepath.Join(dir, "fig1.csv")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "fig1.md"), []byte(res.markdown()), 0o644)
}

func (res *Fig1Result) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(append([]string{"lambda", "method", "passes", "mean_suboptimality"}, machineCSVHeader...))
	mach := res.Machine.csvFields()
	for li, lam := range res.Config.Lambdas {
		for mi, m := range res.Methods {
			for p, v := range res.Mean[li][mi] {
				if p%5 == 0 || p == len(res.Mean[li][mi])-1 {
					w.Write(append([]string{num(lam), m.Label, strconv.Itoa(p), strconv.FormatFloat(v, 'g', 6, 64)}, mach...))
				}
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Factor returns the ratio of two methods' mean suboptimality after the
// last pass at λ index li: how many times better a is than b.
func (res *Fig1Result) Factor(li int, a, b string) float64 {
	ia, ib := -1, -1
	for i, m := range res.Methods {
		switch m.Label {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	if ia < 0 || ib < 0 {
		return math.NaN()
	}
	last := len(res.Mean[li][ia]) - 1
	return res.Mean[li][ib][last] / res.Mean[li][ia][last]
}

func (res *Fig1Result) markdown() string {
	cfg := res.Config
	var b strings.Builder
	fmt.Fprintf(&b, "# Zhu & Storkey (2015), Fig. 1: ridge regression on synthetic data\n\n")
	fmt.Fprintf(&b, "Measured on this machine:\n\n%s\n```sh\n%s\n```\n\n", res.Machine.Markdown(), cfg.Command)
	fmt.Fprintf(&b, "n = %d rows aₖ ~ N(0, Σ) with Σⱼⱼ = j⁻², d = %d, bₖ = aₖᵀx⋄ + N(0, 1) with x⋄ = 1 (data seed %d); "+
		"J(x) = (1/2n)‖Ax − b‖² + (λ/2)‖x‖²; x* from the normal equations (Cholesky, one refinement step). "+
		"One sample per iteration (m = 1), one thread, %d passes, solver seeds 1–%d; the curves average J(xᵗ) − J(x*) over the seeds. "+
		"Run time %v.\n\n", cfg.N, cfg.D, cfg.DataSeed, cfg.Passes, cfg.Seeds, res.Duration.Round(time.Second))
	if res.Interrupted != "" {
		fmt.Fprintf(&b, "**Interrupted** (%s): only the λ values below, whose every curve finished, are shown.\n\n", res.Interrupted)
	}
	if len(res.Skipped) > 0 {
		b.WriteString("Not drawn:\n\n")
		for _, s := range res.Skipped {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "J(xᵗ) − J(x*) after %d passes: mean over the seeds, with the range in brackets.\n\n| λ | J(x*) |", cfg.Passes)
	for _, m := range res.Methods {
		fmt.Fprintf(&b, " %s |", m.Label)
	}
	b.WriteString(" SPDC / AdaSPDC |\n|---:|---:|" + strings.Repeat("---:|", len(res.Methods)+1) + "\n")
	for li, lam := range cfg.Lambdas {
		fmt.Fprintf(&b, "| %g | %.10g |", lam, res.PStar[li])
		for mi := range res.Methods {
			s := summarize(res.Final[li][mi])
			last := len(res.Mean[li][mi]) - 1
			fmt.Fprintf(&b, " %.3g [%.2g–%.2g] |", res.Mean[li][mi][last], s.Min, s.Max)
		}
		fmt.Fprintf(&b, " %.3g× |\n", res.Factor(li, "AdaSPDC", "SPDC"))
	}
	b.WriteString("\nValues near 1e-16·J(x*) are at the precision of the objective itself (J(x*) is evaluated in float64), not a property of the method.\n\n![fig1](fig1.png)\n")
	return b.String()
}
