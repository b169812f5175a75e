// Command compare times adaspdc against LIBLINEAR on the same objective.
//
// For each dataset and objective it
//
//  1. computes a reference optimum P*: LIBLINEAR's primal Newton solver run
//     to a tiny tolerance, certified with engine.Certify (its duality gap is
//     printed; the table is only as good as that gap);
//  2. times whole processes of liblinear-train over a ladder of -e values
//     and each applicable solver, and keeps the fastest run whose model has
//     (P − P*)/P* ≤ -subopt;
//  3. times whole processes of adaspdc train with -target-primal
//     P*·(1 + subopt) for each -m in the grid, and keeps the fastest.
//
// LIBLINEAR's C equals 1/(nλ) for adaspdc's (1/n)Σφ + (λ/2)‖x‖²; neither side
// uses a bias term. Usage (after apt-get install liblinear-tools):
//
//	go build -o /tmp/adaspdc ./cmd/adaspdc
//	go run ./bench/compare -adaspdc /tmp/adaspdc -data ../shared/data/a9a,../shared/data/w8a
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

type objective struct {
	loss      string
	lambda    float64
	liblinear []int // solver numbers for -s
	refSolver int
}

func main() {
	bin := flag.String("adaspdc", "/tmp/adaspdc", "adaspdc binary")
	data := flag.String("data", "../shared/data/a9a,../shared/data/w8a", "comma-separated LIBSVM files")
	subopt := flag.Float64("subopt", 1e-6, "target relative suboptimality")
	runs := flag.Int("runs", 3, "timed runs per configuration (the median is kept)")
	ms := flag.String("m", "1,4,16,64", "comma-separated -m values for adaspdc")
	threads := flag.Int("threads", 2, "adaspdc -threads")
	objs := flag.String("objectives", "logistic:1e-5,logistic:1e-6,sqhinge:1e-5", "comma-separated loss:λ pairs (logistic or sqhinge)")
	normalize := flag.Bool("normalize", false, "scale every row to unit norm first (a normalised copy is written for both tools)")
	extra := flag.String("args", "", "extra space-separated flags for adaspdc train, e.g. \"-step-scale 2\"")
	flag.Parse()

	var objectives []objective
	for _, o := range strings.Split(*objs, ",") {
		name, lam, _ := strings.Cut(o, ":")
		l, err := strconv.ParseFloat(lam, 64)
		if err != nil {
			log.Fatalf("-objectives %q: %v", o, err)
		}
		switch name {
		case "logistic":
			objectives = append(objectives, objective{"logistic", l, []int{0, 7}, 0})
		case "sqhinge":
			objectives = append(objectives, objective{"sqhinge", l, []int{1, 2}, 2})
		default:
			log.Fatalf("-objectives %q: loss must be logistic or sqhinge", o)
		}
	}
	tmp, err := os.MkdirTemp("", "compare")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	fmt.Println("| data | loss | λ | C | P* (gap) | LIBLINEAR best | adaspdc best | ratio |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, path := range strings.Split(*data, ",") {
		ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
		if err != nil {
			log.Fatal(err)
		}
		y, _, err := sparse.BinaryLabels(ds.Y)
		if err != nil {
			log.Fatal(err)
		}
		name := filepath.Base(path)
		if *normalize {
			ds.X.NormalizeRowsUnit()
			path = filepath.Join(tmp, name+".unit")
			f, err := os.Create(path)
			if err != nil {
				log.Fatal(err)
			}
			if err := sparse.WriteLIBSVM(f, ds); err != nil {
				log.Fatal(err)
			}
			f.Close()
			name += " (unit rows)"
		}
		for _, obj := range objectives {
			loss, _ := engine.LossByName(obj.loss, 1)
			prob := engine.Problem{X: ds.X, B: y, Loss: loss, Reg: engine.ElasticNet{Lambda: obj.lambda}}
			c := 1 / (float64(ds.X.Rows) * obj.lambda)
			cs := strconv.FormatFloat(c, 'g', -1, 64)

			// 1. Reference optimum.
			ref := filepath.Join(tmp, "ref")
			if _, err := timeRun("liblinear-train", "-q", "-s", strconv.Itoa(obj.refSolver), "-c", cs, "-e", "1e-12", path, ref); err != nil {
				log.Fatal(err)
			}
			pstar, err := certifyLIBLINEAR(prob, ref)
			if err != nil {
				log.Fatal(err)
			}
			target := pstar.Primal * (1 + *subopt)

			// 2. LIBLINEAR: the fastest solver and -e that reach the target.
			bestLL, bestLLDesc := math.Inf(1), "none reached it"
			for _, s := range obj.liblinear {
				for _, eps := range []string{"1e-1", "1e-2", "1e-3", "1e-4", "1e-5", "1e-6", "1e-7", "1e-8"} {
					model := filepath.Join(tmp, "ll")
					args := []string{"-q", "-s", strconv.Itoa(s), "-c", cs, "-e", eps, path, model}
					if _, err := timeRun("liblinear-train", args...); err != nil {
						log.Fatal(err)
					}
					tp, err := certifyLIBLINEAR(prob, model)
					if err != nil {
						log.Fatal(err)
					}
					if tp.Primal > target {
						continue
					}
					sec := median(*runs, func() float64 { d, _ := timeRun("liblinear-train", args...); return d })
					if sec < bestLL {
						bestLL, bestLLDesc = sec, fmt.Sprintf("%.3fs (-s %d -e %s)", sec, s, eps)
					}
					break
				}
			}

			// 3. adaspdc: the fastest m that reaches the target.
			bestUs, bestUsDesc := math.Inf(1), "none reached it"
			for _, m := range strings.Split(*ms, ",") {
				args := []string{"train", "-quiet", "-data", path, "-loss", obj.loss,
					"-lambda", strconv.FormatFloat(obj.lambda, 'g', -1, 64), "-m", m,
					"-threads", strconv.Itoa(*threads), "-tol", "-1", "-max-epochs", "5000",
					"-target-primal", strconv.FormatFloat(target, 'g', -1, 64)}
				args = append(args, strings.Fields(*extra)...)
				out, err := exec.Command(*bin, args...).CombinedOutput()
				// Exit status 3: stopped at -max-epochs short of the target,
				// which the primal test below reports as "not reached". Exit
				// status 1 (the run failed, e.g. the divergence guard ended it)
				// loses only this m, not the rest of the table.
				var ee *exec.ExitError
				if err != nil && errors.As(err, &ee) && ee.ExitCode() == 1 {
					log.Printf("m=%s: %s failed, skipped: %s", m, *bin, strings.TrimSpace(string(out)))
					continue
				}
				if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 3) {
					log.Fatalf("%s %v: %v\n%s", *bin, args, err, out)
				}
				primal := field(string(out), "primal")
				if primal > target {
					continue
				}
				sec := median(*runs, func() float64 { d, _ := timeRun(*bin, args...); return d })
				if sec < bestUs {
					bestUs, bestUsDesc = sec, fmt.Sprintf("%.3fs (m=%s, %s epochs)", sec, m, fieldString(string(out), "epochs"))
				}
			}
			fmt.Printf("| %s | %s | %g | %.4g | %.10g (%.1e) | %s | %s | %.2f |\n",
				name, obj.loss, obj.lambda, c, pstar.Primal, pstar.Gap, bestLLDesc, bestUsDesc, bestUs/bestLL)
		}
	}
}

