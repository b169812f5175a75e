package kernels

// The pure-Go kernels below are the reference twins of the assembly kernels
// and the implementation used under the noasm build tag, on other
// architectures and with ADASPDC_KERNELS=generic. Each has the full contract
// of its exported function, checks included.
//
// They are unrolled by four with four independent accumulators so that the
// additions of consecutive elements do not wait on each other; the sums are
// therefore associated differently from a plain left-to-right loop.
//
// Each index is checked explicitly, with uint(j) >= uint(n), which rejects
// negative indices too and lets the compiler drop its own bounds check on
// x[j]; a bad index is reported with the same message as in the assembly
// implementations.

func dotGeneric(x, y []float64) float64 {
	checkDot(x, y)
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	// len(y) == len(x) throughout; testing both lets the compiler drop
	// the bounds checks.
	for len(x) >= 4 && len(y) >= 4 {
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		x, y = x[4:], y[4:]
	}
	y = y[:len(x)]
	for i := range x {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGeneric(alpha float64, x, y []float64) {
	checkAxpy(x, y)
	y = y[:len(x)]
	for len(x) >= 4 && len(y) >= 4 {
		y[0] += alpha * x[0]
		y[1] += alpha * x[1]
		y[2] += alpha * x[2]
		y[3] += alpha * x[3]
		x, y = x[4:], y[4:]
	}
	y = y[:len(x)]
	for i := range x {
		y[i] += alpha * x[i]
	}
}

func sparseDotGeneric(val []float64, idx []int32, x []float64) float64 {
	checkSparse(val, idx)
	all, n := idx, uint(len(x))
	var s0, s1, s2, s3 float64
	for len(idx) >= 4 && len(val) >= 4 {
		j0, j1, j2, j3 := uint(idx[0]), uint(idx[1]), uint(idx[2]), uint(idx[3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			panic(indexError(all, len(x)))
		}
		s0 += val[0] * x[j0]
		s1 += val[1] * x[j1]
		s2 += val[2] * x[j2]
		s3 += val[3] * x[j3]
		idx, val = idx[4:], val[4:]
	}
	val = val[:len(idx)]
	for k := range idx {
		j := uint(idx[k])
		if j >= n {
			panic(indexError(all, len(x)))
		}
		s0 += val[k] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

func sparseAxpyGeneric(alpha float64, val []float64, idx []int32, y []float64) {
	checkSparse(val, idx)
	all, n := idx, uint(len(y))
	for len(idx) >= 4 && len(val) >= 4 {
		j0, j1, j2, j3 := uint(idx[0]), uint(idx[1]), uint(idx[2]), uint(idx[3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			panic(indexError(all, len(y)))
		}
		// Sequential read-modify-writes keep repeated indices correct.
		y[j0] += alpha * val[0]
		y[j1] += alpha * val[1]
		y[j2] += alpha * val[2]
		y[j3] += alpha * val[3]
		idx, val = idx[4:], val[4:]
	}
	val = val[:len(idx)]
	for k := range idx {
		j := uint(idx[k])
		if j >= n {
			panic(indexError(all, len(y)))
		}
		y[j] += alpha * val[k]
	}
}

func sparseDotAxpyGeneric(alpha float64, val []float64, idx []int32, x, y []float64) float64 {
	m := checkDotAxpy(val, idx, x, y)
	x = x[:m]
	y = y[:len(x)]
	all, n := idx, uint(len(x))
	var s0, s1, s2, s3 float64
	for len(idx) >= 4 && len(val) >= 4 {
		j0, j1, j2, j3 := uint(idx[0]), uint(idx[1]), uint(idx[2]), uint(idx[3])
		if j0 >= n || j1 >= n || j2 >= n || j3 >= n {
			panic(indexError(all, m))
		}
		v0, v1, v2, v3 := val[0], val[1], val[2], val[3]
		s0 += v0 * x[j0]
		s1 += v1 * x[j1]
		s2 += v2 * x[j2]
		s3 += v3 * x[j3]
		y[j0] += alpha * v0
		y[j1] += alpha * v1
		y[j2] += alpha * v2
		y[j3] += alpha * v3
		idx, val = idx[4:], val[4:]
	}
	val = val[:len(idx)]
	for k := range idx {
		j := uint(idx[k])
		if j >= n {
			panic(indexError(all, m))
		}
		s0 += val[k] * x[j]
		y[j] += alpha * val[k]
	}
	return (s0 + s1) + (s2 + s3)
}
