package modelio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

const heartScale = "../../testdata/heart_scale"
const housingScale = "../../testdata/housing_scale"

// awkwardWeights returns weights that a lossy float format would change:
// subnormals, extremes, negative zero, values next to simple decimals, and
// random bit patterns.
func awkwardWeights(n int) []float64 {
	w := []float64{
		0, math.Copysign(0, -1), 0.1, 1.0 / 3, -2.0 / 3,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 2.2250738585072014e-308 / 3,
		math.MaxFloat64, -math.MaxFloat64, math.Nextafter(1, 2), math.Nextafter(1, 0),
		1e21, 1e-7, 123456789012345680, math.Pi,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for len(w) < n {
		v := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			w = append(w, v)
		}
	}
	return w[:n]
}

// tempFiles lists the files in dir that look like writeAtomic's temporary
// files.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

// TestJSONRoundTripBitExact: Save then Load gives back every field, and
// every weight bit for bit, and leaves no temporary file behind.
func TestJSONRoundTripBitExact(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []*engine.Model{
		{Loss: "logistic", Lambda: 1.0 / 270, L1: 0, Bias: 1, Labels: []float64{-1, 1}, Dim: 199, Weights: awkwardWeights(200)},
		{Loss: "sqhinge", Lambda: 1e-7, L1: 3e-5, Normalize: "unit", Labels: []float64{2, 7.5}, Dim: 1000, Weights: awkwardWeights(1000)},
		{Loss: "squared", Lambda: 0.1, Bias: -2.5, Dim: 3, Weights: awkwardWeights(4)},
		{Loss: "smoothhinge", Lambda: 1, Labels: []float64{0, 1}, Dim: 0, Weights: []float64{}},
	} {
		path := filepath.Join(dir, m.Loss+".json")
		// Write twice: the second Save replaces the first file.
		for range 2 {
			if err := Save(path, m); err != nil {
				t.Fatalf("%s: %v", m.Loss, err)
			}
		}
		back, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", m.Loss, err)
		}
		for j := range m.Weights {
			if math.Float64bits(back.Weights[j]) != math.Float64bits(m.Weights[j]) {
				t.Fatalf("%s: weight %d: saved %v (%#x), loaded %v (%#x)", m.Loss, j,
					m.Weights[j], math.Float64bits(m.Weights[j]), back.Weights[j], math.Float64bits(back.Weights[j]))
			}
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s: loaded %+v, saved %+v", m.Loss, back, m)
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestJSONFields: the file is one JSON object with the documented field
// names.
func TestJSONFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	m := &engine.Model{Loss: "logistic", Lambda: 0.5, Bias: 1, Normalize: "unit", Labels: []float64{-1, 1}, Dim: 2, Weights: []float64{1, 2, 3}}
	if err := Save(path, m); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{"loss", "lambda", "l1", "bias", "normalize", "labels", "dim", "weights"}
	for _, k := range want {
		if _, ok := fields[k]; !ok {
			t.Errorf("model JSON lacks %q: %s", k, raw)
		}
	}
	if len(fields) != len(want) {
		t.Errorf("model JSON has fields %v, want %v", fields, want)
	}
}

// TestSaveErrorsLeaveNoTemporaryFile: a Save that fails at any step
// returns an error naming the destination, removes its temporary file and
// leaves an existing destination as it was.
func TestSaveErrorsLeaveNoTemporaryFile(t *testing.T) {
	good := &engine.Model{Loss: "logistic", Lambda: 1, Labels: []float64{-1, 1}, Dim: 2, Weights: []float64{1, 2}}
	dir := t.TempDir()

	// A directory that does not exist.
	path := filepath.Join(dir, "missing", "m.json")
	err := Save(path, good)
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Save into a missing directory: %v; want an *os.PathError for %s, not found", err, path)
	}

	// The encoding fails (JSON has no NaN) after the temporary file is
	// created: the old file stays.
	path = filepath.Join(dir, "m.json")
	if err := Save(path, good); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := &engine.Model{Loss: "logistic", Lambda: 1, Dim: 2, Weights: []float64{1, math.NaN()}}
	err = Save(path, bad)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("Save of a NaN weight: %v; want an error naming %s and the NaN", err, path)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a failed Save changed %s", path)
	}

	// The rename fails: the destination is a non-empty directory.
	path = filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = Save(path, good)
	if !errors.As(err, &pe) || pe.Path != path || pe.Op != "rename" {
		t.Errorf("Save over a directory: %v; want a rename *os.PathError for %s", err, path)
	}
	err = SaveLIBLINEAR(path, good)
	if !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("SaveLIBLINEAR over a directory: %v; want an *os.PathError for %s", err, path)
	}

	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestSaveUnwritableDirectory: a directory without write permission gives
