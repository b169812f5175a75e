//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a run with the model of its best certificate written.
// SIGTERM is how timeout, systemd, Slurm, Kubernetes and docker stop ask a
// process to end. SIGUSR1 is the one that Open MPI's mpirun forwards to
// every rank and leaves the job running: a SIGTERM to mpirun aborts the
// job instead (the ranks get SIGTERM odls_base_sigkill_timeout seconds
// later, SIGKILL as long again after that, and mpirun exits 1), whereas
// after a SIGUSR1 the ranks stop at the same certificate, rank 0 writes
// the model, and mpirun exits with the ranks' status 3.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1}
