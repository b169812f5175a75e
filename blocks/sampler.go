package blocks

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/adaspdc/adaspdc/kernels"
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

// uniform draws m distinct blocks by a partial Fisher–Yates shuffle of a
// permutation it keeps between draws. Whatever order the permutation is in,
// swapping position i with a uniform position in [i, n) for i < m puts a
// uniformly random ordered m-subset in the first m positions, so the
// permutation never needs resetting, a draw costs O(m), and each draw is
// independent of the others: τ-nice sampling, the distribution that
// Algorithm 1 of the paper (line 4) assumes and that the ESO steps
// (engine/spdc, esoCouplings) and the convergence proof take expectations
// over, conditionally on the past. An epoch's permutation consumed m blocks
// at a time would be cheaper, but it is a different distribution: given
// the iteration's predecessors in the epoch, its batch is uniform over the
// blocks not yet drawn, so neither argument covers it.
//
// The swap's far position is a random access into 4n bytes, a cache miss
// once n exceeds farBlocks. Its bound, n − i at step i, does not depend on
// the permutation, so the positions are drawn ahead, lookahead swaps
// early, in the generator's order, and on large n each is prefetched as it
// is drawn: the draws are those of a shuffle that draws each position when
// it swaps.
type uniform struct {
	perm []int32
	m    int
	rng  *rand.PCG
	// ahead holds the far positions of the next lookahead swaps, from
	// ahead[head] on, cyclically; step is the position i of the swap that
	// the next drawn position is for.
	ahead [lookahead]int32
	head  int
	step  int
	far   bool // the permutation outgrows a core's L2: prefetch the swaps
}

// lookahead is how many swaps ahead uniform draws its positions.
const lookahead = 16

// farBlocks is the number of blocks above which the permutation (4 bytes a
// block) no longer fits a core's L2 cache of 512 KB beside the data, and
// prefetching the swaps pays for its call.
const farBlocks = 1 << 16

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
	perm := make([]int32, nBlocks)
	for i := range perm {
		perm[i] = int32(i)
	}
	s := &uniform{perm: perm, m: m, rng: rand.NewPCG(seed, pcgStream), far: nBlocks > farBlocks}
	for k := range s.ahead {
		s.ahead[k] = s.drawPosition()
	}
	return s, nil
}

// drawPosition draws the far position of the next swap not yet drawn, a
// uniform integer in [i, n) for its step i, and asks for its entry of the
// permutation. The integer is math/rand/v2's Rand.IntN(n − i) on the same
// generator (Lemire's multiply-and-reject, a mask for powers of two),
// without its interface call.
func (s *uniform) drawPosition() int32 {
	i := s.step
	if s.step++; s.step == s.m {
		s.step = 0
	}
	n := uint64(len(s.perm) - i)
	var j uint64
	if n&(n-1) == 0 {
		j = s.rng.Uint64() & (n - 1)
	} else {
		hi, lo := bits.Mul64(s.rng.Uint64(), n)
		if lo < n {
			thresh := -n % n
			for lo < thresh {
				hi, lo = bits.Mul64(s.rng.Uint64(), n)
			}
		}
		j = hi
	}
	p := int32(i) + int32(j)
	if s.far {
		kernels.Prefetch(unsafe.Pointer(&s.perm[p]))
	}
	return p
}

// Sample implements Sampler.
func (s *uniform) Sample(dst []int32) []int32 {
	dst = grow(dst, s.m)
	for i := range s.m {
		j := s.ahead[s.head]
		s.ahead[s.head] = s.drawPosition()
		if s.head++; s.head == lookahead {
			s.head = 0
		}
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
		dst[i] = s.perm[i]
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
