package kernels

// The pure-Go kernels below are the reference twins of the assembly kernels
// and the implementation used under the noasm build tag, on other
// architectures and with ADASPDC_KERNELS=generic. They are unrolled by four
// with four independent accumulators so that the floating-point additions of
// consecutive elements do not wait on each other; the sums are therefore
// associated differently from a plain left-to-right loop.
//
// The sparse kernels report an out-of-range index by returning ok == false
// instead of letting the runtime panic, so that every implementation fails
// with the same message (see panicIndex). Comparing uint(j) against
// uint(len(x)) rejects negative indices too, and lets the compiler drop its
// own bounds check on x[j].

// dotGeneric returns Σ x[i]*y[i] for i < len(x). It requires len(y) >= len(x).
func dotGeneric(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyGeneric sets y[i] += alpha*x[i] for i < len(x). It requires
// len(y) >= len(x).
func axpyGeneric(alpha float64, x, y []float64) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// sparseDotGeneric returns Σ val[k]*x[idx[k]], or ok == false if some index
// is outside [0, len(x)). It requires len(val) == len(idx).
func sparseDotGeneric(val []float64, idx []int32, x []float64) (sum float64, ok bool) {
	val = val[:len(idx)]
	n := uint(len(x))
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(idx); k += 4 {
		j0, j1, j2, j3 := uint(idx[k]), uint(idx[k+1]), uint(idx[k+2]), uint(idx[k+3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			return 0, false
		}
		s0 += val[k] * x[j0]
		s1 += val[k+1] * x[j1]
		s2 += val[k+2] * x[j2]
		s3 += val[k+3] * x[j3]
	}
	for ; k < len(idx); k++ {
		j := uint(idx[k])
		if j >= n {
			return 0, false
		}
		s0 += val[k] * x[j]
	}
	return (s0 + s1) + (s2 + s3), true
}

// sparseAxpyGeneric sets y[idx[k]] += alpha*val[k] in order of k. It stops
// and returns false at the first index outside [0, len(y)), leaving the
// updates of earlier entries in place. It requires len(val) == len(idx).
func sparseAxpyGeneric(alpha float64, val []float64, idx []int32, y []float64) (ok bool) {
	val = val[:len(idx)]
	n := uint(len(y))
	k := 0
	for ; k+4 <= len(idx); k += 4 {
		j0, j1, j2, j3 := uint(idx[k]), uint(idx[k+1]), uint(idx[k+2]), uint(idx[k+3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			return false
		}
		// Sequential read-modify-writes keep repeated indices correct.
		y[j0] += alpha * val[k]
		y[j1] += alpha * val[k+1]
		y[j2] += alpha * val[k+2]
		y[j3] += alpha * val[k+3]
	}
	for ; k < len(idx); k++ {
		j := uint(idx[k])
		if j >= n {
			return false
		}
		y[j] += alpha * val[k]
	}
	return true
}

// sparseDotAxpyGeneric returns Σ val[k]*x[idx[k]] and sets
// y[idx[k]] += alpha*val[k], in one pass. It returns ok == false at the first
// index outside [0, min(len(x), len(y))). x and y must not overlap.
func sparseDotAxpyGeneric(alpha float64, val []float64, idx []int32, x, y []float64) (sum float64, ok bool) {
	val = val[:len(idx)]
	n := uint(min(len(x), len(y)))
	x, y = x[:n], y[:n]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(idx); k += 4 {
		j0, j1, j2, j3 := uint(idx[k]), uint(idx[k+1]), uint(idx[k+2]), uint(idx[k+3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			return 0, false
		}
		v0, v1, v2, v3 := val[k], val[k+1], val[k+2], val[k+3]
		s0 += v0 * x[j0]
		s1 += v1 * x[j1]
		s2 += v2 * x[j2]
		s3 += v3 * x[j3]
		y[j0] += alpha * v0
		y[j1] += alpha * v1
		y[j2] += alpha * v2
		y[j3] += alpha * v3
	}
	for ; k < len(idx); k++ {
		j := uint(idx[k])
		if j >= n {
			return 0, false
		}
		s0 += val[k] * x[j]
		y[j] += alpha * val[k]
	}
	return (s0 + s1) + (s2 + s3), true
}
