package modelio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/adaspdc/adaspdc/engine"
)

// sparseFraction is the share of nonzero weights below which Save writes
// only the nonzero ones: an L1 model of a million features with a few
// thousand in its support then takes kilobytes, not megabytes.
const sparseFraction = 0.25

// jsonModel is the file's form of engine.Model: the weights either in
// full, or as the indices and values of the nonzero ones.
type jsonModel struct {
	engine.Model
	Weights       []float64 `json:"weights,omitempty"` // shadows Model.Weights
	NonzeroIndex  []int     `json:"nonzero_index,omitempty"`
	NonzeroWeight []float64 `json:"nonzero_weight,omitempty"`
}

// Save writes m to path as indented JSON (the fields are listed in the
// package documentation), atomically: path holds either its old content or
// the whole model, never part of it. A model with fewer than a quarter of
// its weights nonzero is written in the sparse form. It does not validate
// m; Load accepts only models that engine.Model.Validate accepts.
func Save(path string, m *engine.Model) error {
	out := jsonModel{Model: *m, Weights: m.Weights}
	nnz := 0
	for _, w := range m.Weights {
		if w != 0 {
			nnz++
		}
	}
	if len(m.Weights) > 0 && float64(nnz) < sparseFraction*float64(len(m.Weights)) {
		out.Weights = nil
		out.NonzeroIndex, out.NonzeroWeight = make([]int, 0, nnz), make([]float64, 0, nnz)
		for j, w := range m.Weights {
			if w != 0 {
				out.NonzeroIndex = append(out.NonzeroIndex, j)
				out.NonzeroWeight = append(out.NonzeroWeight, w)
			}
		}
	}
	return writeAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(out)
	})
}

// Load reads a model written by Save, or a LIBLINEAR model (as
// LoadLIBLINEAR), telling them apart by their first bytes, and validates
// it. Its errors name path: a file that cannot be read, is neither format,
// or holds a model that engine.Model.Validate rejects (weights that do not
// match dim, bias and classes, a non-finite weight or bias, an unknown loss
// or normalize, labels that are not distinct, labels on a regression) is
// reported as such.
func Load(path string) (*engine.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("solver_type")) {
		return parseLIBLINEAR(data, path)
	}
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		return nil, fmt.Errorf("%s: neither a JSON model (adaspdc train -model) nor a LIBLINEAR model (-liblinear-model, liblinear-train)", path)
	}
	var jm jsonModel
	if err := json.Unmarshal(data, &jm); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := jm.Model
	m.Weights = jm.Weights
	if m.Weights == nil && jm.NonzeroIndex == nil && jm.NonzeroWeight == nil {
		m.Weights = []float64{} // a model of no weights writes none
	}
	if jm.NonzeroIndex != nil || jm.NonzeroWeight != nil {
		if m.Weights != nil {
			return nil, fmt.Errorf("%s: the model has both weights and nonzero_weight", path)
		}
		if len(jm.NonzeroIndex) != len(jm.NonzeroWeight) {
			return nil, fmt.Errorf("%s: %d nonzero indices for %d nonzero weights", path, len(jm.NonzeroIndex), len(jm.NonzeroWeight))
		}
		// The indices run over Weights as a whole: for a one-vs-rest
		// model, over its classes' vectors one after another.
		if m.Dim < 0 {
			return nil, fmt.Errorf("%s: dim %d is negative", path, m.Dim)
		}
		n := m.Dim
		if m.Bias != 0 {
			n++
		}
		if k := m.Classes(); k > 2 && n < 1<<31 {
			n *= k
		}
		if n > 1<<31 {
			return nil, fmt.Errorf("%s: dim %d (with the bias and the classes) needs more than 2³¹ weights", path, m.Dim)
		}
		m.Weights = make([]float64, n)
		prev := -1
		for i, j := range jm.NonzeroIndex {
			if j <= prev || j >= n {
				return nil, fmt.Errorf("%s: nonzero index %d: want increasing indices below %d", path, j, n)
			}
			m.Weights[j], prev = jm.NonzeroWeight[i], j
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
