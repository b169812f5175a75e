package blocks

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// pcgStream is the second PCG seed word used by every generator in this
// package. Callers choose the first word (their seed); fixing the second keeps
// the API to one seed while still giving distinct, reproducible streams.
const pcgStream = 0x9e3779b97f4a7c15

// newRand returns the package's seeded generator.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, pcgStream))
}

// maxSamples is the largest number of samples a Partition can hold: sample
// indices are stored as int32.
const maxSamples = math.MaxInt32 + 1

// Partition assigns every sample to exactly one block. Block b holds the
// samples Order[Start[b]:Start[b+1]].
type Partition struct {
	Order []int32 // a permutation of 0..n-1
	Start []int   // len NumBlocks()+1, Start[0]=0, Start[last]=n, strictly increasing (no empty block)
}

// NumBlocks returns the number of blocks.
func (p *Partition) NumBlocks() int { return len(p.Start) - 1 }

// Block returns the samples of block b. The slice is a view of p.Order with
// its capacity clipped, so appending to it cannot overwrite the next block.
func (p *Partition) Block(b int) []int32 {
	lo, hi := p.Start[b], p.Start[b+1]
	return p.Order[lo:hi:hi]
}

// Validate reports whether p partitions the samples 0..n-1: Order must be a
// permutation of 0..n-1 and Start must cut it into non-empty blocks.
func (p *Partition) Validate(n int) error {
	if p == nil {
		return fmt.Errorf("blocks: nil partition")
	}
	if n <= 0 {
		return fmt.Errorf("blocks: partition of %d samples, want at least 1", n)
	}
	if len(p.Order) != n {
		return fmt.Errorf("blocks: partition orders %d samples, want %d", len(p.Order), n)
	}
	if len(p.Start) < 2 {
		return fmt.Errorf("blocks: partition has len(Start)=%d, want at least 2", len(p.Start))
	}
	if p.Start[0] != 0 || p.Start[len(p.Start)-1] != n {
		return fmt.Errorf("blocks: partition Start runs from %d to %d, want 0 to %d",
			p.Start[0], p.Start[len(p.Start)-1], n)
	}
	for b := 1; b < len(p.Start); b++ {
		if p.Start[b] <= p.Start[b-1] {
			return fmt.Errorf("blocks: block %d is empty or reversed (Start[%d]=%d, Start[%d]=%d)",
				b-1, b-1, p.Start[b-1], b, p.Start[b])
		}
	}
	seen := make([]bool, n)
	for pos, s := range p.Order {
		if s < 0 || int(s) >= n {
			return fmt.Errorf("blocks: Order[%d]=%d is not a sample index in [0,%d)", pos, s, n)
		}
		if seen[s] {
			return fmt.Errorf("blocks: sample %d appears more than once in Order", s)
		}
		seen[s] = true
	}
	return nil
}

// checkShape validates the arguments shared by the partition constructors.
func checkShape(n, size int) error {
	if n <= 0 {
		return fmt.Errorf("blocks: cannot partition %d samples, want at least 1", n)
	}
	if n > maxSamples {
		return fmt.Errorf("blocks: %d samples exceed the int32 sample index limit %d", n, maxSamples)
	}
	if size <= 0 {
		return fmt.Errorf("blocks: block size %d, want at least 1", size)
	}
	return nil
}

// cut returns the Start slice that cuts n ordered samples into consecutive
// blocks of size, the last one holding the remainder. A size of n or more
// gives a single block.
func cut(n, size int) []int {
	numBlocks := (n-1)/size + 1 // ceil(n/size) without overflow
	start := make([]int, numBlocks+1)
	for b := 1; b < numBlocks; b++ {
		start[b] = b * size
	}
	start[numBlocks] = n
	return start
}

// Contiguous puts samples 0..n-1 in order into blocks of size samples. The
// last block holds the remainder, so it may be smaller but is never empty; a
// size of n or more gives one block. It returns an error if n or size is not
// positive, or if n exceeds the int32 sample index range.
func Contiguous(n, size int) (*Partition, error) {
	if err := checkShape(n, size); err != nil {
		return nil, err
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	return &Partition{Order: order, Start: cut(n, size)}, nil
}

// Shuffled does what Contiguous does on a random permutation of the samples
// drawn from a PCG generator seeded with seed: the same seed always gives the
// same partition.
func Shuffled(n, size int, seed uint64) (*Partition, error) {
	p, err := Contiguous(n, size)
	if err != nil {
		return nil, err
	}
	rng := newRand(seed)
	rng.Shuffle(n, func(i, j int) { p.Order[i], p.Order[j] = p.Order[j], p.Order[i] })
	return p, nil
}

// ByNorm groups samples of similar norm. It sorts the samples by their
// squared row norms sqNorms (ascending, ties broken by sample index, so the
// order is fully determined), cuts the sorted sequence into consecutive runs
// of size samples, and then shuffles the order of the blocks with a PCG
// generator seeded with seed. Within a block the samples stay in ascending
// norm order. The block holding the remainder (the largest norms) may be
// smaller than size.
//
// Grouping keeps one long row from dominating the spectral norm of a block of
// short ones, which would shrink the dual step of every sample in that block;
// shuffling the block order keeps consumers that walk blocks in index order
// from seeing a norm trend.
//
// It returns an error if sqNorms is empty, contains a negative, NaN or
// infinite value, or if size is not positive.
func ByNorm(sqNorms []float64, size int, seed uint64) (*Partition, error) {
	n := len(sqNorms)
	if err := checkShape(n, size); err != nil {
		return nil, err
	}
	for i, v := range sqNorms {
		if !(v >= 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("blocks: squared norm of sample %d is %v, want a finite value ≥ 0", i, v)
		}
	}
	sorted := make([]int32, n)
	for i := range sorted {
		sorted[i] = int32(i)
	}
	slices.SortFunc(sorted, func(a, b int32) int {
		if c := cmp.Compare(sqNorms[a], sqNorms[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sortedStart := cut(n, size)
	numBlocks := len(sortedStart) - 1
	blockOrder := newRand(seed).Perm(numBlocks)

	p := &Partition{Order: make([]int32, 0, n), Start: make([]int, 1, numBlocks+1)}
	for _, b := range blockOrder {
		p.Order = append(p.Order, sorted[sortedStart[b]:sortedStart[b+1]]...)
		p.Start = append(p.Start, len(p.Order))
	}
	return p, nil
}
