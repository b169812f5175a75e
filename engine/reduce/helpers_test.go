package reduce

import (
	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/sdca"
	"github.com/adaspdc/adaspdc/engine/spdc"
	"github.com/adaspdc/adaspdc/engine/vr"
)

func init() { enginetest.ForceWorkers() }

// The inner solvers the tests name; importing their families registers them.
const (
	SolverAdaSPDC   = spdc.SolverAdaSPDC
	SolverSDCA      = sdca.SolverSDCA
	SolverSDCAAsync = sdca.SolverSDCAAsync
	SolverSDCAWild  = sdca.SolverSDCAWild
	SolverSAGA      = vr.SolverSAGA
)
