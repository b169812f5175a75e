package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Method is what the driver needs from a solver: run whole epochs, and
// certify the current point. A method owns its iterate, its workers and its
// bookkeeping (lazy segments, barriers); the driver owns the run: when to
// certify, when to stop, divergence, the trace and the best model.
type Method interface {
	// RunEpochs runs k epochs and returns how many it started; it may stop
	// early when ctx is done. Afterwards Point and Certify see the state
	// at the end of the last iteration.
	RunEpochs(ctx context.Context, k int) (int, error)
	// Certify returns P, D and the gap at the current point, from the
	// problem's objective.Evaluator (NewEvaluator); Epoch, Passes, the
	// times and Threads are the driver's to fill.
	Certify() (TracePoint, error)
	// Point is the current primal point; the driver copies it.
	Point() []float64
	// Passes is the work done so far, in passes over the data.
	Passes() float64
	// Threads is the number of workers the iterations run on.
	Threads() int
	// DivergenceHint is the advice the divergence error ends with.
	DivergenceHint() string
}

// StopRule decides, after each certificate, whether a run has done enough,
// from the whole trace so far (the last entry is the newest certificate).
// It runs after the tolerance, target, epoch and time tests, so it can
// only end a run earlier. Stall detection and the reductions that
// restart a method with a new centre or smoothing (AdaptReg,
// AdaptSmooth) are stop rules.
type StopRule func(trace []TracePoint) bool

// drive runs m to the stopping rules of opt. The Result it returns is
// never nil; after an error it holds the trace so far and, once one
// certificate exists, the best point in bestX.
func Run(ctx context.Context, m Method, opt Options) (*Result, error) {
	res := &Result{Threads: m.Threads()}
	start := time.Now()
	guard := divergenceGuard{hint: m.DivergenceHint()}
	stall := stallWatch{window: opt.StallEpochs}
	var iterTime time.Duration
	epoch, lastCheck := 0, -1
	var lastGap float64
	for {
		tp, err := m.Certify()
		if err != nil {
			res.Stop = "panic"
			return res, err
		}
		if tp.Gap < 0 {
			// P and D each carry their rounding; at the optimum D can come
			// out a few ulps above P. The gap is P − D's best estimate, 0.
			tp.Gap, tp.RelGap = 0, 0
		}
		tp.Epoch = epoch
		tp.Passes = m.Passes()
		tp.Seconds = time.Since(start).Seconds()
		tp.IterSeconds = iterTime.Seconds()
		// The method may settle its worker count in its first epochs.
		res.Threads = m.Threads()
		tp.Threads = res.Threads
		res.Trace = append(res.Trace, tp)
		res.Final = tp
		if err := guard.observe(tp); err != nil {
			res.Stop = "diverged"
			return res, err
		}
		if len(res.Trace) == 1 || tp.Gap < res.Best.Gap || tp.Gap == res.Best.Gap && tp.Primal < res.Best.Primal {
			res.Best = tp
			res.bestX = append(res.bestX[:0], m.Point()...)
			if opt.Checkpoint != nil {
				var duals []float64
				if d, ok := m.(DualIterate); ok {
					duals = d.DualPoint()
				}
				opt.Checkpoint(tp, res.bestX, duals)
			}
		}
		if opt.Callback != nil {
			if err := opt.Callback(tp); err != nil {
				res.Stop = "callback"
				if errors.Is(err, ErrStop) {
					return res, nil
				}
				return res, err
			}
		}
		switch {
		case tp.RelGap <= opt.Tol:
			res.Converged, res.Stop = true, "tol"
			return res, nil
		case opt.TargetPrimal > 0 && tp.Primal <= opt.TargetPrimal:
			res.Stop = "target"
			return res, nil
		case epoch >= opt.MaxEpochs:
			res.Stop = "max-epochs"
			return res, nil
		case ctx.Err() != nil:
			res.Stop = "context"
			if errors.Is(context.Cause(ctx), ErrTimeLimit) {
				res.Stop = "time"
			}
			return res, nil
		case opt.StopRule != nil && opt.StopRule(res.Trace):
			res.Stop = "rule"
			return res, nil
		}
		if before, recent, stalled := stall.stalled(tp, res.Best); stalled {
			res.Stop = "stalled"
			w := opt.StallEpochs
			res.StallNote = fmt.Sprintf("the duality gap has stopped falling: over epochs %d to %d it was %.4g (geometric mean), over the %d epochs before %.4g, less than %g%% lower; the best was %.4g at epoch %d: %s",
				epoch-w+1, epoch, recent, w, before, 100*stallGain, res.Best.Gap, res.Best.Epoch, opt.StallHint)
			return res, nil
		}
		next := epoch + CheckInterval(opt, tp, epoch-lastCheck, lastGap)
		if opt.StopRule != nil {
			next = epoch + 1 // the rule sees every epoch
		}
		lastCheck, lastGap = epoch, tp.Gap
		t0 := time.Now()
		if k := min(next, opt.MaxEpochs) - epoch; k > 0 && ctx.Err() == nil {
			done, err := m.RunEpochs(ctx, k)
			epoch += done
			if errors.Is(err, ErrCannotMove) && AtRounding(res.Best) {
				// The method sits at the optimum to the precision of
				// float64: no epoch can change the point any more, so
				// the run has converged whatever Tol asked for.
				res.Converged, res.Stop = true, "optimal"
				return res, nil
			}
			if err != nil {
				res.Stop = "panic"
				if errors.Is(err, ErrCannotMove) {
					res.Stop = "stuck"
				}
				return res, err
			}
		}
		iterTime += time.Since(t0)
	}
}

