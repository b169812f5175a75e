package blocks

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkPartition verifies that p holds every sample of 0..n-1 exactly once,
// in blocks of size samples except one smaller remainder block.
func checkPartition(t *testing.T, p *Partition, n, size int) {
	t.Helper()
	if err := p.Validate(n); err != nil {
		t.Fatalf("n=%d size=%d: %v", n, size, err)
	}
	count := make([]int, n)
	short := 0
	for b := range p.NumBlocks() {
		block := p.Block(b)
		for _, s := range block {
			count[s]++
		}
		switch {
		case len(block) == size:
		case len(block) == n%size || (size > n && len(block) == n):
			short++
		default:
			t.Errorf("n=%d size=%d: block %d has %d samples", n, size, b, len(block))
		}
	}
	if want := (n + size - 1) / size; p.NumBlocks() != want {
		t.Errorf("n=%d size=%d: %d blocks, want %d", n, size, p.NumBlocks(), want)
	}
	if short > 1 {
		t.Errorf("n=%d size=%d: %d short blocks, want at most 1", n, size, short)
	}
	for s, c := range count {
		if c != 1 {
			t.Fatalf("n=%d size=%d: sample %d appears %d times", n, size, s, c)
		}
	}
}

var shapes = []struct{ n, size int }{
	{1, 1}, {1, 5}, {7, 1}, {7, 2}, {7, 3}, {7, 7}, {7, 100}, {100, 10}, {1001, 64},
}

func TestContiguous(t *testing.T) {
	for _, sh := range shapes {
		p, err := Contiguous(sh.n, sh.size)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, sh.n, sh.size)
		for i, s := range p.Order {
			if int(s) != i {
				t.Fatalf("n=%d size=%d: Order[%d]=%d", sh.n, sh.size, i, s)
			}
		}
		if sh.n%sh.size != 0 && sh.size < sh.n {
			if last := p.Block(p.NumBlocks() - 1); len(last) != sh.n%sh.size {
				t.Errorf("n=%d size=%d: last block has %d samples, want %d", sh.n, sh.size, len(last), sh.n%sh.size)
			}
		}
	}
}

func TestShuffled(t *testing.T) {
	for _, sh := range shapes {
		p, err := Shuffled(sh.n, sh.size, 7)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, sh.n, sh.size)
		again, _ := Shuffled(sh.n, sh.size, 7)
		if !slices.Equal(p.Order, again.Order) || !slices.Equal(p.Start, again.Start) {
			t.Errorf("n=%d size=%d: same seed, different partitions", sh.n, sh.size)
		}
	}
	a, _ := Shuffled(1000, 10, 1)
	b, _ := Shuffled(1000, 10, 2)
	if slices.Equal(a.Order, b.Order) {
		t.Error("seeds 1 and 2 give the same permutation")
	}
	c, _ := Contiguous(1000, 10)
	if slices.Equal(a.Order, c.Order) {
		t.Error("Shuffled returned the identity permutation")
	}
}

func TestByNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range shapes {
		sq := make([]float64, sh.n)
		for i := range sq {
			// Few distinct values, so ties are common.
			sq[i] = float64(rng.IntN(5))
		}
		p, err := ByNorm(sq, sh.size, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, sh.n, sh.size)
		again, _ := ByNorm(sq, sh.size, 3)
		if !slices.Equal(p.Order, again.Order) || !slices.Equal(p.Start, again.Start) {
			t.Errorf("n=%d size=%d: same seed, different partitions", sh.n, sh.size)
		}

		// Put the blocks back in norm order: concatenated, they must give
		// the samples sorted by (norm, index).
		blocks := make([][]int32, p.NumBlocks())
		for b := range blocks {
			blocks[b] = p.Block(b)
		}
		slices.SortFunc(blocks, func(a, b []int32) int { return compareSample(sq, a[0], b[0]) })
		var joined []int32
		for _, blk := range blocks {
			joined = append(joined, blk...)
		}
		want := make([]int32, sh.n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return compareSample(sq, a, b) })
		if !slices.Equal(joined, want) {
			t.Errorf("n=%d size=%d: blocks are not consecutive runs of the norm order", sh.n, sh.size)
		}
	}
}

