package blocks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// chiSquare returns Σ (observed−expected)²/expected.
func chiSquare(observed []int, expected []float64) float64 {
	stat := 0.0
	for i, o := range observed {
		d := float64(o) - expected[i]
		stat += d * d / expected[i]
	}
	return stat
}

func TestUniformDistinctAndInRange(t *testing.T) {
	for _, c := range []struct{ n, m int }{{1, 1}, {2, 1}, {2, 2}, {10, 3}, {10, 10}, {1000, 64}} {
		s, err := NewUniform(c.n, c.m, 1)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]int, c.n) // draw number+1 that last saw each block
		var dst []int32
		for draw := 1; draw <= 500; draw++ {
			dst = s.Sample(dst)
			if len(dst) != c.m {
				t.Fatalf("n=%d m=%d: drew %d blocks", c.n, c.m, len(dst))
			}
			for _, b := range dst {
				if b < 0 || int(b) >= c.n {
					t.Fatalf("n=%d m=%d: block %d out of range", c.n, c.m, b)
				}
				if seen[b] == draw {
					t.Fatalf("n=%d m=%d: block %d drawn twice in one draw", c.n, c.m, b)
				}
				seen[b] = draw
			}
		}
	}
}

// TestUniformFrequencies checks that each block, and each pair of blocks,
// is drawn with the probability of a uniform m-subset: m/n for a block and
// m(m−1)/(n(n−1)) for a pair, and that consecutive draws are independent:
// block a in one draw and b in the next with probability (m/n)². The counts
// of a correct sampler give a statistic near the number of cells; the
// limits are about 3× that, and the seed is fixed, so the test is
// deterministic. m = 1, 4 and 9 of 12 take the sampler's three paths.
func TestUniformFrequencies(t *testing.T) {
	for _, m := range []int{1, 4, 9} {
		t.Run(fmt.Sprintf("m=%d", m), func(t *testing.T) { testUniformFrequencies(t, 12, m, 60000) })
	}
}

func testUniformFrequencies(t *testing.T, n, m, draws int) {
	s, err := NewUniform(n, m, 2024)
	if err != nil {
		t.Fatal(err)
	}
	single := make([]int, n)
	pairs := make([]int, n*n)
	next := make([]int, n*n)
	dst := make([]int32, m)
	prev := make([]int32, 0, m)
	for range draws {
		dst = s.Sample(dst)
		for i, a := range dst {
			single[a]++
			for _, b := range dst[i+1:] {
				lo, hi := min(a, b), max(a, b)
				pairs[int(lo)*n+int(hi)]++
			}
			for _, p := range prev {
				next[int(p)*n+int(a)]++
			}
		}
		prev = append(prev[:0], dst...)
	}
	expected := make([]float64, n)
	for i := range expected {
		expected[i] = float64(draws) * float64(m) / float64(n)
	}
	if stat := chiSquare(single, expected); stat > 3*float64(n) {
		t.Errorf("block frequencies: χ² = %.1f over %d cells; counts %v", stat, n, single)
	}
	if m > 1 {
		var pairCounts []int
		var pairExpected []float64
		for a := range n {
			for b := a + 1; b < n; b++ {
				pairCounts = append(pairCounts, pairs[a*n+b])
				pairExpected = append(pairExpected, float64(draws)*float64(m*(m-1))/float64(n*(n-1)))
			}
		}
		if stat := chiSquare(pairCounts, pairExpected); stat > 3*float64(len(pairCounts)) {
			t.Errorf("pair frequencies: χ² = %.1f over %d cells", stat, len(pairCounts))
		}
	}
	nextExpected := make([]float64, n*n)
	for i := range nextExpected {
		nextExpected[i] = float64(draws-1) * float64(m*m) / float64(n*n)
	}
	if stat := chiSquare(next, nextExpected); stat > 3*float64(n*n) {
		t.Errorf("consecutive draws: χ² = %.1f over %d cells: not independent", stat, n*n)
	}
}

