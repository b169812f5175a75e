//go:build !unix

package main

import (
	"os"
	"syscall"
)

// stopSignals end a run with the model of its best certificate written;
// there is no SIGUSR1 here.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
