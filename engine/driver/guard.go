package driver

import (
	"fmt"
	"math"
	"sort"
)

// The divergence guard watches the sequence of certificates and ends a run
// that has gone wrong, instead of letting it return NaNs or nonsense.
//
// A certificate is bad when
//
//   - its primal, dual or gap is not finite;
//   - its gap exceeds divergenceFactor times the best gap seen so far, where
//     gaps below noiseFloor·max(1, |P|) count as that floor: P − D of two
//     numbers near P cannot be resolved more finely than their rounding, so
//     a converged run whose gap wanders between 0 and 1e-14·|P| is not
//     diverging;
//   - or its primal exceeds the first certificate's P₀ by divergenceFactor
//     times max(1, |P₀|) and has not fallen since the last certificate. P₀
//     is the objective of an actual point (the warm start or 0), so P* ≤ P₀:
//     a primal that far above it and still rising has left the region of
//     interest even while its gap falls, as it does when λ is so small that
//     D starts near −∞. One that is falling back is neither bad nor good: a
//     squared-hinge run on a9a at λ = 1e-6, m = 256 climbed to 7e3 in its
//     first epoch and then converged, and was stopped when this rule
//     ignored the direction.
//
// A non-finite certificate stops the run at once; the other two stop it
// when divergenceRun certificates in a row are bad. One good certificate
// resets the count.
const (
	divergenceFactor = 1e3
	divergenceRun    = 5
	noiseFloor       = 1e-12
)

// divergenceGuard holds the history the rule needs.
type divergenceGuard struct {
	seen     bool
	first    TracePoint // the first certificate, whose primal is P₀
	prev     TracePoint // the last certificate
	best     TracePoint // the certificate with the smallest gap
	run      int        // consecutive bad certificates
	runStart TracePoint // the first of them
	hint     string     // what the user can change, appended to errors
}

// observe takes the next certificate and returns an error when the run must
// stop.
func (g *divergenceGuard) observe(tp TracePoint) error {
	if !Finite(tp.Primal) || !Finite(tp.Dual) || !Finite(tp.Gap) {
		return fmt.Errorf("engine: diverged: the certificate at epoch %d has primal %v and dual %v: %s", tp.Epoch, tp.Primal, tp.Dual, g.hint)
	}
	if !g.seen {
		g.seen, g.first, g.best, g.prev = true, tp, tp, tp
		return nil
	}
	floor := noiseFloor * math.Max(1, math.Abs(tp.Primal))
	gapBad := tp.Gap > divergenceFactor*math.Max(g.best.Gap, floor)
	p0 := g.first.Primal
	high := tp.Primal-p0 > divergenceFactor*math.Max(1, math.Abs(p0))
	falling := tp.Primal < g.prev.Primal
	primalBad := high && !falling
	g.prev = tp
	if tp.Gap < g.best.Gap {
		g.best = tp
	}
	if !gapBad && !primalBad {
		if !high {
			g.run = 0
		}
		return nil
	}
	g.run++
	if g.run == 1 {
		g.runStart = tp
	}
	if g.run < divergenceRun {
		return nil
	}
	if primalBad {
		return fmt.Errorf("engine: diverging: the primal objective stood at %.4g in the first certificate (epoch %d) and above %.4g in %d certificates in a row (epochs %d to %d, now %.4g): %s",
			p0, g.first.Epoch, p0+divergenceFactor*math.Max(1, math.Abs(p0)), g.run, g.runStart.Epoch, tp.Epoch, tp.Primal, g.hint)
	}
	return fmt.Errorf("engine: diverging: the best certificate had a duality gap of %.4g (epoch %d), and %d certificates in a row were over %g times that (epochs %d to %d, now %.4g): %s",
		g.best.Gap, g.best.Epoch, g.run, divergenceFactor, g.runStart.Epoch, tp.Epoch, tp.Gap, g.hint)
}

// The stall rule ends a run whose gap has stopped falling, which the
// divergence guard does not catch: steps too small for the data (one
// feature measured in thousands sets the step of every coordinate) leave a
// gap that wanders, sometimes tenfold, around a level it does not leave.
// The best gap is a poor witness there, since a lucky certificate lowers it
// now and then; the rule compares typical gaps instead. A run stalls when
// the geometric mean of its gaps over the last Options.StallEpochs epochs is
// above (1 − stallGain) times that over the window before, each window
// holding at least stallCertificates certificates. A best gap within
// stallFloor of rounding (noiseFloor·max(1,|P|)) is converged, not stalled:
// a run asked to go on past its tolerance may sit there.
const (
	DefaultStallEpochs = 200
	// NonSmoothStallEpochs is the default window for a loss with γ = 0.
	NonSmoothStallEpochs = 2000
	stallGain            = 0.01
	stallCertificates    = 5
	stallFloor           = 100
)

// stallWatch holds the history of gaps that the stall rule needs: the
// certificates' epochs, in order, and the running sums of their log gaps,
// so that each test costs two binary searches whatever the run's length.
type stallWatch struct {
	window int       // epochs; ≤ 0: off
	epochs []int     // epoch of each certificate
	cum    []float64 // cum[i]: the sum of the first i log gaps
}

// stalled takes the next certificate and the run's best one, and reports
// whether the run has stalled, with the typical gaps of the two windows.
func (w *stallWatch) stalled(tp, best TracePoint) (before, recent float64, ok bool) {
	if w.window <= 0 {
		return 0, 0, false
	}
	// Gaps below the rounding of P count as that floor: log 0 has no mean.
	floor := noiseFloor * math.Max(1, math.Abs(tp.Primal))
	if len(w.cum) == 0 {
		w.cum = append(w.cum, 0)
	}
	w.epochs = append(w.epochs, tp.Epoch)
	w.cum = append(w.cum, w.cum[len(w.cum)-1]+math.Log(math.Max(tp.Gap, floor)))
	if best.Gap <= stallFloor*noiseFloor*math.Max(1, math.Abs(best.Primal)) {
		return 0, 0, false
	}
	e := tp.Epoch
	if e-2*w.window < w.epochs[0] {
		return 0, 0, false
	}
	// first(lo): the index of the first certificate with epoch > lo.
	first := func(lo int) int { return sort.SearchInts(w.epochs, lo+1) }
	a, b, c := first(e-2*w.window), first(e-w.window), len(w.epochs)
	if c-b < stallCertificates || b-a < stallCertificates {
		return 0, 0, false
	}
	before = math.Exp((w.cum[b] - w.cum[a]) / float64(b-a))
	recent = math.Exp((w.cum[c] - w.cum[b]) / float64(c-b))
	return before, recent, recent > (1-stallGain)*before
}

// Finite reports whether v is neither NaN nor infinite.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// MaxConditionNumber bounds R²_max/(λγ), the condition number that sets
// AdaSPDC's steps (σ ∝ √(λγ)/R, τ ∝ √γ/(R√λ)). Beyond it the regulariser
// is below the rounding of the loss at any reasonable x, the primal step
// exceeds the data's scale by more than 10⁸, and runs blow up instead of
// converging (λ = 1e-300 on heart_scale reached a primal of 8e143).
const MaxConditionNumber = 1e16
