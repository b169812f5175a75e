package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// World is a method's view of the ranks of a distributed run: the counted
// communicator, the rows of all ranks, and the stop flags that make the
// ranks stop after the same collective. A nil *World is one process: its
// sums leave their buffers as they are and make no collective.
//
// Every Sum and Max is one allreduce of the parts packed into one buffer,
// followed by the rank's two stop flags (its time limit ran out, its
// context was cancelled otherwise). After the collective every rank sees
// the same flags, and the first collective in which some rank's flag is
// set cancels the context the ranks agree on (JoinWorld's) on every rank,
// so that the driver, which reads that context between epochs only, stops
// every rank after the same epoch.
type World struct {
	c    comm.Comm
	rows int64
	buf  []float64

	local  context.Context         // the rank's own context: its time limit and cancellation
	cancel context.CancelCauseFunc // cancels the context the ranks agree on
}

// The stop flags that end every World collective.
const (
	worldFlagTime = iota
	worldFlagCanceled
	worldFlags
)

// WorldRanges is the number of coordinate ranges into which a WorldSweep
// cuts the summed outs for its post phase, on every rank alike: a result
// kept per range and combined in range order is then the same bits on
// every rank, whatever each rank's number of workers.
const WorldRanges = 32

// JoinWorld returns the World of the ranks of c, whose rows number rows
// in all, and the context the ranks agree on, which the method's run
// (Run) must take instead of ctx: it is cancelled on every rank after the
// same collective, once some rank's ctx is done or its timeLimit (> 0) has
// run out. release frees the contexts.
func JoinWorld(ctx context.Context, c comm.Comm, rows int64, timeLimit time.Duration) (w *World, agreed context.Context, release func()) {
	local, stopLocal := ctx, func() {}
	if timeLimit > 0 {
		local, stopLocal = context.WithTimeoutCause(ctx, timeLimit, ErrTimeLimit)
	}
	agreed, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	w = &World{c: c, rows: rows, local: local, cancel: cancel}
	return w, agreed, func() { stopLocal(); cancel(nil) }
}

// Comm returns the world's communicator.
func (w *World) Comm() comm.Comm { return w.c }

// Rows returns the rows of all ranks.
func (w *World) Rows() int64 { return w.rows }

// Size returns the number of ranks; 1 for a nil World.
func (w *World) Size() int {
	if w == nil {
		return 1
	}
	return w.c.Size()
}

// Sum replaces each part, on every rank, by its element-wise sum over the
// ranks, in one allreduce (the parts packed one after another, the stop
// flags last). Every rank gets the same bits. On a nil World it does
// nothing.
func (w *World) Sum(parts ...[]float64) error { return w.reduce(false, parts) }

// Max is Sum with the element-wise maximum.
func (w *World) Max(parts ...[]float64) error { return w.reduce(true, parts) }

func (w *World) reduce(isMax bool, parts [][]float64) error {
	if w == nil {
		return nil
	}
	n := worldFlags
	for _, p := range parts {
		n += len(p)
	}
	if cap(w.buf) < n {
		w.buf = make([]float64, n)
	}
	buf := w.buf[:n]
	at := 0
	for _, p := range parts {
		at += copy(buf[at:], p)
	}
	f := buf[at:]
	clear(f)
	if w.local.Err() != nil {
		if errors.Is(context.Cause(w.local), ErrTimeLimit) {
			f[worldFlagTime] = 1
		} else {
			f[worldFlagCanceled] = 1
		}
	}
	var err error
	if isMax {
		err = w.c.AllreduceMax(buf)
	} else {
		err = w.c.AllreduceSum(buf)
	}
	if err != nil {
		return err
	}
	at = 0
	for _, p := range parts {
		at += copy(p, buf[at:])
	}
	switch {
	case f[worldFlagCanceled] > 0:
		w.cancel(context.Canceled)
	case f[worldFlagTime] > 0:
		w.cancel(ErrTimeLimit)
	}
	return nil
}

// DualSums returns, at the rank's primal point x and its rows' duals y,
// the loss and conjugate sums of every rank's rows (eval.PartialAt) and
// v = (1/N) Σₖ yₖaₖ over all N rows of the ranks (eval.DualSum), the parts
// of a certificate at duals that are not the sweep's own, in one
// allreduce of d + 2 values (none for a nil World: one process).
func (w *World) DualSums(eval *objective.Evaluator, x, y []float64) (v []float64, part objective.Partial, err error) {
	if part, err = eval.PartialAt(x, y); err != nil {
		return nil, part, err
	}
	v = make([]float64, len(x))
	if err := eval.DualSum(y, v); err != nil {
		return nil, part, err
	}
	sums := []float64{part.Loss, part.Conj}
	if err := w.Sum(v, sums); err != nil {
		return nil, part, err
	}
	n := int64(len(y)) // one process: its rows are all rows
	if w != nil {
		n = w.Rows()
	}
	inv := 1 / float64(n)
	for j := range v {
		v[j] *= inv
	}
	return v, objective.Partial{Loss: sums[0], Conj: sums[1]}, nil
}

// SumUpper sums the upper triangle (diagonal included) of the d×d
// row-major matrix m over the ranks, d(d+1)/2 values, with tail's values
// in the same allreduce; m's lower triangle is left as it is. On a nil
// World it does nothing.
func (w *World) SumUpper(m []float64, d int, tail []float64) error {
	if w == nil {
		return nil
	}
	packed := make([]float64, 0, d*(d+1)/2+len(tail))
	for i := range d {
		packed = append(packed, m[i*d+i:(i+1)*d]...)
	}
	packed = append(packed, tail...)
	if err := w.Sum(packed); err != nil {
		return err
	}
	at := 0
	for i := range d {
		at += copy(m[i*d+i:(i+1)*d], packed[at:])
	}
	copy(tail, packed[at:])
	return nil
}

