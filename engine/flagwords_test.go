package engine

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// flagPattern matches a command-line flag in a message: a dash and a
// lower-case word at the start or after a space, a bracket, a quote or a
// separator ("-normalize unit", "(-m 1)"). The engine's messages name its
// own settings (CoordinateSettings.M, ElasticNet.Lambda), which a program that embeds
// it can change; the command line translates them into its flags.
var flagPattern = regexp.MustCompile("(^|[\\s(`,;\"'])-[a-z][a-z0-9-]*")

// flagExceptions are the files whose flag words this test does not own;
// none is left.
var flagExceptions = map[string]bool{}

// TestEngineSourceNamesNoFlags scans every string literal of the engine's
// non-test sources for a flag pattern and lists the offenders.
func TestEngineSourceNamesNoFlags(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if flagExceptions[filepath.ToSlash(path)] {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if m := flagPattern.FindAllString(s, -1); m != nil {
				t.Errorf("%s: a string names the flags %q: %.120s", fset.Position(lit.Pos()), m, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEngineMessagesNameNoFlags collects the errors, choices and stall
// notes that used to name flags and checks that none does now, and that
// each still says which setting to change.
func TestEngineMessagesNameNoFlags(t *testing.T) {
	x, b := sparseData(60, 8, 3, 1)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	hinge := Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-2}}
	y := make([]float64, len(b))
	copy(y, b)
	var msgs []string
	add := func(what string, err error, want string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not name %s", what, err, want)
		}
		msgs = append(msgs, err.Error())
	}
	train := func(p Problem, o Options) error {
		o.MaxEpochs = 2
		_, _, err := Train(context.Background(), p, o)
		return err
	}
	add("importance sampling", Options{Solver: SolverSDCA}.With(CoordinateSettings{Sampling: SamplingImportance}).Validate(), "Options.Solver")
	add("pdprox with m", train(hinge, Options{Solver: SolverPdproxDual}.With(CoordinateSettings{M: 2})), "CoordinateSettings.M")
	add("newton with m", train(prob, Options{Solver: SolverNewton}.With(CoordinateSettings{M: 2})), "CoordinateSettings.M")
	add("sdca with a block", train(prob, Options{Solver: SolverSDCA}.With(CoordinateSettings{BlockSize: 2})), "CoordinateSettings.M")
	add("saga with m", train(prob, Options{Solver: SolverSAGA}.With(CoordinateSettings{M: 2})), "CoordinateSettings.M")
	add("adaspdc with m above the blocks", train(prob, Options{Solver: SolverAdaSPDC}.With(CoordinateSettings{M: 100})), "CoordinateSettings.M")
	add("adaptreg over a cold dual method", train(prob, Options{Solver: SolverAdaptReg}.With(ReductionSettings{Inner: "dfsdca"})), "ReductionSettings.Inner")
	_, _, err := TrainMultinomial(context.Background(), Problem{X: x, B: b, Loss: Squared{}, Reg: ElasticNet{Lambda: 1e-2}}, y, Options{})
	add("multinomial with the squared loss", err, "Logistic")
	for _, o := range []Options{{}, {Threads: 2}} {
		if _, why := AutoSolver(prob, o); why != "" {
			msgs = append(msgs, why)
		}
	}
	if _, why := AutoSolver(Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2, L1: 1e-2}}, Options{}); why != "" {
		msgs = append(msgs, why)
	}
	for _, s := range Solvers() {
		if s.Name == SolverGLMNET {
			// Its summary cites LIBLINEAR's -s 5 and -s 6, another
			// program's flags, from a file listed in flagExceptions.
			continue
		}
		msgs = append(msgs, s.Summary, s.Losses, s.Regularizers)
	}
	for _, note := range stallNotes(t) {
		if !strings.Contains(note, "Options.StallEpochs") {
			t.Errorf("stall note %q does not name Options.StallEpochs", note)
		}
		msgs = append(msgs, note)
	}
	for _, m := range msgs {
		if f := flagPattern.FindAllString(m, -1); f != nil {
			t.Errorf("names the flags %q: %s", f, m)
		}
	}
}

// stallNotes returns the stall notes of a smooth and a non-smooth loss,
// from a method whose gap never falls.
func stallNotes(t *testing.T) []string {
	x, b := sparseData(20, 4, 2, 2)
	var notes []string
	for _, loss := range []Loss{Logistic{}, Hinge{}} {
		prob := Problem{X: x, B: b, Loss: loss, Reg: ElasticNet{Lambda: 1}}
		e := &driver.Entry{
			SolverInfo: driver.SolverInfo{Name: "flat"},
			Start: func(context.Context, Problem, Options) (driver.Method, error) {
				return &flatMethod{gap: 0.5}, nil
			},
		}
		_, res, err := driver.Solve(context.Background(), e, prob, Options{Tol: 1e-9, MaxEpochs: 100, StallEpochs: 5})
		if err != nil || res.Stop != "stalled" {
			t.Fatalf("%s: stop %q, err %v; want a stall", loss.Name(), res.Stop, err)
		}
		notes = append(notes, res.StallNote)
	}
	return notes
}

// flatMethod is a method whose gap never moves.
type flatMethod struct {
	gap    float64
	epochs int
}

func (m *flatMethod) RunEpochs(_ context.Context, k int) (int, error) { m.epochs += k; return k, nil }
func (m *flatMethod) Certify() (driver.TracePoint, error) {
	return driver.TracePoint{Primal: 1, Dual: 1 - m.gap, Gap: m.gap, RelGap: m.gap}, nil
}
func (m *flatMethod) Point() []float64       { return []float64{0, 0, 0, 0} }
func (m *flatMethod) Passes() float64        { return float64(m.epochs) }
func (m *flatMethod) Threads() int           { return 1 }
func (m *flatMethod) DivergenceHint() string { return "" }
