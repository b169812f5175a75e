package spdc

import (
	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
)

// The shared test data and the run of a named solver (enginetest), under
// the names the engine's tests use.
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
	news20Binary           = enginetest.News20Binary
	epochData              = enginetest.EpochData
	lossTestName           = enginetest.LossTestName
	denseColumns           = enginetest.DenseColumns
	sharedRegression       = enginetest.SharedRegression
	Train                  = enginetest.Train
	Certify                = driver.Certify
)

func init() { enginetest.ForceWorkers() }

// productionWorkers is enginetest.ProductionWorkers.
var productionWorkers = enginetest.ProductionWorkers

// raceEnabled is enginetest.RaceEnabled.
const raceEnabled = enginetest.RaceEnabled

// adaspdcOptions returns the default options with their defaults filled
// in and AdaSPDC named, where the tests start from.
func adaspdcOptions() driver.Options {
	o := driver.DefaultOptions()
	o.Solver = "adaspdc"
	return o.WithDefaults()
}

// Model is what enginetest.Train returns.
type Model = enginetest.Model
