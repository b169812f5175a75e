package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/adaspdc/adaspdc/engine/driver"
)

// scripted is a method whose certificates come from a list: epoch e's
// point is {e}, and runEpochs fails with err once the list runs out.
type scripted struct {
	gaps   []float64 // gap of the certificate at each epoch
	primal []float64 // primal at each epoch; nil: 1 + gap
	epoch  int
	err    error // returned once the script is exhausted
	x      []float64
}

func (s *scripted) RunEpochs(ctx context.Context, k int) (int, error) {
	if s.epoch+1 >= len(s.gaps) {
		return 0, s.err
	}
	s.epoch++
	return 1, nil
}

func (s *scripted) Certify() (TracePoint, error) {
	g := s.gaps[s.epoch]
	p := 1 + g
	if s.primal != nil {
		p = s.primal[s.epoch]
	}
	s.x = []float64{float64(s.epoch)}
	return TracePoint{Primal: p, Dual: p - g, Gap: g, RelGap: g / max(1, p)}, nil
}

func (s *scripted) Point() []float64       { return s.x }
func (s *scripted) Passes() float64        { return float64(s.epoch) }
func (s *scripted) Threads() int           { return 1 }
func (s *scripted) DivergenceHint() string { return "scripted" }

// outcome runs a script through the driver and returns what Train would
// hand back: the model's point (its epoch), the result and the error.
func outcome(s *scripted, opt Options) (int, *Result, error) {
	opt = opt.WithDefaults()
	res, err := driver.Run(context.Background(), s, opt)
	w := res.ModelPoint(s.Point(), err)
	if w == nil {
		return -1, res, err
	}
	return int(w[0]), res, err
}

