package objective

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCurvedTermsMethods checks that CurvedTerms gives, for the losses it
// does not share an exponential for, exactly what the loss's own methods
// give: the squared hinge's concrete calls, and the squared loss's calls
// through the interface, on both sides of the hinge and at it.
func TestCurvedTermsMethods(t *testing.T) {
	for _, loss := range []CurvedLoss{SquaredHinge{}, Squared{}} {
		for _, b := range []float64{1, -1, 0.5} {
			for _, z := range []float64{-3, -1, 0, 0.25, 1, 1.5, 2, 1e9} {
				val, d1, d2, conj := CurvedTerms(loss, z, b)
				w1 := loss.Deriv(z, b)
				want := [4]float64{loss.Value(z, b), w1, loss.Deriv2(z, b), loss.Conj(w1, b)}
				if got := [4]float64{val, d1, d2, conj}; got != want {
					t.Errorf("%s, b = %g, z = %g: %v, want %v", loss.Name(), b, z, got, want)
				}
			}
		}
	}
}

// TestSlopeSum checks SlopeSum against the plain loop through the
// interface, bit for bit, for the losses it matches and one it does not,
// with and without weights and with zero entries of dz skipped, and with
// the squared hinge's rows all inactive at α = 0 (a sum of zeros, +0).
func TestSlopeSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200
	z, dz, b, w := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for k := range n {
		z[k], dz[k], b[k], w[k] = 3*rng.NormFloat64(), rng.NormFloat64(), 1, 0.5+rng.Float64()
		if k%3 == 0 {
			b[k] = -1
		}
		if k%7 == 0 {
			dz[k] = 0
		}
	}
	inactive := make([]float64, n)
	for k := range inactive {
		inactive[k] = b[k] * (2 + rng.Float64()) // b·z ≥ 2
	}
	for _, loss := range []Loss{Logistic{}, SquaredHinge{}, SmoothHinge{}} {
		for _, weights := range [][]float64{nil, w} {
			for _, alpha := range []float64{0, 0.5, 1, 2.25} {
				z := z
				if alpha == 0 && loss.Name() == "sqhinge" {
					z = inactive
				}
				var want float64
				for k, dk := range dz {
					if dk != 0 {
						wk := 1.0
						if weights != nil {
							wk = weights[k]
						}
						want += wk * loss.Deriv(z[k]+alpha*dk, b[k]) * dk
					}
				}
				if got := SlopeSum(loss, z, dz, b, weights, alpha); got != want || math.Signbit(got) != math.Signbit(want) || math.IsNaN(got) {
					t.Errorf("%s, weights %v, α = %g: %.17g, want %.17g", loss.Name(), weights != nil, alpha, got, want)
				}
			}
		}
	}
}

// TestCurvedTermsAtZero checks the logistic loss's terms at z = 0 and
// z = −0, taken from a table, against the computed ones, bit for bit.
func TestCurvedTermsAtZero(t *testing.T) {
	for _, b := range []float64{1, -1} {
		for _, z := range []float64{0, math.Copysign(0, -1)} {
			val, d1, d2, conj := CurvedTerms(Logistic{}, z, b)
			w0, w1, w2, w3 := logisticTerms(z, b)
			if [4]float64{val, d1, d2, conj} != [4]float64{w0, w1, w2, w3} || math.Signbit(d1) != math.Signbit(w1) {
				t.Errorf("b = %g, z = %g: %v, computed %v", b, z, [4]float64{val, d1, d2, conj}, [4]float64{w0, w1, w2, w3})
			}
		}
	}
}

