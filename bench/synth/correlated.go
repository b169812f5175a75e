package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/sparse"
)

// CorrelatedSpec describes a dense classification problem whose columns
// are strongly correlated, the case where coordinate descent is slowest
// (each coordinate's step undoes part of its neighbours') and where the
// L1 problem's support is hardest to pick.
//
// Column j is a one-factor model of a latent row variable fᵢ ~ N(0, 1),
//
//	aᵢⱼ = sⱼ (ρⱼ fᵢ + √(1 − ρⱼ²) eᵢⱼ),   eᵢⱼ ~ N(0, 1),  ρⱼ ~ U[RhoMin, RhoMax],
//
// so that corr(Aⱼ, Aₖ) = ρⱼρₖ, in [RhoMin², RhoMax²] (0.49–0.90 for the
// defaults), and the scales sⱼ ~ U[½, 2] leave the columns unnormalised,
// as raw measurements are. The labels are drawn from the logistic model
// of a sparse true weight vector w* with Support nonzeros of either sign
// and magnitude in [½, 1½]: P(bᵢ = 1) = 1/(1 + exp(−aᵢᵀw*)).
type CorrelatedSpec struct {
	Rows, Cols, Support int
	RhoMin, RhoMax      float64
	Seed                uint64
}

// CorrelatedDense is the 11,000 × 68 problem with 8 true features and
// pairwise correlations of 0.49 to 0.90.
func CorrelatedDense(seed uint64) CorrelatedSpec {
	return CorrelatedSpec{Rows: 11_000, Cols: 68, Support: 8, RhoMin: 0.7, RhoMax: 0.95, Seed: seed}
}

// GenerateCorrelated builds the matrix (every entry stored) and ±1 labels
// of s, and returns the true weights. The same spec gives the same data on
// every machine.
func GenerateCorrelated(s CorrelatedSpec) (*sparse.CSR, []float64, []float64, error) {
	if s.Rows < 1 || s.Cols < 1 || s.Support < 0 || s.Support > s.Cols {
		return nil, nil, nil, fmt.Errorf("synth: bad shape %d×%d with %d true features", s.Rows, s.Cols, s.Support)
	}
	if !(0 <= s.RhoMin && s.RhoMin <= s.RhoMax && s.RhoMax < 1) {
		return nil, nil, nil, fmt.Errorf("synth: correlations %v to %v must lie in [0, 1)", s.RhoMin, s.RhoMax)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0xc0de))
	rho, noise, scale := make([]float64, s.Cols), make([]float64, s.Cols), make([]float64, s.Cols)
	for j := range rho {
		rho[j] = s.RhoMin + (s.RhoMax-s.RhoMin)*rng.Float64()
		noise[j] = math.Sqrt(1 - rho[j]*rho[j])
		scale[j] = 0.5 + 1.5*rng.Float64()
	}
	truth := make([]float64, s.Cols)
	for _, j := range rng.Perm(s.Cols)[:s.Support] {
		v := 0.5 + rng.Float64()
		if rng.IntN(2) == 0 {
			v = -v
		}
		truth[j] = v
	}
	x := &sparse.CSR{Rows: s.Rows, Cols: s.Cols, Indptr: make([]int64, s.Rows+1),
		Indices: make([]int32, s.Rows*s.Cols), Values: make([]float64, s.Rows*s.Cols)}
	y := make([]float64, s.Rows)
	for i := range s.Rows {
		f := rng.NormFloat64()
		row := x.Values[i*s.Cols : (i+1)*s.Cols]
		var z float64
		for j := range row {
			row[j] = scale[j] * (rho[j]*f + noise[j]*rng.NormFloat64())
			x.Indices[i*s.Cols+j] = int32(j)
			z += row[j] * truth[j]
		}
		x.Indptr[i+1] = int64((i + 1) * s.Cols)
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y, truth, nil
}
