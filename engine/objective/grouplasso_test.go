package objective

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// groupLassoTestReg returns a group lasso on 9 coordinates: groups of
// sizes 3, 1, 4 (listed out of order) and one free coordinate.
func groupLassoTestReg(lambda, weight float64) *GroupLasso {
	return &GroupLasso{Lambda: lambda, Weight: weight, Groups: []int32{7, 2, 7, 5, 2, -1, 2, 2, 7}}
}

// groupLassoTestValue computes g(x) from the definition, for comparison.
func groupLassoTestValue(r *GroupLasso, x []float64) float64 {
	sq := map[int32]float64{}
	size := map[int32]int{}
	var ridge float64
	for j, g := range r.Groups {
		ridge += x[j] * x[j]
		if g >= 0 {
			sq[g] += x[j] * x[j]
			size[g]++
		}
	}
	v := 0.5 * r.Lambda * ridge
	for g, s := range sq {
		v += r.Weight * math.Sqrt(float64(size[g])) * math.Sqrt(s)
	}
	return v
}

func TestGroupLassoValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	r := groupLassoTestReg(0.3, 0.7)
	if err := r.Validate(9); err != nil {
		t.Fatal(err)
	}
	if r.NumGroups() != 3 {
		t.Errorf("NumGroups() = %d, want 3", r.NumGroups())
	}
	for range 100 {
		x := make([]float64, 9)
		for j := range x {
			x[j] = rng.NormFloat64()
		}
		if got, want := r.Value(x), groupLassoTestValue(r, x); math.Abs(got-want) > 1e-13*(1+want) {
			t.Fatalf("Value = %.17g, want %.17g", got, want)
		}
	}
	// The group norm neither overflows nor underflows.
	x := make([]float64, 9)
	x[0], x[2] = 1e300, 1e300
	if got := groupNorm(x, []int32{0, 2, 8}); math.Abs(got-math.Sqrt2*1e300) > 1e286 {
		t.Errorf("group norm of (1e300, 1e300) = %g, want √2·1e300", got)
	}
	x[0], x[2] = 3e-320, 4e-320
	if got := groupNorm(x, []int32{0, 2, 8}); math.Abs(got-5e-320) > 1e-322 {
		t.Errorf("group norm of (3e-320, 4e-320) = %g, want 5e-320", got)
	}
}

func TestGroupLassoValidate(t *testing.T) {
	for _, tc := range []struct {
		r    *GroupLasso
		d    int
		want string
	}{
		{&GroupLasso{Lambda: -1, Groups: []int32{0}}, 1, "Lambda"},
		{&GroupLasso{Lambda: math.NaN(), Groups: []int32{0}}, 1, "Lambda"},
		{&GroupLasso{Weight: math.Inf(1), Groups: []int32{0}}, 1, "weight"},
		{&GroupLasso{Weight: -2, Groups: []int32{0}}, 1, "weight"},
		{&GroupLasso{Groups: []int32{0, 1}}, 3, "2 coordinates"},
		{&GroupLasso{Groups: []int32{0, -2}}, 2, "group -2"},
	} {
		err := tc.r.Validate(tc.d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v, %d) = %v, want an error about %q", tc.r, tc.d, err, tc.want)
		}
	}
}