// TestCurvedTermsBlock checks CurvedTermsBlock against CurvedTerms row by
// row, bit for bit, for the logistic loss (labels ±1 and others, margins
// 0 and −0, small, large, beyond the exponential's fast range, NaN) and
// for losses it takes row by row, on blocks of lengths that leave the
// kernels' masked tails.
func TestCurvedTermsBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	special := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 40, -40, 800, -800, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, loss := range []CurvedLoss{Logistic{}, SquaredHinge{}, Squared{}, SmoothHinge{}} {
		for _, n := range []int{0, 1, 7, 8, 9, 130} {
			z, b := make([]float64, n), make([]float64, n)
			for k := range z {
				z[k], b[k] = 4*rng.NormFloat64(), 1
				switch k % 5 {
				case 1:
					b[k] = -1
				case 3:
					z[k] = special[rng.IntN(len(special))]
				case 4:
					if k%10 == 4 {
						b[k] = 0.5 // not ±1: the logistic's row-by-row path
					}
				}
			}
			out := make([][]float64, 4)
			for i := range out {
				out[i] = make([]float64, n)
			}
			CurvedTermsBlock(loss, z, b, out[0], out[1], out[2], out[3])
			for k := range z {
				w0, w1, w2, w3 := CurvedTerms(loss, z[k], b[k])
				for i, want := range []float64{w0, w1, w2, w3} {
					if got := out[i][k]; math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Fatalf("%s, n = %d, z = %v, b = %v: term %d = %v, CurvedTerms %v", loss.Name(), n, z[k], b[k], i, got, want)
					}
				}
			}
		}
	}
}

// TestProjects checks Projects against DualFeasible row by row: false on
// paired duals φ′(z) of every loss it matches, true where one lies
// outside the dual domain (a logistic y beyond its label's side, a squared
// hinge's of the wrong sign) or is NaN.
func TestProjects(t *testing.T) {
	for _, loss := range []Loss{Logistic{}, SquaredHinge{}, SmoothHinge{}} {
		b := []float64{1, -1, 1, -1, 1}
		y := make([]float64, len(b))
		for k, z := range []float64{-2, 0.5, 3, -0.25, 0} {
			y[k] = loss.Deriv(z, b[k])
		}
		if Projects(loss, y, b) {
			t.Errorf("%s: paired duals %v reported outside the domain", loss.Name(), y)
		}
		for _, bad := range []float64{-0.5, math.NaN()} {
			y2 := append([]float64(nil), y...)
			y2[3] = bad // label −1: its dual is ≥ 0
			if !Projects(loss, y2, b) {
				t.Errorf("%s: y = %v for b = −1 not reported", loss.Name(), bad)
			}
		}
	}
}

// TestValuesAlong checks ValuesAlong against CurvedTerms' value for the
// logistic loss (labels ±1 and others, margins reaching 0, large, NaN)
// and against Value for a loss without the block path, bit for bit, at
// several step lengths, on blocks that leave the kernels' tails.
func TestValuesAlong(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, loss := range []Loss{Logistic{}, SquaredHinge{}} {
		for _, n := range []int{0, 5, 128, 300} {
			z, dz, b, out := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			for k := range z {
				z[k], dz[k], b[k] = 5*rng.NormFloat64(), rng.NormFloat64(), 1
				switch k % 7 {
				case 1:
					b[k] = -1
				case 2:
					z[k], dz[k] = 0.5, -0.25 // z + 2·dz = 0
				case 3:
					z[k] = 800
				case 4:
					z[k] = math.NaN()
				case 5:
					b[k] = 0.5
				}
			}
			for _, beta := range []float64{0, 0.5, 2} {
				ValuesAlong(loss, z, dz, b, beta, out)
				for k := range z {
					zk := z[k] + beta*dz[k]
					want := loss.Value(zk, b[k])
					if c, ok := loss.(CurvedLoss); ok && (b[k] == 1 || b[k] == -1) {
						want, _, _, _ = CurvedTerms(c, zk, b[k])
					}
					if math.Float64bits(out[k]) != math.Float64bits(want) && !(math.IsNaN(out[k]) && math.IsNaN(want)) {
						t.Fatalf("%s, β = %g, z = %v, dz = %v, b = %v: %v, want %v", loss.Name(), beta, z[k], dz[k], b[k], out[k], want)
					}
				}
			}
		}
	}
}
