package sdca

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

func init() {
	driver.RegisterMultinomial(&driver.MultinomialEntry{
		SolverInfo: driver.SolverInfo{
			Name:         SolverSDCA,
			Summary:      "multinomial SDCA: exact dual steps on a row's vector dual (entropy on the simplex plus a quadratic)",
			Losses:       "multinomial logistic",
			Regularizers: "L2 with λ > 0",
			Certified:    true,
		},
		Rank:  10,
		Start: StartSoftmax,
	})
}

// softmaxSDCA is Prox-SDCA (Shalev-Shwartz & Zhang) for the multinomial
// logistic loss, whose dual variable is a vector per row: Yₖ ∈ ℝᴷ with
// pₖ = Yₖ + e_{cₖ} in the simplex. With V = (1/n) Σₖ aₖYₖᵀ and the plain
// ridge g = (λ/2)‖W‖², the primal point is W = −V/λ, and the step on row k
// maximises the dual over Yₖ alone, exactly:
//
//	min_{p ∈ Δ}  Σⱼ pⱼ log pⱼ − zᵀp + (s/2)‖p − p⁰‖²,   s = wₖ‖aₖ‖²/(λn),
//
// with z = Wᵀaₖ and p⁰ the current pₖ (for a weighted row the dual is wₖ
// times that of the unweighted one, and the step is taken on the
// unweighted variable). The optimality conditions give, for a multiplier
// μ of Σ pⱼ = 1,
//
//	log pⱼ + s·pⱼ = zⱼ + s·p⁰ⱼ − 1 − μ,
//
// so each pⱼ is a monotone function of μ (a Lambert-W form, solved by
// Newton's method in log pⱼ), and μ is the root of the decreasing
// Σⱼ pⱼ(μ) − 1, bracketed by [max tⱼ − 1 − s, log Σⱼ exp tⱼ] and found by
// safeguarded Newton. The change then moves W by −(wₖ/(λn))·aₖ(p − p⁰)ᵀ.
// The epoch visits the rows in a fresh random order; the certificate is at
// W and the duals Y (objective.MultinomialEvaluator's AtDuals).
type softmaxSDCA struct {
	prob     objective.Multinomial
	lam      float64
	w        []float64 // W, feature-major
	y        []float64 // Y, row-major
	q        []float64 // ‖aₖ‖²
	perm     []int32
	rng      *rand.Rand
	eval     *objective.MultinomialEvaluator
	sampled  int64
	z, p0, t []float64 // scratch of K
	p        []float64
}

// StartSoftmax builds multinomial SDCA for prob at Y = 0 (W = 0).
func StartSoftmax(prob objective.Multinomial, opt driver.Options) (driver.Method, error) {
	if err := prob.Validate(); err != nil {
		return nil, err
	}
	if prob.Reg.L1 != 0 || !(prob.Reg.Lambda > 0) {
		return nil, fmt.Errorf("engine: %s on the multinomial loss takes the ridge λ > 0 alone (got λ = %g, l1 = %g)", SolverSDCA, prob.Reg.Lambda, prob.Reg.L1)
	}
	if opt.WarmStart != nil {
		return nil, fmt.Errorf("engine: %s on the multinomial loss takes no warm start", SolverSDCA)
	}
	n, K := prob.X.Rows, prob.K
	s := &softmaxSDCA{prob: prob, lam: prob.Reg.Lambda, w: make([]float64, prob.Dim()), y: make([]float64, n*K),
		q: prob.X.RowSquaredNorms(), perm: make([]int32, n), rng: rand.New(rand.NewPCG(opt.Seed, 0x5f7)),
		z: make([]float64, K), p0: make([]float64, K), t: make([]float64, K), p: make([]float64, K)}
	for k := range s.perm {
		s.perm[k] = int32(k)
	}
	work := float64(prob.X.NNZ()) * float64(K)
	s.eval = objective.NewMultinomialEvaluator(prob, driver.WorkersFor(opt.Threads, work, driver.CertifyMinNNZ, prob.X.Cols))
	return s, nil
}

// RunEpochs runs k epochs of n steps.
func (s *softmaxSDCA) RunEpochs(ctx context.Context, k int) (int, error) {
	for e := range k {
		if ctx.Err() != nil {
			return e, nil
		}
		s.rng.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
		for _, r := range s.perm {
			s.step(int(r))
		}
		s.sampled += int64(len(s.perm))
	}
	return k, nil
}