func TestUniformAllBlocks(t *testing.T) {
	s, err := NewUniform(9, 9, 5)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]int32, 9)
	for range 20 {
		got := slices.Clone(s.Sample(dst))
		slices.Sort(got)
		for i, b := range got {
			if int(b) != i {
				t.Fatalf("m = nBlocks: drew %v, want every block once", got)
			}
		}
	}
}

func TestUniformDeterministic(t *testing.T) {
	a, _ := NewUniform(100, 7, 11)
	b, _ := NewUniform(100, 7, 11)
	c, _ := NewUniform(100, 7, 12)
	differs := false
	for range 50 {
		x := slices.Clone(a.Sample(nil))
		y := b.Sample(nil)
		z := c.Sample(nil)
		if !slices.Equal(x, y) {
			t.Fatalf("same seed, different draws: %v and %v", x, y)
		}
		differs = differs || !slices.Equal(x, z)
	}
	if !differs {
		t.Error("seeds 11 and 12 give the same draws")
	}
}

func TestSamplersDoNotAllocate(t *testing.T) {
	u, _ := NewUniform(10000, 512, 1)
	w := make([]float64, 10000)
	for i := range w {
		w[i] = float64(i % 7)
	}
	imp, _ := NewImportance(w, 512, 1)
	for name, s := range map[string]Sampler{"uniform": u, "importance": imp} {
		dst := make([]int32, 0, 512)
		if allocs := testing.AllocsPerRun(100, func() { dst = s.Sample(dst) }); allocs != 0 {
			t.Errorf("%s: %v allocations per Sample", name, allocs)
		}
		if got := s.Sample(make([]int32, 3)); len(got) != 512 {
			t.Errorf("%s: short dst gave %d blocks, want 512", name, len(got))
		}
	}
}

func TestUniformErrors(t *testing.T) {
	for _, c := range []struct {
		n, m int
		want string
	}{
		{0, 1, "0 blocks"}, {-1, 1, "-1 blocks"}, {5, 0, "draw 0 distinct"}, {5, -2, "draw -2"}, {5, 6, "draw 6 distinct blocks out of 5"},
	} {
		if _, err := NewUniform(c.n, c.m, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewUniform(%d, %d): got %v, want an error containing %q", c.n, c.m, err, c.want)
		}
	}
}

// TestImportanceFrequencies draws many times from a weight vector with
// zeros and checks the frequencies against the weights.
func TestImportanceFrequencies(t *testing.T) {
	weights := []float64{1, 0, 3, 6, 0, 10, 0.5, 0}
	const m, draws = 4, 50000
	s, err := NewImportance(weights, m, 99)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	for b, w := range weights {
		if got := s.Prob(b); math.Abs(got-w/sum) > 1e-15 {
			t.Errorf("Prob(%d) = %v, want %v", b, got, w/sum)
		}
	}
	counts := make([]int, len(weights))
	dst := make([]int32, m)
	for range draws {
		for _, b := range s.Sample(dst) {
			counts[b]++
		}
	}
	var observed []int
	var expected []float64
	for b, w := range weights {
		if w == 0 {
			if counts[b] != 0 {
				t.Errorf("block %d has weight 0 but was drawn %d times", b, counts[b])
			}
			continue
		}
		observed = append(observed, counts[b])
		expected = append(expected, draws*m*w/sum)
	}
	if stat := chiSquare(observed, expected); stat > 3*float64(len(observed)) {
		t.Errorf("χ² = %.1f over %d cells; counts %v", stat, len(observed), counts)
	}
}

