package sched_test

import (
	"fmt"
	"log"

	"github.com/adaspdc/adaspdc/sched"
)

// ExamplePool runs two phases per round on every worker, separated by a
// barrier: each worker writes its own slot, then reads all of them. The
// barrier is registered with BreakOnPanic, so that a worker that panicked
// would release the others and Run would return its panic as an error.
func ExamplePool() {
	const threads = 3
	pool := sched.NewPool(threads)
	defer pool.Close()
	bar := sched.NewBarrier(threads, 0)
	pool.BreakOnPanic(bar)
	slots := make([]int, threads)
	sums := make([]int, threads)
	if err := pool.Run(func(w int) {
		for round := 1; round <= 2; round++ {
			slots[w] = round * (w + 1)
			bar.Wait() // every slot is written
			for _, v := range slots {
				sums[w] += v
			}
			bar.Wait() // every slot is read before the next round writes
		}
	}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sums)
	// Output: [18 18 18]
}

// ExamplePool_panic shows a phase in which one worker panics while the
// others wait at a barrier: the barrier is broken, the others unwind, and
// Run returns the panic.
func ExamplePool_panic() {
	const threads = 3
	pool := sched.NewPool(threads)
	defer pool.Close()
	bar := sched.NewBarrier(threads, 0)
	pool.BreakOnPanic(bar)
	err := pool.Run(func(w int) {
		if w == 2 {
			panic("out of cheese")
		}
		bar.Wait()
	})
	fmt.Println(err)
	// The pool and the barrier are usable again.
	err = pool.Run(func(int) { bar.Wait() })
	fmt.Println(err)
	// Output:
	// sched: worker 2 panicked: out of cheese
	// <nil>
}
