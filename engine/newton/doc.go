// Package newton is the Newton-type family of primal methods: truncated
// Newton for a smooth loss with an L2 term (newton), whose steps do not
// depend on the features' scale: exact, by the Cholesky factor of the
// Jacobi-scaled Hessian where d is small enough to factor
// (choleskyPays), otherwise diagonally preconditioned conjugate-gradient
// steps; and newGLMNET for an L1 term (glmnet, Yuan, Ho & Lin
// 2012), whose quadratic models coordinate descent minimises over the
// features that shrinking keeps. Both read φ″ (objective.CurvedLoss), form
// the Hessian's data part as a d×d matrix where d is small
// (denseHessianPays), and sweep the rows on the driver's row sweep, whose
// margins and gradient their certificates reuse (objective.Evaluator's
// AtGradient).
package newton