// ModelPoint returns the point a run hands back as its model, given the
// method's last point and the run's error, and sets res.Model to its
// certificate: the last point when the run met its goal or ran the epochs
// asked for (Stop "tol", "target" or "max-epochs", so that a run of
// exactly k epochs returns its k-th iterate); otherwise, the error paths
// included, the point of the best certificate, which can be far better
// than the last iterate of a run cut short (an interrupt in a bad phase of
// the gap, a stall). It returns nil when the run failed before its first
// certificate.
func (res *Result) ModelPoint(last []float64, err error) []float64 {
	if err == nil && (res.Stop == "tol" || res.Stop == "target" || res.Stop == "max-epochs") {
		res.Model = res.Final
		return last
	}
	if res.bestX == nil {
		return nil
	}
	res.Model = res.Best
	return res.bestX
}

// errTimeLimit is the cause of the context that Options.TimeLimit sets.
var ErrTimeLimit = errors.New("time limit reached")

// errCannotMove is returned, wrapped, by a method's runEpochs when its next
// step cannot change the point in float64 arithmetic (a Newton direction
// whose slope rounds to zero). At a gap within the rounding of P
// (atRounding) that is convergence, and the driver ends the run as
// converged (Result.Stop "optimal"); above it, the run fails with the
// method's error, since more epochs would only repeat the same step.
var ErrCannotMove = errors.New("the point cannot move in double precision")

// AtRounding reports whether a certificate's gap is within the rounding of
// its primal: stallFloor·noiseFloor·max(1, |P|), a relative gap of 1e-10.
// Sums of n losses and d squares each carry relative errors of order
// n·2⁻⁵³ in P and D, so no tolerance below that floor can be certified
// reliably.
func AtRounding(tp TracePoint) bool {
	return tp.Gap <= stallFloor*noiseFloor*math.Max(1, math.Abs(tp.Primal))
}

// CheckInterval decides how many epochs to run before the next certificate,
// which costs about a third of an epoch. Far from the tolerance it extrapolates
// the gap's linear rate from the last two certificates and checks again about
// halfway to the predicted end, at most 8 epochs later; near it, and whenever
// the rate is unknown or stalls, every epoch. The rule depends only on
// computed values, which are bit-identical across thread counts, so it
// keeps runs deterministic.
func CheckInterval(opt Options, tp TracePoint, since int, prevGap float64) int {
	if since <= 0 || !(tp.Gap > 0) || !(prevGap > tp.Gap) {
		return 1
	}
	rate := math.Log(tp.Gap/prevGap) / float64(since) // < 0: log of the per-epoch contraction
	need := math.Inf(1)
	if opt.Tol > 0 {
		need = math.Log(opt.Tol*math.Max(1, math.Abs(tp.Primal))/tp.Gap) / rate
	}
	if opt.TargetPrimal > 0 {
		// P ≤ target is certain once the gap is below target − D.
		if slack := opt.TargetPrimal - tp.Dual; slack > 0 {
			need = math.Min(need, math.Log(slack/tp.Gap)/rate)
		} else {
			return 1
		}
	}
	if math.IsInf(need, 1) || math.IsNaN(need) {
		return 1
	}
	return int(math.Min(8, math.Max(1, math.Floor(need/2))))
}

// DualIterate is implemented by methods that keep one dual variable per
// sample; the reductions certify the original problem at those duals.
type DualIterate interface {
	// DualPoint returns the dual iterate, one value per row.
	DualPoint() []float64
}

// DualWarmStarter is implemented by methods with a dual iterate that can
// take one: a stage then continues from the last stage's duals instead of
// φ'(aₖᵀx), which at a small smoothing is far from them (the restart gap
// was 10⁴ times the last stage's on heart_scale).
type DualWarmStarter interface {
	// WarmDuals sets the duals to y before the first epoch.
	WarmDuals(y []float64) error
}
