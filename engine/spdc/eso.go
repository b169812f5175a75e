package spdc

import (
	"context"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/blocks"
	"github.com/adaspdc/adaspdc/sparse"
)

// blockColumnCounts returns ωⱼ, the number of blocks with at least one row
// that stores an entry in column j.
func blockColumnCounts(x *sparse.CSR, part *blocks.Partition) []int64 {
	if part.NumBlocks() == x.Rows {
		return x.ColumnCounts()
	}
	counts := make([]int64, x.Cols)
	last := make([]int32, x.Cols) // 1 + the last block that counted column j
	for b := 0; b < part.NumBlocks(); b++ {
		for _, k := range part.Block(b) {
			_, idx := x.Row(int(k))
			for _, j := range idx {
				if last[j] != int32(b+1) {
					last[j] = int32(b + 1)
					counts[j]++
				}
			}
		}
	}
	return counts
}

// esoParameters returns, for every block i, vᵢ = ‖diag(√β)Aᵢᵀ‖₂², the
// parameter of the expected separable over-approximation for τ-nice
// sampling of m blocks out of n_b, with βⱼ = 1 + (m−1)(ωⱼ−1)/(n_b−1)
// (miniBatchBeta on the block column counts): for every h,
//
//	E‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ (m/n_b) Σᵢ vᵢ‖hᵢ‖².
//
// For blocks of one row, vᵢ = Σⱼ βⱼaᵢⱼ²; larger blocks take the spectral
// norm of the column-weighted block.
func esoParameters(ctx context.Context, x *sparse.CSR, part *blocks.Partition, m, threads int) ([]float64, error) {
	nb := part.NumBlocks()
	beta := blocks.MiniBatchBeta(blockColumnCounts(x, part), nb, m)
	v := make([]float64, nb)
	if nb == x.Rows {
		for b := range v {
			val, idx := x.Row(int(part.Order[b]))
			var s float64
			for p, j := range idx {
				s += beta[j] * val[p] * val[p]
			}
			v[b] = s
		}
		return v, nil
	}
	w := *x
	w.Values = make([]float64, len(x.Values))
	for p, j := range x.Indices {
		w.Values[p] = x.Values[p] * math.Sqrt(beta[j])
	}
	norms, err := blocks.SpectralNormsContext(ctx, &w, part, blocks.DefaultTolerance, threads)
	if err != nil {
		return nil, err
	}
	for b, r := range norms {
		v[b] = r * r
	}
	return v, nil
}

// MeanESO returns the mean over the rows of vᵢ/‖aᵢ‖², the expected
// separable over-approximation parameter of each nonzero row of x under
// τ-nice sampling of m rows (blocks of one row), normalised by its squared
// norm: 1 when the rows of a batch share no feature, m when they all
// share all of theirs. Benchmarks print it beside the passes.
func MeanESO(x *sparse.CSR, m int) (float64, error) {
	if err := x.Validate(); err != nil {
		return 0, fmt.Errorf("engine: %w", err)
	}
	if m < 1 || m > x.Rows {
		return 0, fmt.Errorf("engine: m = %d: must lie in [1, %d]", m, x.Rows)
	}
	beta := blocks.MiniBatchBeta(x.ColumnCounts(), x.Rows, m)
	var sum float64
	var rows int
	for k := 0; k < x.Rows; k++ {
		val, idx := x.Row(k)
		var v, r2 float64
		for p, j := range idx {
			a2 := val[p] * val[p]
			v += beta[j] * a2
			r2 += a2
		}
		if r2 > 0 {
			sum += v / r2
			rows++
		}
	}
	if rows == 0 {
		return 0, fmt.Errorf("engine: every row of the data is zero")
	}
	return sum / float64(rows), nil
}

