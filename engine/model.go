package engine

import (
	"fmt"
	"math"
)

// Model is a trained linear model.
//
// Weights has Dim entries, one per feature, and one more when Bias ≠ 0: the
// weight of a constant feature of value Bias appended to every row (as
// LIBLINEAR's -B). For classification, Labels holds the raw label values
// [negative, positive] that the margin's sign maps back to. Normalize is
// "unit" when the training rows were scaled to unit norm (before the bias
// feature was appended), so that Margin scales new rows the same way.
//
// The struct tags give the model's JSON form; package engine/modelio saves
// and loads models as JSON and writes them in LIBLINEAR's format.
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

// Validate reports the first way in which m is not a usable model: a weight
// count that does not match Dim and Bias, Labels that are not two distinct
// finite values, labels on a regression, a weight or bias that is not
// finite, or an unknown Normalize or Loss.
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
	if l := m.Labels; l != nil && (math.IsNaN(l[0]) || math.IsInf(l[0], 0) || math.IsNaN(l[1]) || math.IsInf(l[1], 0) || l[0] == l[1]) {
		return fmt.Errorf("engine: model labels %v: want two distinct finite values, [negative, positive]", l)
	}
	for j, w := range m.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("engine: model weight %d is %v", j, w)
		}
	}
	if m.Normalize != "" && m.Normalize != "unit" {
		return fmt.Errorf("engine: model normalize %q: want \"unit\" or nothing", m.Normalize)
	}
	loss, err := LossByName(m.Loss, 1)
	if err != nil {
		return err
	}
	if !loss.Classification() && m.Labels != nil {
		return fmt.Errorf("engine: the %s model is a regression but has labels %v", m.Loss, m.Labels)
	}
	if math.IsNaN(m.Bias) || math.IsInf(m.Bias, 0) {
		return fmt.Errorf("engine: model bias %v: want a finite value", m.Bias)
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
