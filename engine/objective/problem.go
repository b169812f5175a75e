package objective

import (
	"errors"
	"fmt"
	"math"

	"github.com/adaspdc/adaspdc/sparse"
)

// Problem is a regularized ERM problem
//
//	min_x P(x) = (1/n) Σₖ φ(aₖᵀx, bₖ) + g(x)
//
// over the rows aₖ of X, with labels bₖ ∈ {−1, +1} for classification losses
// or real targets for the squared loss.
//
// Classes and Bias describe how the data were made into X and B, so that
// the model Train returns predicts on raw rows and labels: NewProblem sets
// them, and a caller who builds X and B by hand may.
type Problem struct {
	X    *sparse.CSR
	B    []float64
	Loss Loss
	Reg  Regularizer

	// Classes are the raw labels that bₖ = −1 and bₖ = +1 stand for
	// (sparse.BinaryLabels' Neg and Pos), for a classification loss; the
	// model's Predict returns them. Nil: the model predicts ±1.
	Classes []float64
	// SampleWeights, when not nil, weights each row's loss: P becomes
	// (1/n) Σₖ wₖ φ(aₖᵀx, bₖ) + g(x), with n the number of rows, so that a
	// weight of 2 is the row written twice (at λ·n/(n + 1) on the file with
	// the copy). Each must be finite and > 0. The solvers that take them
	// are newton and glmnet (and Certify); the others refuse the problem.
	SampleWeights []float64
	// Bias, when nonzero, is the value of a constant feature that is X's
	// last column (sparse.CSR.WithBias), as LIBLINEAR's -B: the model then
	// has Dim = X.Cols − 1 and adds Bias times the last weight itself, so
	// that it applies to rows without that column.
	Bias float64
}

// NewProblem makes the problem of fitting data ds with loss and reg: for a
// classification loss the two raw labels become −1 and +1 (the larger is
// +1) and are kept in Classes, and with bias ≠ 0 a constant feature of
// that value is appended to every row. Train's model then predicts raw
// labels on raw rows. It refuses data whose labels the loss cannot take.
func NewProblem(ds *sparse.Dataset, loss Loss, reg Regularizer, bias float64) (Problem, error) {
	if ds == nil || ds.X == nil {
		return Problem{}, errors.New("engine: no data")
	}
	if math.IsNaN(bias) || math.IsInf(bias, 0) || bias < 0 {
		return Problem{}, fmt.Errorf("engine: bias %v: must be a finite value ≥ 0", bias)
	}
	p := Problem{X: ds.X, B: ds.Y, Loss: loss, Reg: reg, Bias: bias}
	if loss != nil && loss.Classification() {
		b, lm, err := sparse.BinaryLabels(ds.Y)
		if err != nil {
			return Problem{}, fmt.Errorf("%s: %w", ds.Name, err)
		}
		p.B, p.Classes = b, []float64{lm.Neg, lm.Pos}
	}
	if bias != 0 {
		p.X = ds.X.WithBias(bias)
	}
	return p, nil
}

// Validate reports the first reason the problem cannot be solved.
func (p Problem) Validate() error {
	if p.X == nil {
		return errors.New("engine: problem has no data")
	}
	if p.X.Rows == 0 {
		return errors.New("engine: problem has no rows")
	}
	if len(p.B) != p.X.Rows {
		return fmt.Errorf("engine: %d labels for %d rows", len(p.B), p.X.Rows)
	}
	if p.Loss == nil {
		return errors.New("engine: problem has no loss")
	}
	if p.Reg == nil {
		return errors.New("engine: problem has no regularizer (use ElasticNet{} for none)")
	}
	if err := p.Reg.Validate(p.X.Cols); err != nil {
		return err
	}
	if p.Classes != nil {
		c := p.Classes
		if !p.Loss.Classification() {
			return fmt.Errorf("engine: the %s loss is a regression, and takes no Classes", p.Loss.Name())
		}
		if len(c) != 2 || !finite(c[0]) || !finite(c[1]) || c[0] == c[1] {
			return fmt.Errorf("engine: Classes %v: want two distinct finite labels, for −1 and +1", c)
		}
	}
	if !finite(p.Bias) || p.Bias < 0 || p.Bias != 0 && p.X.Cols == 0 {
		return fmt.Errorf("engine: Bias %v: must be a finite value ≥ 0, and X must then hold the bias column", p.Bias)
	}
	if p.SampleWeights != nil {
		if len(p.SampleWeights) != p.X.Rows {
			return fmt.Errorf("engine: %d sample weights for %d rows", len(p.SampleWeights), p.X.Rows)
		}
		for k, w := range p.SampleWeights {
			if !(w > 0) || math.IsInf(w, 0) {
				return fmt.Errorf("engine: sample weight of row %d is %v: want a finite value > 0 (leave the row out instead of weighting it 0)", k+1, w)
			}
		}
	}
	for k, b := range p.B {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return fmt.Errorf("engine: label of row %d is %v", k, b)
		}
		if p.Loss.Classification() && b != 1 && b != -1 {
			return fmt.Errorf("engine: %s loss needs labels −1/+1, row %d has %v (map them with sparse.BinaryLabels)", p.Loss.Name(), k, b)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
