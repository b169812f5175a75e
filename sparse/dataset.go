package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Dataset is a design matrix plus one target per row, as read.
type Dataset struct {
	// Name identifies the data in messages, usually the base name of the
	// file it came from.
	Name string
	// X holds one sample per row.
	X *CSR
	// Y holds the target of each row: len(Y) == X.Rows.
	Y []float64
}

// Split shuffles the row numbers with a PCG generator seeded by seed and puts
// round(testFraction·Rows) of them in test and the rest in train. Each part
// keeps the rows in their original relative order, so the split depends only
// on (Rows, testFraction, seed). Both parts are copies: they share no storage
// with d. Split panics if testFraction is not in [0, 1]; callers that take the
// fraction from a user validate it first.
func (d *Dataset) Split(testFraction float64, seed uint64) (train, test *Dataset) {
	if !(testFraction >= 0 && testFraction <= 1) {
		panic(fmt.Sprintf("sparse: Split: test fraction %v is not in [0, 1]", testFraction))
	}
	n := d.X.Rows
	nTest := int(math.Round(testFraction * float64(n)))
	// The second PCG word is a fixed odd constant so that a single seed
	// selects the stream; it has no meaning beyond being fixed.
	perm := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)).Perm(n)
	testRows, trainRows := perm[:nTest], perm[nTest:]
	slices.Sort(testRows)
	slices.Sort(trainRows)
	return d.selectRows(trainRows, d.Name+" (train)"), d.selectRows(testRows, d.Name+" (test)")
}

func (d *Dataset) selectRows(rows []int, name string) *Dataset {
	y := make([]float64, len(rows))
	for k, i := range rows {
		y[k] = d.Y[i]
	}
	return &Dataset{Name: name, X: d.X.SelectRows(rows), Y: y}
}

// LabelMap records how two raw label values map to −1/+1 (the larger raw
// value becomes +1).
type LabelMap struct {
	Neg, Pos float64
}

// Raw returns the raw label that the sign stands for: Pos for a positive sign
// and Neg otherwise.
func (l LabelMap) Raw(sign float64) float64 {
	if sign > 0 {
		return l.Pos
	}
	return l.Neg
}

// BinaryLabels maps a target vector with exactly two distinct values to ±1:
// the larger value becomes +1 and the smaller −1, which turns the usual
// conventions (−1/+1, 0/1, 1/2, 2/4) into the form binary losses expect. It
// returns an error if y is empty, holds a NaN, or does not hold exactly two
// distinct values.
func BinaryLabels(y []float64) ([]float64, LabelMap, error) {
	if len(y) == 0 {
		return nil, LabelMap{}, errors.New("sparse: no labels: binary losses need exactly two distinct values")
	}
	values, _ := LabelCounts(y)
	if math.IsNaN(values[len(values)-1]) {
		return nil, LabelMap{}, errors.New("sparse: label NaN: binary losses need two finite values")
	}
	switch len(values) {
	case 1:
		return nil, LabelMap{}, fmt.Errorf("sparse: only one distinct label (%s): binary losses need exactly two", formatLabel(values[0]))
	case 2:
	default:
		const shown = 5
		var b strings.Builder
		for k, v := range values[:min(shown, len(values))] {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(formatLabel(v))
		}
		if len(values) > shown {
			b.WriteString(", …")
		}
		return nil, LabelMap{}, fmt.Errorf("sparse: %d distinct labels (%s): binary losses need exactly two", len(values), b.String())
	}
	lm := LabelMap{Neg: values[0], Pos: values[1]}
	signs := make([]float64, len(y))
	for i, v := range y {
		if v == lm.Pos {
			signs[i] = 1
		} else {
			signs[i] = -1
		}
	}
	return signs, lm, nil
}

// LabelCounts returns the distinct values of y in ascending order and how
// often each occurs. Values that compare equal (0 and −0) are counted
// together; NaNs, which equal nothing, come last, one entry each.
func LabelCounts(y []float64) (values []float64, counts []int) {
	// Targets usually take a handful of values: counting them against the
	// short list of values seen so far is a few times faster than sorting
	// a copy, which is kept for targets with many values.
	const few = 32
	type labelCount struct {
		value float64
		count int
	}
	var seen []labelCount
	for _, v := range y {
		k := slices.IndexFunc(seen, func(lc labelCount) bool { return lc.value == v })
		if k >= 0 {
			seen[k].count++
			continue
		}
		if len(seen) == few {
			return sortedLabelCounts(y)
		}
		seen = append(seen, labelCount{v, 1})
	}
	slices.SortFunc(seen, func(a, b labelCount) int { return compareLabels(a.value, b.value) })
	for _, lc := range seen {
		values = append(values, lc.value)
		counts = append(counts, lc.count)
	}
	return values, counts
}

// sortedLabelCounts is LabelCounts by sorting a copy of y.
func sortedLabelCounts(y []float64) (values []float64, counts []int) {
	sorted := slices.Clone(y)
	slices.SortFunc(sorted, compareLabels)
	for k, v := range sorted {
		if k > 0 && v == sorted[k-1] {
			counts[len(counts)-1]++
			continue
		}
		values = append(values, v)
		counts = append(counts, 1)
	}
	return values, counts
}

// compareLabels orders numbers ascending with NaN last. (cmp.Compare puts
// NaN first; last keeps the finite range at the front of messages.)
func compareLabels(a, b float64) int {
	switch {
	case a < b || (!math.IsNaN(a) && math.IsNaN(b)):
		return -1
	case a > b || (math.IsNaN(a) && !math.IsNaN(b)):
		return 1
	}
	return 0
}

func formatLabel(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