// step maximises the dual over row k's Yₖ (see the type's comment).
func (s *softmaxSDCA) step(k int) {
	p := s.prob
	K := p.K
	val, idx := p.X.Row(k)
	if len(idx) == 0 {
		return
	}
	wk := 1.0
	if p.Weights != nil {
		wk = p.Weights[k]
	}
	n := float64(p.X.Rows)
	sc := wk * s.q[k] / (s.lam * n)
	p.Margins(val, idx, s.w, s.z)
	c := p.Class[k]
	yk := s.y[k*K : k*K+K]
	for j := range K {
		s.p0[j] = yk[j] / wk
	}
	s.p0[c]++
	for j := range K {
		s.t[j] = s.z[j] + sc*s.p0[j] - 1
	}
	softmaxProx(s.t, sc, s.p)
	// Yₖ ← wₖ(p − e_c); W ← W − (wₖ/(λn)) aₖ (p − p⁰)ᵀ.
	f := -wk / (s.lam * n)
	for j := range K {
		s.z[j] = s.p[j] - s.p0[j] // the change, in z's scratch
		yk[j] = wk * s.p[j]
	}
	yk[c] -= wk
	for q, j := range idx {
		a := f * val[q]
		wj := s.w[int(j)*K : int(j)*K+K]
		for cc, d := range s.z {
			wj[cc] += a * d
		}
	}
}

// softmaxProx sets p to the minimiser over the simplex of
// Σ pⱼ log pⱼ − Σ (tⱼ + 1 − s·p⁰ⱼ)pⱼ + (s/2)‖p − p⁰‖², given t (see
// softmaxSDCA): log pⱼ + s·pⱼ = tⱼ − μ with Σ pⱼ = 1.
func softmaxProx(t []float64, s float64, p []float64) {
	tmax := math.Inf(-1)
	for _, v := range t {
		tmax = math.Max(tmax, v)
	}
	var lse float64
	for _, v := range t {
		lse += math.Exp(v - tmax)
	}
	hi := tmax + math.Log(lse) // Σ pⱼ ≤ 1 here
	lo := tmax - 1 - s         // the largest pⱼ ≥ 1 here
	mu := hi
	if s == 0 {
		for j, v := range t {
			p[j] = math.Exp(v - hi)
		}
		return
	}
	for range 100 {
		// pⱼ(μ): Newton on g(l) = l + s·eˡ − r, convex and increasing, from
		// a start above the root (l ≤ r, and l ≤ log(r/s) where r > 0), so
		// that the iterates fall monotonically to it.
		var sum, deriv float64
		for j, v := range t {
			r := v - mu
			x := r
			if r > 0 {
				x = math.Min(r, math.Log(r/s))
			}
			for range 60 {
				e := s * math.Exp(x)
				step := (x + e - r) / (1 + e)
				x -= step
				if math.Abs(step) <= 1e-15*math.Max(1, math.Abs(x)) {
					break
				}
			}
			pj := math.Exp(x)
			p[j] = pj
			sum += pj
			deriv += pj / (1 + s*pj) // −d(Σp)/dμ
		}
		f := sum - 1
		if math.Abs(f) <= 1e-14 {
			break
		}
		if f > 0 {
			lo = mu
		} else {
			hi = mu
		}
		next := mu + f/deriv
		if !(next > lo && next < hi) {
			next = 0.5 * (lo + hi)
		}
		if next == mu {
			break
		}
		mu = next
	}
	// The last rounding of Σ pⱼ, spread proportionally.
	var sum float64
	for _, v := range p {
		sum += v
	}
	for j := range p {
		p[j] /= sum
	}
}

// Certify returns the certificate at W and the duals Y.
func (s *softmaxSDCA) Certify() (driver.TracePoint, error) {
	c, err := s.eval.AtDuals(s.w, s.y)
	return driver.TracePointOf(c), err
}

func (s *softmaxSDCA) Point() []float64 { return s.w }
func (s *softmaxSDCA) Passes() float64  { return float64(s.sampled) / float64(s.prob.X.Rows) }
func (s *softmaxSDCA) Threads() int     { return 1 }
func (s *softmaxSDCA) DivergenceHint() string {
	return "SDCA's exact dual steps cannot diverge on finite data: check the data for huge values"
}
