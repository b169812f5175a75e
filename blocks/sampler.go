package blocks

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Sampler draws the blocks of one iteration.
//
// Sample fills dst[:m] with the drawn block indices and returns it, m being
// fixed when the sampler is made. It does not allocate when cap(dst) ≥ m;
// otherwise it allocates a new slice, as append would. A Sampler is not safe
// for concurrent use: give each goroutine its own.
type Sampler interface {
	Sample(dst []int32) []int32
}

// maxBlocks is the largest number of blocks a sampler accepts: block indices
// are int32.
const maxBlocks = math.MaxInt32 + 1

// uniform draws m distinct blocks, each iteration's draw independent of
// the others and uniform over the ordered m-subsets: τ-nice sampling, the
// distribution that Algorithm 1 of the paper (line 4) assumes and that the
// ESO steps (engine/spdc, esoCouplings) and the convergence proof take
// expectations over, conditionally on the past. An epoch's permutation
// consumed m blocks at a time would be cheaper still, but it is a different
// distribution: given the iteration's predecessors in the epoch its batch
// is uniform over the blocks not yet drawn, not over all of them, so
// neither argument covers it.
//
// For m ≤ n/2 a draw is m uniform positions by rejection: a block already
// in this draw (marked in a bitset of n bits, small enough to stay in L1
// for the data sets at hand) is drawn again. Each accepted block is uniform
// over the blocks not yet in the draw, which is what the partial
// Fisher–Yates shuffle gives, and at most 2m numbers are drawn on average.
// No permutation is touched, so a draw of one block is one random number.
// For m > n/2, where rejection would draw up to n·ln(n/(n−m)) numbers, a
// partial Fisher–Yates shuffle of a permutation kept between draws: whatever
// order the permutation is in, swapping position i with a uniform position
// in [i, n) for i < m puts a uniformly random ordered m-subset in the first
// m positions.
type uniform struct {
	n    uint64
	m    int
	mark []uint64 // rejection: the blocks of the draw in progress
	perm []int32  // Fisher–Yates, for m > n/2
	rng  *rand.PCG
}

// NewUniform returns a Sampler that draws m distinct blocks out of nBlocks
// uniformly without replacement, independently from draw to draw, so each
// block is in a draw with probability m/nBlocks, as Algorithm 1 of the
// paper requires. Draws cost O(m) and come from a PCG generator seeded with
// seed. It returns an error unless 1 ≤ m ≤ nBlocks.
func NewUniform(nBlocks, m int, seed uint64) (Sampler, error) {
	if nBlocks < 1 || nBlocks > maxBlocks {
		return nil, fmt.Errorf("blocks: %d blocks, want between 1 and %d", nBlocks, maxBlocks)
	}
	if m < 1 || m > nBlocks {
		return nil, fmt.Errorf("blocks: cannot draw %d distinct blocks out of %d", m, nBlocks)
	}
	s := &uniform{n: uint64(nBlocks), m: m, rng: rand.NewPCG(seed, pcgStream)}
	switch {
	case 2*m > nBlocks:
		s.perm = make([]int32, nBlocks)
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
	case m > 1:
		s.mark = make([]uint64, (nBlocks+63)/64)
	}
	return s, nil
}

// below returns a uniform integer in [0, n) by Lemire's multiply-and-reject
// (the method of math/rand/v2, here without its interface call).
func (s *uniform) below(n uint64) uint64 {
	hi, lo := bits.Mul64(s.rng.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(s.rng.Uint64(), n)
		}
	}
	return hi
}

// Sample implements Sampler.
func (s *uniform) Sample(dst []int32) []int32 {
	dst = grow(dst, s.m)
	switch {
	case s.perm != nil:
		n := len(s.perm)
		for i := range s.m {
			j := i + int(s.below(uint64(n-i)))
			s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
			dst[i] = s.perm[i]
		}
	case s.m == 1:
		dst[0] = int32(s.below(s.n))
	default:
		for i := range dst {
			b := s.below(s.n)
			for s.mark[b>>6]&(1<<(b&63)) != 0 {
				b = s.below(s.n)
			}
			s.mark[b>>6] |= 1 << (b & 63)
			dst[i] = int32(b)
		}
		for _, b := range dst {
			s.mark[b>>6] = 0
		}
	}
	return dst
}

// Importance draws m blocks independently, with replacement, block b with
// probability Prob(b) ∝ weights[b], by Walker's alias method: O(1) per block
// drawn after an O(nBlocks) setup. SPDC's non-uniform baseline uses
// weights[b] = R_b. A draw may repeat a block; a caller forming an unbiased
// estimate divides block b's contribution by nBlocks·Prob(b).
type Importance struct {
	prob []float64 // prob[b] = w_b/Σw
	// Alias table: slot b yields b with probability keep[b]/2⁶⁴, else
	// alias[b]. A keep of MaxUint64 stands for probability 1: such slots
	// alias themselves, so the 2⁻⁶⁴ chance of falling through is harmless.
	keep  []uint64
	alias []int32
	m     int
	rng   *rand.Rand
}

