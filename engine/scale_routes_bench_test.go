package engine

// The routes to steps that do not depend on feature scale (issue 9, §1)
// that were measured against the Newton method and lost: a diagonal change
// of variables under SPDC and under SAGA. Run
//
//	go test ./engine -run '^$' -bench BenchmarkScaleRoutes -benchtime 1x -v
//
// for the table in bench/README.md ("Steps that do not depend on feature
// scale"); it takes about a minute.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// routeSPDC runs serial SPDC (m = 1, Zhang & Xiao's steps with per-sample
// σₖ) on the problem in the variables zⱼ = sⱼxⱼ: the columns divided by sⱼ
// and the L2 weight of zⱼ divided by sⱼ², the same problem. λ_eff =
// lamEffMul·λ stands for the strong convexity in the steps. It returns the
// epochs to a relative gap of 1e-9 (negative: the gap passed 1e12, i.e.
// diverged) and the last relative gap, checking every 10 epochs.
func routeSPDC(prob Problem, s []float64, lamEffMul float64, epochs int, perSample bool) (int, float64) {
	X := prob.X
	n, d := X.Rows, X.Cols
	lam := prob.Reg.StrongConvexity()
	gam := prob.Loss.Gamma()
	rn := make([]float64, n)
	R := 0.0
	for k := 0; k < n; k++ {
		val, idx := X.Row(k)
		var q float64
		for p := range val {
			v := val[p] / s[idx[p]]
			q += v * v
		}
		rn[k] = math.Sqrt(q)
		R = max(R, rn[k])
	}
	lamEff := lam * lamEffMul
	tau := 1 / (2 * R) * math.Sqrt(gam/(float64(n)*lamEff))
	theta := 1 - 1/(float64(n)+2*R*math.Sqrt(float64(n)/(lamEff*gam)))
	z := make([]float64, d)
	zb := make([]float64, d)
	u := make([]float64, d)
	gk := make([]float64, d)
	y := make([]float64, n)
	for k := range y {
		y[k] = prob.Loss.DualStart(prob.B[k])
		val, idx := X.Row(k)
		for p := range val {
			u[idx[p]] += y[k] * val[p] / s[idx[p]] / float64(n)
		}
	}
	lj := routeWeights(lam, s)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, d)
	for ep := 1; ep <= epochs; ep++ {
		for it := 0; it < n; it++ {
			k := rng.IntN(n)
			val, idx := X.Row(k)
			var zk float64
			for p := range val {
				zk += val[p] / s[idx[p]] * zb[idx[p]]
			}
			sig := 1 / (2 * R) * math.Sqrt(float64(n)*lamEff/gam)
			if perSample {
				sig = 1 / (2 * rn[k]) * math.Sqrt(float64(n)*lamEff/gam)
			}
			yn := prob.Loss.DualProx(y[k], zk, sig, prob.B[k])
			dy := yn - y[k]
			y[k] = yn
			for p := range val {
				gk[idx[p]] += dy * val[p] / s[idx[p]]
			}
			for j := 0; j < d; j++ {
				g := u[j] + gk[j]
				zn := (z[j] - tau*g) / (1 + tau*lj[j])
				zb[j] = zn + theta*(zn-z[j])
				z[j] = zn
			}
			for p := range val {
				gk[idx[p]] = 0
				u[idx[p]] += dy * val[p] / s[idx[p]] / float64(n)
			}
		}
		if done, res, gap := routeCheck(prob, z, s, x, ep, epochs); done {
			return res, gap
		}
	}
	return epochs, 0
}

// routeColumnScale returns sⱼ: 1 ("none"), the root mean square ("rms")
// or the largest |aₖⱼ| ("max") of column j.
func routeColumnScale(X *sparse.CSR, kind string) []float64 {
	s := make([]float64, X.Cols)
	if kind == "none" {
		for j := range s {
			s[j] = 1
		}
		return s
	}
	for p, j := range X.Indices {
		v := X.Values[p]
		if kind == "max" {
			s[j] = max(s[j], math.Abs(v))
		} else {
			s[j] += v * v
		}
	}
	for j := range s {
		if kind != "max" {
			s[j] = math.Sqrt(s[j] / float64(X.Rows))
		}
		if s[j] == 0 {
			s[j] = 1
		}
	}
	return s
}

func routeSets() []string { return []string{"australian", "breast-cancer", "a9a5"} }

// routeLoad loads one of issue 9's raw data sets; a9a5 is a9a with
// feature 5 multiplied by 1000.