// TestRunsCutShortReturnTheBest: a run cut short (a stall, the caller's
// stop, a time limit or an interrupt) returns the point of its best
// certificate, with Result.Model saying which; a run that meets its
// tolerance or runs its epochs returns its last point.
func TestRunsCutShortReturnTheBest(t *testing.T) {
	gaps := []float64{1, 1e-3, 0.5, 0.4}
	e, res, err := outcome(&scripted{gaps: gaps}, Options{Tol: 1e-9, MaxEpochs: 3, StallEpochs: -1})
	if err != nil || res.Stop != "max-epochs" || e != 3 || res.Model.Epoch != 3 {
		t.Errorf("max-epochs: model from epoch %d (certificate %+v), stop %q, err %v; want the last, epoch 3", e, res.Model, res.Stop, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	opt := Options{Tol: 1e-9, MaxEpochs: 3, StallEpochs: -1}.WithDefaults()
	opt.Callback = func(tp TracePoint) error {
		if tp.Epoch == 2 {
			cancel()
		}
		return nil
	}
	s := &scripted{gaps: gaps}
	res, err = driver.Run(ctx, s, opt)
	if w := res.ModelPoint(s.Point(), err); err != nil || res.Stop != "context" || w[0] != 1 || res.Model.Epoch != 1 {
		t.Errorf("interrupted: model %v (certificate %+v), stop %q, err %v; want epoch 1", w, res.Model, res.Stop, err)
	}
	e, res, _ = outcome(&scripted{gaps: []float64{1, 0.5, 0.6, 0.4}}, Options{Tol: 0.3, MaxEpochs: 3, StallEpochs: -1})
	if res.Stop != "tol" || e != 3 || res.Model.Epoch != 3 {
		t.Errorf("tol: model from epoch %d, stop %q; want the last, epoch 3", e, res.Stop)
	}
	opt = Options{Tol: 1e-9, MaxEpochs: 3, StallEpochs: -1}
	opt.Callback = func(tp TracePoint) error {
		if tp.Epoch == 2 {
			return ErrStop
		}
		return nil
	}
	if e, res, _ = outcome(&scripted{gaps: gaps}, opt); res.Stop != "callback" || e != 1 {
		t.Errorf("callback: model from epoch %d, stop %q; want epoch 1", e, res.Stop)
	}
}

// TestNegativeGapClamped: a certificate whose D rounds above P has gap 0,
// and of two certificates with gap 0 the one with the lower primal is the
// best, whichever came first.
func TestNegativeGapClamped(t *testing.T) {
	s := &scripted{gaps: []float64{1, -5e-17, -1e-16, 0.5}, primal: []float64{2, 0.36, 0.35, 1}}
	_, res, _ := outcome(s, Options{Tol: -1, MaxEpochs: 3, StallEpochs: -1})
	for _, tp := range res.Trace {
		if tp.Gap < 0 || tp.RelGap < 0 {
			t.Errorf("epoch %d: gap %g, relative %g; want ≥ 0", tp.Epoch, tp.Gap, tp.RelGap)
		}
	}
	if res.Best.Epoch != 2 {
		t.Errorf("best epoch %d, want 2: equal gaps, lower primal", res.Best.Epoch)
	}
}

// TestCannotMoveAtRounding: a method that can no longer move its point has
// converged when its best gap is within rounding (Stop "optimal", no
// error, whatever Tol asked), and has failed when the gap is above it.
func TestCannotMoveAtRounding(t *testing.T) {
	stuck := fmt.Errorf("test: %w", driver.ErrCannotMove)
	e, res, err := outcome(&scripted{gaps: []float64{1, 1e-3, 1e-14}, err: stuck}, Options{Tol: 0, MaxEpochs: 50, StallEpochs: -1})
	if err != nil || res.Stop != "optimal" || !res.Converged || e != 2 {
		t.Errorf("at rounding: stop %q, converged %v, err %v, model epoch %d; want optimal, converged, epoch 2", res.Stop, res.Converged, err, e)
	}
	e, res, err = outcome(&scripted{gaps: []float64{1, 1e-3}, err: stuck}, Options{Tol: 0, MaxEpochs: 50, StallEpochs: -1})
	if !errors.Is(err, driver.ErrCannotMove) || res.Stop != "stuck" || res.Converged || e != 1 {
		t.Errorf("above rounding: stop %q, converged %v, err %v, model epoch %d; want the error, stuck, epoch 1", res.Stop, res.Converged, err, e)
	}
}

// TestNewtonAtRoundingConverges: Newton asked for a zero gap on
// heart_scale-sized data stops at the optimum to rounding without error.
func TestNewtonAtRoundingConverges(t *testing.T) {
	x, b := sparseData(270, 13, 13, 3)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1.0 / 270}}
	_, res, err := Train(context.Background(), prob, Options{Solver: SolverNewton, Tol: 0, MaxEpochs: 50})
	if err != nil || res.Stop != "optimal" && res.Stop != "tol" {
		t.Fatalf("stop %q, err %v; want the optimum to rounding", res.Stop, err)
	}
	if !res.Converged {
		t.Errorf("stop %q but not converged", res.Stop)
	}
}

// TestReductionRefusesInnerWithoutCentre: AdaptReg centres every stage
// after the first at the last stage's point, so an inner solver that takes
// no centre is refused before the first stage, not at the second.
func TestReductionRefusesInnerWithoutCentre(t *testing.T) {
	x, b := sparseData(200, 20, 5, 2)
	prob := Problem{X: x, B: b, Loss: Logistic{}, Reg: ElasticNet{Lambda: 1e-2}}
	m, _, err := Train(context.Background(), prob, Options{Solver: SolverAdaptReg, Tol: 1e-6, MaxEpochs: 100}.With(ReductionSettings{Inner: SolverSPDCAsync}))
	if err == nil || m != nil {
		t.Fatalf("adaptreg over spdc-async was accepted (model %v)", m != nil)
	}
	if _, res, err := Train(context.Background(), Problem{X: x, B: b, Loss: Hinge{}, Reg: ElasticNet{Lambda: 1e-2}},
		Options{Solver: SolverAdaptSmooth, Tol: 1e-3, MaxEpochs: 200}.With(ReductionSettings{Inner: SolverSPDCAsync})); err != nil {
		t.Errorf("adaptsmooth over spdc-async (no centre needed) was refused: %v (stop %v)", err, res)
	}
}
