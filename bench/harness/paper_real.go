package harness

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// The three real-data reproductions, each a CurvesConfig built from a data
// folder and a few lists. Their defaults are subsets that run in minutes
// on two shared cores; every list is a flag of `adaspdc-bench paper NAME`.

// RealData names a data set for the reproductions: a file of the data
// folder, "news20-binary" (news20, multiclass, binarised as label ≤ 10 →
// −1, rows scaled to unit norm, as the engine's benchmarks do) or
// "rcv1like" (bench/synth's RCV1Like, 20,000 × 47,236, seed 1).
type RealData struct {
	Name string
	X    *sparse.CSR
	Y    []float64 // ±1 for classification files; the targets otherwise
}

// loadRealData reads one data set; classification is false for regression
// files (housing_scale, abalone_scale), whose targets are kept.
func loadRealData(dir, name string, classification bool) (*RealData, error) {
	switch name {
	case "rcv1like":
		x, y, err := synth.Generate(synth.RCV1Like(20000, 1))
		if err != nil {
			return nil, err
		}
		return &RealData{Name: name, X: x, Y: y}, nil
	case "news20-binary":
		ds, err := sparse.ReadFile(filepath.Join(dir, "news20"), sparse.ReadOptions{})
		if err != nil {
			return nil, err
		}
		y := make([]float64, len(ds.Y))
		for i, v := range ds.Y {
			y[i] = 1
			if v <= 10 {
				y[i] = -1
			}
		}
		ds.X.NormalizeRowsUnit()
		return &RealData{Name: name, X: ds.X, Y: y}, nil
	}
	ds, err := sparse.ReadFile(filepath.Join(dir, name), sparse.ReadOptions{})
	if err != nil {
		return nil, err
	}
	y := ds.Y
	if classification {
		if y, _, err = sparse.BinaryLabels(ds.Y); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return &RealData{Name: name, X: ds.X, Y: y}, nil
}

// ZSFig23Config is Zhu & Storkey (2015) Figs. 2 and 3: smoothed hinge
// (γ = 1) and logistic regression with a bias feature, λ ∈ {1e-5, 1e-6,
// 1e-7}, AdaSPDC against SPDC, SPDC with non-uniform sampling, SDCA and
// SAG, suboptimality against passes.
type ZSFig23Config struct {
	DataDir  string
	Datasets []string
	Losses   []string // smoothhinge (Fig. 2), logistic (Fig. 3)
	Lambdas  []float64
	Passes   int
	Seeds    int
	Out      string
	Command  string
}

// DefaultZSFig23 is the default subset: a9a, w8a and ijcnn1, both losses,
// λ ∈ {1e-5, 1e-6, 1e-7}, 100 passes, one seed (news20 and more passes
// and seeds are flags).
func DefaultZSFig23() ZSFig23Config {
	return ZSFig23Config{DataDir: "../shared/data", Datasets: []string{"a9a", "w8a", "ijcnn1"}, Losses: []string{"smoothhinge", "logistic"},
		Lambdas: []float64{1e-5, 1e-6, 1e-7}, Passes: 100, Seeds: 1}
}

// ZSFig23Methods are the five curves; SAG runs at the largest step the
// engine allows (StepScale 2: 1/(8L)), the paper's best of [1/(16L), 1/L].
func ZSFig23Methods() []CurveMethod {
	return []CurveMethod{
		{Label: "AdaSPDC", Solver: engine.SolverAdaSPDC},
		{Label: "SPDC", Solver: engine.SolverSPDC},
		{Label: "SPDC non-uniform", Solver: engine.SolverSPDC, Sampling: engine.SamplingImportance},
		{Label: "SDCA", Solver: "sdca"},
		{Label: "SAG", Solver: "sag", StepScale: 2},
	}
}

// Build loads the data and makes the reproduction's configuration.
func (c ZSFig23Config) Build() (CurvesConfig, error) {
	cfg := CurvesConfig{Name: "zhu-storkey-fig2-3", Title: "Zhu & Storkey (2015) Figs. 2-3:", Methods: ZSFig23Methods(),
		Passes: c.Passes, Seeds: c.Seeds, Baseline: "SPDC", Contender: "AdaSPDC", Command: c.Command, Out: c.Out,
		Intro: "J(x) = (1/n)Σ φ(aₖᵀx) + (λ/2)‖x‖² with a bias feature of value 1 appended to every row, as in the paper; " +
			"smoothed hinge with γ = 1 (the paper's Fig. 2) and logistic (Fig. 3). SAG's step is 1/(8L), the largest the engine's StepScale allows " +
			"(the paper reports the best of [1/(16L), 1/L]); SPDC non-uniform samples rows in proportion to their norm (engine: -sampling importance)."}
	for _, name := range c.Datasets {
		d, err := loadRealData(c.DataDir, name, true)
		if err != nil {
			return cfg, err
		}
		x := d.X.WithBias(1)
		for _, lossName := range c.Losses {
			loss, err := engine.LossByName(lossName, 1)
			if err != nil {
				return cfg, err
			}
			for _, lam := range c.Lambdas {
				cfg.Panels = append(cfg.Panels, CurvePanel{
					Title: fmt.Sprintf("%s, %s, λ = %s", name, lossName, lambdaName(lam)),
					Group: lossName,
					Key:   fmt.Sprintf("%s+bias/%s/%s", name, lossName, lambdaName(lam)),
					Prob:  engine.Problem{X: x, B: d.Y, Loss: loss, Reg: engine.ElasticNet{Lambda: lam}},
				})
			}
		}
	}
	return cfg, nil
}

// WXFig23Config is Wang & Xiao (2017) Figs. 2 and 3: ridge (Fig. 2, the
// paper's cpuact) and logistic regression (Fig. 3, the paper's rcv1 and a
// synthetic set) with rows divided by the largest row norm (R = 1),
// λ ∈ {1/n, 1e-2/n, 1e-4/n}: ADF-SPDC, DF-SPDC, SPDC, SVRG and SAGA.
type WXFig23Config struct {
	DataDir    string
	Regression []string // ridge data sets (Fig. 2)
	Logistic   []string // logistic data sets (Fig. 3)
	Scales     []float64
	Passes     int
	Seeds      int
	Out        string
	Command    string
}

// DefaultWXFig23 is the default subset: ridge on abalone_scale, logistic on
// a9a and w8a, all three λ, 100 passes, one seed. The rcv1-like generator
// (the paper's rcv1) is a flag: the Wang–Xiao methods' dense O(d) update
// per iteration makes a pass over its 47,236 columns take about a second.
func DefaultWXFig23() WXFig23Config {
	return WXFig23Config{DataDir: "../shared/data", Regression: []string{"abalone_scale"}, Logistic: []string{"a9a", "w8a"},
		Scales: []float64{1, 1e-2, 1e-4}, Passes: 100, Seeds: 1}
}

// WXFig23Methods are the paper's curves without Katyusha (not in the
// engine).
func WXFig23Methods() []CurveMethod {
	return []CurveMethod{
		{Label: "ADF-SPDC", Solver: "adfspdc"},
		{Label: "DF-SPDC", Solver: "dfspdc"},
		{Label: "SPDC", Solver: engine.SolverSPDC},
		{Label: "SVRG", Solver: "svrg"},
		{Label: "SAGA", Solver: "saga"},
	}
}

// Build loads the data and makes the reproduction's configuration.
func (c WXFig23Config) Build() (CurvesConfig, error) {
	cfg := CurvesConfig{Name: "wang-xiao-fig2-3", Title: "Wang & Xiao (2017) Figs. 2-3:", Methods: WXFig23Methods(),
		Passes: c.Passes, Seeds: c.Seeds, Baseline: "SPDC", Contender: "ADF-SPDC", Command: c.Command, Out: c.Out,
		Intro: "P(x) = (1/n)Σ φ(aₖᵀx) + (λ/2)‖x‖², rows divided by the largest row norm (R = 1) as in the paper, λ = s/n for s in the list; " +
			"ridge (the paper's Fig. 2, on cpuact, which is not in ../shared/data) and logistic (Fig. 3, on rcv1, for which the rcv1-like generator stands in). " +
			"Steps as the engine's solvers set them (adaspdc solvers; the Wang–Xiao methods adapt Δ every 10 passes with c̲ = 0.95, c̄ = 1.5). Katyusha is not in the engine."}
	add := func(names []string, lossName string, classification bool) error {
		loss, err := engine.LossByName(lossName, 1)
		if err != nil {
			return err
		}
		for _, name := range names {
			d, err := loadRealData(c.DataDir, name, classification)
			if err != nil {
				return err
			}
			x := d.X.Clone()
			x.NormalizeRowsByMax()
			n := float64(x.Rows)
			for _, s := range c.Scales {
				cfg.Panels = append(cfg.Panels, CurvePanel{
					Title: fmt.Sprintf("%s, λ = %s/n", name, lambdaName(s)),
					Group: lossName,
					Key:   fmt.Sprintf("%s/R=1/%s/%s/n", name, lossName, lambdaName(s)),
					Prob:  engine.Problem{X: x, B: d.Y, Loss: loss, Reg: engine.ElasticNet{Lambda: s / n}},
				})
			}
		}
		return nil
	}
	if err := add(c.Regression, "squared", false); err != nil {
		return cfg, err
	}
	if err := add(c.Logistic, "logistic", true); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// AZHConfig is the Allen-Zhu & Hazan (2016) comparison: AdaptReg against
// a fixed added regularization σ for the lasso, and AdaptSmooth against a
// fixed smoothing of the hinge for the SVM, rows scaled to average norm 1.
// The engine has no fixed-parameter mode for its reductions, so the fixed
// variants run the inner solver (AdaSPDC) directly on the fixed
// regularised or smoothed problem, and are measured on the original one.
type AZHConfig struct {
	DataDir   string
	Lasso     []string  // regression data sets
	LassoL1   []float64 // L1 strengths
	Hinge     []string  // classification data sets
	HingeL2   []float64 // λ of the SVM
	FixedReg  []float64 // fixed σ for the lasso
	FixedSmth []float64 // fixed smoothing for the hinge
	Passes    int
	Seeds     int
	Out       string
	Command   string
}

// DefaultAZH is the default: lasso on housing_scale and abalone_scale at
// L1 = 1e-4, hinge on a9a at λ = 1e-5, 100 passes, one seed.
func DefaultAZH() AZHConfig {
	return AZHConfig{DataDir: "../shared/data", Lasso: []string{"housing_scale", "abalone_scale"}, LassoL1: []float64{1e-4},
		Hinge: []string{"a9a"}, HingeL2: []float64{1e-5}, FixedReg: []float64{1e-2, 1e-4, 1e-6}, FixedSmth: []float64{1e-1, 1e-2, 1e-3},
		Passes: 100, Seeds: 1}
}

// averageUnitRows scales every row by the same factor so that the rows'
// mean norm is 1, as the paper's experiments do.
func averageUnitRows(x *sparse.CSR) *sparse.CSR {
	x = x.Clone()
	var mean float64
	for _, s := range x.RowSquaredNorms() {
		mean += math.Sqrt(s) / float64(x.Rows)
	}
	if mean > 0 {
		f := make([]float64, x.Rows)
		for i := range f {
			f[i] = 1 / mean
		}
		x.ScaleRows(f)
	}
	return x
}

// Build loads the data and makes the reproduction's configuration.
func (c AZHConfig) Build() (CurvesConfig, error) {
	cfg := CurvesConfig{Name: "allen-zhu-hazan", Title: "Allen-Zhu & Hazan (2016), reductions:", Passes: c.Passes, Seeds: c.Seeds,
		Command: c.Command, Out: c.Out,
		Intro: "Rows scaled by one factor to mean norm 1, as in the paper's experiments. Lasso: (1/2n)‖Ax − b‖² + L1‖x‖₁; " +
			"AdaptReg (engine adaptreg over AdaSPDC) against AdaSPDC run directly on the lasso plus a fixed (σ/2)‖x‖² (the fixed-σ reduction). " +
			"SVM: (1/n)Σ max(0, 1 − bₖaₖᵀx) + (λ/2)‖x‖²; AdaptSmooth (engine adaptsmooth over AdaSPDC) against AdaSPDC run directly on the hinge smoothed by a fixed s " +
			"(the smoothed hinge of the engine). The engine's reductions have no fixed-parameter mode, so the fixed variants are the inner solver on the fixed problem; " +
			"their iterates are measured on the original objective at passes 0, 1, 2, 3, 4, 6, 9, 13, … (each point a fresh run of that many passes with the same seed), " +
			"so their curves are steps. A fixed variant levels off at the bias its σ or s leaves; the reductions should follow the lowest of them at every budget."}
	for _, s := range c.FixedReg {
		s := s
		cfg.Methods = append(cfg.Methods, CurveMethod{Label: "fixed σ = " + lambdaName(s), Solver: engine.SolverAdaSPDC,
			Accepts: func(p CurvePanel) bool { return p.Group == "lasso" },
			Modify: func(p engine.Problem) engine.Problem {
				en, _ := p.Reg.AsElasticNet()
				en.Lambda += s
				p.Reg = en
				return p
			}})
	}
	for _, s := range c.FixedSmth {
		s := s
		cfg.Methods = append(cfg.Methods, CurveMethod{Label: "fixed smoothing " + lambdaName(s), Solver: engine.SolverAdaSPDC,
			Accepts: func(p CurvePanel) bool { return p.Group == "svm" },
			Modify: func(p engine.Problem) engine.Problem {
				p.Loss = engine.SmoothHinge{S: s}
				return p
			}})
	}
	cfg.Methods = append(cfg.Methods,
		CurveMethod{Label: "AdaptReg", Solver: engine.SolverAdaptReg, Accepts: func(p CurvePanel) bool { return p.Group == "lasso" }},
		CurveMethod{Label: "AdaptSmooth", Solver: engine.SolverAdaptSmooth, Accepts: func(p CurvePanel) bool { return p.Group == "svm" }})
	for _, name := range c.Lasso {
		d, err := loadRealData(c.DataDir, name, false)
		if err != nil {
			return cfg, err
		}
		x := averageUnitRows(d.X)
		for _, l1 := range c.LassoL1 {
			cfg.Panels = append(cfg.Panels, CurvePanel{Title: fmt.Sprintf("%s lasso, L1 = %s", name, lambdaName(l1)), Group: "lasso",
				Key:       fmt.Sprintf("%s/mean-norm-1/lasso/%s", name, lambdaName(l1)),
				Prob:      engine.Problem{X: x, B: d.Y, Loss: engine.Squared{}, Reg: engine.ElasticNet{L1: l1}},
				RefSolver: "saga"})
		}
	}
	for _, name := range c.Hinge {
		d, err := loadRealData(c.DataDir, name, true)
		if err != nil {
			return cfg, err
		}
		x := averageUnitRows(d.X)
		for _, lam := range c.HingeL2 {
			cfg.Panels = append(cfg.Panels, CurvePanel{Title: fmt.Sprintf("%s SVM, λ = %s", name, lambdaName(lam)), Group: "svm",
				Key:       fmt.Sprintf("%s/mean-norm-1/hinge/%s", name, lambdaName(lam)),
				Prob:      engine.Problem{X: x, B: d.Y, Loss: engine.Hinge{}, Reg: engine.ElasticNet{Lambda: lam}},
				RefSolver: "sdca"})
		}
	}
	return cfg, nil
}

// ParseDataList splits a comma-separated list of data set names.
func ParseDataList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
