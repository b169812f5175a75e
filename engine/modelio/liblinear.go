package modelio

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

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
		return errors.New("LIBLINEAR's model format has no elastic-net solver (ElasticNet.L1 > 0); the weights would still predict, but the model would be mislabelled")
	}
	if m.Normalize != "" {
		return errors.New("liblinear-predict would not normalise the rows as this model needs (Model.Normalize \"unit\"); normalise the data file itself instead")
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
// regression model with labels. A multinomial model is written as
// LIBLINEAR's logistic model of the same classes: liblinear-predict gives
// its predictions, but its -b 1 probabilities are the one-vs-rest
// normalisation of σ(margins), not the softmax, and LoadLIBLINEAR reads it
// back as one-vs-rest.
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
	classes := m.Classes()
	switch {
	case classes > 2:
		// One-vs-rest: LIBLINEAR predicts the class of the largest of the
		// K margins; its labels list the classes in the order of the
		// weight columns.
		labels = "label"
		for _, l := range m.Labels {
			s, ok := intLabel(l)
			if !ok {
				return fmt.Errorf("LIBLINEAR's labels are integers; this model has %v", l)
			}
			labels += " " + s
		}
		labels += "\n"
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
	// The weights are streamed through a small buffer, each formatted
	// into one reused scratch slice, so that writing allocates nothing per
	// weight and never holds the file's text, several times the size of
	// the weights, in memory.
	return writeAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		scratch := make([]byte, 0, 32)
		fmt.Fprintf(bw, "solver_type %s\n", liblinearSolver[m.Loss])
		fmt.Fprintf(bw, "nr_class %d\n%s", max(2, classes), labels)
		fmt.Fprintf(bw, "nr_feature %d\n", m.Dim)
		if bias != 0 {
			fmt.Fprintf(bw, "bias %s\n", strconv.FormatFloat(bias, 'g', -1, 64))
		} else {
			fmt.Fprintf(bw, "bias -1\n")
		}
		fmt.Fprintf(bw, "w\n")
		if classes > 2 {
			// A row per feature, a column per class.
			for j := range len(m.ClassWeights(0)) {
				for k := range classes {
					wj := m.ClassWeights(k)[j]
					if j == m.Dim {
						wj *= biasSign
					}
					scratch = strconv.AppendFloat(scratch[:0], wj, 'g', 17, 64)
					bw.Write(scratch)
					bw.WriteByte(' ')
				}
				bw.WriteByte('\n')
			}
			return bw.Flush()
		}
		for j, wj := range m.Weights {
			if j == m.Dim {
				wj *= biasSign
			}
			scratch = strconv.AppendFloat(scratch[:0], wj, 'g', 17, 64)
			bw.Write(scratch)
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

// liblinearLoss maps LIBLINEAR's solver types to the loss whose decision
// rule their models follow (the margin's sign for the classifiers, the
// margin itself for the regressions).
var liblinearLoss = map[string]string{
	"L2R_LR": "logistic", "L2R_LR_DUAL": "logistic", "L1R_LR": "logistic",
	"L2R_L2LOSS_SVC": "sqhinge", "L2R_L2LOSS_SVC_DUAL": "sqhinge", "L1R_L2LOSS_SVC": "sqhinge",
	"L2R_L1LOSS_SVC_DUAL": "hinge",
	"L2R_L2LOSS_SVR":      "squared", "L2R_L2LOSS_SVR_DUAL": "squared", "L2R_L1LOSS_SVR_DUAL": "squared",
}

// LoadLIBLINEAR reads a model in LIBLINEAR's text format (as
// liblinear-train or SaveLIBLINEAR write it) and validates it: two-class,
// one-vs-rest and regression models. LIBLINEAR stores one weight column
// for two classes and predicts its first label when wᵀx > 0, so that label
// becomes the model's positive one, whichever order the labels came in.
// A one-vs-rest model's classes are put in increasing order with their
// columns. "bias -1" means no bias feature, and a bias of 0 a feature
// that adds nothing, dropped. Models of the Crammer–Singer solver and
// one-class models are refused with the reason, as their decision rules
// are not ours. The model's λ and l1 are unknown and read as 0. Errors
// name path and the line.
func LoadLIBLINEAR(path string) (*engine.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseLIBLINEAR(data, path)
}

func parseLIBLINEAR(data []byte, path string) (*engine.Model, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: LIBLINEAR model: %s", path, line, fmt.Sprintf(format, args...))
	}
	var (
		m       engine.Model
		classes = -1
		labels  []float64
		bias    = -1.0
		dim     = -1
	)
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "w" {
			break
		}
		if len(f) < 2 {
			return nil, bad("%q has no value", f[0])
		}
		var err error
		switch f[0] {
		case "solver_type":
			loss, ok := liblinearLoss[f[1]]
			if !ok {
				return nil, bad("solver_type %s is not supported (its models are not one weight vector with a sign rule: multiclass Crammer–Singer, one-class)", f[1])
			}
			m.Loss = loss
		case "nr_class":
			classes, err = strconv.Atoi(f[1])
		case "label":
			for _, t := range f[1:] {
				v, perr := strconv.ParseFloat(t, 64)
				if perr != nil {
					return nil, bad("label %q is not a number", t)
				}
				labels = append(labels, v)
			}
		case "nr_feature":
			dim, err = strconv.Atoi(f[1])
		case "bias":
			bias, err = strconv.ParseFloat(f[1], 64)
		case "rho":
			// One-class models only; refused by their solver_type.
		default:
			return nil, bad("unknown header %q", f[0])
		}
		if err != nil {
			return nil, bad("%s %q: %v", f[0], f[1], err)
		}
	}
	if err := sc.Err(); err != nil {
		line++ // the line that could not be read
		return nil, bad("%v", err)
	}
	switch {
	case m.Loss == "":
		return nil, bad("no solver_type")
	case dim < 0 || dim > 1<<31:
		return nil, bad("nr_feature missing or out of range")
	case classes > 2 && len(labels) != classes:
		return nil, bad("nr_class %d with %d labels", classes, len(labels))
	}
	cols := 1
	switch {
	case classes > 2:
		cols = classes
	case m.Loss != "squared":
		if len(labels) != 2 {
			return nil, bad("a two-class model needs two labels, has %d", len(labels))
		}
		m.Labels = []float64{labels[1], labels[0]} // [negative, positive]
	}
	rows := dim
	if bias >= 0 {
		rows++
	}
	// LIBLINEAR's layout: a row per feature, a column per class. Each
	// weight takes two bytes of the file at least, which bounds what a
	// header claiming billions of features can make us allocate before
	// the weights run out.
	w := make([]float64, 0, min(rows*cols, len(data)/2+1))
	for len(w) < rows*cols && sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != cols {
			return nil, bad("%d weights on a line, want %d (one per class)", len(f), cols)
		}
		for _, t := range f {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return nil, bad("weight %q: %v", t, err)
			}
			w = append(w, v)
		}
	}
	if err := sc.Err(); err != nil {
		line++
		return nil, bad("%v", err)
	}
	if len(w) != rows*cols {
		return nil, bad("%d weights for nr_feature %d, bias %g and %d classes", len(w), dim, bias, cols)
	}
	keep := rows
	switch {
	case bias > 0:
		m.Bias = bias
	case bias == 0:
		keep = dim // a bias feature of value 0 adds nothing
	}
	m.Dim = dim
	if cols == 1 {
		m.Weights = w[:keep]
	} else {
		// Our layout: a vector per class, the classes in increasing order.
		order := make([]int, cols)
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
		for _, k := range order {
			m.Labels = append(m.Labels, labels[k])
			for j := range keep {
				m.Weights = append(m.Weights, w[j*cols+k])
			}
		}
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
