// Package comm is the communication layer of distributed training: the few
// collective operations that the ranks of a job need to combine their sums
// and updates, a Counter that counts them, an in-process world that runs
// the ranks as goroutines, an MPI world for real jobs, and the split of one
// data file among the ranks.
//
// # Communicators
//
// A communicator (Comm) is one rank's handle on a world of P ranks that run
// the same program. Each rank has a number, Rank, from 0 to Size−1, and holds
// its own part of the data. The ranks meet in collectives: AllreduceSum and
// AllreduceMax combine a buffer element-wise across all ranks and leave the
// result in every rank's buffer, Broadcast copies one rank's buffer to the
// others, and Barrier waits for all. Every rank calls the same collectives in
// the same order, with buffers of the same length; a collective returns only
// when every rank has joined it.
//
// RunLocal runs a world of P goroutines in one process. It needs neither MPI
// nor cgo, so the distributed logic is tested in every test run. World
// returns this process's communicator: without the mpi build tag it is a
// world of one rank whose collectives leave their buffers as they are; with
// the tag it is MPI_COMM_WORLD of the job that mpirun started.
//
// # Determinism
//
// Every rank gets the same bits from a collective, and the sums do not
// depend on timing. The in-process world adds the ranks' buffers in rank
// order, ((b₀ + b₁) + b₂) + …, so its sum equals the serial sum exactly,
// whatever the goroutines' schedule. Open MPI chooses its reduction
// algorithm from the number of ranks and the length of the buffer, not from
// timing, so a job gives the same sums run after run, though they may
// differ in the last bits from the rank-order sum; the MPI tests check that
// all ranks get identical bits. Floating-point addition is not associative,
// so runs with different numbers of ranks may differ in the last bits.
//
// # Failures
//
// A rank that fails makes every rank stop: no rank waits forever in a
// collective that a failed rank will never join. A rank signals its failure
// with Abort.
//
// In process, Abort records the first cause, and every pending and later
// collective on every rank returns an *AbortError that wraps it and names
// the rank. RunLocal aborts the world for a rank whose function returns an
// error, panics, exits through runtime.Goexit, or returns while other ranks
// wait in a collective, and it returns that first failure. The in-process
// world also catches ranks whose collectives disagree (another operation,
// length or root), which MPI may not detect.
//
// In an MPI job, Abort prints its error to standard error and calls
// MPI_Abort(MPI_COMM_WORLD, 1), which ends every process of the job; it does
// not return. A rank that exits otherwise before finalizing MPI (a panic, an
// os.Exit) also makes mpirun end the job with a non-zero status. An error
// inside an MPI call ends the job through MPI's default error handler.
//
// # MPI
//
// The MPI world is built with the mpi tag (go build -tags mpi) and cgo, and
// finds MPI through pkg-config's "mpi" package, which Debian's
// libopenmpi-dev provides. Every MPI call must come from one OS thread: MPI
// is initialised with MPI_THREAD_FUNNELED, while the Go scheduler moves
// goroutines between threads. World therefore starts a goroutine that locks
// itself to its thread, initialises MPI and then makes every MPI call of the
// process, which the collectives hand to it. Call Close before the program
// exits, so that MPI is finalized.
//
// The collectives work in place on the caller's buffer, without copies of
// their own: a rank should reuse its buffers from one round to the next.
//
// # Launching a job
//
// Start the ranks with Open MPI's mpirun and its --bind-to none option:
//
//	mpirun --bind-to none -np 4 adaspdc …
//
// By default mpirun binds each process to one core, and the Go runtime,
// which sizes GOMAXPROCS from the cores it may use, then runs each rank on a
// single thread. Add --oversubscribe to start more ranks than there are
// cores, and --allow-run-as-root when running as root.
//
// Open MPI allocates fresh scratch memory for a large allreduce, and glibc
// serves large allocations with new mappings whose pages the kernel must
// zero at first touch, on every call. Setting
//
//	MALLOC_MMAP_THRESHOLD_=1000000000000
//	MALLOC_TRIM_THRESHOLD_=1000000000000
//	MALLOC_TOP_PAD_=1000000000
//
// in the environment of the ranks (mpirun -x passes them on) makes glibc keep
// that memory in its heap and hand it out again, so that a large allreduce
// no longer pays the kernel's zeroing of fresh pages on every call
// (bench/RESULTS.md has the measurement).
//
// # Sharing a data file
//
// ShareRange cuts one LIBSVM file into one byte range per rank at line
// boundaries, so that each rank reads only its own lines and knows the
// number of its first line for its messages. SharePath tells a path that the
// ranks share from a pattern with %d that names one file per rank.
package comm
