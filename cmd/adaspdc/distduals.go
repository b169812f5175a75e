package main

import (
	"io"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

// distDuals is what keeping cocoa's duals takes over the ranks: each rank
// holds the duals of its own rows, rows offset to offset + rows − 1 of
// the n rows in the data's order (the ranks' shares follow one another), and
// the ranks' shares of modelio.RowsSum add up to the sum of all rows,
// whatever the split. A checkpoint gathers the duals on rank 0 by one
// allreduce of n values, and a restart sends each rank its rows' duals by
// one broadcast, so that a restart on any number of ranks (or in one
// process, where no column was renumbered) goes on from them.
type distDuals struct {
	offset, rows, n int
	loss            string
	data            uint64
	// gather is whether checkpoints gather the duals: an allreduce of n
	// values at each checkpoint costs at most what a few rounds' allreduces
	// of d values do, or stays under distDualsRows.
	gather bool
}

// distDualsRows bounds the rows whose duals a checkpoint gathers whatever
// d is: an allreduce of 8 MiB.
const distDualsRows = 1 << 20

// newDistDuals finds the rank's rows' place among all n rows and the
// problem's modelio.DataSum, in two allreduces.
func newDistDuals(c comm.Comm, prob engine.Problem, n int) (*distDuals, error) {
	counts := make([]float64, c.Size())
	counts[c.Rank()] = float64(prob.X.Rows)
	if err := c.AllreduceSum(counts); err != nil {
		return nil, err
	}
	dd := &distDuals{rows: prob.X.Rows, n: n, loss: prob.Loss.Name()}
	for r := range c.Rank() {
		dd.offset += int(counts[r])
	}
	// The sum modulo 2⁶⁴ in four limbs of 16 bits, each added exactly in
	// float64 over the ranks.
	part := modelio.RowsSum(prob, int64(dd.offset))
	limbs := make([]float64, 4)
	for i := range limbs {
		limbs[i] = float64(part >> (16 * i) & 0xffff)
	}
	if err := c.AllreduceSum(limbs); err != nil {
		return nil, err
	}
	var rows uint64
	for i, l := range limbs {
		rows += uint64(l) << (16 * i)
	}
	dd.data = modelio.FinishDataSum(rows, int64(n), prob.X.Cols)
	dd.gather = n <= max(distDualsRows, 4*prob.X.Cols)
	return dd, nil
}

// warm returns opt with the rank's rows' duals from the file beside
// -init's model as cocoa's warm duals, where rank 0 finds them of this
// model, these rows and this loss and every rank finds its own in the
// loss's conjugate's domain; otherwise opt as it is, with rank 0's warning
// where a duals file was left aside (keptDuals, outOfDomain). Every rank
// calls it: a broadcast says whether rank 0 sends the duals, a second
// sends them, and an allreduce agrees on their domain.
func (dd *distDuals) warm(c comm.Comm, opt engine.Options, prob engine.Problem, initPath string, stderr io.Writer) (engine.Options, error) {
	lead := c.Rank() == 0
	status := []float64{0}
	var all []float64
	if lead {
		m, _ := modelio.Load(initPath) // its errors stopped the run before (initOverRanks)
		var why string
		all, why = keptDuals(initPath, m, dd.loss, dd.n, func() uint64 { return dd.data })
		if why != "" {
			warnAside(stderr, initPath, why, "cocoa")
		}
		if all != nil {
			status[0] = 1
		}
	}
	if err := c.Broadcast(status, 0); err != nil || status[0] == 0 {
		return opt, err
	}
	if !lead {
		all = make([]float64, dd.n)
	}
	if err := c.Broadcast(all, 0); err != nil {
		return opt, err
	}
	mine := make([]float64, dd.rows) // not nil on a rank without rows: every rank takes warm duals
	copy(mine, all[dd.offset:])
	// A row whose dual is out of the domain, over all ranks (the last
	// such rank's first).
	bad := []float64{-1}
	if k := outOfDomain(prob, mine); k >= 0 {
		bad[0] = float64(dd.offset + k)
	}
	if err := c.AllreduceMax(bad); err != nil {
		return opt, err
	}
	if bad[0] >= 0 {
		if lead {
			k := int(bad[0])
			warnAside(stderr, initPath, domainReason(k, all[k], dd.loss), "cocoa")
		}
		return opt, nil
	}
	return opt.With(engine.SDCASettings{WarmDuals: mine}), nil
}

// checkpoint has every rank's checkpoints gather the duals on rank 0,
// whose checkpointer k writes them beside the model: opt.Checkpoint, which
// checkpointOn set on rank 0 alone, becomes on every rank an allreduce of
// the N duals, each rank's at its rows' place, followed on rank 0 by k's
// write. The driver makes the same calls on every rank. Where checkpoints
// do not gather (gather), opt is left as it is and no duals are kept.
func (dd *distDuals) checkpoint(c comm.Comm, k *checkpointer, opt *engine.Options) {
	if !dd.gather {
		return
	}
	if k != nil {
		k.rows, k.loss = dd.n, dd.loss
		k.dataSum = func() uint64 { return dd.data }
	}
	buf := make([]float64, dd.n)
	save := opt.Checkpoint
	opt.Checkpoint = func(tp engine.TracePoint, x, duals []float64) {
		clear(buf)
		if len(duals) == dd.rows {
			copy(buf[dd.offset:], duals)
		}
		if err := c.AllreduceSum(buf); err != nil {
			if k != nil {
				k.last = err
			}
			return
		}
		if save != nil {
			save(tp, x, buf)
		}
	}
}
