package engine

import (
	"context"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/sdca"
	"github.com/adaspdc/adaspdc/sparse"
)

// TrainDistributed trains the problem whose rows are spread over the ranks
// of c with CoCoA+ rounds (sdca.TrainDistributed, which says what every
// rank must bring and how the ranks agree), and returns on every rank the
// same model, built as Train builds it: local's Classes as its labels,
// its Bias, and the columns the ranks agreed on. Every rank of c calls it
// with its own rows and the same options.
func TrainDistributed(ctx context.Context, c comm.Comm, local Problem, opt Options) (*Model, *Result, error) {
	w, res, err := sdca.TrainDistributed(ctx, c, local, opt)
	if w == nil {
		return nil, res, err
	}
	// The ranks agreed on the columns: the model is as wide as w.
	shape := local
	shape.X = &sparse.CSR{Cols: len(w)}
	model := newModel(shape, w, local.Classes)
	return model, res, err
}
