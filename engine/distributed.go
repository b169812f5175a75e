package engine

import (
	"context"
	"slices"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine/sdca"
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
	model := &Model{
		Loss:    local.Loss.Name(),
		Dim:     len(w),
		Weights: w,
		Bias:    local.Bias,
		Labels:  slices.Clone(local.Classes),
	}
	if local.Bias != 0 {
		model.Dim-- // the last column is the bias feature, which Margin adds
	}
	if en, ok := local.Reg.(ElasticNet); ok {
		model.Lambda, model.L1 = en.Lambda, en.L1
	}
	return model, res, err
}
