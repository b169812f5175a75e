package engine

import (
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
)

// The shared test data (enginetest), under the names the tests use.
var (
	fig1Data         = enginetest.Fig1Data
	sparseData       = enginetest.SparseData
	sharedData       = enginetest.SharedData
	relDiff          = enginetest.RelDiff
	firstRows        = enginetest.FirstRows
	solveDense       = enginetest.SolveDense
	kktViolation     = enginetest.KktViolation
	referenceLasso   = enginetest.ReferenceLasso
	denseColumns     = enginetest.DenseColumns
	sharedRegression = enginetest.SharedRegression
	news20Binary     = enginetest.News20Binary
	epochData        = enginetest.EpochData
	lossTestName     = enginetest.LossTestName
)

// The tests run on small data, where the production rules would give most
// runs one worker; they ask for thread counts to exercise the concurrent
// paths (under -race too), so the rules (a worker per minWorkPerWorker
// nonzeros, and the timed choice of calibrateWorkers) are off here except
// where a test checks them.
func init() {
	minWorkPerWorker = 1
	calibrateWorkers = false
}

// productionWorkers sets the worker rules as Train has them outside tests
// and returns a function that restores the test setting.
func productionWorkers() func() {
	minWorkPerWorker, calibrateWorkers = defaultMinWorkPerWorker, true
	return func() { minWorkPerWorker, calibrateWorkers = 1, false }
}

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