// certifyLIBLINEAR reads a LIBLINEAR model file and certifies its weights.
func certifyLIBLINEAR(prob engine.Problem, path string) (engine.TracePoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.TracePoint{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var w []float64
	flip := false
	inW := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case inW:
			v, err := strconv.ParseFloat(line, 64)
			if err != nil {
				return engine.TracePoint{}, fmt.Errorf("%s: %v", path, err)
			}
			w = append(w, v)
		case line == "w":
			inW = true
		case strings.HasPrefix(line, "label "):
			// LIBLINEAR's weights point towards its first label.
			flip = strings.Fields(line)[1] != "1"
		}
	}
	if flip {
		for j := range w {
			w[j] = -w[j]
		}
	}
	// LIBLINEAR omits trailing features that never occur; pad.
	for len(w) < prob.X.Cols {
		w = append(w, 0)
	}
	return engine.Certify(prob, w[:prob.X.Cols])
}

func timeRun(name string, args ...string) (float64, error) {
	start := time.Now()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return time.Since(start).Seconds(), nil
}

func median(runs int, f func() float64) float64 {
	v := make([]float64, runs)
	for i := range v {
		v[i] = f()
	}
	slices.Sort(v)
	return v[runs/2]
}

func fieldString(out, key string) string {
	for _, tok := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(tok, key+"="); ok {
			return v
		}
	}
	return ""
}

func field(out, key string) float64 {
	v, err := strconv.ParseFloat(fieldString(out, key), 64)
	if err != nil {
		return math.Inf(1)
	}
	return v
}
