package engine

import (
	"io"

	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/sparse"
)

// The problem, the losses and the regularizers live in package objective,
// the engine's bottom layer; these names keep them reachable as engine.X,
// so that a program that embeds the engine imports one package.
type (
	Problem        = objective.Problem
	Loss           = objective.Loss
	LossParams     = objective.LossParams
	Squared        = objective.Squared
	Logistic       = objective.Logistic
	SmoothHinge    = objective.SmoothHinge
	SquaredHinge   = objective.SquaredHinge
	Hinge          = objective.Hinge
	Absolute       = objective.Absolute
	EpsInsensitive = objective.EpsInsensitive
	Quantile       = objective.Quantile
	Regularizer    = objective.Regularizer
	Separable      = objective.Separable
	ElasticNet     = objective.ElasticNet
	GroupLasso     = objective.GroupLasso
)

// DefaultEpsilon is objective.DefaultEpsilon, the ε-insensitive loss's
// default tube width.
const DefaultEpsilon = objective.DefaultEpsilon

// NewProblem is objective.NewProblem.
func NewProblem(ds *sparse.Dataset, loss Loss, reg Regularizer, bias float64) (Problem, error) {
	return objective.NewProblem(ds, loss, reg, bias)
}

// LossByName is objective.LossByName.
func LossByName(name string, smoothing float64) (Loss, error) {
	return objective.LossByName(name, smoothing)
}

// LossByNameParams is objective.LossByNameParams.
func LossByNameParams(name string, p LossParams) (Loss, error) {
	return objective.LossByNameParams(name, p)
}

// ReadGroupsFile is objective.ReadGroupsFile.
func ReadGroupsFile(path string, d int) ([]int32, error) { return objective.ReadGroupsFile(path, d) }

// ReadGroups is objective.ReadGroups.
func ReadGroups(r io.Reader, name string, d int) ([]int32, error) {
	return objective.ReadGroups(r, name, d)
}
