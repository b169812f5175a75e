package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// lanesNaive is the definition of lane q of SparseDotLanes: a plain
// sequential sum, with its magnitude for the tolerance.
func lanesNaive(val []float64, idx []int32, v []float64, w, q int) (sum, mag float64) {
	for k, j := range idx {
		p := val[k] * v[int(j)*w+q]
		sum += p
		mag += math.Abs(p)
	}
	return sum, mag
}

// TestSparseLanes checks every implementation's lanes kernels against the
// definitions, and, bit for bit, against one lane at a time: lane q of a
// W-lane call must be the one-lane call on lane q's own vector, which is
// what lets newton's runs share their sweeps without their iterates
// depending on the company.
func TestSparseLanes(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		rng := rand.New(rand.NewPCG(7, 0))
		for _, w := range []int{1, 2, 4, 8} {
			for _, n := range []int{0, 1, 2, 3, 8, 31} {
				const d = 40
				val, idx := make([]float64, n), make([]int32, n)
				randFloats(rng, val)
				for k := range idx {
					idx[k] = int32(rng.IntN(d))
				}
				v, o, u := make([]float64, d*w), make([]float64, d*w), make([]float64, w)
				randFloats(rng, v)
				randFloats(rng, o)
				randFloats(rng, u)
				got := make([]float64, w)
				im.sparseDotLanes(val, idx, v, got)
				after := append([]float64(nil), o...)
				im.sparseAxpyLanes(u, val, idx, after)
				for q := range w {
					want, mag := lanesNaive(val, idx, v, w, q)
					if !near(got[q], want, mag) {
						t.Errorf("w=%d n=%d lane %d: dot %v, want %v", w, n, q, got[q], want)
					}
					// One lane at a time, through the same implementation.
					vq, oq := make([]float64, d), make([]float64, d)
					for j := range d {
						vq[j], oq[j] = v[j*w+q], o[j*w+q]
					}
					one := make([]float64, 1)
					im.sparseDotLanes(val, idx, vq, one)
					im.sparseAxpyLanes(u[q:q+1], val, idx, oq)
					if math.Float64bits(one[0]) != math.Float64bits(got[q]) {
						t.Errorf("w=%d n=%d lane %d: dot %v alone, %v among %d lanes", w, n, q, one[0], got[q], w)
					}
					for j := range d {
						if math.Float64bits(oq[j]) != math.Float64bits(after[j*w+q]) {
							t.Fatalf("w=%d n=%d lane %d: element %d is %v alone, %v among %d lanes", w, n, q, j, oq[j], after[j*w+q], w)
						}
						want := o[j*w+q]
						for k, i := range idx {
							if int(i) == j {
								want += val[k] * u[q]
							}
						}
						if math.Abs(after[j*w+q]-want) > 1e-12*(1+math.Abs(want)) {
							t.Fatalf("w=%d n=%d lane %d: element %d is %v, want %v", w, n, q, j, after[j*w+q], want)
						}
					}
				}
				// The same bits as the pure-Go twin.
				twin := make([]float64, w)
				sparseDotLanesGeneric(val, idx, v, twin)
				twinAfter := append([]float64(nil), o...)
				sparseAxpyLanesGeneric(u, val, idx, twinAfter)
				for q := range w {
					if math.Float64bits(twin[q]) != math.Float64bits(got[q]) {
						t.Errorf("w=%d n=%d lane %d: %v, the twin %v", w, n, q, got[q], twin[q])
					}
				}
				for i := range after {
					if math.Float64bits(twinAfter[i]) != math.Float64bits(after[i]) {
						t.Fatalf("w=%d n=%d: axpy element %d is %v, the twin's %v", w, n, i, after[i], twinAfter[i])
					}
				}
			}
		}
	})
}

// TestSparseLanesRejects checks the panics on bad indices and lane counts,
// and that nothing past the bound is read or written.
func TestSparseLanesRejects(t *testing.T) {
	forEachImpl(t, func(t *testing.T, im impl) {
		for _, w := range []int{1, 2, 4, 8} {
			for _, bad := range []int32{-1, 3, 1 << 30} {
				// The backing array goes on past the 3 elements of o and v,
				// so a kernel that ignored the bound would not fault.
				back := make([]float64, 8*w)
				v := back[: 3*w+w-1 : 3*w+w-1] // 3 whole elements and a partial one
				val, idx := []float64{1, 2, 3}, []int32{0, 2, bad}
				for name, call := range map[string]func(){
					"dot":  func() { im.sparseDotLanes(val, idx, v, make([]float64, w)) },
					"axpy": func() { im.sparseAxpyLanes(make([]float64, w), val, idx, v) },
				} {
					msg := panicMessage(call)
					if !strings.Contains(msg, "out of range [0, 3)") {
						t.Errorf("w=%d %s with idx %d: panic %q, want an index out of [0, 3)", w, name, bad, msg)
					}
				}
			}
		}
		for _, w := range []int{0, 3, 16} {
			msg := panicMessage(func() { im.sparseDotLanes(nil, nil, make([]float64, 48), make([]float64, w)) })
			if msg != errLanes {
				t.Errorf("%d lanes: panic %q, want %q", w, msg, errLanes)
			}
		}
		if msg := panicMessage(func() { im.sparseAxpyLanes(make([]float64, 4), []float64{1}, nil, make([]float64, 8)) }); msg != errLength {
			t.Errorf("short idx: panic %q, want %q", msg, errLength)
		}
	})
}

func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}
