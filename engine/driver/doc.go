// Package driver is the method contract of the engine: what a solver must
// provide (Method), the run that drives it (Run, and Solve around it), the
// registry of solvers, the settings of a run (Options), the trace and the
// result, the worker policy, and the row sweep that several families share.
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
package driver
