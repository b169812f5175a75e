package driver

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// TestDivergenceRule drives the divergence guard with certificate
// sequences: the rule is relative to |P|, counts only consecutive bad
// certificates, and also watches the primal.
func TestDivergenceRule(t *testing.T) {
	seq := func(gaps []float64, primal func(i int) float64) error {
		g := divergenceGuard{hint: "hint"}
		for i, gap := range gaps {
			p := primal(i)
			if err := g.observe(TracePoint{Epoch: i, Primal: p, Dual: p - gap, Gap: gap}); err != nil {
				return err
			}
		}
		return nil
	}
	flat := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	// Converged at |P| = 3e8: the gap wanders between 0 and 1e-5 (3e-14 of P).
	noise := []float64{1e3, 1, 1e-4, 0, 3.1e-6, 0, 1e-5, 2e-6, 8e-6, 3e-6, 1e-5}
	if err := seq(noise, flat(3e8)); err != nil {
		t.Errorf("rounding noise of a converged run called divergence: %v", err)
	}
	grow := []float64{1, 1e-3, 2, 3, 4, 5, 6}
	if err := seq(grow, flat(10)); err == nil || !strings.Contains(err.Error(), "5 certificates in a row") {
		t.Errorf("five consecutive thousandfold gaps: %v", err)
	}
	gappy := []float64{1, 1e-3, 2, 3, 1e-3, 4, 5, 1e-3, 6, 7}
	if err := seq(gappy, flat(10)); err != nil {
		t.Errorf("non-consecutive bad certificates called divergence: %v", err)
	}
	// λ tiny: the gap falls from 1e150 while the primal runs away.
	falling := []float64{1e150, 1e149, 1e148, 1e147, 1e146, 1e145, 1e144}
	if err := seq(falling, func(i int) float64 { return []float64{0.69, 1e10, 1e20, 1e40, 1e80, 1e120, 1e143}[i] }); err == nil || !strings.Contains(err.Error(), "primal") {
		t.Errorf("primal blow-up with a falling gap: %v", err)
	}
	if err := seq([]float64{1, math.NaN()}, flat(1)); err == nil {
		t.Error("NaN gap accepted")
	}
}

// TestRowSweepChunks: on data large enough for two workers, the dynamic
// sweep cuts more chunks than workers, and the chunks cover the rows in
// order.
func TestRowSweepChunks(t *testing.T) {
	x := wideRows(4000, 1<<15+100, 20)
	s := NewRowSweep(x, 2, true)
	defer s.Close()
	if !s.dynamic || s.Chunks() <= 2 {
		t.Errorf("NewRowSweep on %d nonzeros, two workers: %d chunks, dynamic %v; want more chunks than workers", x.NNZ(), s.Chunks(), s.dynamic)
	}
	for c := range s.Chunks() {
		if s.bounds[c] > s.bounds[c+1] {
			t.Fatalf("chunk %d: rows %d:%d", c, s.bounds[c], s.bounds[c+1])
		}
	}
	if s.bounds[0] != 0 || s.bounds[s.Chunks()] != x.Rows {
		t.Errorf("chunks cover rows %d:%d, want 0:%d", s.bounds[0], s.bounds[s.Chunks()], x.Rows)
	}
}

