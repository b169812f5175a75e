package engine

import (
	"fmt"
	"math"
	"slices"
)

// Model is a trained linear model.
//
// Weights has Dim entries, one per feature, and one more when Bias ≠ 0: the
// weight of a constant feature of value Bias appended to every row (as
// LIBLINEAR's -B). For classification, Labels holds the raw label values
// [negative, positive] that the margin's sign maps back to.
//
// A model of K ≥ 3 classes (one-vs-rest) has K Labels, in increasing order,
// and K weight vectors of that length one after another in Weights: class
// k's is Weights[k·w : (k+1)·w], w = Dim (+1 with a bias). It predicts the
// class whose margin is largest, as LIBLINEAR's one-vs-rest models do.
// Multinomial marks the same layout trained jointly by the softmax loss
// (TrainMultinomial): its class probabilities are the softmax of the
// margins, where a one-vs-rest model's are its σ(margins) normalised.
//
// Normalize is
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
	// Multinomial: the K ≥ 3 weight vectors are a softmax model.
	Multinomial bool `json:"multinomial,omitempty"`
	// Certificate, when not nil, is the certificate of the weights on the
	// data and objective they were trained on, as the run found it: P at
	// the weights and D, a lower bound on the optimum: a caller that keeps
	// checkpoints (driver.Options.Checkpoint) can keep one of a larger gap
	// from replacing it.
	Certificate *ModelCertificate `json:"certificate,omitempty"`
}

// ModelCertificate is a model's certificate: the primal objective at its
// weights and a dual objective, whose difference bounds how far the
// weights are from the optimum.
type ModelCertificate struct {
	Primal float64 `json:"primal"`
	Dual   float64 `json:"dual"`
}

// Validate reports the first way in which m is not a usable model: a
// negative Dim or a weight count that does not match Dim, Bias and the
// classes; Labels that are not finite and distinct (two, or three or more
// in increasing order, as Predict and the one-vs-rest layout assume); a
// weight or a Bias that is not finite; an unknown Normalize or Loss; or
// labels on a regression, which would otherwise be taken for a classifier.
// A negative Bias is allowed: it gives the same margins as its absolute
// value with the bias weight negated.
func (m *Model) Validate() error {
	want := m.Dim
	if m.Bias != 0 {
		want++
	}
	if k := m.Classes(); k > 2 {
		want *= k
	}
	if m.Dim < 0 || len(m.Weights) != want {
		if m.Classes() > 2 {
			return fmt.Errorf("engine: model has %d weights for dim %d, bias %v and %d classes (want %d)", len(m.Weights), m.Dim, m.Bias, m.Classes(), want)
		}
		return fmt.Errorf("engine: model has %d weights for dim %d and bias %v (want %d)", len(m.Weights), m.Dim, m.Bias, want)
	}
	if m.Labels != nil && len(m.Labels) < 2 {
		return fmt.Errorf("engine: model has %d labels, want 2 or more", len(m.Labels))
	}
	for i, l := range m.Labels {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return fmt.Errorf("engine: model label %v is not finite", l)
		}
		if i > 0 && l == m.Labels[i-1] || len(m.Labels) > 2 && i > 0 && l < m.Labels[i-1] {
			return fmt.Errorf("engine: model labels %v: want distinct values ([negative, positive], or several classes in increasing order)", m.Labels)
		}
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
	if loss.Classification() && m.Labels == nil {
		// Predict would return the margin where a label is meant.
		return fmt.Errorf("engine: the %s model is a classifier but has no labels (want [negative, positive], such as [-1, 1])", m.Loss)
	}
	if m.Multinomial && (m.Classes() < 3 || m.Loss != "logistic") {
		return fmt.Errorf("engine: a multinomial model is a logistic model of 3 classes or more (this one: %s, %d classes)", m.Loss, m.Classes())
	}
	if math.IsNaN(m.Bias) || math.IsInf(m.Bias, 0) {
		return fmt.Errorf("engine: model bias %v: want a finite value", m.Bias)
	}
	if c := m.Certificate; c != nil && (math.IsNaN(c.Primal) || math.IsInf(c.Primal, 0) || math.IsNaN(c.Dual) || math.IsInf(c.Dual, 0)) {
		return fmt.Errorf("engine: model certificate P = %v, D = %v: want finite values", c.Primal, c.Dual)
	}
	return nil
}

// newModel returns the model of weights w trained on prob: its loss, its
// regularizer's strengths, its bias and width, and for a classification
// loss the raw labels that the margin's sign stands for, prob.Classes, or
// −1 and +1 where the problem names none (its B are then those labels,
// which Problem.Validate checks). Several classes pass their labels in
// classes, and their weight vectors one after another in w.
func newModel(prob Problem, w []float64, classes []float64) *Model {
	m := &Model{
		Loss:    prob.Loss.Name(),
		Dim:     prob.X.Cols,
		Weights: w,
		Bias:    prob.Bias,
		Labels:  slices.Clone(classes),
	}
	if prob.Bias != 0 {
		m.Dim-- // the last column is the bias feature, which Margin adds
	}
	if prob.Loss.Classification() && m.Labels == nil {
		m.Labels = []float64{-1, 1}
	}
	m.Lambda, m.L1 = prob.Reg.Strengths()
	return m
}

// Classes returns the number of classes a one-vs-rest model holds (≥ 3),
// 2 for a binary classifier, and 0 for a regression.
func (m *Model) Classes() int {
	return len(m.Labels)
}

// ClassWeights returns class k's weight vector of a one-vs-rest model, or
// the only one of a binary or regression model (k = 0).
func (m *Model) ClassWeights(k int) []float64 {
	w := m.Dim
	if m.Bias != 0 {
		w++
	}
	return m.Weights[k*w : (k+1)*w]
}

// Margin returns wᵀa (plus the bias term) for a row given by its values and
// 0-based ascending column indices. Features at or beyond Dim, which a test
// file may use, are ignored as LIBLINEAR does. For a one-vs-rest model it
// is the first class's margin; Margins gives them all.
func (m *Model) Margin(val []float64, idx []int32) float64 {
	return m.margin(m.ClassWeights(0), val, idx)
}

func (m *Model) margin(w, val []float64, idx []int32) float64 {
	var z, sq float64
	for p, j := range idx {
		sq += val[p] * val[p]
		if int(j) < m.Dim {
			z += val[p] * w[j]
		}
	}
	if m.Normalize == "unit" && sq > 0 {
		z /= math.Sqrt(sq)
	}
	if m.Bias != 0 {
		z += m.Bias * w[m.Dim]
	}
	return z
}

// Margins sets out[k] to class k's margin for every class of a one-vs-rest
// model (out needs Classes() entries) and returns out.
func (m *Model) Margins(val []float64, idx []int32, out []float64) []float64 {
	for k := range out {
		out[k] = m.margin(m.ClassWeights(k), val, idx)
	}
	return out
}

// Predict returns the raw label (classification) or the predicted target.
// A one-vs-rest model predicts the class of the largest margin (the first
// of equal ones).
func (m *Model) Predict(val []float64, idx []int32) float64 {
	if k := m.Classes(); k > 2 {
		best, bz := 0, math.Inf(-1)
		for c := range k {
			if z := m.margin(m.ClassWeights(c), val, idx); z > bz {
				best, bz = c, z
			}
		}
		return m.Labels[best]
	}
	z := m.Margin(val, idx)
	if m.Labels == nil {
		return z
	}
	if z > 0 {
		return m.Labels[1]
	}
	return m.Labels[0]
}