// TestGroupLassoProx checks the prox against a numerical reference: the
// minimiser of g(x) + ‖x − v‖²/(2τ) is found by golden-section search over
// each group's coordinate along v_G (the minimiser's direction, since
// moving across it raises both terms), and random perturbations of the
// result must not lower the objective.
func TestGroupLassoProx(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 8))
	for _, lw := range [][2]float64{{0, 0.5}, {0.3, 0.5}, {1, 0}, {0, 2}, {2, 0.05}} {
		r := groupLassoTestReg(lw[0], lw[1])
		for range 200 {
			tau := math.Pow(10, -2+3*rng.Float64())
			v := make([]float64, 9)
			for j := range v {
				v[j] = 2 * rng.NormFloat64()
			}
			got := make([]float64, 9)
			r.Prox(got, v, tau)
			obj := func(x []float64) float64 {
				var d float64
				for j := range x {
					d += (x[j] - v[j]) * (x[j] - v[j])
				}
				return r.Value(x) + d/(2*tau)
			}
			// Reference, group by group along v_G: t ↦ the group's share of
			// the objective at x_G = t·v_G/‖v_G‖.
			want := make([]float64, 9)
			for g, members := range map[int32][]int{7: {0, 2, 8}, 2: {1, 4, 6, 7}, 5: {3}, -1: {5}} {
				var nv float64
				for _, j := range members {
					nv += v[j] * v[j]
				}
				nv = math.Sqrt(nv)
				c := lw[1] * math.Sqrt(float64(len(members)))
				if g < 0 {
					c = 0
				}
				share := func(s float64) float64 { return c*math.Abs(s) + 0.5*lw[0]*s*s + (s-nv)*(s-nv)/(2*tau) }
				s, _ := lossTestGoldenMin(share, 0, nv)
				for _, j := range members {
					want[j] = s * v[j] / nv
				}
			}
			for j := range got {
				if math.Abs(got[j]-want[j]) > 1e-7*(1+math.Abs(want[j])) {
					t.Fatalf("λ=%g w=%g τ=%g: Prox coordinate %d = %.12g, golden section %.12g", lw[0], lw[1], tau, j, got[j], want[j])
				}
			}
			f := obj(got)
			for range 20 {
				p := append([]float64(nil), got...)
				for j := range p {
					p[j] += 1e-4 * rng.NormFloat64()
				}
				if fp := obj(p); fp < f-1e-13*(1+math.Abs(f)) {
					t.Fatalf("λ=%g w=%g τ=%g: a perturbation of the prox lowers the objective from %.17g to %.17g", lw[0], lw[1], tau, f, fp)
				}
			}
		}
	}
	// dst may be v.
	r := groupLassoTestReg(0.5, 0.5)
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	want := make([]float64, 9)
	r.Prox(want, v, 0.7)
	r.Prox(v, v, 0.7)
	for j := range v {
		if v[j] != want[j] {
			t.Fatalf("in-place Prox differs at %d: %g vs %g", j, v[j], want[j])
		}
	}
}

// TestGroupLassoConjugate checks g*(−v) = sup_x (−vᵀx − g(x)) by golden
// section along −v_G in each group, the Fenchel–Young inequality at random
// points, its equality at x = PrimalFromDual(v), and the λ = 0 indicator.
func TestGroupLassoConjugate(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, lw := range [][2]float64{{0.3, 0.5}, {1, 0}, {2, 0.05}, {0.01, 1}} {
		lam, w := lw[0], lw[1]
		r := groupLassoTestReg(lam, w)
		for range 200 {
			v := make([]float64, 9)
			for j := range v {
				v[j] = rng.NormFloat64()
			}
			var want float64
			for g, members := range map[int32][]int{7: {0, 2, 8}, 2: {1, 4, 6, 7}, 5: {3}, -1: {5}} {
				var nv float64
				for _, j := range members {
					nv += v[j] * v[j]
				}
				nv = math.Sqrt(nv)
				c := w * math.Sqrt(float64(len(members)))
				if g < 0 {
					c = 0
				}
				// x_G = −s·v_G/‖v_G‖: −vᵀx − g = s‖v_G‖ − cs − (λ/2)s².
				negGain := func(s float64) float64 { return -(s*nv - c*s - 0.5*lam*s*s) }
				_, m := lossTestGoldenMin(negGain, 0, 10*nv/lam+1)
				want -= m
			}
			got := r.ConjNeg(v)
			if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("λ=%g w=%g: ConjNeg = %.15g, numerical sup %.15g", lam, w, got, want)
			}
			x := make([]float64, 9)
			for j := range x {
				x[j] = rng.NormFloat64()
			}
			if fy := r.Value(x) + got + dot9(v, x); fy < -1e-12 {
				t.Fatalf("λ=%g w=%g: Fenchel–Young g(x) + g*(−v) + vᵀx = %g < 0", lam, w, fy)
			}
			r.PrimalFromDual(x, v)
			if fy := r.Value(x) + got + dot9(v, x); math.Abs(fy) > 1e-12*(1+math.Abs(got)) {
				t.Fatalf("λ=%g w=%g: at x = ∇g*(−v) the Fenchel–Young gap is %g, want 0", lam, w, fy)
			}
		}
	}
	// λ = 0: the indicator of ‖v_G‖ ≤ w√|G| and v = 0 off the groups, and
	// DualScale is the largest s ≤ 1 that keeps s·v inside.
	r := groupLassoTestReg(0, 1)
	v := []float64{0.5, 0.1, 0.5, 0.2, 0.1, 0, 0.1, 0.1, 0.5}
	if got := r.ConjNeg(v); got != 0 {
		t.Errorf("λ=0: ConjNeg inside the balls = %g, want 0", got)
	}
	if s := r.DualScale(v); s != 1 {
		t.Errorf("λ=0: DualScale inside = %g, want 1", s)
	}
	v[3] = 4 // group 5 has one coordinate: ‖v_G‖ ≤ 1
	if got := r.ConjNeg(v); !math.IsInf(got, 1) {
		t.Errorf("λ=0: ConjNeg outside a ball = %g, want +Inf", got)
	}
	if s := r.DualScale(v); s != 0.25 {
		t.Errorf("λ=0: DualScale = %g, want 0.25", s)
	}
	if s := DualScale(r, v, make([]float64, 9)); !(s <= 0.25 && s > 0.25*(1-1e-10)) {
		t.Errorf("λ=0: DualScale = %g, want 0.25", s)
	}
	v[5] = 1e-3 // the free coordinate
	if got, s := r.ConjNeg(v), r.DualScale(v); !math.IsInf(got, 1) || s != 0 {
		t.Errorf("λ=0 with v ≠ 0 on a free coordinate: ConjNeg = %g, DualScale = %g; want +Inf and 0", got, s)
	}
}

