package vr

import (
	"math"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
)

// The coordinate store.
//
// The primal methods that keep a full gradient estimate (SAG, SAGA, SVRG)
// move every coordinate every iteration, but on sparse data most of them
// by the same map: with the step η and g the elastic net,
//
//	xⱼ ← prox_{ηg}(xⱼ − η·cⱼ),
//
// where cⱼ (the table average of SAG/SAGA, the snapshot gradient of SVRG)
// changes only when a sampled row holds j. A coordStore holds x and c and
// applies that map to every coordinate at every iteration, either at once
// (denseStore, O(d) an iteration) or just in time, when a row next reads
// the coordinate (scaledStore for L1 = 0, stampedStore for L1 > 0, O(1) a
// read). The methods see one interface; the lazy stores keep their
// scales and stamps inside and renormalise themselves, so that a run of
// any length neither underflows nor overflows.
//
// With a = 1/(1+ηλ) and the centre folded into c (c′ⱼ = cⱼ − λ·centreⱼ,
// since prox_{ηg}(v) = soft(v + ηλ·centreⱼ, η·l1)/(1+ηλ)), one step is
//
//	xⱼ ← a·soft(xⱼ − η·c′ⱼ, η·l1).
//
// An iteration of a method is: read rows with dot (or get), step the
// coordinates of the sampled row with step, end the iteration with next.
// Between a step and the next call of next, the stepped coordinates hold
// their new values in some stores and the old ones in others: read nothing.

// coordStore is the engine's coordinate store, the interface behind which
// the dense and the lazy updates of the primal methods sit.
type coordStore interface {
	// reset sets every coordinate at the current iteration: xⱼ = x[j] and
	// cⱼ = c[j] (c nil: 0).
	reset(x, c []float64)
	// get returns xⱼ at the current iteration.
	get(j int32) float64
	// dot returns Σₚ val[p]·x_{idx[p]} at the current iteration.
	dot(val []float64, idx []int32) float64
	// step replaces the current iteration's map for the coordinates of
	// one row (distinct indices, each stepped at most once an iteration) by
	//
	//	xⱼ ← prox_{ηg}(xⱼ − η·(cⱼ + u·val[p])),  then  cⱼ ← cⱼ + dc·val[p].
	step(val []float64, idx []int32, u, dc float64)
	// next ends the iteration: every coordinate that step did not move
	// takes xⱼ ← prox_{ηg}(xⱼ − η·cⱼ).
	next()
	// read writes every xⱼ at the current iteration into dst.
	read(dst []float64)
	// lazy reports whether untouched coordinates are updated when read
	// rather than every iteration.
	lazy() bool
}

// proxStep is the one-coordinate map of a store: the step η, the elastic
// net's λ and l1 and a = 1/(1+ηλ). shift is λ·centre, nil without a
// centre.
type proxStep struct {
	eta, lam, l1, a float64
	la              float64 // log a
	shift           []float64
	// geo holds eᵢ and gᵢ of geometric for i < len(geo), so that the
	// short stretches a catch-up mostly meets cost no exp.
	geo [][2]float64
}

// geoTable is the number of stretch lengths whose eᵢ, gᵢ a proxStep keeps.
const geoTable = 1024

func newProxStep(eta float64, reg objective.ElasticNet) proxStep {
	p := proxStep{eta: eta, lam: reg.Lambda, l1: reg.L1, a: 1 / (1 + eta*reg.Lambda), la: -math.Log1p(eta * reg.Lambda)}
	if p.l1 != 0 && p.lam != 0 {
		p.geo = make([][2]float64, geoTable)
		for i := range p.geo {
			p.geo[i][0], p.geo[i][1] = p.geometric(int64(i))
		}
	}
	if reg.Center != nil && reg.Lambda != 0 {
		p.shift = make([]float64, len(reg.Center))
		for j, c := range reg.Center {
			p.shift[j] = reg.Lambda * c
		}
	}
	return p
}

// apply returns a·soft(x − η·c, η·l1), one step with the folded constant c.
func (p *proxStep) apply(x, c float64) float64 {
	v := x - p.eta*c
	if p.l1 == 0 {
		return p.a * v
	}
	t := math.Abs(v) - p.eta*p.l1
	if t <= 0 {
		return 0
	}
	return p.a * math.Copysign(t, v)
}

