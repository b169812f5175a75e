package objective

import "math"

// DualScale returns the largest s in [0, 1] with g*(−s·v) finite (1
// when g*(−v) is finite already), computed in closed form for the elastic
// net and the group lasso and by bisection for other regularizers, then
// lowered until the test passes in floating point. tmp is scratch of
// length len(v).
func DualScale(reg Regularizer, v, tmp []float64) float64 {
	finiteAt := func(s float64) bool {
		for j := range v {
			tmp[j] = s * v[j]
		}
		return !math.IsInf(reg.ConjNeg(tmp), 1)
	}
	if !math.IsInf(reg.ConjNeg(v), 1) {
		return 1
	}
	s := -1.0
	switch r := reg.(type) {
	case interface{ DualScale([]float64) float64 }:
		s = r.DualScale(v)
	case ElasticNet:
		s = elasticNetDualScale(r, v)
	}
	if s >= 0 {
		for range 8 {
			if finiteAt(s) {
				return s
			}
			s *= 1 - 1e-12
		}
	}
	lo, hi := 0.0, 1.0
	for range 64 {
		mid := 0.5 * (lo + hi)
		if finiteAt(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// elasticNetDualScale returns the largest s ≤ 1 with |λⱼcⱼ − s·vⱼ| ≤ lⱼ on
// every coordinate with λⱼ = 0 (where the centre term λⱼcⱼ vanishes): the
// domain of the elastic net's g*(−s·v); 0 where lⱼ = 0 and vⱼ ≠ 0.
func elasticNetDualScale(r ElasticNet, v []float64) float64 {
	s := 1.0
	for j, vj := range v {
		l1, lam, _ := r.Coord(j)
		if lam > 0 || vj == 0 {
			continue
		}
		s = min(s, l1/math.Abs(vj))
	}
	return s
}
