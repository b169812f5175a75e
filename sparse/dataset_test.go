package sparse

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := randomCSR(rng, 101, 8, 0.4)
	// Label each row with its number so that rows can be traced.
	y := make([]float64, m.Rows)
	for i := range y {
		y[i] = float64(i)
	}
	d := &Dataset{Name: "d", X: m, Y: y}
	train, test := d.Split(0.3, 42)
	if test.X.Rows != 30 || train.X.Rows != 71 {
		t.Fatalf("sizes %d/%d, want 71/30", train.X.Rows, test.X.Rows)
	}
	if train.Name != "d (train)" || test.Name != "d (test)" {
		t.Errorf("names %q, %q", train.Name, test.Name)
	}
	seen := map[float64]bool{}
	for _, part := range []*Dataset{train, test} {
		if err := part.X.Validate(); err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(part.Y) {
			t.Error("a part does not keep the original row order")
		}
		for k, label := range part.Y {
			if seen[label] {
				t.Fatalf("row %v is in both parts", label)
			}
			seen[label] = true
			val, idx := part.X.Row(k)
			wval, widx := m.Row(int(label))
			if !reflect.DeepEqual(val, wval) || !reflect.DeepEqual(idx, widx) {
				t.Fatalf("row %v differs from the original", label)
			}
		}
	}
	if len(seen) != m.Rows {
		t.Errorf("%d rows covered, want %d", len(seen), m.Rows)
	}

	train2, test2 := d.Split(0.3, 42)
	if !reflect.DeepEqual(train2.Y, train.Y) || !reflect.DeepEqual(test2.Y, test.Y) {
		t.Error("the same seed gives another split")
	}
	_, test3 := d.Split(0.3, 43)
	if reflect.DeepEqual(test3.Y, test.Y) {
		t.Error("another seed gives the same split")
	}
	if tr, te := d.Split(0, 1); tr.X.Rows != 101 || te.X.Rows != 0 {
		t.Errorf("fraction 0: %d/%d", tr.X.Rows, te.X.Rows)
	}
	if tr, te := d.Split(1, 1); tr.X.Rows != 0 || te.X.Rows != 101 {
		t.Errorf("fraction 1: %d/%d", tr.X.Rows, te.X.Rows)
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("fraction %v did not panic", bad)
				}
			}()
			d.Split(bad, 1)
		}()
	}
}

func TestBinaryLabels(t *testing.T) {
	for _, tc := range []struct {
		y     []float64
		signs []float64
		lm    LabelMap
	}{
		{[]float64{-1, 1, 1, -1}, []float64{-1, 1, 1, -1}, LabelMap{-1, 1}},
		{[]float64{0, 1, 0}, []float64{-1, 1, -1}, LabelMap{0, 1}},
		{[]float64{2, 1, 2}, []float64{1, -1, 1}, LabelMap{1, 2}},
		{[]float64{2, 4, 4}, []float64{-1, 1, 1}, LabelMap{2, 4}},
	} {
		signs, lm, err := BinaryLabels(tc.y)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(signs, tc.signs) || lm != tc.lm {
			t.Errorf("%v: got %v %+v, want %v %+v", tc.y, signs, lm, tc.signs, tc.lm)
		}
		for i, s := range signs {
			if lm.Raw(s) != tc.y[i] {
				t.Errorf("%v: Raw(%v) = %v, want %v", tc.y, s, lm.Raw(s), tc.y[i])
			}
		}
	}
	for _, tc := range []struct {
		y   []float64
		msg string
	}{
		{nil, "no labels"},
		{[]float64{1, 1}, "only one distinct label (1): binary losses need exactly two"},
		{[]float64{1, 2, 3, 2}, "3 distinct labels (1, 2, 3): binary losses need exactly two"},
		{[]float64{1, 2, 3, 4, 5, 6, 7}, "7 distinct labels (1, 2, 3, 4, 5, …): binary losses need exactly two"},
		{[]float64{1, math.NaN()}, "NaN"},
	} {
		if _, _, err := BinaryLabels(tc.y); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: got %v, want an error containing %q", tc.y, err, tc.msg)
		}
	}
}

func TestLabelCounts(t *testing.T) {
	values, counts := LabelCounts([]float64{3, -1, 3, 0.5, -1, 3, math.Copysign(0, -1), 0})
	if !reflect.DeepEqual(values, []float64{-1, 0, 0.5, 3}) || !reflect.DeepEqual(counts, []int{2, 2, 1, 3}) {
		t.Errorf("got %v %v", values, counts)
	}
	// Many distinct values take the sorting path; both paths must agree.
	rng := rand.New(rand.NewPCG(10, 10))
	for _, distinct := range []int{3, 31, 32, 33, 200} {
		y := make([]float64, 1000)
		for i := range y {
			y[i] = float64(rng.IntN(distinct)) - 5
		}
		y[7] = math.NaN()
		values, counts := LabelCounts(y)
		wantValues, wantCounts := sortedLabelCounts(y)
		if len(values) != len(wantValues) || !math.IsNaN(values[len(values)-1]) ||
			!slices.Equal(values[:len(values)-1], wantValues[:len(wantValues)-1]) || !slices.Equal(counts, wantCounts) {
			t.Errorf("%d distinct: got %v %v, sorting gives %v %v", distinct, values, counts, wantValues, wantCounts)
		}
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != len(y) || !slices.IsSortedFunc(values, compareLabels) {
			t.Errorf("%d distinct: counts sum to %d, values sorted: %v", distinct, total, slices.IsSortedFunc(values, compareLabels))
		}
	}
	if v, c := LabelCounts(nil); len(v) != 0 || len(c) != 0 {
		t.Errorf("empty: got %v %v", v, c)
	}
}