// NewImportance returns an Importance sampler of m blocks per draw over
// len(weights) blocks, seeded with seed. It returns an error if weights is
// empty, holds a negative, NaN or infinite value, or sums to zero, or if m < 1.
// Blocks of weight zero are never drawn.
func NewImportance(weights []float64, m int, seed uint64) (*Importance, error) {
	n := len(weights)
	if n < 1 || n > maxBlocks {
		return nil, fmt.Errorf("blocks: %d weights, want between 1 and %d", n, maxBlocks)
	}
	if m < 1 {
		return nil, fmt.Errorf("blocks: cannot draw %d blocks, want at least 1", m)
	}
	maxWeight := 0.0
	for b, w := range weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return nil, fmt.Errorf("blocks: weight of block %d is %v, want a finite value ≥ 0", b, w)
		}
		maxWeight = max(maxWeight, w)
	}
	if maxWeight == 0 {
		return nil, fmt.Errorf("blocks: all %d weights are zero", n)
	}
	// Dividing by the largest weight first keeps the sum finite for any
	// finite weights.
	sum := 0.0
	for _, w := range weights {
		sum += w / maxWeight
	}
	s := &Importance{
		prob:  make([]float64, n),
		keep:  make([]uint64, n),
		alias: make([]int32, n),
		m:     m,
		rng:   newRand(seed),
	}
	heaviest := int32(0)
	for b, w := range weights {
		s.prob[b] = w / maxWeight / sum
		if w == maxWeight {
			heaviest = int32(b)
		}
	}
	s.buildAlias(heaviest)
	return s, nil
}

// buildAlias fills the alias table by Vose's method: slots with scaled mass
// n·p_b < 1 are topped up from a slot with mass ≥ 1. The unpaired slots
// always carry a total mass equal to their number, so while a zero-weight
// slot is unpaired some other slot has mass > 1 and it gets paired. Slots
// that rounding leaves unpaired at the end have mass ≈ 1: they keep
// themselves if they have weight, and otherwise point at the heaviest block,
// so a zero-weight block can never be drawn.
func (s *Importance) buildAlias(heaviest int32) {
	n := len(s.prob)
	mass := make([]float64, n)
	var light, heavy []int32
	for b, p := range s.prob {
		mass[b] = p * float64(n)
		if mass[b] < 1 {
			light = append(light, int32(b))
		} else {
			heavy = append(heavy, int32(b))
		}
	}
	for len(light) > 0 && len(heavy) > 0 {
		l := light[len(light)-1]
		light = light[:len(light)-1]
		h := heavy[len(heavy)-1]
		s.keep[l] = uint64(mass[l] * 0x1p64) // mass[l] < 1, so this fits
		s.alias[l] = h
		mass[h] -= 1 - mass[l]
		if mass[h] < 1 {
			heavy = heavy[:len(heavy)-1]
			light = append(light, h)
		}
	}
	for _, b := range append(light, heavy...) {
		if s.prob[b] > 0 {
			s.keep[b], s.alias[b] = math.MaxUint64, b
		} else {
			s.keep[b], s.alias[b] = 0, heaviest
		}
	}
}

// Sample implements Sampler: it fills dst[:m] with m independent draws.
//
// Each draw takes one 64-bit random number x: the high word of x·n picks the
// slot and the low word, uniform on a grid of step n/2⁶⁴ given the slot, is
// the coin compared with keep. Both are exact up to a relative bias of
// n/2⁶⁴, far below anything a sampler could detect, and half the cost of
// separate IntN and Float64 calls.
func (s *Importance) Sample(dst []int32) []int32 {
	dst = grow(dst, s.m)
	n := uint64(len(s.keep))
	for i := range s.m {
		slot, coin := bits.Mul64(s.rng.Uint64(), n)
		// Loading both candidates lets the compiler pick with a
		// conditional move: the coin is unpredictable, a branch on it
		// would mispredict about half the time.
		b, alias := int32(slot), s.alias[slot]
		if coin >= s.keep[slot] {
			b = alias
		}
		dst[i] = b
	}
	return dst
}

// Prob returns the probability that one draw yields block b, w_b/Σw. It
// panics if b is out of range, like a slice index.
func (s *Importance) Prob(b int) float64 { return s.prob[b] }

// grow returns dst with length m, allocating only if its capacity is short.
func grow(dst []int32, m int) []int32 {
	if cap(dst) < m {
		return make([]int32, m)
	}
	return dst[:m]
}
