package sched_test

import (
	"fmt"

	"github.com/adaspdc/adaspdc/sched"
)

// ExamplePool runs two phases per round on every worker, separated by a
// barrier: each worker writes its own slot, then reads all of them.
func ExamplePool() {
	const threads = 3
	pool := sched.NewPool(threads)
	defer pool.Close()
	bar := sched.NewBarrier(threads, 0)
	slots := make([]int, threads)
	sums := make([]int, threads)
	pool.Run(func(w int) {
		for round := 1; round <= 2; round++ {
			slots[w] = round * (w + 1)
			bar.Wait() // every slot is written
			for _, v := range slots {
				sums[w] += v
			}
			bar.Wait() // every slot is read before the next round writes
		}
	})
	fmt.Println(sums)
	// Output: [18 18 18]
}
