package engine

import (
	"fmt"
	"math"
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
//     times max(1, |P₀|). P₀ is the objective of an actual point (the warm
//     start or 0), so P* ≤ P₀: a primal that far above it has left the
//     region of interest even while its gap falls, as it does when λ is so
//     small that D starts near −∞.
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
	best     TracePoint // the certificate with the smallest gap
	run      int        // consecutive bad certificates
	runStart TracePoint // the first of them
	hint     string     // what the user can change, appended to errors
}

// observe takes the next certificate and returns an error when the run must
// stop.
func (g *divergenceGuard) observe(tp TracePoint) error {
	if !finite(tp.Primal) || !finite(tp.Dual) || !finite(tp.Gap) {
		return fmt.Errorf("engine: diverged: the certificate at epoch %d has primal %v and dual %v: %s", tp.Epoch, tp.Primal, tp.Dual, g.hint)
	}
	if !g.seen {
		g.seen, g.first, g.best = true, tp, tp
		return nil
	}
	floor := noiseFloor * math.Max(1, math.Abs(tp.Primal))
	gapBad := tp.Gap > divergenceFactor*math.Max(g.best.Gap, floor)
	p0 := g.first.Primal
	primalBad := tp.Primal-p0 > divergenceFactor*math.Max(1, math.Abs(p0))
	if tp.Gap < g.best.Gap {
		g.best = tp
	}
	if !gapBad && !primalBad {
		g.run = 0
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

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// maxConditionNumber bounds R²_max/(λγ), the condition number that sets
// AdaSPDC's steps (σ ∝ √(λγ)/R, τ ∝ √γ/(R√λ)). Beyond it the regulariser
// is below the rounding of the loss at any reasonable x, the primal step
// exceeds the data's scale by more than 10⁸, and runs blow up instead of
// converging (λ = 1e-300 on heart_scale reached a primal of 8e143).
const maxConditionNumber = 1e16