func routeLoad(t testing.TB, name string) (*sparse.CSR, []float64) {
	if name == "a9a5" {
		X, B := sharedData(t, "a9a")
		for p, j := range X.Indices {
			if j == 4 {
				X.Values[p] *= 1000
			}
		}
		return X, B
	}
	return sharedData(t, name)
}

// routeSAGA runs serial SAGA (dense updates) on the same change of
// variables with step 1/(stepDiv·L), L = maxₖ ‖aₖ/s‖²/γ; it returns what
// routeSPDC does.
func routeSAGA(prob Problem, s []float64, stepDiv float64, epochs int) (int, float64) {
	X := prob.X
	n, d := X.Rows, X.Cols
	lam := prob.Reg.StrongConvexity()
	L := 0.0
	for k := 0; k < n; k++ {
		val, idx := X.Row(k)
		var q float64
		for p := range val {
			v := val[p] / s[idx[p]]
			q += v * v
		}
		L = max(L, q/prob.Loss.Gamma())
	}
	eta := 1 / (stepDiv * L)
	z := make([]float64, d)
	gbar := make([]float64, d)
	alpha := make([]float64, n) // stored φ'
	for k := range alpha {
		alpha[k] = prob.Loss.Deriv(0, prob.B[k])
		val, idx := X.Row(k)
		for p := range val {
			gbar[idx[p]] += alpha[k] * val[p] / s[idx[p]] / float64(n)
		}
	}
	lj := routeWeights(lam, s)
	gk := make([]float64, d)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, d)
	for ep := 1; ep <= epochs; ep++ {
		for it := 0; it < n; it++ {
			k := rng.IntN(n)
			val, idx := X.Row(k)
			var zk float64
			for p := range val {
				zk += val[p] / s[idx[p]] * z[idx[p]]
			}
			a := prob.Loss.Deriv(zk, prob.B[k])
			da := a - alpha[k]
			alpha[k] = a
			for p := range val {
				gk[idx[p]] += da * val[p] / s[idx[p]]
			}
			for j := 0; j < d; j++ {
				z[j] = (z[j] - eta*(gk[j]+gbar[j])) / (1 + eta*lj[j])
			}
			for p := range val {
				gk[idx[p]] = 0
				gbar[idx[p]] += da * val[p] / s[idx[p]] / float64(n)
			}
		}
		if done, res, gap := routeCheck(prob, z, s, x, ep, epochs); done {
			return res, gap
		}
	}
	return epochs, 0
}

func BenchmarkScaleRoutes(b *testing.B) {
	for range b.N {
		for _, name := range routeSets() {
			x, y := routeLoad(b, name)
			for _, loss := range []Loss{Logistic{}, SquaredHinge{}} {
				prob := Problem{X: x, B: y, Loss: loss, Reg: ElasticNet{Lambda: 1e-4}}
				for _, kind := range []string{"none", "rms", "max"} {
					for _, mul := range []float64{1, 1e-2} {
						ep, g := routeSPDC(prob, routeColumnScale(x, kind), mul, 300, true)
						b.Logf("%s %s SPDC scale=%s λ_eff=%gλ: epochs %d, rel gap %.2e", name, loss.Name(), kind, mul, ep, g)
					}
					if kind == "none" {
						continue
					}
					for _, div := range []float64{3, 1} {
						ep, g := routeSAGA(prob, routeColumnScale(x, kind), div, 300)
						b.Logf("%s %s SAGA scale=%s step 1/(%gL): epochs %d, rel gap %.2e", name, loss.Name(), kind, div, ep, g)
					}
				}
			}
		}
	}
}

// routeCheck certifies x = z/s every 10 epochs and at the last; done
// reports whether the run ends, with routeSPDC's result.
func routeCheck(prob Problem, z, s, x []float64, ep, epochs int) (done bool, res int, gap float64) {
	if ep%10 != 0 && ep != epochs {
		return false, 0, 0
	}
	for j := range x {
		x[j] = z[j] / s[j]
	}
	tp, _ := Certify(prob, x)
	switch {
	case tp.RelGap < 1e-9:
		return true, ep, tp.RelGap
	case math.IsNaN(tp.RelGap) || tp.RelGap > 1e12:
		return true, -ep, tp.RelGap
	case ep == epochs:
		return true, ep, tp.RelGap
	}
	return false, 0, 0
}

// routeWeights returns λ/sⱼ², the L2 weight of zⱼ = sⱼxⱼ.
func routeWeights(lam float64, s []float64) []float64 {
	lj := make([]float64, len(s))
	for j := range lj {
		lj[j] = lam / (s[j] * s[j])
	}
	return lj
}