// fold returns cⱼ − λ·centreⱼ.
func (p *proxStep) fold(j int, c float64) float64 {
	if p.shift != nil {
		c -= p.shift[j]
	}
	return c
}

// newCoordStore returns the lazy store that fits reg (scaledStore without
// L1, stampedStore with it) or, when lazy is false, a denseStore, for d
// coordinates and the step η. reg must have no weights.
func newCoordStore(lazy bool, d int, eta float64, reg objective.ElasticNet) coordStore {
	p := newProxStep(eta, reg)
	switch {
	case !lazy:
		return &denseStore{p: p, x: make([]float64, d), c: make([]float64, d), u: make([]float64, d), dc: make([]float64, d)}
	case reg.L1 == 0:
		s := &scaledStore{p: p, cs: make([]scaledCoord, d), floor: driver.UnderflowFloor}
		s.rescale()
		return s
	default:
		return &stampedStore{p: p, recs: make([]stampedCoord, d)}
	}
}

// denseStore applies the map to every coordinate at every iteration. The
// stepped rows' terms wait in u and dc until next, which moves all
// coordinates in one pass.
type denseStore struct {
	p     proxStep
	x, c  []float64 // c folded
	u, dc []float64 // this iteration's step terms, zero elsewhere
}

func (s *denseStore) lazy() bool { return false }

func (s *denseStore) reset(x, c []float64) {
	copy(s.x, x)
	for j := range s.c {
		cj := 0.0
		if c != nil {
			cj = c[j]
		}
		s.c[j] = s.p.fold(j, cj)
	}
}

func (s *denseStore) get(j int32) float64 { return s.x[j] }

func (s *denseStore) dot(val []float64, idx []int32) float64 {
	return kernels.SparseDot(val, idx, s.x)
}

func (s *denseStore) step(val []float64, idx []int32, u, dc float64) {
	val = val[:len(idx)]
	for p, j := range idx {
		s.u[j] += u * val[p]
		s.dc[j] += dc * val[p]
	}
}

func (s *denseStore) next() {
	for j := range s.x {
		s.x[j] = s.p.apply(s.x[j], s.c[j]+s.u[j])
		s.c[j] += s.dc[j]
		s.u[j], s.dc[j] = 0, 0
	}
}

func (s *denseStore) read(dst []float64) { copy(dst, s.x) }

// scaledStore is the lazy store for L1 = 0, where the map is affine,
// x ← a·x − ηa·c. With the store's running scale and sum
//
//	P_t = aᵗ,   S_t = −ηa·Σ_{s=1..t} 1/P_s   (both since the last rescale),
//
// t untouched steps from t₀ compose to x_t = P_t·(ξⱼ + cⱼS_t), where the
// scaled value ξⱼ = x_{t₀}/P_{t₀} − cⱼS_{t₀} is fixed between touches
// (S_{t+1} = S_t − ηa/P_{t+1} gives x_{t+1} = a·x_t − ηa·cⱼ). So a
// coordinate keeps ξ and c and no iteration stamp; a read costs two
// multiply-adds and an iteration O(1). P falls geometrically; when the
// next P would drop below floor, every ξ is rewritten at scale 1 (O(d),
// once per log(floor)/log(a) iterations), and read does the same. With
// λ = 0, P stays 1 and S grows by −η an iteration.
type scaledStore struct {
	p      proxStep
	cs     []scaledCoord
	pt, st float64 // P_t, S_t
	// P_{t+1}, 1/P_{t+1} and S_{t+1}, where step writes its coordinates.
	pt1, ipt1, st1 float64
	// S is a long sum of terms of one sign: its compensation (Kahan) keeps
	// it exact to rounding, as the differences S_t − S_{t₀} that a read
	// replays need, however long the stretch since the last rescale.
	stc, stc1 float64
	floor     float64
}

// scaledCoord is one coordinate of a scaledStore: ξ and the folded c.
type scaledCoord struct {
	xi, c float64
}

func (s *scaledStore) lazy() bool { return true }

// rescale rewrites every ξ at scale P = 1 (x unchanged) and sets the next
// iteration's scale.
func (s *scaledStore) rescale() {
	if s.pt != 1 || s.st != 0 {
		for j := range s.cs {
			c := &s.cs[j]
			c.xi = s.pt * (c.xi + c.c*s.st)
		}
	}
	s.pt, s.st, s.stc = 1, 0, 0
	s.advance()
}

