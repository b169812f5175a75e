package kernels

import "math"

// The lanes kernels serve W products at once over the same sparse rows: a
// dense vector holds W lanes interleaved, lane q of element j at j·W + q,
// so that one entry of a row reads its index and value once and then
// works on W adjacent values. W is 1, 2, 4 or 8.
//
// A lane's arithmetic is fixed, whatever W and the implementation: each
// step is one fused multiply-add (math.FMA, or the FMA instruction), and
// SparseDotLanes sums entry k of the row into the (k mod 4)'th of four
// partial sums, returning (s₀ + s₁) + (s₂ + s₃). Lane q of a W-lane call is
// therefore the same bits as the one-lane call on lane q's vector, which
// lets a caller share its sweeps with others without its results
// depending on the company.

// SparseDotLanes sets t[q] = Σ_k val[k]·v[idx[k]·W + q] for each of the
// W = len(t) lanes q.
//
// SparseDotLanes panics if len(val) != len(idx), if W is not 1, 2, 4 or
// 8, or if some idx[k] is outside [0, len(v)/W).
func SparseDotLanes(val []float64, idx []int32, v, t []float64) {
	sparseDotLanesFunc(val, idx, v, t)
}

// SparseAxpyLanes sets o[idx[k]·W + q] = val[k]·u[q] + o[idx[k]·W + q],
// in one rounding, for each entry k in order and each of the W = len(u)
// lanes q.
//
// SparseAxpyLanes panics if len(val) != len(idx), if W is not 1, 2, 4 or
// 8, or if some idx[k] is outside [0, len(o)/W), in which case the
// updates of a prefix of the entries may already have been applied.
func SparseAxpyLanes(u, val []float64, idx []int32, o []float64) {
	sparseAxpyLanesFunc(u, val, idx, o)
}

const errLanes = "kernels: the lanes are not 1, 2, 4 or 8"

// checkLanes panics unless val and idx have the same length and w is a
// lane count, and returns the bound on the indices, n/w.
func checkLanes(val []float64, idx []int32, w, n int) int {
	checkSparse(val, idx)
	if w != 1 && w != 2 && w != 4 && w != 8 {
		panic(errLanes)
	}
	return n / w
}

func sparseDotLanesGeneric(val []float64, idx []int32, v, t []float64) {
	w := len(t)
	rows := checkLanes(val, idx, w, len(v))
	var sets [4][8]float64 // entry k goes to sets[k mod 4]
	for k, j := range idx {
		if uint(j) >= uint(rows) {
			panic(indexError(idx, rows))
		}
		a, vj, acc := val[k], v[int(j)*w:int(j)*w+w], &sets[k&3]
		for q, x := range vj {
			acc[q] = math.FMA(a, x, acc[q])
		}
	}
	for q := range t {
		t[q] = (sets[0][q] + sets[1][q]) + (sets[2][q] + sets[3][q])
	}
}

func sparseAxpyLanesGeneric(u, val []float64, idx []int32, o []float64) {
	w := len(u)
	rows := checkLanes(val, idx, w, len(o))
	for k, j := range idx {
		if uint(j) >= uint(rows) {
			panic(indexError(idx, rows))
		}
		a, oj := val[k], o[int(j)*w:int(j)*w+w]
		for q, x := range u {
			oj[q] = math.FMA(a, x, oj[q])
		}
	}
}
