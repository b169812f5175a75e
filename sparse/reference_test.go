package sparse

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// referenceRead is a deliberately plain LIBSVM reader, written from the
// format rules with strings and strconv and nothing shared with the real
// reader, to check it against. It returns the dataset, or the line and
// column of the first malformed line.
func referenceRead(input string, numFeatures int) (d *Dataset, errLine, errCol int) {
	for _, magic := range []string{"\x1f\x8b", "BZh", "\xfd7zXZ\x00", "\x28\xb5\x2f\xfd", "PK\x03\x04"} {
		if strings.HasPrefix(input, magic) {
			return nil, 0, 0 // compressed: an error about the whole input
		}
	}
	var y []float64
	m := &CSR{Indptr: []int64{0}}
	maxIdx := 0
	for n, line := range strings.Split(input, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if h := strings.IndexByte(line, '#'); h >= 0 {
			line = line[:h]
		}
		type token struct {
			text string
			col  int
		}
		var tokens []token
		for p := 0; p < len(line); {
			if line[p] == ' ' || line[p] == '\t' {
				p++
				continue
			}
			q := p
			for q < len(line) && line[q] != ' ' && line[q] != '\t' {
				q++
			}
			tokens = append(tokens, token{line[p:q], p + 1})
			p = q
		}
		if len(tokens) == 0 {
			continue
		}
		finite := func(s string) (float64, bool) {
			v, err := strconv.ParseFloat(s, 64)
			return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
		}
		if strings.Contains(tokens[0].text, ":") {
			return nil, n + 1, tokens[0].col
		}
		label, ok := finite(tokens[0].text)
		if !ok {
			return nil, n + 1, tokens[0].col
		}
		prev := 0
		var idx []int32
		var val []float64
		var valCol []int
		for _, tok := range tokens[1:] {
			name, value, found := strings.Cut(tok.text, ":")
			if name == "qid" && found && prev == 0 {
				if value == "" || strings.Trim(value, "0123456789") != "" {
					return nil, n + 1, tok.col + 4
				}
				continue
			}
			if !found || name == "" || strings.Trim(name, "0123456789") != "" {
				return nil, n + 1, tok.col
			}
			j, err := strconv.ParseInt(name, 10, 64)
			limit := int64(math.MaxInt32)
			if numFeatures > 0 {
				limit = int64(numFeatures)
			}
			if err != nil || j == 0 || j > limit || j <= int64(prev) {
				return nil, n + 1, tok.col
			}
			v, ok := finite(value)
			if !ok {
				return nil, n + 1, tok.col + len(name) + 1
			}
			prev = int(j)
			idx = append(idx, int32(j-1))
			val = append(val, v)
			valCol = append(valCol, tok.col+len(name)+1)
		}
		var sq float64
		for _, v := range val {
			sq += v * v
		}
		if math.IsInf(sq, 0) {
			// A row whose squared norm overflows: the error points at its
			// (first) largest value.
			k := 0
			for i, v := range val {
				if math.Abs(v) > math.Abs(val[k]) {
					k = i
				}
			}
			return nil, n + 1, valCol[k]
		}
		maxIdx = max(maxIdx, prev)
		y = append(y, label)
		m.Indices = append(m.Indices, idx...)
		m.Values = append(m.Values, val...)
		m.Indptr = append(m.Indptr, int64(len(m.Indices)))
		m.Rows++
	}
	if m.Rows == 0 {
		return nil, 0, 0
	}
	m.Cols = maxIdx
	if numFeatures > 0 {
		m.Cols = numFeatures
	}
	return &Dataset{X: m, Y: y}, 0, 0
}

// compareWithReference checks the reader's outcome on input against
// referenceRead: the same data bit for bit, or an error at the same line and
// column.
func compareWithReference(input string, numFeatures int, got *Dataset, err error) error {
	want, line, col := referenceRead(input, numFeatures)
	if want == nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			return fmt.Errorf("reference fails at %d:%d, reader gives %v", line, col, err)
		}
		if pe.Line != line || pe.Column != col {
			return fmt.Errorf("reference fails at %d:%d, reader at %d:%d (%v)", line, col, pe.Line, pe.Column, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reference reads %d rows, reader fails: %v", want.X.Rows, err)
	}
	if msg := datasetDiff(got, want); msg != "" {
		return fmt.Errorf("reader differs from the reference: %s", msg)
	}
	return nil
}
