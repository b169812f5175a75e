// Package objective is the bottom layer of the engine: the regularized
// ERM problem
//
//	min_x P(x) = (1/n) Σₖ wₖ φ(aₖᵀx, bₖ) + g(x),
//
// its losses φ (Loss: value, derivative, conjugate φ*, the modulus γ of
// φ*'s strong convexity and the dual prox; CurvedLoss adds φ″), its
// regularizers g (Regularizer: value, conjugate, prox, strong convexity;
// ElasticNet with an optional centre and per-coordinate weights,
// GroupLasso), and the one certificate, Evaluator, with its pieces for
// rows spread over ranks (PartialAt, DualSum, Assemble) and the dual along
// a plane of points for a step search (DualPlane).
//
// # Duality
//
// For duals y, one per row, the Fenchel dual is
//
//	D(y) = −(1/n) Σₖ wₖ φ*(yₖ/wₖ, bₖ) − g*(−v),   v = (1/n) Σₖ yₖaₖ,
//
// and weak duality gives P(x) ≥ P* ≥ D(y) for every x and every feasible
// y, so P(x) − D(y) bounds the suboptimality of x. Every method of the
// engine reports this gap, computed by Evaluator: from the method's own
// duals, from the duals the optimality conditions pair with x,
// yₖ = wₖφ′(aₖᵀx), or from the better of the two. Where g* is an
// indicator (L1 or the group lasso without a ridge term) the dual point is
// scaled into its domain (DualScale). The losses are defined as in
// LIBLINEAR so that objectives compare: LIBLINEAR's C is 1/(nλ) for the
// logistic loss and the squared hinge, and 1/(2nλ) for the squared loss,
// which LIBLINEAR writes without the ½.
//
// # Numerical care
//
// The certificate sums with Neumaier's compensation (Sum) in fixed chunks
// of rows added in chunk order, and forms each vⱼ over the rows in order,
// carrying each product's and each addition's rounding error (AddProduct),
// by the worker that owns column j:
// P and D are often far smaller than their terms, and the result must not
// depend on the number of workers, since the driver's stopping decisions
// read it.
package objective