// TestImportanceAliasTable checks the alias table exactly: the mass it gives
// each block, keep[b] plus what other slots send to b, divided by the number
// of slots, must equal Prob(b), and weight-zero blocks must receive nothing.
func TestImportanceAliasTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{1, 2, 3, 17, 1000} {
		for _, zeroFrac := range []float64{0, 0.5, 0.95} {
			weights := make([]float64, n)
			for b := range weights {
				if rng.Float64() >= zeroFrac {
					weights[b] = math.Exp(10 * rng.NormFloat64()) // spans many orders of magnitude
				}
			}
			weights[rng.IntN(n)] = 1 // at least one positive weight
			s, err := NewImportance(weights, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			mass := make([]float64, n)
			for slot := range n {
				keep := float64(s.keep[slot]) * 0x1p-64
				mass[slot] += keep
				mass[s.alias[slot]] += 1 - keep
			}
			for b := range n {
				got := mass[b] / float64(n)
				if weights[b] == 0 && got != 0 {
					t.Fatalf("n=%d: zero-weight block %d gets mass %v", n, b, got)
				}
				if math.Abs(got-s.Prob(b)) > 1e-12 {
					t.Fatalf("n=%d zeros=%v: block %d gets %v, want %v", n, zeroFrac, b, got, s.Prob(b))
				}
			}
		}
	}
}

func TestImportanceExtremeWeights(t *testing.T) {
	s, err := NewImportance([]float64{math.MaxFloat64, math.MaxFloat64, 0, 5e-324}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Prob(0); p != 0.5 {
		t.Errorf("Prob(0) = %v, want 0.5", p)
	}
	only, err := NewImportance([]float64{0, 0, 2, 0}, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if got := only.Sample(nil); !slices.Equal(got, []int32{2, 2, 2}) {
			t.Fatalf("one positive weight: drew %v, want [2 2 2]", got)
		}
	}
}

func TestImportanceErrors(t *testing.T) {
	for _, c := range []struct {
		weights []float64
		m       int
		want    string
	}{
		{nil, 1, "0 weights"},
		{[]float64{1, -1}, 1, "block 1 is -1"},
		{[]float64{math.NaN(), 1}, 1, "block 0 is NaN"},
		{[]float64{1, math.Inf(1)}, 1, "block 1 is +Inf"},
		{[]float64{0, 0, 0}, 1, "all 3 weights are zero"},
		{[]float64{1, 2}, 0, "draw 0 blocks"},
	} {
		if _, err := NewImportance(c.weights, c.m, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewImportance(%v, %d): got %v, want an error containing %q", c.weights, c.m, err, c.want)
		}
	}
}

func BenchmarkSample(b *testing.B) {
	const nBlocks = 10000
	weights := make([]float64, nBlocks)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range weights {
		weights[i] = rng.ExpFloat64()
	}
	for _, m := range []int{1, 8, 64, 512} {
		u, err := NewUniform(nBlocks, m, 1)
		if err != nil {
			b.Fatal(err)
		}
		imp, err := NewImportance(weights, m, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range []struct {
			name string
			s    Sampler
		}{{"uniform", u}, {"importance", imp}} {
			b.Run(fmt.Sprintf("%s/m=%d", s.name, m), func(b *testing.B) {
				dst := make([]int32, m)
				for b.Loop() {
					dst = s.s.Sample(dst)
				}
			})
		}
	}
}

// TestUniformMatchesShuffle checks that drawing the swaps' positions ahead
// leaves the draws those of the plain partial Fisher–Yates shuffle that
// draws each position with Rand.IntN as it swaps (the seed's sequence of
// batches is unchanged).
func TestUniformMatchesShuffle(t *testing.T) {
	for _, c := range []struct{ n, m int }{{1, 1}, {2, 1}, {64, 1}, {1000, 1}, {1000, 3}, {1000, 64}, {100, 100}, {4096, 512}} {
		s, err := NewUniform(c.n, c.m, 7)
		if err != nil {
			t.Fatal(err)
		}
		perm := make([]int32, c.n)
		for i := range perm {
			perm[i] = int32(i)
		}
		rng := newRand(7)
		want := make([]int32, c.m)
		var got []int32
		for draw := range 300 {
			for i := range c.m {
				j := i + rng.IntN(c.n-i)
				perm[i], perm[j] = perm[j], perm[i]
				want[i] = perm[i]
			}
			got = s.Sample(got)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d m=%d draw %d: %v, the shuffle draws %v", c.n, c.m, draw, got, want)
			}
		}
	}
}
