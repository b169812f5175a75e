package newton

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
)

// TestProductsShared runs several runs' calls through one Products at
// once, each from its own goroutine as one-vs-rest's classes do, with
// some runs leaving early and stepping away: every product and every
// margin must equal its definition, and, with static sweeps, be the same
// bits as the same call through a Products of its own (a lane depends
// neither on its company nor on how many lanes the sweep took). Run with
// -race.
func TestProductsShared(t *testing.T) {
	for _, deterministic := range []bool{true, false} {
		t.Run(fmt.Sprintf("deterministic=%v", deterministic), func(t *testing.T) {
			testProductsShared(t, deterministic)
		})
	}
}

func testProductsShared(t *testing.T, deterministic bool) {
	x, _ := enginetest.RawCountData(2000, 700, 10, 120, 30, 0.05, 5)
	if x.NNZ() < driver.SweepMinNNZ {
		t.Fatalf("%d nonzeros: the sweeps would run on one thread", x.NNZ())
	}
	const runs, calls = 6, 12
	type call struct {
		curv, v, out, z []float64
	}
	// Each run's calls, made up front so that the lone replay repeats them.
	work := make([][]call, runs)
	rng := rand.New(rand.NewPCG(1, 1))
	for r := range runs {
		for i := range calls - 2*r { // run r leaves after calls − 2r calls
			c := call{v: make([]float64, x.Cols)}
			for j := range c.v {
				c.v[j] = rng.NormFloat64()
			}
			if i%3 == 2 {
				c.z = make([]float64, x.Rows)
			} else {
				c.curv, c.out = make([]float64, x.Rows), make([]float64, x.Cols)
				for k := range c.curv {
					if rng.IntN(4) > 0 { // some rows have φ″ = 0
						c.curv[k] = rng.Float64()
					}
				}
			}
			work[r] = append(work[r], c)
		}
	}
	do := func(p *Products, c call) error {
		if c.z != nil {
			return p.Margins(c.v, c.z)
		}
		return p.Times(c.curv, c.v, c.out)
	}
	shared := NewProducts(x, 2, deterministic)
	var wg sync.WaitGroup
	errs := make([]error, runs)
	for r := range runs {
		if !shared.join(x) {
			t.Fatal("join refused")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer shared.leave()
			for i, c := range work[r] {
				if i%4 == 1 {
					// A sweep of its own, during which the others go on.
					shared.away()
					shared.back()
				}
				if err := do(shared, c); err != nil {
					errs[r] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}
	lone := NewProducts(x, 2, true)
	defer lone.Close()
	lone.join(x)
	defer lone.leave()
	for r := range runs {
		if errs[r] != nil {
			t.Fatalf("run %d: %v", r, errs[r])
		}
		for i, c := range work[r] {
			again := call{curv: c.curv, v: c.v}
			if c.z != nil {
				again.z = make([]float64, x.Rows)
			} else {
				again.out = make([]float64, x.Cols)
			}
			if err := do(lone, again); err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("run %d, call %d", r, i)
			if c.z != nil {
				for k := range x.Rows {
					val, idx := x.Row(k)
					want, mag := 0.0, 0.0
					for p, j := range idx {
						want += val[p] * c.v[j]
						mag += math.Abs(val[p] * c.v[j])
					}
					if math.Abs(c.z[k]-want) > 1e-12*mag {
						t.Fatalf("%s: margin %d is %v, want %v", where, k, c.z[k], want)
					}
					if math.Float64bits(c.z[k]) != math.Float64bits(again.z[k]) { // margins are per row, in any sweep
						t.Fatalf("%s: margin %d is %v shared, %v alone", where, k, c.z[k], again.z[k])
					}
				}
				continue
			}
			want, mag := make([]float64, x.Cols), make([]float64, x.Cols)
			for k := range x.Rows {
				val, idx := x.Row(k)
				var m float64
				for p, j := range idx {
					m += val[p] * c.v[j]
				}
				for p, j := range idx {
					want[j] += c.curv[k] * m * val[p]
					mag[j] += math.Abs(c.curv[k] * m * val[p])
				}
			}
			for j := range want {
				if math.Abs(c.out[j]-want[j]) > 1e-10*(mag[j]+1e-300) {
					t.Fatalf("%s: product %d is %v, want %v", where, j, c.out[j], want[j])
				}
			}
			// A dynamic sweep sums a row into whichever worker took it.
			for j := range want {
				if deterministic && math.Float64bits(c.out[j]) != math.Float64bits(again.out[j]) {
					t.Fatalf("%s: product %d is %v shared, %v alone", where, j, c.out[j], again.out[j])
				}
			}
		}
	}
}
