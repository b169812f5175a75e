// Package sdca is the stochastic dual coordinate ascent family: Prox-SDCA
// (Shalev-Shwartz & Zhang) one sample at a time or in mini-batches with
// ESO steps (sdca), asynchronous SDCA on shared memory in the style of
// PASSCoDe (sdca-async, sdca-async-wild), CoCoA+ on thread-private
// replicas merged once per epoch (cocoa), asynchronous SPDC, whose primal
// is SDCA's state in closed form (spdc-async), and dual-free SDCA (dfsdca).
//
// They share sdcaCore: the duals y, the running v = (1/n) Σₖ yₖaₖ, the
// primal point ∇g*(−v), the per-sample steps and the certificate, which
// reads the running v between exact recomputations (objective.Evaluator's
// AtDualVector) and recomputes it (the Evaluator's DualSum) before any
// stop, or, in sdca-async's atomic mode, which bounds the rounding of
// every addition into v, certifies with the running v and that bound
// (the Evaluator's AtDualVectorWithin).
//
// Concurrency. sdca's mini-batches and cocoa's epochs run on a pool whose
// workers meet at every batch or merge; sdca-async's workers meet only at
// the end of an epoch and share v through atomic loads, adds and
// compare-and-swaps, each keeping its changes to the frequent leading
// columns in a private buffer that it adds into v every few thousand
// steps, so that those columns' cache lines do not move between the cores
// at every step.
package sdca
