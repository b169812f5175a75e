package hugepage

import "testing"

// TestMake checks that Make returns zeroed slices of the asked length, on
// both sides of the threshold, and that they can be written.
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, Threshold/8 - 1, Threshold / 8, 3*Threshold/8 + 5} {
		s := Make[float64](n)
		if len(s) != n {
			t.Fatalf("Make(%d): length %d", n, len(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("Make(%d)[%d] = %g, want 0", n, i, v)
			}
			s[i] = float64(i)
		}
	}
	if b := Make[int32](Threshold); len(b) != Threshold {
		t.Fatalf("Make[int32]: length %d", len(b))
	}
	type triple [3]float64 // 24 bytes: not a divisor of Size
	if s := Make[triple](Threshold); len(s) != Threshold {
		t.Fatalf("Make[triple]: length %d", len(s))
	}
}

// BenchmarkFill measures filling 64 MiB of fresh memory, with make and with
// Make: the cost of the page faults.
func BenchmarkFill(b *testing.B) {
	for _, bc := range []struct {
		name string
		mk   func(int) []float64
	}{{"make", func(n int) []float64 { return make([]float64, n) }}, {"Make", Make[float64]}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(64 << 20)
			for b.Loop() {
				v := bc.mk(8 << 20)
				for i := range v {
					v[i] = 1
				}
			}
		})
	}
}
