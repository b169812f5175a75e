package modelio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/adaspdc/adaspdc/engine"
)

// liblinearSolver names, for each loss, the LIBLINEAR solver type whose
// model layout and decision rule match the loss's.
var liblinearSolver = map[string]string{
	"logistic":    "L2R_LR",
	"hinge":       "L2R_L1LOSS_SVC_DUAL",
	"sqhinge":     "L2R_L2LOSS_SVC",
	"smoothhinge": "L2R_L2LOSS_SVC",
	"squared":     "L2R_L2LOSS_SVR",
}

// LIBLINEARCompatible reports why LIBLINEAR's model format cannot hold m,
// or returns nil. It looks only at m's Loss, L1 and Normalize, so a caller
// can ask before training whether the model it will get can be saved.
func LIBLINEARCompatible(m *engine.Model) error {
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

// SaveLIBLINEAR writes m to path in LIBLINEAR's model format, atomically as
// Save does, so that liblinear-predict accepts the file and predicts what
// m.Predict predicts. Besides what LIBLINEARCompatible refuses, it refuses
// a model that fails m.Validate, a classifier without its two raw labels or
// with labels that are not integers (LIBLINEAR's labels are ints), and a
// regression model with labels.
func SaveLIBLINEAR(path string, m *engine.Model) error {
	if err := LIBLINEARCompatible(m); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	loss, err := engine.LossByName(m.Loss, 1)
	if err != nil {
		return err
	}
	var labels string
	switch {
	case loss.Classification() && m.Labels == nil:
		return fmt.Errorf("the %s model has no labels; LIBLINEAR's format needs the raw labels that its margins' signs stand for", m.Loss)
	case loss.Classification():
		// LIBLINEAR predicts its first label when wᵀx > 0.
		pos, okPos := intLabel(m.Labels[1])
		neg, okNeg := intLabel(m.Labels[0])
		if !okPos || !okNeg {
			return fmt.Errorf("LIBLINEAR's labels are integers; this model's are %v and %v", m.Labels[0], m.Labels[1])
		}
		labels = "label " + pos + " " + neg + "\n"
	case m.Labels != nil:
		return fmt.Errorf("the %s model is a regression but has labels %v; LIBLINEAR's regression models have none", m.Loss, m.Labels)
	}
	// LIBLINEAR reads a negative bias as "no bias feature". A feature of
	// value −β with weight w gives the same margin as β with weight −w.
	bias, biasSign := m.Bias, 1.0
	if bias < 0 {
		bias, biasSign = -bias, -1
	}
	return writeAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintf(bw, "solver_type %s\n", liblinearSolver[m.Loss])
		fmt.Fprintf(bw, "nr_class 2\n%s", labels)
		fmt.Fprintf(bw, "nr_feature %d\n", m.Dim)
		if bias != 0 {
			fmt.Fprintf(bw, "bias %s\n", strconv.FormatFloat(bias, 'g', -1, 64))
		} else {
			fmt.Fprintf(bw, "bias -1\n")
		}
		fmt.Fprintf(bw, "w\n")
		for j, wj := range m.Weights {
			if j == m.Dim {
				wj *= biasSign
			}
			bw.WriteString(strconv.FormatFloat(wj, 'g', 17, 64))
			bw.WriteString(" \n")
		}
		return bw.Flush()
	})
}

// intLabel formats a label as LIBLINEAR's int labels, or reports that it
// is not one.
func intLabel(v float64) (string, bool) {
	if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
		return "", false
	}
	return strconv.Itoa(int(v)), true
}
