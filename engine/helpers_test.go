package engine

import (
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
)

// The shared test data (enginetest), under the names the tests use.
var (
	fig1Data               = enginetest.Fig1Data
	sparseData             = enginetest.SparseData
	sharedData             = enginetest.SharedData
	relDiff                = enginetest.RelDiff
	lassoMaxL1             = enginetest.LassoMaxL1
	readLIBLINEARWeights   = enginetest.ReadLIBLINEARWeights
	ridgeClosedFormCentred = enginetest.RidgeClosedFormCentred
	firstRows              = enginetest.FirstRows
	solveDense             = enginetest.SolveDense
	kktViolation           = enginetest.KktViolation
	referenceLasso         = enginetest.ReferenceLasso
	denseColumns           = enginetest.DenseColumns
	sharedRegression       = enginetest.SharedRegression
	news20Binary           = enginetest.News20Binary
	epochData              = enginetest.EpochData
	lossTestName           = enginetest.LossTestName
)

func init() { enginetest.ForceWorkers() }

// productionWorkers is enginetest.ProductionWorkers.
var productionWorkers = enginetest.ProductionWorkers

// raceEnabled is enginetest.RaceEnabled.
const raceEnabled = enginetest.RaceEnabled

// adaspdcOptions returns DefaultOptions as they were before Train chose
// solvers by itself: AdaSPDC, named, with its defaults filled in. Tests of
// AdaSPDC's own behaviour start from it.
func adaspdcOptions() Options {
	o := DefaultOptions()
	o.Solver = SolverAdaSPDC
	return o.WithDefaults()
}
