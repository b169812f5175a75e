package sched

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
)

// The three reducers compared here merge a batch's contributions
// u = Σₖ Δyₖ aₖ into a dense vector and then visit and clear every touched
// coordinate, which is what the engine's update phase does.
//
//   - cas: rows split among workers; each adds into a shared u with a
//     compare-and-swap loop on the float64 bits; after a barrier, each worker
//     visits and clears the entries of its own rows.
//   - buffers: rows split among workers; each scatters into a private dense
//     buffer and notes the touched coordinates per owner; after a barrier the
//     owner of a coordinate sums it over all buffers and clears them.
//   - owners: every worker walks all rows in batch order and adds the part of
//     each row that falls in its own coordinate range (Clip), then visits its
//     touched coordinates. No atomics and a fixed summation order.

type batchRow struct {
	val []float64
	idx []int32
	dy  float64
}

func makeBatch(rows, nnz, d int, seed uint64) []batchRow {
	rng := rand.New(rand.NewPCG(seed, 9))
	batch := make([]batchRow, rows)
	for i := range batch {
		seen := map[int32]bool{}
		var idx []int32
		for len(idx) < nnz {
			j := int32(float64(d) * math.Pow(rng.Float64(), 2))
			if !seen[j] {
				seen[j] = true
				idx = append(idx, j)
			}
		}
		slices.Sort(idx)
		val := make([]float64, nnz)
		for p := range val {
			val[p] = rng.Float64()
		}
		batch[i] = batchRow{val, idx, rng.NormFloat64()}
	}
	return batch
}

// Split returns the half-open range of [0, n) that worker w of threads
// handles when n items are cut into threads contiguous, nearly equal parts.
func Split(n, threads, w int) (lo, hi int) {
	if threads <= 0 || w < 0 || w >= threads {
		panic(fmt.Sprintf("sched: Split(%d, %d, %d): bad worker", n, threads, w))
	}
	return n * w / threads, n * (w + 1) / threads
}

func atomicAdd(p *uint64, v float64) {
	for {
		old := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func BenchmarkReducer(b *testing.B) {
	shapes := []struct {
		name         string
		d, nnz, rows int
	}{
		{"a9a-like/d=124/nnz=14/m=512", 124, 14, 512},
		{"rcv1-like/d=47236/nnz=75/m=64", 47236, 75, 64},
		{"rcv1-like/d=47236/nnz=75/m=512", 47236, 75, 512},
	}
	for _, sh := range shapes {
		batch := makeBatch(sh.rows, sh.nnz, sh.d, 1)
		colNNZ := make([]int64, sh.d)
		for _, r := range batch {
			for _, j := range r.idx {
				colNNZ[j]++
			}
		}
		for _, threads := range []int{1, 2} {
			pool := NewPool(threads)
			bar := NewBarrier(threads, 0)
			var sink [64]float64

			b.Run(fmt.Sprintf("%s/cas/threads=%d", sh.name, threads), func(b *testing.B) {
				u := make([]uint64, sh.d)
				for b.Loop() {
					if err := pool.Run(func(w int) {
						lo, hi := Split(len(batch), threads, w)
						for _, r := range batch[lo:hi] {
							for p, j := range r.idx {
								atomicAdd(&u[j], r.dy*r.val[p])
							}
						}
						bar.Wait()
						var s float64
						for _, r := range batch[lo:hi] {
							for _, j := range r.idx {
								s += math.Float64frombits(atomic.SwapUint64(&u[j], 0))
							}
						}
						sink[w] += s
					}); err != nil {
						b.Fatal(err)
					}
				}
			})

			b.Run(fmt.Sprintf("%s/buffers/threads=%d", sh.name, threads), func(b *testing.B) {
				owners := NewOwners(colNNZ, threads)
				owner := make([]int32, sh.d)
				for w := 0; w < threads; w++ {
					lo, hi := owners.Range(w)
					for j := lo; j < hi; j++ {
						owner[j] = int32(w)
					}
				}
				buf := make([][]float64, threads)
				touched := make([][][]int32, threads)
				for w := range buf {
					buf[w] = make([]float64, sh.d)
					touched[w] = make([][]int32, threads)
				}
				for b.Loop() {
					if err := pool.Run(func(w int) {
						lo, hi := Split(len(batch), threads, w)
						for o := range touched[w] {
							touched[w][o] = touched[w][o][:0]
						}
						for _, r := range batch[lo:hi] {
							for p, j := range r.idx {
								if buf[w][j] == 0 {
									touched[w][owner[j]] = append(touched[w][owner[j]], j)
								}
								buf[w][j] += r.dy * r.val[p]
							}
						}
						bar.Wait()
						var s float64
						for v := 0; v < threads; v++ {
							for _, j := range touched[v][w] {
								for x := 0; x < threads; x++ {
									s += buf[x][j]
									buf[x][j] = 0
								}
							}
						}
						sink[w] += s
						bar.Wait()
					}); err != nil {
						b.Fatal(err)
					}
				}
			})

			b.Run(fmt.Sprintf("%s/owners/threads=%d", sh.name, threads), func(b *testing.B) {
				owners := NewOwners(colNNZ, threads)
				u := make([]float64, sh.d)
				stamp := make([]uint32, sh.d)
				touched := make([][]int32, threads)
				var round uint32
				for b.Loop() {
					round++
					if err := pool.Run(func(w int) {
						lo, hi := owners.Range(w)
						touched[w] = touched[w][:0]
						for _, r := range batch {
							a, e := Clip(r.idx, lo, hi)
							for _, j := range r.idx[a:e] {
								if stamp[j] != round {
									stamp[j] = round
									touched[w] = append(touched[w], j)
								}
							}
							if a < e {
								kernels.SparseAxpy(r.dy, r.val[a:e], r.idx[a:e], u)
							}
						}
						var s float64
						for _, j := range touched[w] {
							s += u[j]
							u[j] = 0
						}
						sink[w] += s
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
			pool.Close()
		}
	}
}

// BenchmarkBarrier measures one round of the barrier with every worker
// arriving at once: the fixed cost an AdaSPDC iteration pays twice.
func BenchmarkBarrier(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			pool := NewPool(threads)
			defer pool.Close()
			bar := NewBarrier(threads, 0)
			rounds := b.N
			b.ResetTimer()
			if err := pool.Run(func(int) {
				for i := 0; i < rounds; i++ {
					bar.Wait()
				}
			}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
