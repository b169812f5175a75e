package newton

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TrainDistributed solves the problem whose rows are spread over the ranks
// of c, rank by rank in local, with truncated Newton over the ranks, and
// returns on every rank the same model (the point driver.Result.ModelPoint
// picks), the result and an error.
//
// The method is newton's, written against driver.WorldSweep (see the
// driver package's documentation): every sum over rows ends with one
// allreduce, and everything else runs identically on every rank from the
// summed values, so every rank holds the same iterate, bit for bit, and
// takes the same decisions. With N the rows of all ranks, a Newton step
// allreduces
//
//   - the gradient (1/N) Aᵀφ′(Aw), with the preconditioner's diagonal
//     where the Hessian is not formed, and four scalars (Σφ, Σφ*, whether a
//     dual was clipped, the nonzeros that the products read): one
//     allreduce of d (2d) + 4 values, from which every rank also forms the
//     certificate (objective.AssemblePaired), with no collective of its
//     own;
//   - on narrow data, where newton forms the Hessian, its upper triangle
//     (or its change) with two costs: d(d+1)/2 + 2 values, once;
//     otherwise each CG step's product Hp, d values;
//   - each trial of the line search, two scalars (Σφ′·dz, Σφ).
//
// So the collectives are those of one process's sweeps, one per sweep,
// whatever the number of ranks: the iterates are one process's up to the
// order of summation. On one rank the model is the one-process newton's
// to the bit.
//
// Every rank of c must call it, with the same options; local holds the
// rank's rows, any number of them (none too), with the labels mapped the
// same way on every rank and the same loss and regularizer. The ranks
// agree on the columns, the rows, the classes and the regularizer
// (driver.AgreeProblem). TimeLimit and ctx are each rank's own; a rank
// whose limit runs out or whose ctx is done stops every rank after the
// same collective (driver.JoinWorld).
//
// A rank that fails, by an error of its own or a panic, aborts the world
// (comm.Comm.Abort); errors that every rank finds in the same collective
// are returned by every rank without an abort.
func TrainDistributed(ctx context.Context, c comm.Comm, local objective.Problem, opt driver.Options) (w []float64, res *driver.Result, err error) {
	agreed := false
	defer func() {
		if r := recover(); r != nil {
			w, agreed = nil, false
			err = fmt.Errorf("engine: newton: rank %d panicked: %v\n\n%s", c.Rank(), r, debug.Stack())
		}
		if err != nil && !agreed {
			c.Abort(err)
		}
	}()
	cnt := comm.Counted(c)
	c = cnt
	start := cnt.Stats()
	prob, nGlobal, err := driver.AgreeProblem(c, local, opt, string(SolverNewton), func(local objective.Problem, opt driver.Options) error {
		if opt.Solver != "" && opt.Solver != SolverNewton {
			return fmt.Errorf("engine: newton over the ranks was asked to run %s", opt.Solver)
		}
		o := opt
		o.Solver = SolverNewton
		return acceptsNewton(local, o)
	})
	if err != nil {
		agreed = driver.IsAgreed(err)
		return nil, nil, err
	}
	if nGlobal == 0 {
		agreed = true
		return nil, nil, driver.Agreed("engine: newton: no rank has any rows")
	}
	opt.StallHint = "scale the features, or normalise the rows to unit norm (sparse.CSR.NormalizeRowsUnit), or allow a longer plateau with a larger Options.StallEpochs"
	opt = opt.WithDefaults()
	opt.Solver = SolverNewton
	world, agreedCtx, release := driver.JoinWorld(ctx, c, nGlobal, opt.TimeLimit)
	defer release()
	m, err := newNewtonOn(prob, opt, world)
	if err != nil {
		return nil, nil, err
	}
	res, err = driver.Run(agreedCtx, m, opt)
	res.Solver = SolverNewton
	if ferr := m.Finish(res); err == nil {
		err = ferr
	}
	st := cnt.Stats().Sub(start)
	ms := 0.0
	if st.Calls > 0 {
		ms = 1e3 * st.Seconds / float64(st.Calls)
	}
	res.AddNote(fmt.Sprintf("collectives: %d allreduces of %d doubles (%d bytes) in all, %.4g ms each", st.Calls, st.Values, 8*st.Values, ms))
	agreed = err != nil && (res.Stop == "diverged" || errors.Is(err, driver.ErrCannotMove))
	return res.ModelPoint(m.Point(), err), res, err
}