// an error naming the destination. Root ignores permissions, so the test
// is skipped there.
func TestSaveUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which can write anywhere")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "m.json")
	err := Save(path, &engine.Model{Loss: "squared", Lambda: 1, Dim: 1, Weights: []float64{1}})
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Save into a read-only directory: %v; want an *os.PathError for %s, permission denied", err, path)
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestLoadErrors: each way a model file can be wrong gives an error that
// names the file and says what is wrong.
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, cause string
	}{
		{"empty", "", "neither a JSON model"},
		{"truncated", `{"loss": "logistic", "lambda": 1, "dim": 2, "weights": [1,`, "unexpected end of JSON input"},
		{"liblinear-header-only", "solver_type L2R_LR\n", "LIBLINEAR model: nr_feature missing"},
		{"neither", "label 1\n", "neither a JSON model"},
		{"trailing", `{"loss": "squared", "lambda": 1, "dim": 1, "weights": [1]} x`, "invalid character"},
		{"weights-type", `{"loss": "squared", "lambda": 1, "dim": 1, "weights": ["1"]}`, "cannot unmarshal string"},
		{"too-few", `{"loss": "squared", "lambda": 1, "dim": 3, "weights": [1, 2]}`, "model has 2 weights for dim 3 and bias 0 (want 3)"},
		{"bias-weight-missing", `{"loss": "squared", "lambda": 1, "bias": 1, "dim": 2, "weights": [1, 2]}`, "model has 2 weights for dim 2 and bias 1 (want 3)"},
		{"too-many", `{"loss": "squared", "lambda": 1, "dim": 1, "weights": [1, 2]}`, "model has 2 weights for dim 1 and bias 0 (want 1)"},
		{"nan-literal", `{"loss": "squared", "lambda": 1, "dim": 1, "weights": [NaN]}`, "invalid character 'N'"},
		{"overflow", `{"loss": "squared", "lambda": 1, "dim": 1, "weights": [1e999]}`, "1e999"},
		{"three-labels", `{"loss": "logistic", "lambda": 1, "labels": [1, 2, 3], "dim": 1, "weights": [1]}`, "model has 1 weights for dim 1, bias 0 and 3 classes (want 3)"},
		{"normalize", `{"loss": "logistic", "lambda": 1, "normalize": "max", "dim": 1, "weights": [1]}`, `model normalize "max"`},
		{"loss", `{"loss": "svm", "lambda": 1, "dim": 1, "weights": [1]}`, "svm"},
		{"no-loss", `{}`, "loss"},
	} {
		path := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded %+v", tc.name, m)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, path+":") || !strings.Contains(msg, tc.cause) {
			t.Errorf("%s: error %q; want %q and %q", tc.name, msg, path+":", tc.cause)
		}
	}
	path := filepath.Join(dir, "absent.json")
	if _, err := Load(path); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("missing file: %v; want not-found naming %s", err, path)
	}
}

// TestLoadRejectsNonFiniteWeights: a non-finite weight, which JSON cannot
// spell but Validate must still catch, is refused with the file's name.
func TestLoadRejectsNonFiniteWeights(t *testing.T) {
	m := &engine.Model{Loss: "squared", Lambda: 1, Dim: 2, Weights: []float64{1, math.Inf(-1)}}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "weight 1 is -Inf") {
		t.Errorf("Validate: %v; want weight 1 is -Inf", err)
	}
	m.Weights[1] = math.NaN()
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "weight 1 is NaN") {
		t.Errorf("Validate: %v; want weight 1 is NaN", err)
	}
}

