package newton

import "math"

// Gap Safe screening (Ndiaye, Fercoq, Gramfort and Salmon, "Gap safe
// screening rules for sparsity enforcing penalties", JMLR 2017), for
//
//	P(x) = (1/n) Σₖ φ(aₖᵀx) + l1‖x‖₁ + (λ/2)‖x‖²,
//	D(θ) = −(1/n) Σₖ φ*(θₖ) − g*(−v(θ)),   v(θ) = (1/n) Aᵀθ,
//
// g = l1‖·‖₁ + (λ/2)‖·‖², the certificate's pair (objective.Evaluator:
// θ = s·φ′(Ax), scaled by s ≤ 1 into the box |vⱼ| ≤ l1 when λ = 0, s = 1
// otherwise). φ being (1/γ)-smooth, φ* is γ-strongly convex
// (Loss.Gamma), so D is (γ/n)-strongly concave in θ, and at its maximiser
// θ* over dom D, D(θ*) − D(θ) ≥ (γ/2n)‖θ − θ*‖². With D(θ*) ≤ P(x), the
// gap G = P(x) − D(θ) bounds it: ‖θ − θ*‖ ≤ √(2nG/γ), the safe sphere of
// the paper's Theorem 6. At the optimum xⱼ* = soft(−vⱼ(θ*), l1)/λ for λ > 0
// and xⱼ* = 0 wherever |vⱼ(θ*)| < l1 for λ = 0 alike, and
//
//	|vⱼ(θ*)| ≤ |vⱼ(θ)| + (1/n)‖Aⱼ‖ ‖θ − θ*‖ ≤ |vⱼ(θ)| + ‖Aⱼ‖ √(2G/(γn)),
//
// so a feature with |vⱼ(θ)| + ‖Aⱼ‖√(2G/(γn)) < l1 is zero at every optimum
// (the rule of the paper's Eq. 10 in our scaling). It is kept at zero and
// left out of every later step's model and of the shrinking's
// violations. Its gradient is still computed by the sweep over rows,
// which cannot skip a column, so what screening saves is the first
// step's coordinate descent, before shrinking has seen a violation, and
// the violations' scan; on a regularisation path (-l1 auto), each
// point's first certificate, at the previous point's optimum, screens
// most of the features the point ends without.
//
// Only features at zero are screened, so that w, and the margins the
// sweep holds, stay as they are.
//
// With sample weights the loss of row k is wₖφ, whose conjugate
// wₖφ*(θ/wₖ) is (γ/wₖ)-strongly convex, so the gap bounds a weighted
// distance, Σₖ (θₖ − θₖ*)²/wₖ ≤ 2nG/γ, and by Cauchy–Schwarz
// |vⱼ(θ) − vⱼ(θ*)| ≤ ‖Aⱼ‖_w √(2G/(γn)) with ‖Aⱼ‖_w² = Σₖ wₖaₖⱼ²: the same
// rule with the weighted column norms (θₖ = wₖφ′(zₖ), the certificate's
// duals with weights).

// screen updates the screened features from the certificate's gap and
// the dual scale of the point the sweep computed lossGrad at.
func (s *glmnet) screen(gap, scale float64) {
	gamma := s.loss.Gamma()
	if s.noScreen || s.rowSums.Projected || !(gamma > 0) || !(gap >= 0) || math.IsInf(gap, 0) {
		return
	}
	if s.screened == nil {
		s.screened = make([]bool, s.d)
		s.colNorm = make([]float64, s.d)
		sw := s.prob.SampleWeights
		for j := range s.d {
			lo, hi := s.csc.Indptr[j], s.csc.Indptr[j+1]
			var sq float64
			for p, v := range s.csc.Values[lo:hi] {
				if sw != nil {
					sq += sw[s.csc.Indices[lo+int64(p)]] * v * v
				} else {
					sq += v * v
				}
			}
			s.colNorm[j] = math.Sqrt(sq)
		}
	}
	r := math.Sqrt(2 * gap / (gamma * float64(s.n)))
	l1 := s.reg.L1
	for j, v := range s.lossGrad {
		if !s.screened[j] && s.w[j] == 0 && math.Abs(scale*v)+s.colNorm[j]*r < l1 {
			s.screened[j] = true
			s.nScreened++
		}
	}
}
