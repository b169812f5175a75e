package wx

import (
	"math"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// The robust adaptation rule of Wang & Xiao 2017 (Algorithm 4, with the
// symbols the extraction lost restored as in /work/shared/papers/README.md),
// shared by Ada-BPD (wx_bpd.go), Ada-SPDC (wx_spdc.go) and ADF-SPDC
// (wx_dfspdc.go).
//
// The methods' steps depend on λ + Δ, where Δ = δμ²/n is the strong
// convexity that the data lend P beyond λ: δ is the strong convexity of
// each φₖ and μ² = λ_min(AᵀA). Δ is rarely known (μ is as hard to compute
// as a solve), so the rule estimates it from the observed convergence.
// Every period of T passes (T iterations for the batch methods) it
//
//  1. estimates ρ̂, the factor by which the duality gap fell over the
//     period: for the batch method the ratio of the gaps at the period's
//     ends, (P(t) − D(t))/(P(t−T) − D(t−T)); for the randomised methods,
//     whose gaps fluctuate, the least-squares fit of §3.1 over the T + 1
//     gaps G₀, …, G_T of the period,
//
//     log ρ̂₁ = Σₜ t·log(Gₜ/G₀) / Σₜ t²,   ρ̂ = ρ̂₁ᵀ,
//
//     where ρ̂₁ is the rate per pass;
//
//  2. compares it with ρ, the rate of the period after the last change:
//     if ρ̂ ≤ c̲ρ (c̲ = 0.95) it doubles Δ, and if ρ̂ ≥ c̄ρ (c̄ = 1.5) it
//     halves Δ, setting ρ := ρ̂ in both cases; otherwise Δ and ρ stay;
//
//  3. the method then recomputes σ, τ and θ from λ + Δ.
//
// The rule compares rates per period rather than per pass, as Algorithm 4
// does for the batch method: c̲ and c̄ are then tolerances on the progress
// of a whole period, which the noise of a randomised method's per-pass
// gaps cannot fake.
//
// Choices the paper leaves open (documented here, tested in
// wx_adapt_test.go):
//   - the initial ρ is the rate of the first period, which changes
//     nothing: from a cold start the gap first falls by orders of magnitude
//     (at x⁰ = 0 it holds g*(−u⁰) = ‖u⁰‖²/(2λ), 1e5 and more at
//     λ = 1e-4/n), which says where the run started, not how fast the
//     method converges, and taken as ρ it made every later period look
//     slow and halve Δ (measured on a9a);
//   - the initial Δ is wxInitialDelta, and Δ never exceeds the largest
//     strong convexity the data can give, R²/γ (stochastic) or
//     ‖A‖²/(nγ) (batch), where φ″ ≤ 1/γ;
//   - a period with a gap that is not a positive finite number, or with a
//     gap at the noise floor of the certificate (relative gap below
//     wxGapFloor), leaves Δ and ρ alone: its rate says nothing.
const (
	wxPeriod   = 10   // T, the paper's choice in its experiments
	wxShrink   = 0.95 // c̲
	wxGrow     = 1.5  // c̄
	wxGapFloor = 1e-13
)

// wxInitialDelta is the starting estimate of Δ = δμ²/n: λ itself, so that
// the first steps are those of the regularised problem with its strong
// convexity doubled, and at least 1e-6·cap, so that a tiny λ (1e-4/n) does
// not need dozens of doublings to reach the strong convexity of typical
// data (a9a and ijcnn1 with unit rows: passes= of `adaspdc train -data
// ../shared/data/a9a -normalize unit -solver adabpd -lambda 3e-9`, against
// the same run with the floor removed).
func wxInitialDelta(lam, cap float64) float64 {
	return math.Min(cap, math.Max(lam, 1e-6*cap))
}

// wxAdapter holds the state of the adaptation rule for one run.
type wxAdapter struct {
	period int     // T: gaps per period
	ls     bool    // least-squares fit (randomised methods) or end ratio (batch)
	delta  float64 // Δ
	cap    float64 // the largest Δ allowed
	rho    float64 // ρ, the reference rate per period
	gaps   []float64
	floor  bool // a gap of this period was at the noise floor
	// measured is set once the first period has given ρ.
	measured bool

	doublings, halvings int // counts, for the trace of a run and the tests
}

// newWXAdapter starts the rule with Δ = delta; ρ comes from the first
// period.
func newWXAdapter(delta, cap float64, leastSquares bool) *wxAdapter {
	return &wxAdapter{period: wxPeriod, ls: leastSquares, delta: delta, cap: cap, rho: 1}
}

// observe takes the certificate of the next pass (or batch iteration) and
// reports whether Δ changed; the first call records the gap the first period
// starts from. The certificates are objective's: Ada-SPDC's and ADF-SPDC's
// are those they certify with, Ada-BPD's an estimate at its running
// u = (1/n)Aᵀy (wxBPD.adaptGap) that steers Δ and is reported nowhere.
func (a *wxAdapter) observe(tp driver.TracePoint) bool {
	if !(tp.RelGap > wxGapFloor) {
		a.floor = true
	}
	a.gaps = append(a.gaps, tp.Gap)
	if len(a.gaps) < a.period+1 {
		return false
	}
	var rhoHat float64
	if a.ls {
		rhoHat = math.Pow(fitRate(a.gaps), float64(a.period))
	} else {
		rhoHat = a.gaps[a.period] / a.gaps[0]
	}
	skip := a.floor
	if !a.measured {
		// The first period only measures ρ.
		a.measured = true
		if !skip && rhoHat > 0 && !math.IsInf(rhoHat, 1) {
			a.rho = rhoHat
		}
		skip = true
	}
	// The next period starts from this period's last gap.
	last := a.gaps[a.period]
	a.gaps = append(a.gaps[:0], last)
	a.floor = !(tp.RelGap > wxGapFloor)
	if skip {
		return false
	}
	return a.decide(rhoHat)
}

// decide applies step 2 of the rule to an estimate ρ̂ of the rate per
// period and reports whether Δ changed. A ρ̂ that is not a positive finite
// number changes nothing.
func (a *wxAdapter) decide(rhoHat float64) bool {
	if !(rhoHat > 0) || math.IsInf(rhoHat, 1) {
		return false
	}
	switch {
	case rhoHat <= wxShrink*a.rho:
		if a.delta >= a.cap {
			a.rho = rhoHat
			return false
		}
		a.delta = math.Min(2*a.delta, a.cap)
		a.doublings++
	case rhoHat >= wxGrow*a.rho:
		a.delta /= 2
		a.halvings++
	default:
		return false
	}
	a.rho = rhoHat
	return true
}

// fitRate returns the rate per step ρ̂₁ of gaps G₀, …, G_T fitted by least
// squares through the first point (§3.1 of Wang & Xiao):
//
//	log ρ̂₁ = Σₜ₌₁ᵀ t·log(Gₜ/G₀) / Σₜ₌₁ᵀ t².
//
// It returns NaN when a gap is not a positive finite number or there are
// fewer than two gaps.
func fitRate(gaps []float64) float64 {
	if len(gaps) < 2 {
		return math.NaN()
	}
	g0 := gaps[0]
	if !(g0 > 0) || math.IsInf(g0, 1) {
		return math.NaN()
	}
	var num, den float64
	for t := 1; t < len(gaps); t++ {
		g := gaps[t]
		if !(g > 0) || math.IsInf(g, 1) {
			return math.NaN()
		}
		ft := float64(t)
		num += ft * math.Log(g/g0)
		den += ft * ft
	}
	return math.Exp(num / den)
}