// train fits loss on the LIBSVM file data with an appended bias feature
// of value bias (none if 0) and returns the model as the command line
// fills it in.
func train(t *testing.T, data string, loss engine.Loss, lambda, bias float64) *engine.Model {
	t.Helper()
	ds, err := sparse.ReadFile(data, sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, labels := ds.Y, []float64(nil)
	if loss.Classification() {
		var lm sparse.LabelMap
		b, lm, err = sparse.BinaryLabels(ds.Y)
		if err != nil {
			t.Fatal(err)
		}
		labels = []float64{lm.Neg, lm.Pos}
	}
	x := ds.X
	if bias != 0 {
		x = x.WithBias(bias)
	}
	opt := engine.DefaultOptions()
	opt.Threads, opt.Tol = 1, 1e-8
	prob := engine.Problem{X: x, B: b, Loss: loss, Reg: engine.ElasticNet{Lambda: lambda}}
	m, _, err := engine.Train(context.Background(), prob, opt)
	if err != nil {
		t.Fatal(err)
	}
	m.Dim, m.Bias, m.Labels = ds.X.Cols, bias, labels
	return m
}

// relabel copies a ±1 LIBSVM file with its labels replaced by neg and pos,
// and with wide, two rows that use features beyond the file's.
func relabel(t *testing.T, src, dst string, neg, pos int, wide bool) {
	t.Helper()
	in, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		label, rest, _ := strings.Cut(line, " ")
		v := neg
		if label == "+1" || label == "1" {
			v = pos
		}
		fmt.Fprintf(&out, "%d %s\n", v, rest)
	}
	if wide {
		fmt.Fprintf(&out, "%d 1:0.5 14:3 20:-1\n%d 2:-1 13:1 40:2\n", pos, neg)
	}
	if err := os.WriteFile(dst, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readLIBLINEARHeader returns the header lines of a LIBLINEAR model file
// and its weights.
func readLIBLINEARHeader(t *testing.T, path string) (map[string]string, []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header := map[string]string{}
	var w []float64
	inW := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if inW {
			v, err := strconv.ParseFloat(line, 64)
			if err != nil {
				t.Fatalf("%s: weight line %q: %v", path, line, err)
			}
			w = append(w, v)
			continue
		}
		if line == "w" {
			inW = true
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		header[k] = v
	}
	return header, w
}

// TestLIBLINEARFormat: the header names the solver that matches each loss,
// lists the positive raw label first, and the weights follow bit for bit
// (a negative bias as its absolute value with the bias weight negated).
func TestLIBLINEARFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		m                      *engine.Model
		solver, label, bias    string
		bitsEqual, negatedLast bool
	}{
		{&engine.Model{Loss: "logistic", Lambda: 1, Labels: []float64{-1, 1}, Dim: 3, Weights: awkwardWeights(3)}, "L2R_LR", "1 -1", "-1", true, false},
		{&engine.Model{Loss: "sqhinge", Lambda: 1, Bias: 0.5, Labels: []float64{2, 7}, Dim: 3, Weights: awkwardWeights(4)}, "L2R_L2LOSS_SVC", "7 2", "0.5", true, false},
		{&engine.Model{Loss: "smoothhinge", Lambda: 1, Bias: -3, Labels: []float64{0, 1}, Dim: 2, Weights: []float64{1, 2, 3}}, "L2R_L2LOSS_SVC", "1 0", "3", false, true},
		{&engine.Model{Loss: "squared", Lambda: 1, Bias: 1, Dim: 2, Weights: []float64{0.1, -0.2, 0.3}}, "L2R_L2LOSS_SVR", "", "1", true, false},
	} {
		path := filepath.Join(dir, tc.m.Loss+".model")
		if err := SaveLIBLINEAR(path, tc.m); err != nil {
			t.Fatalf("%s: %v", tc.m.Loss, err)
		}
		h, w := readLIBLINEARHeader(t, path)
		if h["solver_type"] != tc.solver || h["nr_class"] != "2" || h["label"] != tc.label ||
			h["nr_feature"] != strconv.Itoa(tc.m.Dim) || h["bias"] != tc.bias {
			t.Errorf("%s: header %v; want solver_type %s, label %q, nr_feature %d, bias %s", tc.m.Loss, h, tc.solver, tc.label, tc.m.Dim, tc.bias)
		}
		if _, ok := h["label"]; ok != (tc.label != "") {
			t.Errorf("%s: label line present %v, want %v", tc.m.Loss, ok, tc.label != "")
		}
		if len(w) != len(tc.m.Weights) {
			t.Fatalf("%s: %d weights, want %d", tc.m.Loss, len(w), len(tc.m.Weights))
		}
		for j := range w {
			want := tc.m.Weights[j]
			if tc.negatedLast && j == tc.m.Dim {
				want = -want
			}
			if math.Float64bits(w[j]) != math.Float64bits(want) {
				t.Errorf("%s: weight %d is %v, want %v", tc.m.Loss, j, w[j], want)
			}
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestLIBLINEARRefuses: models LIBLINEAR's format cannot hold are refused
// with a reason, and nothing is written.
func TestLIBLINEARRefuses(t *testing.T) {
	dir := t.TempDir()
	ok := func() *engine.Model {
		return &engine.Model{Loss: "logistic", Lambda: 1, Labels: []float64{-1, 1}, Dim: 2, Weights: []float64{1, 2}}
	}
	for _, tc := range []struct {
		name   string
		edit   func(m *engine.Model)
		reason string
		before bool // LIBLINEARCompatible already refuses it
	}{
		{"l1", func(m *engine.Model) { m.L1 = 1e-4 }, "no elastic-net solver (ElasticNet.L1 > 0)", true},
		{"normalize", func(m *engine.Model) { m.Normalize = "unit" }, "would not normalise the rows", true},
		{"unknown-loss", func(m *engine.Model) { m.Loss = "svm" }, `no LIBLINEAR solver for loss "svm"`, true},
		{"no-labels", func(m *engine.Model) { m.Labels = nil }, "has no labels", false},
		{"fractional-labels", func(m *engine.Model) { m.Labels = []float64{0.5, 1.5} }, "labels are integers", false},
		{"huge-labels", func(m *engine.Model) { m.Labels = []float64{0, 1e10} }, "labels are integers", false},
		{"regression-labels", func(m *engine.Model) { m.Loss = "squared" }, "is a regression but has labels", false},
		{"shape", func(m *engine.Model) { m.Dim = 3 }, "model has 2 weights for dim 3", false},
		{"nan", func(m *engine.Model) { m.Weights[0] = math.NaN() }, "weight 0 is NaN", false},
	} {
		m := ok()
		tc.edit(m)
		path := filepath.Join(dir, tc.name+".model")
		err := SaveLIBLINEAR(path, m)
		if err == nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: SaveLIBLINEAR: %v; want %q", tc.name, err, tc.reason)
		}
		if _, serr := os.Stat(path); serr == nil {
			t.Errorf("%s: a refused model was written", tc.name)
		}
		cerr := LIBLINEARCompatible(m)
		if tc.before && (cerr == nil || cerr.Error() != err.Error()) {
			t.Errorf("%s: LIBLINEARCompatible: %v; want %v", tc.name, cerr, err)
		}
		if !tc.before && cerr != nil {
			t.Errorf("%s: LIBLINEARCompatible refuses what only the trained model can tell: %v", tc.name, cerr)
		}
	}
	// The command line asks before training, with a model that has only
	// its loss and l1.
	for _, loss := range []string{"logistic", "sqhinge", "smoothhinge", "squared"} {
		if err := LIBLINEARCompatible(&engine.Model{Loss: loss}); err != nil {
			t.Errorf("%s: %v", loss, err)
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// TestLIBLINEARPredictAgrees: liblinear-predict, given our LIBLINEAR model
// file, predicts what Model.Predict predicts, row by row, on heart_scale
// (classification, with raw labels that are not ±1, features the model
// never saw, positive and negative bias) and housing_scale (regression).
// It is skipped when liblinear-predict is not installed (Debian:
// apt-get install liblinear-tools).
func TestLIBLINEARPredictAgrees(t *testing.T) {
	predict, err := exec.LookPath("liblinear-predict")
	if err != nil {
		t.Skip("liblinear-predict is not installed")
	}
	dir := t.TempDir()
	heart := filepath.Join(dir, "heart_2_7")
	relabel(t, heartScale, heart, 2, 7, false)
	heartWide := filepath.Join(dir, "heart_2_7_wide")
	relabel(t, heartScale, heartWide, 2, 7, true)
	for _, tc := range []struct {
		name        string
		train, data string
		loss        engine.Loss
		bias        float64
	}{
		{"logistic", heartScale, heartScale, engine.Logistic{}, 0},
		{"logistic-bias", heart, heartWide, engine.Logistic{}, 1},
		{"sqhinge-negative-bias", heart, heartWide, engine.SquaredHinge{}, -2},
		{"smoothhinge", heart, heartWide, engine.SmoothHinge{}, 0.5},
		{"squared", housingScale, housingScale, engine.Squared{}, 1},
	} {
		m := train(t, tc.train, tc.loss, 1e-3, tc.bias)
		path := filepath.Join(dir, tc.name+".model")
		if err := SaveLIBLINEAR(path, m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		outPath := filepath.Join(dir, tc.name+".out")
		if out, err := exec.Command(predict, tc.data, path, outPath).CombinedOutput(); err != nil {
			t.Fatalf("%s: liblinear-predict: %v\n%s", tc.name, err, out)
		}
		out, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(string(out))
		ds, err := sparse.ReadFile(tc.data, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != ds.X.Rows {
			t.Fatalf("%s: liblinear-predict gave %d predictions for %d rows", tc.name, len(got), ds.X.Rows)
		}
		var classes [2]int
		for i := range ds.X.Rows {
			val, idx := ds.X.Row(i)
			want := m.Predict(val, idx)
			p, err := strconv.ParseFloat(got[i], 64)
			if err != nil {
				t.Fatalf("%s: prediction %d: %v", tc.name, i, err)
			}
			if m.Labels != nil {
				if p != want {
					t.Errorf("%s: row %d: liblinear-predict says %v, Predict %v (margin %v)", tc.name, i, p, want, m.Margin(val, idx))
				}
				if p == m.Labels[1] {
					classes[1]++
				} else {
					classes[0]++
				}
			} else if math.Abs(p-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: row %d: liblinear-predict says %v, Predict %v", tc.name, i, p, want)
			}
		}
		if m.Labels != nil && (classes[0] == 0 || classes[1] == 0) {
			t.Errorf("%s: every row predicted the same class (%v); the test proves little", tc.name, classes)
		}
	}
}

// TestSparseJSONOneVsRest: a one-vs-rest model whose weights are mostly
// zero is written in the sparse form, its indices running over the
// classes' vectors one after another, and reads back bit for bit.
func TestSparseJSONOneVsRest(t *testing.T) {
	for _, bias := range []float64{0, 1} {
		w := 1000
		if bias != 0 {
			w++
		}
		m := &engine.Model{Loss: "logistic", Lambda: 0.01, Bias: bias, Labels: []float64{1, 2, 3}, Dim: 1000, Weights: make([]float64, 3*w)}
		for k := range 3 {
			m.Weights[k*w] = float64(k) + 0.1
			m.Weights[k*w+w-1] = -1.0 / float64(k+3) // the last class's last weight: the bias's when there is one
		}
		path := filepath.Join(t.TempDir(), "m.json")
		if err := Save(path, m); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), `"nonzero_index"`) {
			t.Errorf("bias %v: not written sparse:\n%s", bias, data[:min(len(data), 400)])
		}
		got, err := Load(path)
		if err != nil {
			t.Fatalf("bias %v: %v", bias, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("bias %v: read back a different model", bias)
		}
	}
	// An index beyond the last class's vector is refused.
	path := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(path, []byte(`{"loss":"logistic","labels":[1,2,3],"dim":2,"nonzero_index":[6],"nonzero_weight":[1]}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "below 6") {
		t.Errorf("index 6 of 3×2 weights: %v", err)
	}
}

// TestLoadLIBLINEARPredictsAsSaved: a model written by SaveLIBLINEAR and
// read back by LoadLIBLINEAR predicts what the original predicts, row by
// row: on heart_scale with raw labels 2 and 7, a bias and features the
// model never saw, on housing_scale (regression), and on a9a.t for a model
// of a9a when the shared data are there.
func TestLoadLIBLINEARPredictsAsSaved(t *testing.T) {
	dir := t.TempDir()
	heart := filepath.Join(dir, "heart_2_7")
	relabel(t, heartScale, heart, 2, 7, false)
	heartWide := filepath.Join(dir, "heart_2_7_wide")
	relabel(t, heartScale, heartWide, 2, 7, true)
	cases := []struct {
		name, train, test string
		loss              engine.Loss
		bias              float64
	}{
		{"logistic", heartScale, heartScale, engine.Logistic{}, 0},
		{"logistic-bias", heart, heartWide, engine.Logistic{}, 1},
		{"sqhinge-negative-bias", heart, heartWide, engine.SquaredHinge{}, -2},
		{"squared", housingScale, housingScale, engine.Squared{}, 1},
	}
	const a9a, a9aTest = "/work/shared/data/a9a", "/work/shared/data/a9a.t"
	if _, err := os.Stat(a9aTest); err == nil {
		cases = append(cases, struct {
			name, train, test string
			loss              engine.Loss
			bias              float64
		}{"a9a", a9a, a9aTest, engine.Logistic{}, 1})
	} else {
		t.Logf("a9a.t not checked: %v", err)
	}
	for _, tc := range cases {
		m := train(t, tc.train, tc.loss, 1e-3, tc.bias)
		path := filepath.Join(dir, tc.name+".model")
		if err := SaveLIBLINEAR(path, m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back, err := LoadLIBLINEAR(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(back.Labels, m.Labels) || back.Dim != m.Dim || back.Loss != m.Loss {
			t.Errorf("%s: read back loss %s, labels %v, dim %d; saved %s, %v, %d", tc.name, back.Loss, back.Labels, back.Dim, m.Loss, m.Labels, m.Dim)
		}
		ds, err := sparse.ReadFile(tc.test, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		differ := 0
		for i := range ds.X.Rows {
			val, idx := ds.X.Row(i)
			want, got := m.Predict(val, idx), back.Predict(val, idx)
			if m.Labels == nil {
				// 17 significant digits read back exactly; the margin
				// may differ only where a negative bias was flipped.
				if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					differ++
				}
			} else if got != want {
				differ++
			}
		}
		if differ > 0 {
			t.Errorf("%s: %d of %d rows predicted differently after the round trip", tc.name, differ, ds.X.Rows)
		}
	}
}

// TestLoadLIBLINEARFromLiblinearTrain: models that liblinear-train writes
// (labels in their order of appearance, one weight column for two
// classes, a column per class for several) read back to models that
// predict what liblinear-predict predicts, row by row. It is skipped when
// liblinear-train is not installed (Debian: apt-get install
// liblinear-tools).
func TestLoadLIBLINEARFromLiblinearTrain(t *testing.T) {
	trainCmd, err1 := exec.LookPath("liblinear-train")
	predict, err2 := exec.LookPath("liblinear-predict")
	if err1 != nil || err2 != nil {
		t.Skip("liblinear-train or liblinear-predict is not installed")
	}
	dir := t.TempDir()
	// heart_scale's first row is +1: its labels read "1 -1"; the copy
	// whose labels are 7 and 2, with 2 first, reads "2 7".
	heart := filepath.Join(dir, "heart_7_2")
	relabel(t, heartScale, heart, 7, 2, true)
	// Three classes from housing_scale's prices, the first row's class
	// not the smallest, so that liblinear-train's label order is not ours.
	three := filepath.Join(dir, "housing_3")
	in, err := os.ReadFile(housingScale)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		label, rest, _ := strings.Cut(line, " ")
		y, _ := strconv.ParseFloat(label, 64)
		class := 5
		switch {
		case y < 19:
			class = 3
		case y < 25:
			class = 4
		}
		fmt.Fprintf(&b, "%d %s\n", class, rest)
	}
	os.WriteFile(three, []byte(b.String()), 0o644)
	for _, tc := range []struct {
		name, data string
		args       []string
		classes    int
	}{
		{"lr", heartScale, []string{"-s", "0"}, 2},
		{"l2svc-bias-2-7", heart, []string{"-s", "2", "-B", "1"}, 2},
		{"l1lr", heart, []string{"-s", "6", "-B", "1"}, 2},
		{"svr", housingScale, []string{"-s", "11", "-B", "1"}, 0},
		{"ovr", three, []string{"-s", "0", "-B", "1"}, 3},
	} {
		path := filepath.Join(dir, tc.name+".model")
		args := append(append([]string{"-q"}, tc.args...), tc.data, path)
		if out, err := exec.Command(trainCmd, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: liblinear-train: %v\n%s", tc.name, err, out)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.Classes() != tc.classes {
			t.Errorf("%s: %d classes, want %d", tc.name, m.Classes(), tc.classes)
		}
		outPath := filepath.Join(dir, tc.name+".out")
		if out, err := exec.Command(predict, tc.data, path, outPath).CombinedOutput(); err != nil {
			t.Fatalf("%s: liblinear-predict: %v\n%s", tc.name, err, out)
		}
		out, _ := os.ReadFile(outPath)
		got := strings.Fields(string(out))
		ds, err := sparse.ReadFile(tc.data, sparse.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != ds.X.Rows {
			t.Fatalf("%s: %d predictions for %d rows", tc.name, len(got), ds.X.Rows)
		}
		differ, seen := 0, map[float64]bool{}
		for i := range ds.X.Rows {
			val, idx := ds.X.Row(i)
			want, _ := strconv.ParseFloat(got[i], 64)
			p := m.Predict(val, idx)
			seen[p] = true
			if p != want && (m.Labels != nil || math.Abs(p-want) > 1e-9*math.Max(1, math.Abs(want))) {
				differ++
			}
		}
		if differ > 0 {
			t.Errorf("%s: %d of %d rows predicted otherwise than liblinear-predict", tc.name, differ, ds.X.Rows)
		}
		if m.Labels != nil && len(seen) < 2 {
			t.Errorf("%s: every row predicted the same class; the test proves little", tc.name)
		}
	}
}

// TestLoadLIBLINEARBadHeaders: a header that claims billions of features
// with a few weights, or a line too long to read, is refused with the file
// and the line, without allocating what the header claims.
func TestLoadLIBLINEARBadHeaders(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, cause string
	}{
		{"huge-binary", "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2147483647\nbias 1\nw\n1 \n2 \n", ":8: LIBLINEAR model: 2 weights for nr_feature 2147483647"},
		{"huge-ovr", "solver_type L2R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 2000000000\nbias 1\nw\n1 2 3 \n", ":7: LIBLINEAR model: 3 weights for nr_feature 2000000000"},
		{"long-label-line", "solver_type L2R_LR\nnr_class 2\nlabel 1" + strings.Repeat(" 1", 1<<20) + "\n", ":3: LIBLINEAR model: bufio.Scanner: token too long"},
		{"long-weight-line", "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n" + strings.Repeat("1", 2<<20) + "\n", ":7: LIBLINEAR model: bufio.Scanner: token too long"},
		{"one-label", "solver_type L2R_LR\nnr_class 1\nlabel 1\nnr_feature 1\nbias -1\nw\n1 \n", "a two-class model needs two labels, has 1"},
		{"crammer-singer", "solver_type MCSVM_CS\nnr_class 3\nlabel 1 2 3\nnr_feature 1\nbias -1\nw\n1 2 3 \n", "solver_type MCSVM_CS is not supported"},
		{"same-labels", "solver_type L2R_LR\nnr_class 2\nlabel 1 1\nnr_feature 1\nbias -1\nw\n1 \n", "want distinct values"},
	} {
		path := filepath.Join(dir, tc.name+".model")
		os.WriteFile(path, []byte(tc.content), 0o644)
		m, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+":") || !strings.Contains(err.Error(), tc.cause) {
			t.Errorf("%s: %v (%v); want %q", tc.name, err, m != nil, tc.cause)
		}
	}
}

// FuzzLoad: no file makes Load panic, and a model it accepts passes
// Validate and predicts a row without panicking, whatever its header
// claimed.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"loss":"logistic","labels":[-1,1],"dim":2,"weights":[1,2]}`))
	f.Add([]byte(`{"loss":"logistic","bias":1,"labels":[1,2,3],"dim":2,"nonzero_index":[0,8],"nonzero_weight":[1,2]}`))
	f.Add([]byte("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias 1\nw\n1 \n2 \n3 \n"))
	f.Add([]byte("solver_type L2R_LR\nnr_class 3\nlabel 3 1 2\nnr_feature 1\nbias -1\nw\n1 2 3 \n"))
	f.Add([]byte("solver_type L2R_L2LOSS_SVR\nnr_class 2\nnr_feature 1\nbias 0\nw\n1 \n0 \n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "m")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Errorf("the error does not name the file: %v", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Errorf("Load accepted a model that Validate refuses: %v", err)
		}
		m.Predict([]float64{1, -1}, []int32{0, 5})
	})
}
