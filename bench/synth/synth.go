// Package synth generates seeded sparse classification data that mimics the
// sparsity of large real datasets, for benchmarks at scales that
// ../shared/data does not reach (url: 2.4 M rows, 3.2 M features, about 115
// nonzeros per row; rcv1: 47 k features, about 75 per row).
//
// Feature frequencies follow a Zipf law, as word and URL-token counts do: a
// few columns appear in most rows and most columns in a handful. Values are
// 1 (binary, like url's tokens) or, with TFIDF set, positive weights scaled
// so that every row has unit norm (like rcv1's). Labels come from a sparse
// ground-truth weight vector plus label noise, so the problems are learnable
// but not separable.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/adaspdc/adaspdc/sparse"
)

// Spec describes a dataset to generate.
type Spec struct {
	Rows, Cols int
	NNZPerRow  int     // mean nonzeros per row (Poisson-distributed, at least 1)
	Zipf       float64 // exponent s > 1 of the column frequencies; 1.1 is text-like
	TFIDF      bool    // unit-norm positive values instead of binary ones
	Noise      float64 // probability of flipping a label
	Seed       uint64
}

// URLLike is a url-shaped problem at a given number of rows (the real one
// has 2,396,130).
func URLLike(rows int, seed uint64) Spec {
	return Spec{Rows: rows, Cols: 3_231_961, NNZPerRow: 115, Zipf: 1.1, Noise: 0.05, Seed: seed}
}

// RCV1Like is an rcv1-shaped problem (20,242 rows in the real one).
func RCV1Like(rows int, seed uint64) Spec {
	return Spec{Rows: rows, Cols: 47_236, NNZPerRow: 75, Zipf: 1.1, TFIDF: true, Noise: 0.05, Seed: seed}
}

// Generate builds the matrix and ±1 labels of s. The same Spec gives the
// same data on every machine.
func Generate(s Spec) (*sparse.CSR, []float64, error) {
	if s.Rows < 1 || s.Cols < 1 || s.NNZPerRow < 1 || s.NNZPerRow > s.Cols {
		return nil, nil, fmt.Errorf("synth: bad shape %d×%d with %d nonzeros per row", s.Rows, s.Cols, s.NNZPerRow)
	}
	if !(s.Zipf > 1) || !(s.Noise >= 0 && s.Noise < 0.5) {
		return nil, nil, fmt.Errorf("synth: Zipf %v must be > 1 and Noise %v in [0, 0.5)", s.Zipf, s.Noise)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	zipf := rand.NewZipf(rng, s.Zipf, 1, uint64(s.Cols-1))
	// A random relabelling of the columns, so that frequent columns are
	// spread over the index range as in real data.
	perm := make([]int32, s.Cols)
	for j := range perm {
		perm[j] = int32(j)
	}
	rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
	truth := make([]float64, s.Cols)
	for j := range truth {
		if rng.Float64() < 0.1 {
			truth[j] = rng.NormFloat64()
		}
	}

	x := &sparse.CSR{Rows: s.Rows, Cols: s.Cols, Indptr: make([]int64, s.Rows+1)}
	x.Indices = make([]int32, 0, s.Rows*s.NNZPerRow)
	x.Values = make([]float64, 0, s.Rows*s.NNZPerRow)
	y := make([]float64, s.Rows)
	row := make([]int32, 0, 4*s.NNZPerRow)
	for i := 0; i < s.Rows; i++ {
		k := max(1, min(s.Cols, poisson(rng, float64(s.NNZPerRow))))
		row = row[:0]
		for len(row) < k {
			row = append(row, perm[zipf.Uint64()])
			if len(row) == k { // drop repeats only when the row is full
				slices.Sort(row)
				row = slices.Compact(row)
			}
		}
		var z, sq float64
		start := len(x.Values)
		for _, j := range row {
			v := 1.0
			if s.TFIDF {
				v = 0.2 + rng.ExpFloat64()
			}
			x.Indices = append(x.Indices, j)
			x.Values = append(x.Values, v)
			z += v * truth[j]
			sq += v * v
		}
		if s.TFIDF {
			inv := 1 / math.Sqrt(sq)
			for p := start; p < len(x.Values); p++ {
				x.Values[p] *= inv
			}
		}
		x.Indptr[i+1] = int64(len(x.Indices))
		y[i] = 1
		if z < 0 {
			y[i] = -1
		}
		if rng.Float64() < s.Noise {
			y[i] = -y[i]
		}
	}
	return x, y, nil
}

// poisson draws from a Poisson distribution with mean mu (normal
// approximation above 30, where it is accurate to well under a nonzero).
func poisson(rng *rand.Rand, mu float64) int {
	if mu > 30 {
		return int(math.Round(mu + math.Sqrt(mu)*rng.NormFloat64()))
	}
	l, k, p := math.Exp(-mu), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
