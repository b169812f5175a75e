// Package pdprox is Yang et al.'s primal-dual prox method for losses with
// a bilinear dual (hinge, absolute, ε-insensitive, quantile) and the
// elastic net, pure L1 included, or the group lasso: an extra dual prox
// step (pdprox-dual), an extra primal variable (pdprox-primal), or the
// extra dual update without projection (pdprox-noproj, Chambolle–Pock with
// θ = 1). Its certificate is at the averaged iterates, the pair the
// paper's Theorem 6 bounds.
package pdprox
