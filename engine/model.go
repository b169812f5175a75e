package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Model is a trained linear model.
//
// Weights has Dim entries, one per feature, and one more when Bias ≠ 0: the
// weight of a constant feature of value Bias appended to every row (as
// LIBLINEAR's -B). For classification, Labels holds the raw label values
// [negative, positive] that the margin's sign maps back to. Normalize is
// "unit" when the training rows were scaled to unit norm (before the bias
// feature was appended), so that Margin scales new rows the same way.
type Model struct {
	Loss      string    `json:"loss"`
	Lambda    float64   `json:"lambda"`
	L1        float64   `json:"l1"`
	Bias      float64   `json:"bias"`
	Normalize string    `json:"normalize,omitempty"`
	Labels    []float64 `json:"labels,omitempty"`
	Dim       int       `json:"dim"`
	Weights   []float64 `json:"weights"`
}

// Validate checks the model's shape.
func (m *Model) Validate() error {
	want := m.Dim
	if m.Bias != 0 {
		want++
	}
	if m.Dim < 0 || len(m.Weights) != want {
		return fmt.Errorf("engine: model has %d weights for dim %d and bias %v (want %d)", len(m.Weights), m.Dim, m.Bias, want)
	}
	if m.Labels != nil && len(m.Labels) != 2 {
		return fmt.Errorf("engine: model has %d labels, want 2", len(m.Labels))
	}
	for j, w := range m.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("engine: model weight %d is %v", j, w)
		}
	}
	if m.Normalize != "" && m.Normalize != "unit" {
		return fmt.Errorf("engine: model normalize %q: want \"unit\" or nothing", m.Normalize)
	}
	if _, err := LossByName(m.Loss, 1); err != nil {
		return err
	}
	return nil
}

// Margin returns wᵀa (plus the bias term) for a row given by its values and
// 0-based ascending column indices. Features at or beyond Dim, which a test
// file may use, are ignored as LIBLINEAR does.
func (m *Model) Margin(val []float64, idx []int32) float64 {
	var z, sq float64
	for p, j := range idx {
		sq += val[p] * val[p]
		if int(j) < m.Dim {
			z += val[p] * m.Weights[j]
		}
	}
	if m.Normalize == "unit" && sq > 0 {
		z /= math.Sqrt(sq)
	}
	if m.Bias != 0 {
		z += m.Bias * m.Weights[m.Dim]
	}
	return z
}

// Predict returns the raw label (classification) or the predicted target.
func (m *Model) Predict(val []float64, idx []int32) float64 {
	z := m.Margin(val, idx)
	if m.Labels == nil {
		return z
	}
	if z > 0 {
		return m.Labels[1]
	}
	return m.Labels[0]
}

// Save writes the model as JSON to path atomically: to a temporary file in
// the same directory, synced, then renamed over path.
func (m *Model) Save(path string) error {
	return writeAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(m)
	})
}

// LoadModel reads a model written by Save.
func LoadModel(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Model
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// liblinearSolver names the LIBLINEAR solver whose model file format and
// decision rule match each loss.
var liblinearSolver = map[string]string{
	"logistic":    "L2R_LR",
	"sqhinge":     "L2R_L2LOSS_SVC",
	"smoothhinge": "L2R_L2LOSS_SVC",
	"squared":     "L2R_L2LOSS_SVR",
}

// SaveLIBLINEAR writes the model in LIBLINEAR's model format, so that
// liblinear-predict accepts it. LIBLINEAR predicts label[0] when wᵀx > 0,
// so the positive raw label is listed first.
func (m *Model) SaveLIBLINEAR(path string) error {
	if err := m.LIBLINEARCompatible(); err != nil {
		return err
	}
	solver := liblinearSolver[m.Loss]
	return writeAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintf(bw, "solver_type %s\n", solver)
		if m.Labels != nil {
			fmt.Fprintf(bw, "nr_class 2\nlabel %s %s\n", fmtLabel(m.Labels[1]), fmtLabel(m.Labels[0]))
		} else {
			fmt.Fprintf(bw, "nr_class 2\n")
		}
		fmt.Fprintf(bw, "nr_feature %d\n", m.Dim)
		if m.Bias != 0 {
			fmt.Fprintf(bw, "bias %s\n", strconv.FormatFloat(m.Bias, 'g', -1, 64))
		} else {
			fmt.Fprintf(bw, "bias -1\n")
		}
		fmt.Fprintf(bw, "w\n")
		for _, wj := range m.Weights {
			bw.WriteString(strconv.FormatFloat(wj, 'g', 17, 64))
			bw.WriteString(" \n")
		}
		return bw.Flush()
	})
}

// LIBLINEARCompatible reports why LIBLINEAR's model format cannot hold the
// model, or nil. It looks only at Loss, L1 and Normalize, so a caller can
// ask before training whether the model it will get can be saved.
func (m *Model) LIBLINEARCompatible() error {
	if m.L1 != 0 {
		return errors.New("LIBLINEAR's model format has no elastic-net solver (-l1 > 0); the weights would still predict, but the model would be mislabelled")
	}
	if m.Normalize != "" {
		return errors.New("liblinear-predict would not normalise the rows as this model needs (-normalize unit); normalise the data file itself instead")
	}
	if _, ok := liblinearSolver[m.Loss]; !ok {
		return fmt.Errorf("no LIBLINEAR solver for loss %q", m.Loss)
	}
	return nil
}

func fmtLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
		return strconv.Itoa(int(v))
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
