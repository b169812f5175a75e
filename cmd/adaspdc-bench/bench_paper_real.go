package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
)

// realPapers are the reproductions on real data that share the curves
// machinery of bench/harness/curves.go.
var realPapers = map[string]bool{"zhu-storkey-fig2-3": true, "wang-xiao-fig2-3": true, "allen-zhu-hazan": true}

// floatList parses a comma-separated list of positive numbers.
func floatList(fs *flag.FlagSet, name, s string) ([]float64, error) {
	var out []float64
	for _, f := range parseList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			return nil, cli.UsageErrorf(fs, "-%s: %q is not a positive number", name, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, cli.UsageErrorf(fs, "-%s: the list is empty", name)
	}
	return out, nil
}

func joinFloats(v []float64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += strconv.FormatFloat(x, 'g', -1, 64)
	}
	return s
}

func joinNames(v []string) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

// runRealPaper runs one of realPapers.
func runRealPaper(name string, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc-bench", "paper "+name, stderr)
	var build func() (harness.CurvesConfig, error)
	var dataDir, out string
	var passes, seeds int
	var about, full string
	out = "bench-" + name
	switch name {
	case "zhu-storkey-fig2-3":
		c := harness.DefaultZSFig23()
		dataDir, passes, seeds = c.DataDir, c.Passes, c.Seeds
		datasets := fs.String("datasets", joinNames(c.Datasets), "data sets: files of -data-dir, news20-binary or rcv1like")
		losses := fs.String("losses", joinNames(c.Losses), "smoothhinge (Fig. 2) and/or logistic (Fig. 3)")
		lambdas := fs.String("lambdas", joinFloats(c.Lambdas), "λ values, one panel each")
		about = "Smoothed hinge and logistic regression with a bias feature: AdaSPDC, SPDC, SPDC non-uniform, SDCA and SAG, suboptimality against passes."
		full = "-datasets a9a,w8a,ijcnn1,news20-binary -passes 300 -seeds 3"
		build = func() (harness.CurvesConfig, error) {
			c.DataDir, c.Passes, c.Seeds, c.Out = dataDir, passes, seeds, out
			c.Datasets, c.Losses = parseList(*datasets), parseList(*losses)
			var err error
			if c.Lambdas, err = floatList(fs, "lambdas", *lambdas); err != nil {
				return harness.CurvesConfig{}, err
			}
			return c.Build()
		}
	case "wang-xiao-fig2-3":
		c := harness.DefaultWXFig23()
		dataDir, passes, seeds = c.DataDir, c.Passes, c.Seeds
		reg := fs.String("regression", joinNames(c.Regression), "ridge data sets (Fig. 2); empty: none")
		logi := fs.String("logistic", joinNames(c.Logistic), "logistic data sets (Fig. 3): files of -data-dir, news20-binary or rcv1like")
		scales := fs.String("scales", joinFloats(c.Scales), "λ = s/n for each s")
		about = "Ridge and logistic regression with rows divided by the largest norm: ADF-SPDC, DF-SPDC, SPDC, SVRG and SAGA at λ = s/n."
		full = "-regression abalone_scale,housing_scale -logistic a9a,ijcnn1,w8a,rcv1like -passes 1000"
		build = func() (harness.CurvesConfig, error) {
			c.DataDir, c.Passes, c.Seeds, c.Out = dataDir, passes, seeds, out
			c.Regression, c.Logistic = parseList(*reg), parseList(*logi)
			var err error
			if c.Scales, err = floatList(fs, "scales", *scales); err != nil {
				return harness.CurvesConfig{}, err
			}
			return c.Build()
		}
	case "allen-zhu-hazan":
		c := harness.DefaultAZH()
		dataDir, passes, seeds = c.DataDir, c.Passes, c.Seeds
		lasso := fs.String("lasso", joinNames(c.Lasso), "lasso data sets (regression files of -data-dir)")
		l1 := fs.String("l1", joinFloats(c.LassoL1), "the lasso's L1 strengths")
		hinge := fs.String("hinge", joinNames(c.Hinge), "SVM data sets (classification files of -data-dir)")
		lam := fs.String("lambdas", joinFloats(c.HingeL2), "the SVM's λ values")
		fr := fs.String("fixed-sigma", joinFloats(c.FixedReg), "fixed added regularizations σ (lasso)")
		fsm := fs.String("fixed-smoothing", joinFloats(c.FixedSmth), "fixed smoothings s of the hinge (SVM)")
		about = "AdaptReg against fixed-σ regularization (lasso), AdaptSmooth against fixed smoothing (hinge SVM), all over AdaSPDC."
		full = "-l1 1e-4,1e-5,1e-6 -lambdas 1e-4,1e-5,1e-6 -passes 300"
		build = func() (harness.CurvesConfig, error) {
			c.DataDir, c.Passes, c.Seeds, c.Out = dataDir, passes, seeds, out
			c.Lasso, c.Hinge = parseList(*lasso), parseList(*hinge)
			var err error
			for _, p := range []struct {
				name string
				s    string
				dst  *[]float64
			}{{"l1", *l1, &c.LassoL1}, {"lambdas", *lam, &c.HingeL2}, {"fixed-sigma", *fr, &c.FixedReg}, {"fixed-smoothing", *fsm, &c.FixedSmth}} {
				if *p.dst, err = floatList(fs, p.name, p.s); err != nil {
					return harness.CurvesConfig{}, err
				}
			}
			return c.Build()
		}
	}
	fs.StringVar(&dataDir, "data-dir", dataDir, "the `folder` of the LIBSVM files")
	fs.IntVar(&passes, "passes", passes, "passes over the data per curve")
	fs.IntVar(&seeds, "seeds", seeds, "solver seeds 1…N averaged")
	fs.StringVar(&out, "out", out, "write curves.csv, reference.csv, the figures and summary.md to this `directory` (its reference.csv is reused)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc-bench paper %s [flags]\n\n%s\nThe defaults are a subset; the paper's grid is\n  adaspdc-bench paper %s %s\n\n", name, about, name, full)
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if passes < 1 || seeds < 1 {
		return cli.UsageErrorf(fs, "-passes and -seeds must be at least 1")
	}
	// The output folder is checked before the data are read and the first
	// run starts, so that a sweep of hours cannot end in a write error.
	undo, err := checkOutDir(fs, out)
	if err != nil {
		return err
	}
	cfg, err := build()
	if err != nil {
		undo()
		return err
	}
	cfg.Command = commandLine("paper", append([]string{name}, args...))
	ctx, stop := signalContext(stderr)
	defer stop()
	res, err := harness.Curves(ctx, cfg, stderr, isTerminal(stderr))
	if res == nil {
		undo()
		return err
	}
	if werr := res.Write(); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		// An interrupted reproduction is written, and still fails, so
		// that a script does not take it for a finished one.
		return fmt.Errorf("%w; wrote the panels that finished to %s", err, out)
	}
	for pi, p := range res.Config.Panels {
		if cfg.Baseline != "" {
			fmt.Fprintf(stdout, "%s: %s ends %.3g× lower than %s after %d passes\n", p.Title, cfg.Contender, res.Factor(pi), cfg.Baseline, passes)
		}
	}
	fmt.Fprintf(stdout, "adaspdc-bench paper %s: %v on %s\nwrote %s\n", name, res.Duration.Round(time.Second), res.Machine.Short(), filepath.Join(out, "summary.md"))
	return nil
}
