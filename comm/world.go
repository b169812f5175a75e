//go:build !mpi

package comm

import "sync"

// mpiBuild holds in the build with the mpi tag, not this one.
const mpiBuild = false

var (
	worldOnce sync.Once
	worldComm Comm
)

// World returns this process's communicator. Built without the mpi tag, as
// here, it is a world of one rank: Rank is 0, Size is 1, and the collectives
// leave their buffers as they are. Every call returns the same Comm.
func World() (Comm, error) {
	worldOnce.Do(func() { worldComm = &local{w: newWorld(1)} })
	return worldComm, nil
}
