package blocks

import "github.com/adaspdc/adaspdc/internal/hugepage"

// MiniBatchBeta returns βⱼ = 1 + (m−1)(ωⱼ−1)/(n−1) for columns with ωⱼ
// nonzeros among n samples, for batches of m samples drawn without
// replacement: the factor by which a batch's update of coordinate j can
// exceed one sample's, the expected separable over-approximation of
// Richtárik & Takáč that sets the batch methods' steps.
func MiniBatchBeta(colNNZ []int64, n, m int) []float64 {
	beta := hugepage.Make[float64](len(colNNZ))
	for j, w := range colNNZ {
		beta[j] = 1 + float64(m-1)*float64(max(w-1, 0))/float64(max(n-1, 1))
	}
	return beta
}