// advance sets P_{t+1} and S_{t+1} from P_t and S_t.
func (s *scaledStore) advance() {
	s.pt1 = s.pt * s.p.a
	s.ipt1 = 1 / s.pt1
	y := -s.p.eta*s.p.a*s.ipt1 - s.stc
	s.st1 = s.st + y
	s.stc1 = (s.st1 - s.st) - y
}

func (s *scaledStore) reset(x, c []float64) {
	s.pt, s.st, s.stc = 1, 0, 0
	s.advance()
	for j := range s.cs {
		cj := 0.0
		if c != nil {
			cj = c[j]
		}
		s.cs[j] = scaledCoord{xi: x[j], c: s.p.fold(j, cj)}
	}
}

func (s *scaledStore) get(j int32) float64 {
	c := &s.cs[j]
	return s.pt * (c.xi + c.c*s.st)
}

func (s *scaledStore) dot(val []float64, idx []int32) float64 {
	var sx0, sc0, sx1, sc1 float64
	val = val[:len(idx)]
	p := 0
	for ; p+1 < len(idx); p += 2 {
		c0, c1 := &s.cs[idx[p]], &s.cs[idx[p+1]]
		v0, v1 := val[p], val[p+1]
		sx0 += v0 * c0.xi
		sc0 += v0 * c0.c
		sx1 += v1 * c1.xi
		sc1 += v1 * c1.c
	}
	if p < len(idx) {
		c, v := &s.cs[idx[p]], val[p]
		sx0 += v * c.xi
		sc0 += v * c.c
	}
	return s.pt * ((sx0 + sx1) + s.st*(sc0+sc1))
}

func (s *scaledStore) step(val []float64, idx []int32, u, dc float64) {
	val = val[:len(idx)]
	pt, st, a, eta := s.pt, s.st, s.p.a, s.p.eta
	ipt1, st1 := s.ipt1, s.st1
	for p, j := range idx {
		c := &s.cs[j]
		v := val[p]
		x := pt * (c.xi + c.c*st)
		xn := a * (x - eta*(c.c+u*v))
		c.c += dc * v
		c.xi = xn*ipt1 - c.c*st1
	}
}

func (s *scaledStore) next() {
	s.pt, s.st, s.stc = s.pt1, s.st1, s.stc1
	if s.pt*s.p.a < s.floor {
		s.rescale()
		return
	}
	s.advance()
}

func (s *scaledStore) read(dst []float64) {
	s.rescale()
	for j := range s.cs {
		dst[j] = s.cs[j].xi
	}
}

// stampedStore is the lazy store for L1 > 0. A coordinate keeps its value
// x at the iteration t₀ it was last brought up to date, and its folded c;
// a read replays the t − t₀ untouched steps in O(1) (catchUp) and writes
// the result back. The store's only running number is the iteration
// count, so nothing needs renormalising.
type stampedStore struct {
	p    proxStep
	recs []stampedCoord
	t    int64
}

// stampedCoord is one coordinate of a stampedStore: x at iteration t and
// the folded c.
type stampedCoord struct {
	x, c float64
	t    int64
}

func (s *stampedStore) lazy() bool { return true }

func (s *stampedStore) reset(x, c []float64) {
	for j := range s.recs {
		cj := 0.0
		if c != nil {
			cj = c[j]
		}
		s.recs[j] = stampedCoord{x: x[j], c: s.p.fold(j, cj), t: s.t}
	}
}

// current brings coordinate j to the current iteration and returns it.
func (s *stampedStore) current(j int32) *stampedCoord {
	r := &s.recs[j]
	if r.t != s.t {
		r.x = s.p.catchUp(r.x, r.c, s.t-r.t)
		r.t = s.t
	}
	return r
}

func (s *stampedStore) get(j int32) float64 { return s.current(j).x }

func (s *stampedStore) dot(val []float64, idx []int32) float64 {
	var sum float64
	val = val[:len(idx)]
	for p, j := range idx {
		sum += val[p] * s.current(j).x
	}
	return sum
}

func (s *stampedStore) step(val []float64, idx []int32, u, dc float64) {
	val = val[:len(idx)]
	for p, j := range idx {
		r := s.current(j)
		v := val[p]
		r.x = s.p.apply(r.x, r.c+u*v)
		r.c += dc * v
		r.t = s.t + 1
	}
}

