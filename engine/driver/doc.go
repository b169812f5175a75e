// Package driver is the method contract of the engine: what a solver must
// provide (Method), the run that drives it (Run, and Solve around it), the
// registry of solvers, the settings of a run (Options), the trace and the
// result, the worker policy, the row sweep that several families share, and
// that sweep over the ranks of a distributed run (WorldSweep).
//
// # The run
//
// A method owns its iterate, its workers and its bookkeeping; the driver
// owns the run. Run asks the method for a certificate, records it in the
// trace, keeps the best point, and decides whether to stop or how many
// epochs to run before the next certificate. A certificate costs about a
// third of an epoch, so Run certifies after every epoch while the run is
// young and then, once the gap's linear rate is known, about halfway to
// the predicted end (at most 8 epochs apart, CheckInterval); the schedule
// depends only on certificate values, which objective.Evaluator makes
// bit-identical across thread counts, so the schedule is too.
//
// The run stops when (P − D)/max(1, |P|) ≤ Tol (a negative Tol: never),
// when the primal reaches TargetPrimal, at MaxEpochs
// (zero: certify the start point only), at the time limit, when the context
// is cancelled, when the callback returns ErrStop, when a StopRule says so,
// or when the gap stalls (the geometric mean of the last StallEpochs
// epochs' gaps less than 1% below the window before). The divergence guard
// ends it with an error that says what to change when a certificate is not
// finite, or when five certificates in a row have a gap a thousandfold
// above the best one (gaps within 1e-12·|P| of zero count as that floor,
// the rounding of P − D) or a primal a thousandfold above the first
// certificate's. A method whose step can no longer move the point in
// float64 returns ErrCannotMove: at a gap within the rounding of P that is
// convergence (Stop "optimal"), above it an error. A run that ends in an
// error after its first certificate returns the model of its best
// certificate beside the error (Result.ModelPoint).
//
// Workers that panic (a bug in a user's Loss, say) do not take the process
// down: sched's pool recovers the panic, breaks the barrier so that the
// other workers unwind, and the run returns the panic as an error.
//
// # The registry
//
// Each family registers its solvers from init (Register): a SolverInfo for
// the listing and for what the solver declares it takes (importance
// sampling, stage warm starts), a Rank that orders the listing, an Accepts
// function that refuses, with the reason, the problems and options it
// cannot take, and a Start function that builds the method. Options.
// Validate checks what no data could make valid; Accepts checks the rest,
// in the family that knows why.
//
// # Workers
//
// Options.Threads (GOMAXPROCS when ≤ 0) bounds every phase, and each phase
// gets one worker per unit of work that pays for a goroutine (WorkersFor):
// MinBatchWork nonzeros of a batch for a batch method, SweepMinNNZ
// nonzeros for a sweep over all rows (SweepWorkers), CertifyMinNNZ for a
// certificate. No method reads runtime.GOMAXPROCS itself.
//
// # Over the ranks
//
// A distributed run spreads the rows over the ranks of a comm.Comm; every
// rank holds the whole iterate (d weights) and its own rows. Every sum over
// rows the engine makes, Σₖ f(aₖ, bₖ, x) for a vector or a scalar f, is a
// sum over the ranks of the ranks' sums, so a method that takes its
// decisions from such sums alone is the one-process method over the ranks.
// WorldSweep is that layer: a RowSweep over the rank's rows whose sweeps
// end with one allreduce (World.Sum) of what they summed, the vector outs
// and the rank's scalars packed into one buffer (the loss and the gradient
// in d + a few values; a Hessian-vector product in d), followed by two
// stop flags. The post phase of RunThen/RunSum then runs on the summed
// values. A sweep that sums nothing (per-row outputs such as the margins
// Ax) stays on the rank. With a nil World the sweep is the RowSweep, call
// for call and bit for bit, so one-process methods do not change.
//
// Why every rank takes the same decisions: comm's AllreduceSum returns the
// same bits on every rank, so after a sweep every rank holds the same
// gradient, the same scalars, the same Hv. Everything a method does
// between sweeps (CG's vector updates and dot products, a line search's
// tests, a trust region's ratio, the driver's stopping rules) reads only
// those values and the iterate, which is then the same on every rank by
// induction, provided the arithmetic does not depend on the rank: where a
// method splits coordinates over its workers and adds per-range partial
// results, the ranges must not follow the rank's worker count (which
// follows its nonzeros). Over several ranks a WorldSweep therefore calls
// post on WorldRanges ranges, the same on every rank, and Ranges says how
// many; a per-range result added in range order is the same bits
// everywhere. The ranks' kernels must round alike (the same binary on
// hosts with the same instruction sets).
//
// What is allreduced, and when: each sweep's sums, once, when the sweep
// ends; a method's setup may agree on global counts (rows, nonzeros) in
// one more. A symmetric matrix summed over rows (a Hessian on narrow
// data) travels as its upper triangle, d(d+1)/2 values (World.SumUpper).
// The certificate needs no collective of its own where the method's sweep
// already summed the loss, the conjugates and the gradient: the paired
// duals' certificate is objective.AssemblePaired of those sums, the same
// arithmetic as Evaluator.AtGradient. Otherwise each rank's
// Evaluator.PartialAt and DualSum travel in one allreduce to
// objective.Assemble. The number of collectives is thus the number of the
// method's sweeps, whatever the number of ranks; the iterates are one
// process's up to the order of summation, which is why a second-order
// method pays over the ranks where a method of local updates (CoCoA+,
// whose rounds grow with the ranks) does not.
//
// Time limits and cancellation: each rank's own context (its time limit,
// its cancellation) only sets its flags in the next collective; the first
// collective in which some rank's flag is set cancels, on every rank, the
// context the ranks agree on (JoinWorld), which is the one the driver
// reads. The ranks agree on the problem (columns, rows, classes, the
// regularizer) with AgreeProblem before the method starts; an error that
// every rank finds in the same collective is an AgreedError and needs no
// abort, any other aborts the world (comm.Comm.Abort).
package driver