// AgreedError is an error that every rank finds in the same collective,
// so that every rank returns it and no rank waits for another: no abort
// is needed.
type AgreedError struct{ Msg string }

func (e AgreedError) Error() string { return e.Msg }

// Agreed returns an AgreedError with the formatted message.
func Agreed(format string, args ...any) error {
	return AgreedError{fmt.Sprintf(format, args...)}
}

// IsAgreed reports whether err is an AgreedError.
func IsAgreed(err error) bool {
	var ae AgreedError
	return errors.As(err, &ae)
}

// AgreeProblem checks the rank's problem and options, agrees with the other
// ranks on the columns, the rows, the classes and the regularizer's
// strengths, and returns the rank's problem widened to the agreed columns
// and the rows of all ranks, in two collectives (a maximum, then a sum).
// solver names the method in the errors; accepts (not nil) checks what
// the method takes, on a rank whose problem has a loss and a regularizer.
// A rank whose own check fails returns its error as an AgreedError; the
// others learn of it in the same collective and return an AgreedError
// that says so.
func AgreeProblem(c comm.Comm, local objective.Problem, opt Options, solver string, accepts func(objective.Problem, Options) error) (objective.Problem, int64, error) {
	a := NewAgreement(c, solver)
	cols, rows := 0, 0
	if local.X == nil {
		a.Fail(fmt.Errorf("engine: %s: the rank's problem has no data", solver))
	} else {
		cols, rows = local.X.Cols, local.X.Rows
	}
	a.Fail(opt.Validate())
	var en objective.ElasticNet
	if local.Loss == nil || local.Reg == nil {
		a.Fail(fmt.Errorf("engine: %s: the rank's problem has no loss or no regularizer", solver))
	} else if err := accepts(local, opt); err != nil {
		a.Fail(err)
	} else {
		en, _ = local.Reg.AsElasticNet()
	}
	has := 0.0
	var c0, c1 float64
	if len(local.Classes) == 2 {
		has, c0, c1 = 1, local.Classes[0], local.Classes[1]
	}
	d, err := a.Columns(cols, []float64{has, c0, c1, en.Lambda, en.L1},
		[]string{"the classes (Classes set on some ranks only)", "the class for −1", "the class for +1", "λ", "the L1 strength"})
	if err != nil {
		return objective.Problem{}, 0, err
	}
	prob := local
	x := *local.X
	x.Cols = d
	prob.X = &x
	a.Fail(prob.Reg.Validate(d))
	if opt.WarmStart != nil && len(opt.WarmStart) != d {
		a.Fail(fmt.Errorf("engine: %s: warm start has %d weights, the ranks' data %d columns", solver, len(opt.WarmStart), d))
	}
	if rows > 0 {
		a.Fail(prob.Validate())
	}
	n, err := a.Rows(rows)
	if err != nil {
		return objective.Problem{}, 0, err
	}
	return prob, n, nil
}

// Agreement is the protocol by which the ranks agree on a problem before
// a distributed run, so that a rank's refusal reaches every rank in a
// collective that all of them join, and no rank waits for one that has
// returned: each rank records its first error (Fail), then one maximum
// agrees on the columns and checks the values every rank must hold alike
// (Columns), then one sum counts the rows (Rows).
type Agreement struct {
	c      comm.Comm
	solver string
	err    error
}

// NewAgreement starts the agreement of the ranks of c for solver, which
// names it in the errors.
func NewAgreement(c comm.Comm, solver string) *Agreement {
	return &Agreement{c: c, solver: solver}
}

// Fail records err as the rank's error, unless it is nil or an earlier one
// is recorded.
func (a *Agreement) Fail(err error) {
	if a.err == nil {
		a.err = err
	}
}

// Columns runs the first collective: one maximum of the rank's columns,
// whether it failed, and ±each of same, so that the ranks agree on the
// widest columns, learn of a failed rank, and find a value of same on
// which they differ (named by names). It returns the columns, or an
// AgreedError that every rank returns alike.
func (a *Agreement) Columns(cols int, same []float64, names []string) (int, error) {
	mx := []float64{float64(cols), b2f(a.err != nil)}
	for _, v := range same {
		mx = append(mx, v, -v)
	}
	if err := a.c.AllreduceMax(mx); err != nil {
		return 0, err
	}
	if a.err != nil {
		return 0, AgreedError{a.err.Error()}
	}
	if mx[1] != 0 {
		return 0, Agreed("engine: %s: another rank's problem or options were refused (its error says why)", a.solver)
	}
	for i, what := range names {
		if mx[2+2*i] != -mx[3+2*i] {
			return 0, Agreed("engine: %s: the ranks disagree on %s: from %v to %v", a.solver, what, -mx[3+2*i], mx[2+2*i])
		}
	}
	return int(mx[0]), nil
}

// Rows runs the second collective: one sum of the rank's rows and of the
// ranks that failed since Columns. It returns the rows of all ranks, or
// an AgreedError that every rank returns alike, the failed rank's naming
// it.
func (a *Agreement) Rows(rows int) (int64, error) {
	sum := []float64{float64(rows), b2f(a.err != nil)}
	if err := a.c.AllreduceSum(sum); err != nil {
		return 0, err
	}
	if a.err != nil {
		return 0, AgreedError{fmt.Sprintf("rank %d: %v", a.c.Rank(), a.err)}
	}
	if sum[1] != 0 {
		return 0, Agreed("engine: %s: %g other rank(s) refused their problem (their errors say why)", a.solver, sum[1])
	}
	return int64(sum[0]), nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
