// Package sched is the concurrency substrate of the AdaSPDC engine: a
// persistent worker pool, a spinning barrier, and the coordinate-ownership
// reducer that merges the workers' Aᵀ·Δy contributions into the primal.
//
// # Concurrency model
//
// A Pool starts its workers once (under an errgroup) and runs one phase at a
// time: Run(fn) calls fn(w) on every worker, worker 0 being the caller, and
// returns when all are done (see Hand-offs for how the workers wait). The engine runs a whole epoch as one phase; its
// workers meet at a Barrier twice per iteration, between the read phase
// (margins and dual steps) and the update phase (the reduction and the
// primal step). Barrier.Wait spins on an atomic generation counter, yielding
// now and then, and parks on a condition variable only when the wait gets
// long, so that the common case costs a few hundred nanoseconds and an
// oversubscribed machine does not burn a core per waiting worker.
//
// # Hand-offs
//
// Between phases the workers spin on the pool's phase counter, yielding
// every 256 polls, and park on a channel only after PoolSpin (1 ms); the
// caller waits for the end of a phase the same way. A parking party sets a
// flag and re-reads the counter before it blocks, and the other side reads
// the flag after it moves the counter, so with sequentially consistent
// atomics one of them always sees the other and no wake-up is lost. Spinning
// matters most for Newton's method, which runs a short phase per Hessian
// product and does serial vector work in between: on the 2-core
// development VM a parked worker started 0.14 to 1.3 ms after Run handed it
// a phase that took about 1 ms, so two threads were no faster than one on
// news20 (a whole Newton run: 100 ms either way, in-process). Spinning, the
// worker starts within microseconds, and the run took 86–93 ms on two
// threads against 103–127 ms on one (same test, three runs each, not kept).
//
// # The batch loop
//
// BatchLoop runs a mini-batch method's iterations: k epochs of a fixed
// number of iterations in one pool phase, the batches double-buffered in
// two slots (worker 0 draws the next batch while the workers read the
// current one), a barrier after the read phase and one after the update
// phase, block claims handed out by guided self-scheduling (Claims, its
// counter on a cache line of its own), and the context polled every 256
// iterations. The method supplies three phases (Iteration: Read, Update,
// Settle) and never touches a barrier or a claim counter. With one worker
// the barriers are skipped, and the loop runs on the caller alone
// (Pool.RunCaller): the other threads are not woken to return at once and
// then spin out PoolSpin beside it, which takes time from the one worker
// on a host whose other cores are busy. Nothing in the loop grows with the thread
// count: one shared counter that claims write (once per claim, not per
// block) and two barrier rounds per iteration.
//
// # Panics
//
// Every worker's call, worker 0's included, runs under a deferred recover,
// so a panic neither kills the process (workers 1..n−1 run on goroutines of
// their own) nor escapes Run on worker 0. Run waits for every worker to
// return and then reports the first panic as a *PanicError: the worker, the
// value and the stack; errors.Is and errors.As see the value when it is an
// error. A worker that panics leaves the others waiting at a barrier for a
// party that will never arrive, so the pool breaks the barriers registered
// with Pool.BreakOnPanic: their waiters, and every later Wait until the
// barrier is reset, panic with ErrBroken and unwind. Run does not count
// those panics as the cause. Before the next phase, Run re-arms the
// registered barriers (Barrier.Reset), so the pool and its barriers stay
// usable and Close still returns nil. A barrier that is not registered is
// not broken, and its waiters still wait forever.
// Breaking adds no memory access to a Wait with two or more parties: the
// broken flag is the low bit of the generation counter that Wait loads and
// polls anyway.
//
// # The reducer
//
// Every iteration must form u = Σₖ∈batch Δyₖ aₖ and apply it to the
// coordinates it touches. Owners cuts the coordinates into one contiguous
// range per worker, balanced by column nonzero counts; every worker walks the
// whole batch in a fixed order and adds just the entries of each row that
// fall in its range (Clip finds them in the ascending index slice). Each
// coordinate then has exactly one writer: no atomics, no locks, nothing for
// the race detector to find, and each coordinate's sum is formed in batch
// order whatever the number of workers, so results are bit-identical across
// thread counts. The engine reduces this way in lazy runs and in dense runs
// with Options.Deterministic.
//
// It is not the engine's only mode. Dense runs default to fused per-worker
// buffers: in the read phase each worker scatters the rows whose duals it
// has just updated into a private dense buffer of length d, while the rows
// are in cache, and in the update phase the owner of a coordinate range
// (Owners cut into equal lengths) sums the workers' buffers over its range.
// That halves the update phase's work on two cores, but the order of each
// sum depends on which worker claimed which block, so such runs are not
// bit-identical across thread counts.
//
// Three candidates were measured against each other on synthetic batches
// (BenchmarkReducer; one reduce plus visiting and clearing every touched
// coordinate, µs per batch, on the 2-core development machine while other
// jobs ran, so read the ratios, not the absolute times):
//
//	shape                          threads   CAS adds   per-worker buffers   owners
//	d=124,   14 nnz/row,  m=512       1        267            24              15
//	d=124,   14 nnz/row,  m=512       2         75            15              20
//	d=47236, 75 nnz/row,  m=64        1        198            67              26
//	d=47236, 75 nnz/row,  m=64        2        151            75              21
//	d=47236, 75 nnz/row,  m=512       1       1514           491             143
//	d=47236, 75 nnz/row,  m=512       2        422           234              89
//
// Compare-and-swap adds on the float64 bits lose everywhere (a CAS per
// nonzero, and cache lines bouncing between cores). Per-worker dense buffers
// come close for small d, where the buffers stay in L1, but on large sparse d
// they pay for the scattered second pass over every worker's buffer. The
// ownership reducer is fastest or within noise of fastest in every regime as
// a stand-alone reduction, so it is the one the engine uses when the order
// of the sums must be fixed. The
// table does not measure the engine's fused buffers, whose scatter rides on
// the read phase and whose second pass is a dense sum over the owned range.
// Reproduce with
//
//	go test ./sched -run '^$' -bench 'Reducer|Barrier' -benchtime 2000x
//
// BenchmarkBarrier measured one round at about 180 ns with two workers (and
// about 1 ns with one, where Wait returns at once). An iteration pays two
// rounds, which is why small m does not scale across cores: at m = 1 on a9a
// an iteration's work is itself well under a microsecond.
package sched
