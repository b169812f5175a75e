// Package newton is the Newton-type family of primal methods: truncated
// Newton for a smooth loss with an L2 term (newton), whose steps do not
// depend on the features' scale: exact, by the Cholesky factor of the
// Jacobi-scaled Hessian where d is small enough to factor
// (choleskyPays), or, where the rows of tiny curvature cost most of
// forming it, conjugate gradients on the whole Hessian preconditioned by
// the factor of the part formed without them (dropShare); otherwise
// diagonally preconditioned conjugate-gradient steps; and newGLMNET for
// an L1 term (glmnet, Yuan, Ho & Lin 2012), whose quadratic models
// coordinate descent minimises over the features that shrinking keeps.
// Both read φ″ (objective.CurvedLoss), form the Hessian's data part as a
// d×d matrix where d is small
// (denseHessianPays), and sweep the rows on the driver's row sweep, whose
// margins and gradient their certificates reuse (objective.Evaluator's
// AtGradient).
//
// Runs on the same wide data, one-vs-rest's classes, can share their
// Hessian products and margins through a Products: each run goes on in its
// own goroutine and, where it would sweep the rows, waits until every run
// joined waits too; the last to arrive sweeps once for all of them on the
// Products' workers, their vectors interleaved (kernels' lanes), and wakes
// them. A run's arithmetic does not depend on its company, so its iterates
// are the same whichever runs shared its sweeps.
package newton
