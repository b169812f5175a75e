// Package sched is the concurrency substrate of the AdaSPDC engine: a
// persistent worker pool, a spinning barrier, and the coordinate-ownership
// reducer that merges the workers' Aᵀ·Δy contributions into the primal.
//
// # Concurrency model
//
// A Pool starts its workers once (under an errgroup) and runs one phase at a
// time: Run(fn) calls fn(w) on every worker, worker 0 being the caller, and
// returns when all are done. The engine runs a whole epoch as one phase; its
// workers meet at a Barrier twice per iteration, between the read phase
// (margins and dual steps) and the update phase (the reduction and the
// primal step). Barrier.Wait spins on an atomic generation counter, yielding
// now and then, and parks on a condition variable only when the wait gets
// long, so that the common case costs a few hundred nanoseconds and an
// oversubscribed machine does not burn a core per waiting worker.
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
// thread counts. That makes the deterministic mode the only mode: it costs
// nothing.
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
// ownership reducer is fastest or within noise of fastest in every regime and
// is the one the engine uses. Reproduce with
//
//	go test ./sched -run '^$' -bench 'Reducer|Barrier' -benchtime 2000x
//
// BenchmarkBarrier measured one round at about 180 ns with two workers (and
// about 1 ns with one, where Wait returns at once). An iteration pays two
// rounds, which is why small m does not scale across cores: at m = 1 on a9a
// an iteration's work is itself well under a microsecond.
package sched
