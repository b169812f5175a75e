package harness

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/kernels"
	"gonum.org/v1/plot/plotter"
)

// figureFiles are the files a sweep must leave, each non-empty.
var figureFiles = []string{
	"suboptimality_vs_passes", "suboptimality_vs_seconds", "speedup_vs_threads", "passes_to_eps_vs_m",
}

// TestScaleTinySweep runs a 16-run sweep and checks runs.csv against the
// runs in memory, the figures and the summary, and that the sweep stays
// small enough for a unit test (the bound is far above its usual time, so
// that a loaded machine does not fail it).
func TestScaleTinySweep(t *testing.T) {
	cfg := ScaleConfig{Data: "synth:rcv1:300", Loss: "logistic", Lambda: 1e-3, Solvers: []string{"adaspdc", "spdc"},
		Ms: []int{1, 4}, Threads: []int{1, 2}, Repeats: 2, Seed: 7, Tol: 1e-6, MaxEpochs: 300, Command: "test"}
	if testing.Short() {
		cfg.Solvers, cfg.Repeats = cfg.Solvers[:1], 1
	}
	start := time.Now()
	var prog bytes.Buffer
	res, err := Scale(context.Background(), cfg, &prog, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the tiny sweep took %v, want under 20 s", d)
	}
	want := len(cfg.Solvers) * len(cfg.Ms) * len(cfg.Threads) * cfg.Repeats
	if got := strings.Count(prog.String(), "\n"); got != want {
		t.Errorf("%d progress lines for %d runs", got, want)
	}
	if !strings.Contains(prog.String(), "left") {
		t.Errorf("progress has no estimate of the time left: %q", prog.String())
	}

	f, err := os.Open(filepath.Join(dir, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], ScaleCSVHeader()) {
		t.Fatalf("header %v, want %v", rows[0], ScaleCSVHeader())
	}
	for _, c := range []string{"solver", "m", "threads", "threads_used", "seed", "sec_per_pass", "speedup",
		"passes_to_1e-02", "seconds_to_1e-08", "iter_seconds_to_1e-06", "cpu", "cores", "kernels", "go", "commit"} {
		if !slices.Contains(rows[0], c) {
			t.Errorf("runs.csv has no column %q", c)
		}
	}
	if len(rows) != want+1 {
		t.Fatalf("%d rows for %d runs", len(rows)-1, want)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	seeds := map[string]bool{}
	for i, row := range rows[1:] {
		run := res.Runs[i]
		if row[col("error")] != "" {
			t.Fatalf("run %d failed: %s", i, row[col("error")])
		}
		seeds[row[col("seed")]] = true
		if row[col("kernels")] != kernels.Impl() || row[col("cores")] == "" {
			t.Errorf("row %d does not name the machine: %v", i, row)
		}
		// Converged runs certify the tolerance, and the passes to each gap
		// are the first certificate at or below it, in order.
		gap, _ := strconv.ParseFloat(row[col("final_rel_gap")], 64)
		if row[col("stop")] != "tol" || !(gap <= cfg.Tol) {
			t.Errorf("row %d: stop %s at relative gap %v, want tol ≤ %g", i, row[col("stop")], gap, cfg.Tol)
		}
		prev := 0.0
		for ei, eps := range Epsilons[:3] {
			p, err := strconv.ParseFloat(row[col("passes_to_"+epsName(eps))], 64)
			if err != nil {
				t.Fatalf("row %d: passes to %g: %v", i, eps, err)
			}
			if p < prev {
				t.Errorf("row %d: %v passes to %g, fewer than %v to the looser gap", i, p, eps, prev)
			}
			prev = p
			first := -1.0
			for _, tp := range run.Trace {
				if tp.RelGap <= eps {
					first = tp.Passes
					break
				}
			}
			if first != run.Reach[ei].Passes {
				t.Errorf("row %d: passes to %g = %v, the trace first reaches it at %v", i, eps, run.Reach[ei].Passes, first)
			}
		}
		if row[col("passes_to_1e-08")] != "" {
			t.Errorf("row %d reached 1e-8 though it stopped at %g", i, cfg.Tol)
		}
	}
	if len(seeds) != cfg.Repeats || !seeds["7"] {
		t.Errorf("seeds %v, want %d starting at 7", seeds, cfg.Repeats)
	}
	for _, name := range figureFiles {
		for _, ext := range []string{".png", ".svg"} {
			b, err := os.ReadFile(filepath.Join(dir, name+ext))
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 1000 {
				t.Errorf("%s%s has only %d bytes", name, ext, len(b))
			}
			if ext == ".png" && !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Errorf("%s.png is not a PNG", name)
			}
			if ext == ".svg" && !bytes.Contains(b, []byte("<svg")) {
				t.Errorf("%s.svg is not an SVG", name)
			}
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := ThisMachine()
	for _, s := range []string{m.cpuName(), "Kernels:** " + m.Kernels, m.GoVersion, "commit:** " + m.Commit, "Load average", "| adaspdc | 4 |"} {
		if !strings.Contains(string(sum), s) {
			t.Errorf("summary.md does not contain %q", s)
		}
	}
}

// TestScaleRefusesBadConfig: mistakes are caught before any data is read.
func TestScaleRefusesBadConfig(t *testing.T) {
	good := ScaleConfig{Data: "synth:rcv1:10", Loss: "logistic", Solvers: []string{"adaspdc"}, Ms: []int{1}, Threads: []int{1}, Repeats: 1, Tol: 1e-6, MaxEpochs: 10}
	for name, change := range map[string]func(*ScaleConfig){
		"unknown solver": func(c *ScaleConfig) { c.Solvers = []string{"nope"} },
		"m = 0":          func(c *ScaleConfig) { c.Ms = []int{0} },
		"threads = 0":    func(c *ScaleConfig) { c.Threads = []int{0} },
		"no repeats":     func(c *ScaleConfig) { c.Repeats = 0 },
		"unknown loss":   func(c *ScaleConfig) { c.Loss = "cubic" },
		"no epochs":      func(c *ScaleConfig) { c.MaxEpochs = 0 },
	} {
		c := good
		change(&c)
		if _, err := Scale(context.Background(), c, nil, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := good.Validate(); err != nil {
		t.Errorf("a good configuration was refused: %v", err)
	}
}

func TestLoadDataSpecs(t *testing.T) {
	for _, bad := range []string{"", "synth:rcv1", "synth:rcv1:x", "synth:rcv1:0", "synth:nope:10", "synth:url:10:-1", "/no/such/file"} {
		if _, err := LoadData(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	a, err := LoadData("synth:rcv1:50:3")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadData("synth:rcv1:50:3")
	c, _ := LoadData("synth:rcv1:50:4")
	if a.X.Rows != 50 || a.X.Cols != 47236 || !slices.Equal(a.X.Values, b.X.Values) || slices.Equal(a.X.Values, c.X.Values) {
		t.Error("synth specs are not seeded as documented")
	}
	if _, err := a.Problem("logistic", 0); err != nil {
		t.Error(err)
	}
}

// TestRidgeOptimumIsOptimal: the closed form's duality gap is at rounding
// level, at the ill-conditioned end of Fig. 1.
func TestRidgeOptimumIsOptimal(t *testing.T) {
	x, b := Fig1Data(120, 100, 1)
	for _, lam := range []float64{1e-3, 1e-6} {
		w, err := RidgeOptimum(x, b, lam)
		if err != nil {
			t.Fatal(err)
		}
		prob := engine.Problem{X: x, B: b, Loss: engine.Squared{}, Reg: engine.ElasticNet{Lambda: lam}}
		tp, err := engine.Certify(prob, w)
		if err != nil {
			t.Fatal(err)
		}
		if !(math.Abs(tp.RelGap) < 1e-11) {
			t.Errorf("λ = %g: the closed form's relative gap is %g", lam, tp.RelGap)
		}
	}
}

// TestFig1Small runs a shrunken Fig. 1 and checks that the curves fall,
// that AdaSPDC is not behind SPDC on these rows of unequal norms, and
// that unregistered methods are skipped with a note.
func TestFig1Small(t *testing.T) {
	cfg := Fig1Config{N: 100, D: 100, Lambdas: []float64{1e-2, 1e-4}, Passes: 40, Seeds: 2, DataSeed: 1, Command: "test"}
	cfg.Methods = append(Fig1Methods(), Fig1Method{"Missing", "no-such-solver", ""})
	res, err := Fig1(context.Background(), cfg, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.Contains(s, "no-such-solver") }) {
		t.Errorf("skipped: %v", res.Skipped)
	}
	// At λ = 1e-4 SPDC's primal overshoots in the first passes and is
	// still above its start after 40, so only λ = 1e-2 must fall for all:
	// a thousandfold for the coordinate methods, tenfold for SAG, whose
	// step 1/(16L) is the most cautious (0.9 to 0.025 in 40 passes).
	for mi, m := range res.Methods {
		c := res.Mean[0][mi]
		fall := 1e-3
		if m.Solver == "sag" {
			fall = 0.1
		}
		if len(c) != cfg.Passes+1 || !(c[cfg.Passes] < fall*c[0]) || c[cfg.Passes] < -1e-12 {
			t.Errorf("λ = 1e-2, %s: suboptimality %g at the start and %g at the end", m.Label, c[0], c[cfg.Passes])
		}
	}
	for li, lam := range cfg.Lambdas {
		if f := res.Factor(li, "AdaSPDC", "SPDC"); !(f > 1) {
			t.Errorf("AdaSPDC is %g× better than SPDC at λ = %g", f, lam)
		}
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fig1.png", "fig1.svg", "fig1.csv", "fig1.md"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() < 200 {
			t.Errorf("%s missing or tiny: %v", name, err)
		}
	}
}

// LIBLINEAR's models are read by modelio's reader: its weights point to
// our +1 whichever label LIBLINEAR lists first, and a model the comparison
// cannot use (a bias, more classes or features, weights missing) is refused.
func TestLIBLINEARWeights(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "m")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	head := "solver_type L2R_LR\nnr_class 2\n"
	w, err := liblinearWeights(write(head+"label 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \n-2 \n"), 4, 1)
	if err != nil || !slices.Equal(w, []float64{0.5, -2, 0, 0}) {
		t.Errorf("first label is our +1: %v %v", w, err)
	}
	w, err = liblinearWeights(write(head+"label -1 1\nnr_feature 2\nbias -1\nw\n0.5\n-2\n"), 2, 1)
	if err != nil || !slices.Equal(w, []float64{-0.5, 2}) {
		t.Errorf("first label is our −1: %v %v", w, err)
	}
	w, err = liblinearWeights(write("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 2\nbias -1\nw\n0.5\n-2\n"), 3, 0)
	if err != nil || !slices.Equal(w, []float64{0.5, -2, 0}) {
		t.Errorf("regression: %v %v", w, err)
	}
	for _, c := range []struct{ what, file string }{
		{"a model with a bias", head + "label 1 -1\nnr_feature 1\nbias 1\nw\n0.5\n1\n"},
		{"more weights than features", head + "label 1 -1\nnr_feature 3\nbias -1\nw\n0.5\n1\n3\n"},
		{"a model cut short of its nr_feature weights", head + "label 1 -1\nnr_feature 2\nbias -1\nw\n0.5\n"},
		{"a weight that is not a number", head + "label 1 -1\nnr_feature 2\nbias -1\nw\n0.5\nx\n"},
		{"three classes", "solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 1\nbias -1\nw\n0.5 1 2\n"},
	} {
		if w, err := liblinearWeights(write(c.file), 2, 1); err == nil {
			t.Errorf("%s was accepted: %v", c.what, w)
		}
	}
}

// TestPeersLIBLINEAR compares with liblinear-train on heart_scale where
// it is installed: LIBLINEAR's tight models must reach every target, and
// the reference optimum must be certified far below the tightest target.
func TestPeersLIBLINEAR(t *testing.T) {
	bin, _ := withLIBLINEAR(t)
	if _, err := os.Stat("../../testdata/heart_scale"); err != nil {
		t.Skip("no heart_scale in testdata")
	}
	// With NormalizeUnit every tool reads the scaled rows: LIBLINEAR's
	// models reach the targets of the scaled problem's optimum.
	for _, unit := range []bool{false, true} {
		cfg := PeersConfig{Data: []string{"../../testdata/heart_scale"}, Objectives: []Objective{{Loss: "logistic", Lambda: 1e-2}},
			Ms: []int{1}, Threads: 1, Runs: 1, RefEpochs: 20000, Timeout: 20 * time.Second, Self: bin, Python: "/nonexistent/python3",
			NormalizeUnit: unit}
		res, err := Peers(context.Background(), cfg, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Missing) != 1 || !strings.Contains(res.Missing[0], "python3-sklearn") {
			t.Errorf("missing: %v", res.Missing)
		}
		pp := res.Problems[0]
		if !(pp.Bound < 1e-8*math.Abs(pp.PStar)) {
			t.Errorf("unit rows %v: P* = %g is only certified within %g", unit, pp.PStar, pp.Bound)
		}
		data, err := LoadData(cfg.Data[0])
		if err != nil {
			t.Fatal(err)
		}
		name := "heart_scale"
		if unit {
			data.X.NormalizeRowsUnit()
			name += " (unit rows)"
		}
		prob, _ := data.Problem("logistic", 1e-2)
		opt := engine.DefaultOptions()
		opt.Tol = 1e-10
		if _, r, err := engine.Train(context.Background(), prob, opt); err != nil || !(math.Abs(r.Best.Primal-pp.PStar) <= 1e-8*math.Abs(pp.PStar)) {
			t.Errorf("unit rows %v: P* = %.12g, the problem's optimum %.12g (%v)", unit, pp.PStar, r.Best.Primal, err)
		}
		for i := range PeerTargets {
			if b := pp.best(i); math.IsNaN(b.Seconds) || !strings.HasPrefix(b.Tool, "liblinear") {
				t.Errorf("unit rows %v, target %g: best peer %+v", unit, PeerTargets[i], b)
			}
			if o := pp.Times["adaspdc"][i]; math.IsNaN(o.Seconds) {
				t.Errorf("unit rows %v, target %g: adaspdc did not reach it", unit, PeerTargets[i])
			} else if !strings.HasSuffix(o.Setting, ", target") && !strings.HasSuffix(o.Setting, ", certified") {
				t.Errorf("unit rows %v, target %g: our setting %q names no stop", unit, PeerTargets[i], o.Setting)
			}
		}
		dir := t.TempDir()
		if err := res.Write(dir); err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "peers.md"))
		if !strings.Contains(string(md), "| "+name+" | logistic | 0.01 |") {
			t.Errorf("peers.md has no row for %s:\n%s", name, md)
		}
		if st, err := os.Stat(filepath.Join(dir, "peers_1.png")); err != nil || st.Size() < 1000 {
			t.Errorf("peers_1.png: %v", err)
		}
	}
}

// TestOurStops checks the two stops' flags: the target primal, and a
// tolerance whose certified gap, relative to max(1, P), bounds P − P* by
// target·P* at every P up to the target primal; for P* ≤ 0 the target
// alone.
func TestOurStops(t *testing.T) {
	for _, pStar := range []float64{0.3232, 1, 5.5, 0, -2} {
		const target = 1e-6
		stops := ourStops(pStar, target)
		tp := pStar + target*math.Abs(pStar)
		if len(stops) == 0 || stops[0].name != "target" || stops[0].args[len(stops[0].args)-1] != strconv.FormatFloat(tp, 'g', 17, 64) {
			t.Fatalf("P* = %g: stops %v", pStar, stops)
		}
		if pStar <= 0 {
			if len(stops) != 1 {
				t.Errorf("P* = %g: stops %v, want the target alone", pStar, stops)
			}
			continue
		}
		if len(stops) != 2 || stops[1].name != "certified" || stops[1].args[0] != "-tol" {
			t.Fatalf("P* = %g: stops %v", pStar, stops)
		}
		g, err := strconv.ParseFloat(stops[1].args[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		// At the stop, P − P* ≤ gap ≤ g·max(1, P): the worst P solves
		// P − P* = g·max(1, P).
		worst := pStar + g
		if worst > 1 {
			worst = pStar / (1 - g)
		}
		if worst > tp*(1+1e-15) {
			t.Errorf("P* = %g: -tol %g allows P = %.17g above the target %.17g", pStar, g, worst, tp)
		}
	}
}

// TestPeersL1 compares the L1 problem with liblinear-train -s 6 on
// heart_scale: the reference is certified, both tools reach every target,
// and the summary names the L1 strength.
func TestPeersL1(t *testing.T) {
	bin, _ := withLIBLINEAR(t)
	cfg := PeersConfig{Data: []string{"../../testdata/heart_scale"}, Objectives: []Objective{{Loss: "logistic", L1: 1e-2}},
		Ms: []int{1}, Threads: 1, Runs: 1, RefEpochs: 20000, Timeout: 20 * time.Second, Self: bin, Python: "/nonexistent/python3"}
	res, err := Peers(context.Background(), cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	pp := res.Problems[0]
	if !(pp.Bound < 1e-8*math.Abs(pp.PStar)) {
		t.Errorf("P* = %g is only certified within %g", pp.PStar, pp.Bound)
	}
	if len(pp.Tools) != 1 || pp.Tools[0] != "liblinear -s 6" {
		t.Errorf("peers %v, want liblinear -s 6 alone", pp.Tools)
	}
	for i := range PeerTargets {
		if o := pp.Times["adaspdc"][i]; math.IsNaN(o.Seconds) {
			t.Errorf("target %g: adaspdc did not reach it", PeerTargets[i])
		}
		if p := pp.Times["liblinear -s 6"][i]; math.IsNaN(p.Seconds) {
			t.Errorf("target %g: liblinear -s 6 did not reach it", PeerTargets[i])
		}
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "peers.md"))
	if !strings.Contains(string(md), "| heart_scale | logistic | l1 0.01 |") {
		t.Errorf("peers.md has no L1 row for heart_scale:\n%s", md)
	}
}

// TestFigureSinglePointLogAxes: a sweep with one thread count and one m
// draws single-point lines on logarithmic axes; gonum widens such a range
// to [v−1, v+1] and panicked on the 0. The figure must be written.
func TestFigureSinglePointLogAxes(t *testing.T) {
	dir := t.TempDir()
	f := figure{Title: "one point", LogX: true, LogY: true,
		Lines: []series{{Label: "newton", XY: plotter.XYs{{X: 1, Y: 1}}, Points: true}},
		Ideal: plotter.XYs{{X: 1, Y: 1}}}
	if err := f.save(dir, "one"); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(filepath.Join(dir, "one"+ext)); err != nil || st.Size() == 0 {
			t.Errorf("one%s: %v", ext, err)
		}
	}
}

// TestPlausibleCores: a physical core count above the logical one (a
// virtual machine passing its host's topology through) is unknown.
func TestPlausibleCores(t *testing.T) {
	for _, c := range []struct{ phys, logical, want int }{{254, 2, 0}, {1, 2, 1}, {2, 2, 2}, {0, 4, 0}, {-1, 4, 0}} {
		if got := plausibleCores(c.phys, c.logical); got != c.want {
			t.Errorf("plausibleCores(%d, %d) = %d, want %d", c.phys, c.logical, got, c.want)
		}
	}
}

// TestCoresText: the summary's cores line gives the logical CPUs and
// GOMAXPROCS, and the physical cores CPUID reports only where they can be
// this machine's, showing an implausible report for what it is.
func TestCoresText(t *testing.T) {
	for _, c := range []struct {
		logical, procs, cpuid int
		want                  string
	}{
		{2, 2, 254, "2 logical (runtime.NumCPU), GOMAXPROCS 2; physical: unknown (CPUID reports 254)"},
		{2, 2, 0, "2 logical (runtime.NumCPU), GOMAXPROCS 2; physical: unknown (CPUID reports 0)"},
		{8, 4, 4, "8 logical (runtime.NumCPU), GOMAXPROCS 4; physical: 4 (CPUID)"},
		{2, 2, 2, "2 logical (runtime.NumCPU), GOMAXPROCS 2; physical: 2 (CPUID)"},
	} {
		if got := coresText(c.logical, c.procs, c.cpuid); got != c.want {
			t.Errorf("coresText(%d, %d, %d) = %q, want %q", c.logical, c.procs, c.cpuid, got, c.want)
		}
	}
	m := ThisMachine()
	if md := m.Markdown(); !strings.Contains(md, coresText(m.Cores, m.GOMAXPROCS, m.CPUIDCores)) {
		t.Errorf("the machine block does not give the cores line:\n%s", md)
	}
	if m.PhysicalCores > m.Cores || m.GOMAXPROCS < 1 {
		t.Errorf("%d physical cores on %d logical, GOMAXPROCS %d", m.PhysicalCores, m.Cores, m.GOMAXPROCS)
	}
	if s := (Machine{Cores: 4, GOMAXPROCS: 2}).Short(); !strings.Contains(s, "4 cores (GOMAXPROCS 2)") {
		t.Errorf("Short does not name a GOMAXPROCS below the cores: %q", s)
	}
}

// TestStampedCommit: the commit of a build's stamp is shortened and marked
// "+dirty" as the -version line marks it, and is empty without a stamp,
// so that the commit falls back on git.
func TestStampedCommit(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, "0123456789ab"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: rev}}, "0123456789ab+dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
		{nil, ""},
	} {
		if got := stampedCommit(c.settings); got != c.want {
			t.Errorf("stampedCommit(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}

// TestRanOnFewer: a configuration any of whose runs kept fewer workers
// than asked for is marked, and only that one.
func TestRanOnFewer(t *testing.T) {
	res := &ScaleResult{Runs: []Run{
		{Solver: "adaspdc", M: 1, Threads: 2, ThreadsUsed: 1},
		{Solver: "adaspdc", M: 1, Threads: 2, ThreadsUsed: 2},
		{Solver: "adaspdc", M: 64, Threads: 2, ThreadsUsed: 2},
		{Solver: "adaspdc", M: 64, Threads: 1, ThreadsUsed: 1},
	}}
	for _, c := range []struct {
		m, threads int
		want       bool
	}{{1, 2, true}, {64, 2, false}, {64, 1, false}} {
		if got := res.ranOnFewer("adaspdc", c.m, c.threads); got != c.want {
			t.Errorf("m = %d, %d threads: %v, want %v", c.m, c.threads, got, c.want)
		}
	}
}

// fakeRun is a finished run of a sweep, made up for tests of the figures
// and the summary: seconds per pass as given, no gap reached.
func fakeRun(solver string, m, threads, used int, secPerPass float64) Run {
	reach := make([]Reach, len(Epsilons))
	for i := range reach {
		reach[i] = Reach{math.NaN(), math.NaN(), math.NaN()}
	}
	return Run{Solver: solver, M: m, Threads: threads, ThreadsUsed: used, Passes: 10, IterSeconds: 10 * secPerPass,
		SecPerPass: secPerPass, Stop: "max-epochs", Reach: reach}
}

// TestSpeedupFigureLeavesOutFewerWorkers: a configuration whose runs used
// fewer workers than the threads asked for is not drawn as a speed-up (it
// would show noise as one), the figure's title says so, and the summary
// names it beside its used count and marks its ratio.
func TestSpeedupFigureLeavesOutFewerWorkers(t *testing.T) {
	res := &ScaleResult{
		Config: ScaleConfig{Data: "fake", Loss: "logistic", Solvers: []string{"adaspdc"}, Ms: []int{1, 64}, Threads: []int{1, 2},
			Repeats: 2, Tol: 1e-8, MaxEpochs: 10, Command: "test"},
		DataName: "fake", BaseThreads: 1,
		Runs: []Run{
			fakeRun("adaspdc", 1, 1, 1, 1.0), fakeRun("adaspdc", 1, 1, 1, 1.0),
			// m = 1 on 2 threads kept one worker in one of its repeats:
			// its 1.85× is noise.
			fakeRun("adaspdc", 1, 2, 1, 1/1.85), fakeRun("adaspdc", 1, 2, 2, 1/1.85),
			fakeRun("adaspdc", 64, 1, 1, 2.0), fakeRun("adaspdc", 64, 1, 1, 2.0),
			fakeRun("adaspdc", 64, 2, 2, 1.25), fakeRun("adaspdc", 64, 2, 2, 1.25),
		},
	}
	res.fillSpeedups()
	f := res.speedupFigure()
	drawn := map[string]plotter.XYs{}
	for _, s := range f.Lines {
		drawn[s.Label] = s.XY
	}
	if xy := drawn["adaspdc m=1"]; len(xy) != 1 || xy[0].X != 1 {
		t.Errorf("m = 1: drawn at %v, want only the baseline (1 thread)", xy)
	}
	if xy := drawn["adaspdc m=64"]; len(xy) != 2 || xy[1].X != 2 || math.Abs(xy[1].Y-1.6) > 1e-12 {
		t.Errorf("m = 64: drawn at %v, want 1 and 2 threads, a speed-up of 1.6 on 2", xy)
	}
	if !strings.Contains(f.Title, "1 configuration(s) that used fewer workers than asked for are left out") {
		t.Errorf("the title does not say a configuration was left out: %q", f.Title)
	}
	sum := res.summary()
	for _, want := range []string{
		"**Ran on fewer workers than asked for**",
		"left out of the speed-up figure",
		": adaspdc m=1 threads=2.",
		"| solver | m | threads | used |",
		"| adaspdc | 1 | 2 | 1–2 |",
		"| adaspdc | 64 | 2 | 2 |",
		"1.85 *",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "m=64 threads=2") || strings.Contains(sum, "1.60 *") {
		t.Errorf("summary.md marks m = 64, which used its 2 workers:\n%s", sum)
	}
	// The figures of such a sweep are drawn too; under -short (the race
	// detector's run) TestScaleTinySweep's figures suffice.
	if !testing.Short() {
		if err := res.writePlots(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
}

// testAdaspdc builds adaspdc for a test that times it, skipping the test
// under -short.
func testAdaspdc(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds adaspdc and runs processes")
	}
	bin := filepath.Join(t.TempDir(), "adaspdc")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/adaspdc").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return bin
}

// withLIBLINEAR returns adaspdc built for the test and liblinear-train's
// path, skipping the test where LIBLINEAR is not installed or under
// -short.
func withLIBLINEAR(t *testing.T) (bin, ll string) {
	t.Helper()
	ll, err := exec.LookPath("liblinear-train")
	if err != nil {
		t.Skip("liblinear-train is not installed (" + InstallHint + ")")
	}
	return testAdaspdc(t), ll
}
