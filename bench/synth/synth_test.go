package synth

import (
	"math"
	"testing"
)

func TestGenerateShapeAndDeterminism(t *testing.T) {
	for _, spec := range []Spec{URLLike(2000, 1), RCV1Like(2000, 1)} {
		x, y, err := Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Validate(); err != nil {
			t.Fatal(err)
		}
		mean := float64(x.NNZ()) / float64(x.Rows)
		if math.Abs(mean-float64(spec.NNZPerRow)) > 0.1*float64(spec.NNZPerRow) {
			t.Errorf("%d cols: %.1f nonzeros per row, want about %d", spec.Cols, mean, spec.NNZPerRow)
		}
		pos := 0
		for _, v := range y {
			if v != 1 && v != -1 {
				t.Fatalf("label %v", v)
			}
			if v == 1 {
				pos++
			}
		}
		if pos < len(y)/10 || pos > len(y)*9/10 {
			t.Errorf("%d of %d labels positive: too unbalanced to be a useful benchmark", pos, len(y))
		}
		if spec.TFIDF {
			for i := 0; i < x.Rows; i++ {
				val, _ := x.Row(i)
				var sq float64
				for _, v := range val {
					sq += v * v
				}
				if math.Abs(sq-1) > 1e-12 {
					t.Fatalf("row %d has squared norm %v, want 1", i, sq)
				}
			}
		}
		x2, y2, _ := Generate(spec)
		for p := range x.Values {
			if x.Values[p] != x2.Values[p] || x.Indices[p] != x2.Indices[p] {
				t.Fatal("same spec, different data")
			}
		}
		for i := range y {
			if y[i] != y2[i] {
				t.Fatal("same spec, different labels")
			}
		}
	}
	if _, _, err := Generate(Spec{Rows: 10, Cols: 5, NNZPerRow: 6, Zipf: 1.1}); err == nil {
		t.Error("more nonzeros per row than columns accepted")
	}
}
