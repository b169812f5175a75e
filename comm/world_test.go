//go:build !mpi

package comm

import (
	"errors"
	"testing"
)

func TestWorldIsOneRank(t *testing.T) {
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	if c2, _ := World(); c2 != c {
		t.Error("a second World call returned another Comm")
	}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("World: rank %d of %d, want 0 of 1", c.Rank(), c.Size())
	}
	buf := []float64{1, -2, 3}
	for _, f := range []func() error{
		func() error { return c.AllreduceSum(buf) },
		func() error { return c.AllreduceMax(buf) },
		func() error { return c.Broadcast(buf, 0) },
		c.Barrier,
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if buf[0] != 1 || buf[1] != -2 || buf[2] != 3 {
		t.Errorf("the collectives changed the buffer to %v", buf)
	}
	// The rest would spoil World for later tests: use a world like it.
	c = &local{w: newWorld(1)}
	if err := c.Broadcast(buf, 1); err == nil {
		t.Error("Broadcast from root 1 of 1 rank succeeded")
	}
	if err := c.Barrier(); err == nil {
		t.Error("a collective after a failure succeeded")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(); !errors.Is(err, ErrClosed) {
		t.Errorf("Barrier after Close returned %v, want ErrClosed", err)
	}
}