// compareSample orders samples by squared norm, then by index.
func compareSample(sq []float64, a, b int32) int {
	switch {
	case sq[a] < sq[b]:
		return -1
	case sq[a] > sq[b]:
		return 1
	}
	return int(a) - int(b)
}

// TestByNormShufflesBlocks checks that the block order is not the norm order
// (with 100 blocks the chance that a shuffle leaves it sorted is 1/100!).
func TestByNormShufflesBlocks(t *testing.T) {
	sq := make([]float64, 1000)
	for i := range sq {
		sq[i] = float64(i)
	}
	p, err := ByNorm(sq, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	firsts := make([]int32, p.NumBlocks())
	for b := range firsts {
		firsts[b] = p.Block(b)[0]
	}
	if slices.IsSorted(firsts) {
		t.Error("block order follows the norm order")
	}
	q, _ := ByNorm(sq, 10, 2)
	if slices.Equal(p.Order, q.Order) {
		t.Error("seeds 1 and 2 give the same block order")
	}
}

func TestPartitionErrors(t *testing.T) {
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"contiguous n=0", func() error { _, err := Contiguous(0, 1); return err }, "0 samples"},
		{"contiguous n<0", func() error { _, err := Contiguous(-3, 1); return err }, "-3 samples"},
		{"contiguous size=0", func() error { _, err := Contiguous(5, 0); return err }, "block size 0"},
		{"contiguous too many", func() error { _, err := Contiguous(math.MaxInt32+2, 1); return err }, "int32"},
		{"shuffled size<0", func() error { _, err := Shuffled(5, -1, 1); return err }, "block size -1"},
		{"bynorm empty", func() error { _, err := ByNorm(nil, 1, 1); return err }, "0 samples"},
		{"bynorm NaN", func() error { _, err := ByNorm([]float64{1, math.NaN()}, 1, 1); return err }, "sample 1 is NaN"},
		{"bynorm negative", func() error { _, err := ByNorm([]float64{-1}, 1, 1); return err }, "sample 0 is -1"},
		{"bynorm Inf", func() error { _, err := ByNorm([]float64{math.Inf(1)}, 1, 1); return err }, "+Inf"},
		{"bynorm size=0", func() error { _, err := ByNorm([]float64{1}, 0, 1); return err }, "block size 0"},
	}
	for _, c := range cases {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		p    *Partition
		n    int
		want string
	}{
		{"nil", nil, 3, "nil partition"},
		{"n=0", &Partition{Order: []int32{}, Start: []int{0, 0}}, 0, "at least 1"},
		{"short order", &Partition{Order: []int32{0, 1}, Start: []int{0, 2}}, 3, "orders 2 samples, want 3"},
		{"no blocks", &Partition{Order: []int32{0, 1, 2}, Start: []int{0}}, 3, "len(Start)=1"},
		{"start not 0", &Partition{Order: []int32{0, 1, 2}, Start: []int{1, 3}}, 3, "from 1 to 3"},
		{"end not n", &Partition{Order: []int32{0, 1, 2}, Start: []int{0, 2}}, 3, "from 0 to 2"},
		{"empty block", &Partition{Order: []int32{0, 1, 2}, Start: []int{0, 1, 1, 3}}, 3, "block 1 is empty"},
		{"reversed", &Partition{Order: []int32{0, 1, 2}, Start: []int{0, 2, 1, 3}}, 3, "block 1 is empty or reversed"},
		{"duplicate", &Partition{Order: []int32{0, 1, 1}, Start: []int{0, 3}}, 3, "sample 1 appears more than once"},
		{"out of range", &Partition{Order: []int32{0, 3, 1}, Start: []int{0, 3}}, 3, "Order[1]=3"},
		{"negative", &Partition{Order: []int32{0, -1, 1}, Start: []int{0, 3}}, 3, "Order[1]=-1"},
	}
	for _, c := range cases {
		if err := c.p.Validate(c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestBlockIsClipped checks that appending to a block cannot overwrite the
// next one.
func TestBlockIsClipped(t *testing.T) {
	p, _ := Contiguous(6, 3)
	_ = append(p.Block(0), 99)
	if p.Order[3] != 3 {
		t.Errorf("append to block 0 overwrote Order[3] with %d", p.Order[3])
	}
}
