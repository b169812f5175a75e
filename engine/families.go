package engine

import (
	"github.com/adaspdc/adaspdc/engine/newton"
	"github.com/adaspdc/adaspdc/engine/pdprox"
	"github.com/adaspdc/adaspdc/engine/reduce"
	"github.com/adaspdc/adaspdc/engine/sdca"
	"github.com/adaspdc/adaspdc/engine/spdc"
	"github.com/adaspdc/adaspdc/engine/vr"
	"github.com/adaspdc/adaspdc/engine/wx"
	"github.com/adaspdc/adaspdc/sparse"
)

// The solver families register their methods with the driver when their
// packages load; engine imports each of them, and names their solvers.
const (
	SolverPdproxDual   = pdprox.SolverPdproxDual
	SolverPdproxPrimal = pdprox.SolverPdproxPrimal
	SolverPdproxNoProj = pdprox.SolverPdproxNoProj
	SolverSAG          = vr.SolverSAG
	SolverSAGA         = vr.SolverSAGA
	SolverSVRG         = vr.SolverSVRG
	SolverNewton       = newton.SolverNewton
	SolverGLMNET       = newton.SolverGLMNET
	SolverLBFGS        = newton.SolverLBFGS
	SolverSDCA         = sdca.SolverSDCA
	SolverSDCAAsync    = sdca.SolverSDCAAsync
	SolverSDCAWild     = sdca.SolverSDCAWild
	SolverSPDCAsync    = sdca.SolverSPDCAsync
	SolverCoCoA        = sdca.SolverCoCoA
	SolverDFSDCA       = sdca.SolverDFSDCA
	SolverAdaSPDC      = spdc.SolverAdaSPDC
	SolverSPDC         = spdc.SolverSPDC
	SolverAdaptReg     = reduce.SolverAdaptReg
	SolverAdaptSmooth  = reduce.SolverAdaptSmooth
	SolverJointAdapt   = reduce.SolverJointAdapt
	SolverBPD          = wx.SolverBPD
	SolverAdaBPD       = wx.SolverAdaBPD
	SolverWXAdaSPDC    = wx.SolverWXAdaSPDC
	SolverDFSPDC       = wx.SolverDFSPDC
	SolverADFSPDC      = wx.SolverADFSPDC
)

// MeanESO is spdc.MeanESO: the mean over the rows of vᵢ/‖aᵢ‖², the ESO
// parameter of batches of m rows, 1 when a batch's rows share no feature
// and m when they share all.
func MeanESO(x *sparse.CSR, m int) (float64, error) { return spdc.MeanESO(x, m) }

// IsReduction is reduce.IsReduction: whether name is one of the reductions
// (adaptreg, adaptsmooth, jointadapt), which run another solver on each
// stage (ReductionSettings.Inner).
func IsReduction(name Solver) bool { return reduce.IsReduction(name) }
