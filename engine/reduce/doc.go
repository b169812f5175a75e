// Package reduce holds the reductions of Allen-Zhu & Hazan: AdaptReg adds
// a shrinking strongly convex term centred at the last stage's point,
// AdaptSmooth smooths a non-smooth loss by a shrinking amount, and
// JointAdapt does both, so that any solver for strongly convex, smooth
// problems (the inner solver, from the registry) solves the original one.
// Each stage starts where the last ended (SolverInfo.StageWarmStart), and
// every certificate is the original problem's, at the better of the inner
// duals and the duals paired with x.
package reduce
