package objective

import (
	"fmt"
	"math"
	"sync"
)

// GroupLasso is the group lasso of Yuan and Lin with an optional ridge term,
//
//	g(x) = Σ_G w·√|G|·‖x_G‖₂ + (Lambda/2)·‖x‖²,
//
// where w = Weight, the sum runs over the groups G of coordinates that share
// an id ≥ 0 in Groups, and |G| is the group's size. The √|G| scaling is
// Yuan and Lin's: it keeps groups of different sizes on an equal footing
// (a group of one coordinate gets w|xⱼ|, the lasso). Coordinates with id −1
// are in no group: only the ridge term reaches them (an unpenalised bias
// when Lambda = 0). The ridge term covers every coordinate, so g is
// Lambda-strongly convex.
//
// Per group, with c = w√|G| and h(x_G) = c‖x_G‖ + (λ/2)‖x_G‖²,
//
//	prox_{τh}(v) = (1 − τc/‖v‖)₊ · v / (1 + τλ)   (block soft-thresholding, then shrinking)
//	h*(s)        = (‖s‖ − c)₊² / (2λ)              (λ > 0; the indicator of ‖s‖ ≤ c when λ = 0)
//	∇h*(s)       = (1 − c/‖s‖)₊ · s / λ
//
// and for a coordinate in no group c = 0: h*(s) = s²/(2λ), or the indicator
// of s = 0 when λ = 0.
//
// Use a *GroupLasso, and do not change its fields after its first use: the
// methods list each group's members once, on first use, and keep the list.
type GroupLasso struct {
	Lambda float64 // weight of the L2 term, ≥ 0
	Weight float64 // the group penalty w, ≥ 0
	Groups []int32 // the group of each coordinate, ≥ 0, or −1 for none

	once    sync.Once
	members []int32 // coordinates in groups, group by group
	start   []int   // group k's members are members[start[k]:start[k+1]]
	free    []int32 // coordinates in no group
}

// index lists the members of each group, once.
func (r *GroupLasso) index() {
	r.once.Do(func() {
		counts := map[int32]int{}
		var order []int32 // group ids by first appearance
		for _, g := range r.Groups {
			if g < 0 {
				continue
			}
			if counts[g] == 0 {
				order = append(order, g)
			}
			counts[g]++
		}
		pos := make(map[int32]int, len(order))
		r.start = make([]int, len(order)+1)
		for k, g := range order {
			pos[g] = r.start[k]
			r.start[k+1] = r.start[k] + counts[g]
		}
		r.members = make([]int32, r.start[len(order)])
		for j, g := range r.Groups {
			if g < 0 {
				r.free = append(r.free, int32(j))
				continue
			}
			r.members[pos[g]] = int32(j)
			pos[g]++
		}
	})
}

// NumGroups returns the number of groups (ids ≥ 0 in use).
func (r *GroupLasso) NumGroups() int {
	r.index()
	return len(r.start) - 1
}

// Group returns group k's members and its weight c = w√|G|.
func (r *GroupLasso) Group(k int) ([]int32, float64) {
	m := r.members[r.start[k]:r.start[k+1]]
	return m, r.Weight * math.Sqrt(float64(len(m)))
}

// Name returns "grouplasso".
func (r *GroupLasso) Name() string { return "grouplasso" }

// Validate reports whether g is well defined on d coordinates: Lambda and
// Weight finite and ≥ 0, one group id per coordinate, each ≥ −1.
func (r *GroupLasso) Validate(d int) error {
	if !(r.Lambda >= 0) || math.IsInf(r.Lambda, 0) {
		return fmt.Errorf("engine: group lasso Lambda = %g must be finite and ≥ 0", r.Lambda)
	}
	if !(r.Weight >= 0) || math.IsInf(r.Weight, 0) {
		return fmt.Errorf("engine: group lasso weight %g must be finite and ≥ 0", r.Weight)
	}
	if len(r.Groups) != d {
		return fmt.Errorf("engine: group lasso has groups for %d coordinates, the data %d", len(r.Groups), d)
	}
	for j, g := range r.Groups {
		if g < -1 {
			return fmt.Errorf("engine: group lasso: coordinate %d has group %d; groups are ≥ 0, or −1 for none", j, g)
		}
	}
	return nil
}

// StrongConvexity returns Lambda.
func (r *GroupLasso) StrongConvexity() float64 { return r.Lambda }