func dot9(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestGroupLassoNoAllocations(t *testing.T) {
	r := groupLassoTestReg(0.3, 0.5)
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	dst := make([]float64, 9)
	r.Value(v) // builds the index
	allocs := testing.AllocsPerRun(50, func() {
		r.Prox(dst, v, 0.1)
		r.PrimalFromDual(dst, v)
		_ = r.Value(v) + r.ConjNeg(v) + r.DualScale(v)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per call, want 0", allocs)
	}
}

func TestReadGroups(t *testing.T) {
	in := "# groups of the test\n1 0\n3\t0  # trailing comment\n\n2 5\n5 -1\n"
	got, err := ReadGroups(strings.NewReader(in), "g.txt", 6)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 5, 0, -1, -1, -1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ReadGroups = %v, want %v", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"1 0\n1 2\n", "g.txt, line 2: feature 1 is listed again (first on line 1)"},
		{"1\n", "g.txt, line 1: want \"feature group\", got 1 fields"},
		{"1 2 3\n", "line 1: want \"feature group\", got 3 fields"},
		{"# c\n0 1\n", "line 2: feature \"0\" is not an index ≥ 1"},
		{"x 1\n", "line 1: feature \"x\" is not an index ≥ 1"},
		{"7 1\n", "line 1: feature 7 is beyond the data's 6 features"},
		{"2 -2\n", "line 1: group \"-2\" is not an integer from -1 to 2147483647"},
		{"2 1.5\n", "line 1: group \"1.5\" is not an integer"},
		{"2 2147483648\n", "line 1: group \"2147483648\" is not an integer"},
		{"1 1\n" + strings.Repeat("9", maxGroupsLine+10) + "\n", "g.txt, line 2: longer than"},
	} {
		_, err := ReadGroups(strings.NewReader(tc.in), "g.txt", 6)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadGroups(%.30q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
	if _, err := ReadGroups(strings.NewReader("1 1\n"), "g.txt", 0); err == nil {
		t.Errorf("ReadGroups with d = 0 succeeded")
	}
	if _, err := ReadGroupsFile("/nonexistent/groups", 3); err == nil || !strings.Contains(err.Error(), "/nonexistent/groups") {
		t.Errorf("ReadGroupsFile of a missing file: %v, want an error naming it", err)
	}
}

// FuzzReadGroups checks that the reader never panics, that what it accepts
// is a valid group vector for GroupLasso, and that writing it back in the
// documented format reads the same.
func FuzzReadGroups(f *testing.F) {
	for _, s := range []string{"1 0\n2 0\n3 1\n", "# x\n\n4 -1 # y\n", "1 0\n1 0\n", "2147483648 1", "3 2147483647\r\n", "\x00 1"} {
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, in string, d8 uint8) {
		d := int(d8%16) + 1
		g, err := ReadGroups(strings.NewReader(in), "fuzz", d)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "engine: groups file fuzz") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(g) != d {
			t.Fatalf("%d groups for %d features", len(g), d)
		}
		r := &GroupLasso{Weight: 1, Groups: g}
		if err := r.Validate(d); err != nil {
			t.Fatalf("accepted groups fail Validate: %v", err)
		}
		var sb strings.Builder
		for j, id := range g {
			fmt.Fprintf(&sb, "%d %d\n", j+1, id)
		}
		again, err := ReadGroups(strings.NewReader(sb.String()), "fuzz", d)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(g) {
			t.Fatalf("round trip: %v, %v; want %v", again, err, g)
		}
	})
}