// TestGuardLetsAFallingPrimalRecover: a primal far above P₀ that falls
// back while the gap falls is not divergence; the same primal rising is.
func TestGuardLetsAFallingPrimalRecover(t *testing.T) {
	run := func(primal, gap []float64) error {
		g := divergenceGuard{hint: "hint"}
		for i := range primal {
			if err := g.observe(TracePoint{Epoch: i, Primal: primal[i], Dual: primal[i] - gap[i], Gap: gap[i]}); err != nil {
				return err
			}
		}
		return nil
	}
	// The a9a squared-hinge run at λ = 1e-6, m = 256: 1 → 7443, then down.
	recovering := []float64{1, 7443, 5000, 3000, 2000, 1500, 1200, 900, 40, 3, 0.5}
	gaps := []float64{3.6e6, 6e5, 3e5, 1e5, 5e4, 3e4, 2e4, 1e4, 100, 10, 1}
	if err := run(recovering, gaps); err != nil {
		t.Errorf("a primal falling back from a first-epoch jump was called divergence: %v", err)
	}
	rising := []float64{1, 7443, 8000, 9000, 9500, 9900, 12000, 15000}
	if err := run(rising, gaps[:len(rising)]); err == nil || !strings.Contains(err.Error(), "primal") {
		t.Errorf("a primal rising far above P₀: %v, want a divergence error about the primal", err)
	}
	// High and falling, then rising again: the falling certificate neither
	// counts nor resets, so five rising ones still stop the run.
	zigzag := []float64{1, 7443, 8000, 7000, 9000, 9500, 9900, 12000}
	if err := run(zigzag, gaps[:len(zigzag)]); err == nil {
		t.Error("a primal rising around one falling certificate was not stopped")
	}
}

// TestStallRule drives the stall rule with best-gap sequences.
func TestStallRule(t *testing.T) {
	stalls := func(window int, gaps []float64, every int) (int, bool) {
		w := stallWatch{window: window}
		best := math.Inf(1)
		for i, g := range gaps {
			best = math.Min(best, g)
			tp := TracePoint{Epoch: i * every, Primal: 1, Gap: g}
			if _, _, ok := w.stalled(tp, TracePoint{Epoch: i * every, Primal: 1, Gap: best}); ok {
				return i * every, true
			}
		}
		return 0, false
	}
	flat := make([]float64, 60)
	for i := range flat {
		flat[i] = 7 + 0.001*math.Sin(float64(i))
	}
	if e, ok := stalls(200, flat, 8); !ok || e < 400 || e > 408 {
		t.Errorf("flat gap: stalled %v at epoch %d, want a stop at epoch 400–408", ok, e)
	}
	noisy := make([]float64, 120) // wandering tenfold around 500, lucky lows included
	for i := range noisy {
		noisy[i] = 500 * math.Pow(10, math.Sin(float64(i)*1.7)) / (1 + 0.01*float64(i%40))
	}
	if e, ok := stalls(200, noisy, 8); !ok || e > 480 {
		t.Errorf("a gap wandering around one level: stalled %v at epoch %d, want a stop by epoch 480", ok, e)
	}
	slow := make([]float64, 100) // 2% lower every 100 epochs: slow, not stalled
	for i := range slow {
		slow[i] = math.Pow(0.98, float64(i*8)/100)
	}
	if e, ok := stalls(200, slow, 8); ok {
		t.Errorf("a gap falling 2%% per 100 epochs was called stalled at epoch %d", e)
	}
	floor := make([]float64, 60) // converged: rounding noise below the floor
	for i := range floor {
		floor[i] = 1e-13 * float64(i%3)
	}
	if e, ok := stalls(200, floor, 8); ok {
		t.Errorf("a gap at rounding level was called stalled at epoch %d", e)
	}
	if _, ok := stalls(-1, flat, 8); ok {
		t.Error("the rule fired although switched off")
	}
	if _, ok := stalls(200, flat[:4], 100); ok {
		t.Error("the rule fired on fewer than five certificates in its window")
	}
}

// wideRows returns n rows of perRow entries each, spread over d columns.
func wideRows(n, d, perRow int) *sparse.CSR {
	x := &sparse.CSR{Rows: n, Cols: d, Indptr: make([]int64, n+1)}
	for k := range n {
		for q := range perRow {
			x.Indices = append(x.Indices, int32((k*7919+q*(d/perRow))%d))
			x.Values = append(x.Values, 1)
		}
		slices.Sort(x.Indices[x.Indptr[k]:])
		x.Indptr[k+1] = int64(len(x.Indices))
	}
	return x
}

// TestResultAddNote checks that a note's clauses are joined by "; " and that
// the first has nothing before it.
func TestResultAddNote(t *testing.T) {
	var r Result
	r.AddNote("a")
	r.AddNote("b")
	if r.Note != "a; b" {
		t.Errorf("note %q, want %q", r.Note, "a; b")
	}
}
