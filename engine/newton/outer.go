package newton

import "github.com/adaspdc/adaspdc/kernels"

// addOuterUpper adds c·aaᵀ to the upper triangle (diagonal included) of h,
// a row-major d×d matrix, for the sparse row a = (val, idx), whose columns
// strictly ascend (a CSR invariant): h[i][j] += c·aᵢaⱼ for i ≤ j in a's
// pattern, m(m+1)/2 multiply-adds for m entries.
//
// Each row of the outer product is a scatter along idx. Rows of a few
// entries make the scatters short, so their loop overhead and the reloads
// of idx and val weigh as much as the adds; four rows of h at a time take
// one pass over the tail of idx, which is why the loop is blocked by four.
// A row of consecutive columns (dense data) takes contiguous axpys.
func addOuterUpper(h []float64, d int, c float64, val []float64, idx []int32) {
	m := len(idx)
	if m == 0 {
		return
	}
	val = val[:m]
	if int(idx[m-1]-idx[0]) == m-1 {
		j0 := int(idx[0])
		for p := range idx {
			j := j0 + p
			kernels.Axpy(c*val[p], val[p:], h[j*d+j:j*d+j0+m])
		}
		return
	}
	p := 0
	for ; p+4 <= m; p += 4 {
		j0, j1, j2, j3 := int(idx[p]), int(idx[p+1]), int(idx[p+2]), int(idx[p+3])
		v0, v1, v2, v3 := val[p], val[p+1], val[p+2], val[p+3]
		c0, c1, c2, c3 := c*v0, c*v1, c*v2, c*v3
		r0, r1, r2, r3 := h[j0*d:j0*d+d], h[j1*d:j1*d+d], h[j2*d:j2*d+d], h[j3*d:j3*d+d]
		// The 4×4 block's upper triangle, then the four rows' tails.
		r0[j0] += c0 * v0
		r0[j1] += c0 * v1
		r0[j2] += c0 * v2
		r0[j3] += c0 * v3
		r1[j1] += c1 * v1
		r1[j2] += c1 * v2
		r1[j3] += c1 * v3
		r2[j2] += c2 * v2
		r2[j3] += c2 * v3
		r3[j3] += c3 * v3
		iq, vq := idx[p+4:], val[p+4:]
		vq = vq[:len(iq)]
		for q, j := range iq {
			v := vq[q]
			r0[j] += c0 * v
			r1[j] += c1 * v
			r2[j] += c2 * v
			r3[j] += c3 * v
		}
	}
	for ; p < m; p++ {
		j := int(idx[p])
		cv, row := c*val[p], h[j*d:j*d+d]
		iq, vq := idx[p:], val[p:]
		vq = vq[:len(iq)]
		for q, jq := range iq {
			row[jq] += cv * vq[q]
		}
	}
}
