package newton

import (
	"fmt"
	"testing"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

func BenchmarkFormW8A(b *testing.B) {
	ds, err := sparse.ReadFile("../../../shared/data/w8a", sparse.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	x := ds.X
	d := x.Cols
	h := make([]float64, d*d)
	for b.Loop() {
		clear(h)
		for k := range x.Rows {
			val, idx := x.Row(k)
			addOuterUpper(h, d, 0.25, val, idx)
		}
	}
}

func BenchmarkDotsW8A(b *testing.B) {
	ds, err := sparse.ReadFile("../../../shared/data/w8a", sparse.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	x := ds.X
	w := make([]float64, x.Cols)
	for j := range w {
		w[j] = float64(j%7) * 0.01
	}
	z := make([]float64, x.Rows)
	for b.Loop() {
		for k := range x.Rows {
			val, idx := x.Row(k)
			z[k] = kernels.SparseDot(val, idx, w)
		}
	}
}

func BenchmarkExpW8A(b *testing.B) {
	z := make([]float64, 49749)
	for k := range z {
		z[k] = float64(k%100)*0.1 - 5
	}
	var sum float64
	for b.Loop() {
		for _, v := range z {
			a, b, c, d := objective.CurvedTerms(objective.Logistic{}, v, 1)
			sum += a + b + c + d
		}
	}
	_ = sum
}

func BenchmarkDotsGoW8A(b *testing.B) {
	ds, err := sparse.ReadFile("../../../shared/data/w8a", sparse.ReadOptions{})
	if err != nil {
		b.Skip(err)
	}
	x := ds.X
	w := make([]float64, x.Cols)
	for j := range w {
		w[j] = float64(j%7) * 0.01
	}
	z := make([]float64, x.Rows)
	for b.Loop() {
		for k := range x.Rows {
			val, idx := x.Row(k)
			val = val[:len(idx)]
			var s float64
			for p, j := range idx {
				s += val[p] * w[j]
			}
			z[k] = s
		}
	}
}

func BenchmarkFormW8AGrouped(b *testing.B) {
	for _, tiers := range [][]int{{32}, {64}, {48, 128}, {300}} {
		ds, err := sparse.ReadFile("../../../shared/data/w8a", sparse.ReadOptions{})
		if err != nil {
			b.Skip(err)
		}
		x := ds.X
		x.GroupColumnsByCount(tiers)
		d := x.Cols
		h := make([]float64, d*d)
		b.Run(fmt.Sprint(tiers), func(b *testing.B) {
			for b.Loop() {
				clear(h)
				for k := range x.Rows {
					val, idx := x.Row(k)
					addOuterUpper(h, d, 0.25, val, idx)
				}
			}
		})
	}
}