// Strengths returns the ridge weight Lambda and no L1 term: the group
// penalty is not one.
func (r *GroupLasso) Strengths() (lambda, l1 float64) { return r.Lambda, 0 }

// AsElasticNet reports false: the group lasso is no elastic net.
func (r *GroupLasso) AsElasticNet() (ElasticNet, bool) { return ElasticNet{}, false }

// Value returns g(x).
func (r *GroupLasso) Value(x []float64) float64 {
	r.index()
	var pen float64
	for k := range len(r.start) - 1 {
		m, c := r.Group(k)
		pen += c * groupNorm(x, m)
	}
	var sq float64
	for _, v := range x {
		sq += v * v
	}
	return pen + 0.5*r.Lambda*sq
}

// ConjNeg returns g*(−v) = Σ_G h*(v_G) (h* is even); +Inf outside the
// domain when Lambda = 0.
func (r *GroupLasso) ConjNeg(v []float64) float64 {
	r.index()
	var sum float64
	for k := range len(r.start) - 1 {
		m, c := r.Group(k)
		a := groupNorm(v, m) - c
		if a <= 0 {
			continue
		}
		if r.Lambda == 0 {
			return math.Inf(1)
		}
		sum += a * a
	}
	for _, j := range r.free {
		if v[j] != 0 && r.Lambda == 0 {
			return math.Inf(1)
		}
		sum += v[j] * v[j]
	}
	if sum == 0 {
		return 0
	}
	return sum / (2 * r.Lambda)
}

// Prox sets dst to the proximal point of τg at v: block soft-thresholding
// of each group at τw√|G|, then the shrinking 1/(1 + τλ) of every
// coordinate.
func (r *GroupLasso) Prox(dst, v []float64, tau float64) {
	r.index()
	shrink := 1 / (1 + tau*r.Lambda)
	for k := range len(r.start) - 1 {
		m, c := r.Group(k)
		f := blockShrink(groupNorm(v, m), tau*c) * shrink
		for _, j := range m {
			dst[j] = f * v[j]
		}
	}
	for _, j := range r.free {
		dst[j] = v[j] * shrink
	}
}

// PrimalFromDual sets dst = ∇g*(−v): each group's −v_G block
// soft-thresholded at w√|G| and divided by Lambda (0 where Lambda = 0 and
// the block is inside the ball, as for ElasticNet).
func (r *GroupLasso) PrimalFromDual(dst, v []float64) {
	r.index()
	if r.Lambda == 0 {
		clear(dst)
		return
	}
	inv := 1 / r.Lambda
	for k := range len(r.start) - 1 {
		m, c := r.Group(k)
		f := -blockShrink(groupNorm(v, m), c) * inv
		for _, j := range m {
			dst[j] = f * v[j]
		}
	}
	for _, j := range r.free {
		dst[j] = -v[j] * inv
	}
}

// DualScale returns the largest s in [0, 1] for which g*(−s·v) is finite:
// 1 when Lambda > 0; otherwise the largest s with ‖s·v_G‖ ≤ w√|G| for
// every group, and 0 when a coordinate in no group has vⱼ ≠ 0. Pdprox
// scales its dual point by it when g* is an indicator.
func (r *GroupLasso) DualScale(v []float64) float64 {
	r.index()
	if r.Lambda > 0 {
		return 1
	}
	for _, j := range r.free {
		if v[j] != 0 {
			return 0
		}
	}
	s := 1.0
	for k := range len(r.start) - 1 {
		m, c := r.Group(k)
		if nrm := groupNorm(v, m); nrm > c {
			s = min(s, c/nrm)
		}
	}
	return s
}

// groupNorm returns ‖v_G‖₂ over the coordinates m, scaled so that it
// neither overflows nor underflows.
func groupNorm(v []float64, m []int32) float64 {
	var big float64
	for _, j := range m {
		big = max(big, math.Abs(v[j]))
	}
	if big == 0 || math.IsInf(big, 0) || big != big {
		return big
	}
	var sq float64
	for _, j := range m {
		t := v[j] / big
		sq += t * t
	}
	return big * math.Sqrt(sq)
}

// blockShrink returns the factor (1 − t/nrm)₊ of block soft-thresholding a
// vector of norm nrm at t, and
// NaN for a NaN norm.
func blockShrink(nrm, t float64) float64 {
	if nrm != nrm {
		return nrm
	}
	if !(nrm > t) {
		return 0
	}
	return 1 - t/nrm
}
