package modelio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"

	"github.com/adaspdc/adaspdc/engine"
)

// sparseFraction is the share of nonzero weights below which Save writes
// only the nonzero ones: an L1 model of a million features with a few
// thousand in its support then takes kilobytes, not megabytes.
const sparseFraction = 0.25

// jsonModel is the file's form of engine.Model, as Load decodes it: the
// weights either in full, or as the indices and values of the nonzero
// ones. Save writes the same fields, in this order, without it.
type jsonModel struct {
	engine.Model
	Weights       presized[float64] `json:"weights,omitempty"` // shadows Model.Weights
	NonzeroIndex  presized[int]     `json:"nonzero_index,omitempty"`
	NonzeroWeight presized[float64] `json:"nonzero_weight,omitempty"`
}

// presized is a slice that Load decodes into an array allocated once, to
// its length: encoding/json would grow it as the elements come, and the
// copies it leaves behind come to several times the weights of a wide
// model.
type presized[T int | float64] []T

// UnmarshalJSON decodes b, a JSON array or null, as encoding/json decodes
// a []T, into a slice whose capacity is one more than the commas in b:
// the length of an array of numbers, and within b's length whatever b
// holds.
func (p *presized[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = nil
		return nil
	}
	s := make([]T, 0, bytes.Count(b, []byte{','})+1)
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*p = s
	return nil
}

// Save writes m to path as indented JSON (the fields are listed in the
// package documentation), atomically: path holds either its old content or
// the whole model, never part of it. A model with fewer than a quarter of
// its weights nonzero is written in the sparse form. It does not validate
// m; Load accepts only models that engine.Model.Validate accepts.
//
// The document is streamed to the file a number at a time, never held
// whole in memory: a model's text is several times the size of its
// weights, and a process that saves the model of a large training run
// still holds the data it trained on.
func Save(path string, m *engine.Model) error {
	return writeAtomic(path, func(w io.Writer) error {
		return writeJSON(w, m)
	})
}

// writeJSON writes m as Save's document: the bytes that encoding/json's
// Encoder, indenting by one space, gives for a jsonModel of m, with the
// fields in the order of that struct (engine.Model's, the shadowed
// weights after its multinomial, then the sparse form's two arrays). The
// one difference is a model of weights that are all zero, whose empty
// sparse arrays encoding/json would omit (omitempty), leaving a file that
// Load refuses.
func writeJSON(w io.Writer, m *engine.Model) error {
	nnz := 0
	for _, x := range m.Weights {
		if x != 0 {
			nnz++
		}
	}
	sparse := len(m.Weights) > 0 && float64(nnz) < sparseFraction*float64(len(m.Weights))
	e := &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
	e.str("{\n")
	e.key("loss")
	e.quoted(m.Loss)
	e.key("lambda")
	e.float(m.Lambda)
	e.key("l1")
	e.float(m.L1)
	e.key("bias")
	e.float(m.Bias)
	if m.Normalize != "" {
		e.key("normalize")
		e.quoted(m.Normalize)
	}
	if len(m.Labels) > 0 {
		e.key("labels")
		e.floats(m.Labels, false)
	}
	e.key("dim")
	e.scratch = strconv.AppendInt(e.scratch[:0], int64(m.Dim), 10)
	e.w.Write(e.scratch)
	if m.Multinomial {
		e.key("multinomial")
		e.str("true")
	}
	if c := m.Certificate; c != nil {
		e.key("certificate")
		e.str("{\n  \"primal\": ")
		e.float(c.Primal)
		e.str(",\n  \"dual\": ")
		e.float(c.Dual)
		e.str("\n }")
	}
	switch {
	case sparse:
		// A model whose weights are all zero writes two empty arrays: with
		// neither form, Load would take it for a model of no weights.
		e.key("nonzero_index")
		n := 0
		for j, x := range m.Weights {
			if x != 0 {
				e.element(n)
				e.scratch = strconv.AppendInt(e.scratch[:0], int64(j), 10)
				e.w.Write(e.scratch)
				n++
			}
		}
		e.endArray(n)
		e.key("nonzero_weight")
		e.floats(m.Weights, true)
	case len(m.Weights) > 0:
		e.key("weights")
		e.floats(m.Weights, false)
	}
	e.str("\n}\n")
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// jsonWriter writes the pieces of Save's document through a buffer. The
// first error (a number JSON cannot hold) stops the writing; the
// bufio.Writer keeps its own write errors, returned by its Flush.
type jsonWriter struct {
	w       *bufio.Writer
	scratch []byte // one number's text, reused
	err     error
	fields  int // fields written so far, for the separating commas
}

func (e *jsonWriter) str(s string) { e.w.WriteString(s) }

// key starts a field of the top-level object: the comma that ends the
// previous one, the line break and the one-space indent.
func (e *jsonWriter) key(name string) {
	if e.fields > 0 {
		e.str(",\n")
	}
	e.fields++
	e.str(" ")
	e.quoted(name)
	e.str(": ")
}

// quoted writes s as encoding/json quotes it (HTML-safe, invalid UTF-8
// replaced). The strings are a model's few short names, so that
// json.Marshal's small allocation does not matter.
func (e *jsonWriter) quoted(s string) {
	b, err := json.Marshal(s)
	if err != nil && e.err == nil {
		e.err = err
	}
	e.w.Write(b)
}

// float writes f in encoding/json's form: the shortest text that reads
// back as f, in exponent form below 1e-6 and from 1e21 on, exponents
// without a leading zero. NaN and ±Inf, which JSON lacks, are refused as
// encoding/json refuses them.
func (e *jsonWriter) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if e.err == nil {
			e.err = &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		return
	}
	e.scratch = appendJSONFloat(e.scratch[:0], f)
	e.w.Write(e.scratch)
}

// floats writes xs, or with nonzero only its nonzero elements, as a JSON
// array indented under a field.
func (e *jsonWriter) floats(xs []float64, nonzero bool) {
	n := 0
	for _, x := range xs {
		if nonzero && x == 0 {
			continue
		}
		if e.err != nil {
			return
		}
		e.element(n)
		e.float(x)
		n++
	}
	e.endArray(n)
}

// element starts the element after n others of an array under a field:
// the bracket or a comma, then its own line, two spaces in.
func (e *jsonWriter) element(n int) {
	if n == 0 {
		e.str("[\n  ")
	} else {
		e.str(",\n  ")
	}
}

// endArray closes an array of n elements; an empty one is [], as
// encoding/json writes it.
func (e *jsonWriter) endArray(n int) {
	if n == 0 {
		e.str("[]")
	} else {
		e.str("\n ]")
	}
}

// appendJSONFloat appends f, finite, to b as encoding/json formats a
// float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
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
		return nil, fmt.Errorf("%s: neither a JSON model (modelio.Save) nor a LIBLINEAR model (modelio.SaveLIBLINEAR, liblinear-train)", path)
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