func (s *stampedStore) next() { s.t++ }

func (s *stampedStore) read(dst []float64) {
	for j := range s.recs {
		dst[j] = s.current(int32(j)).x
	}
}

// The catch-up of the L1 map.
//
// T(x) = a·soft(x − ηc, ηl1) is affine on three regions. Where the
// positive branch B⁺(x) = a(x − η(c+l1)) is > 0, T = B⁺; where the
// negative branch B⁻(x) = a(x − η(c−l1)) is < 0, T = B⁻; elsewhere T = 0.
// T is odd in (x, c) (T_c(x) = −T_{−c}(−x)), so only the positive branch
// needs a walk. A branch B(x) = a(x − η·c_r) composes to
//
//	Bⁱ(x) = eᵢ·x − c_r·gᵢ,   eᵢ = aⁱ,   gᵢ = (1 − aⁱ)/λ  (λ = 0: gᵢ = iη),
//
// with aⁱ = exp(i·log a) and 1 − aⁱ = −expm1(i·log a), exact to rounding
// for any i. Bⁱ moves monotonically towards the fixed point −c_r/λ, so
// from a point whose next step is positive the branch stays positive for
// ever when c_r ≤ 0, and otherwise leaves at the first i with
// eᵢx ≤ c_r·gᵢ, that is i ≥ log1p(λx/c_r)/(−log a) (λ = 0: i ≥ x/(ηc_r)).
// The walk takes that closed form as a hint, checks it against Bⁱ itself
// (bisecting when rounding put it off) and applies the true T at the
// crossing. Since c is constant, the fixed points decide the direction:
// a coordinate changes region at most twice (+ → 0 → −, or into 0 for
// good when |c| ≤ l1), so a catch-up costs O(1) evaluations.

// geometric returns eᵢ and gᵢ of the branch composition.
func (p *proxStep) geometric(i int64) (e, g float64) {
	if p.lam == 0 {
		return 1, float64(i) * p.eta
	}
	return math.Exp(float64(i) * p.la), -math.Expm1(float64(i)*p.la) / p.lam
}

// branch returns Bⁱ(x) for the branch with constant cr.
func (p *proxStep) branch(x, cr float64, i int64) float64 {
	if i < int64(len(p.geo)) {
		eg := &p.geo[i]
		return eg[0]*x - cr*eg[1]
	}
	e, g := p.geometric(i)
	return e*x - cr*g
}

// catchUp returns the value after k ≥ 0 untouched steps from x with the
// folded constant c.
func (p *proxStep) catchUp(x, c float64, k int64) float64 {
	for k > 0 {
		if p.l1 == 0 {
			return p.branch(x, c, k)
		}
		if x == 0 && math.Abs(c) <= p.l1 {
			return 0 // T(0) = 0: the dead zone holds it
		}
		switch {
		case p.a*(x-p.eta*(c+p.l1)) > 0:
			x, k = p.walkPositive(x, c, k)
		case p.a*(x-p.eta*(c-p.l1)) < 0:
			x, k = p.walkPositive(-x, -c, k)
			x = -x
		default:
			x, k = 0, k-1
		}
	}
	return x
}

// walkPositive follows the positive branch from x, whose next step is
// positive, for at most k steps: it returns the value after them and the
// steps left, having applied the true map at the step where the branch
// leaves x > 0.
func (p *proxStep) walkPositive(x, c float64, k int64) (float64, int64) {
	cr := c + p.l1
	end := p.branch(x, cr, k)
	if cr <= 0 || end > 0 {
		return end, 0
	}
	if k == 1 {
		return p.apply(x, c), 0
	}
	// The branch is > 0 after 1 step and ≤ 0 after k: find the last
	// positive step in [1, k), from the closed form if rounding agrees
	// with it, else by bisection.
	var est float64
	if p.lam == 0 {
		est = x / (p.eta * cr)
	} else {
		est = math.Log1p(p.lam*x/cr) / -p.la
	}
	lo, hi := int64(1), k // branch > 0 after lo steps, ≤ 0 after hi
	if est > 1 && est < float64(k) {
		i := int64(math.Ceil(est))
		if p.branch(x, cr, i) <= 0 && p.branch(x, cr, i-1) > 0 {
			lo, hi = i-1, i
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if p.branch(x, cr, mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return p.apply(p.branch(x, cr, lo), c), k - lo - 1
}