// esoCouplings replaces the block norms Rᵢ in s.norms by the couplings
// ρᵢ = √(vᵢ/m) of the expected separable over-approximation (ESO) of
// Richtárik & Takáč for τ-nice sampling, as Quartz (Qu, Richtárik & Zhang
// 2015) uses it; vᵢ is esoParameters'. The steps are then Eq. 10, 12 and 15
// with Rᵢ → ρᵢ.
//
// Why they are safe. The paper's proof (Zhu & Storkey, Thm. 1) needs the
// matrix (17), [m/(2τᵗ)·I, −A_S; −A_Sᵀ, diag(1/(2σ))], to be positive
// semidefinite, that is, for every u and dual change h,
//
//	2⟨u, Σ_{i∈S} Aᵢᵀhᵢ⟩ ≤ (m/(2τᵗ))‖u‖² + Σ_{i∈S} ‖hᵢ‖²/(2σᵢ),
//
// which by Young's inequality follows from
//
//	(2τᵗ/m)‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ Σ_{i∈S} ‖hᵢ‖²/(2σᵢ).                  (*)
//
// The paper bounds the left side in the worst case, ‖Σ Aᵢᵀhᵢ‖² ≤
// (Σ Rᵢ‖hᵢ‖)², which every pair of overlapping rows can attain; hence
// τᵗσᵢ = 1/(4RᵢRᵗ_max) with σᵢ ∝ 1/(Rᵢ√m), τᵗ ∝ √m/Rᵗ_max. We keep (*) in
// expectation over the batch instead. The dual change h the proof uses is
// the prox step every block would take (Eq. 9 with the fixed σᵢ), known
// before S is drawn. Cauchy–Schwarz per coordinate gives
// ‖Σ_{i∈S} Aᵢᵀhᵢ‖² ≤ Σⱼ ωⱼ(S) Σ_{i∈S} (Aᵢᵀhᵢ)ⱼ², with ωⱼ(S) the sampled
// blocks that use feature j; and τᵗ ≤ τ(ρᵢ) for every i ∈ S, since τ falls
// with the batch's largest ρ. Given i ∈ S, the other m−1 blocks are a
// uniform draw from n_b−1, so E[ωⱼ(S) | i ∈ S] = βⱼ = 1 + (m−1)(ωⱼ−1)/(n_b−1)
// and
//
//	E[(2τᵗ/m)‖Σ_{i∈S} Aᵢᵀhᵢ‖²] ≤ (2/m)(m/n_b) Σᵢ τ(ρᵢ) vᵢ‖hᵢ‖²,
//
// while the right side of (*) has expectation (m/n_b) Σᵢ ‖hᵢ‖²/(2σᵢ). So
// (*) holds in expectation when 4τ(ρᵢ)σᵢvᵢ ≤ m for every block: with the
// paper's product τ(ρᵢ)σᵢ = 1/(4ρᵢ²), when ρᵢ² ≥ vᵢ/m. The extrapolation
// θᵗ = 1 − 1/(n_b/m + ρᵗ_max√((n_b/m)/(λγ))) is Eq. 15 with the same
// substitution, which keeps the paper's identities between σ, τ and θ:
// 1/(2τᵗλ) = ρᵗ_max√((n_b/m)/(λγ)) and (n_b/m)/(2σᵢγ) = 1/(2τ(ρᵢ)λ).
// The expectation is the one gap to the paper's argument, which uses (17)
// for every batch (its full version's proof is not in our copy); a step
// that breaks it still meets the driver's divergence guard.
//
// What it buys. vᵢ lies between Rᵢ² (no feature of block i in another
// block: βⱼ = 1) and m·Rᵢ² (every feature in every block), so ρᵢ lies
// between Rᵢ/√m and Rᵢ: the steps are never smaller than the paper's, equal
// at m = 1 (β = 1, ρᵢ = Rᵢ exactly) and on dense data, and for a batch of
// disjoint rows σᵢ is its m = 1 value and τ is m times its m = 1 value,
// which with the 1/m of Eq. 11 makes a batch worth m single steps.
func (s *solver) esoCouplings(ctx context.Context, threads int) error {
	v, err := esoParameters(ctx, s.x, s.part, s.set.m, threads)
	if err != nil {
		return err
	}
	m := float64(s.set.m)
	for b, rb := range s.norms {
		if rb == 0 {
			continue // an empty block: see the fix-up of zero norms
		}
		// q = vᵢ/Rᵢ² lies in [1, m]; clamping keeps rounding (and the
		// spectral norms' tolerance) from leaving that range.
		q := min(max(v[b]/(rb*rb), 1), m)
		s.norms[b] = rb * math.Sqrt(q/m)
	}
	return nil
}
