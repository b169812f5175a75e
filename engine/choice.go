package engine

import (
	"fmt"
	"math"
	"sync"

	"github.com/adaspdc/adaspdc/engine/driver"
	"github.com/adaspdc/adaspdc/engine/sdca"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// AutoSolver returns the solver that train runs when no solver is named,
// and the reason, in a sentence, to show the user.
//
// The Newton method is picked where it takes the problem (a loss with a
// second derivative, L2 with λ > 0, no L1, and no m or block size asked
// for) and the data are not wider than tall (d ≤ n), or their columns'
// scales spread over more than three decades. Its steps do not depend on
// how the features are scaled, and on such data it reached a 1e-6 gap in
// fewer seconds than the coordinate methods (bench/RESULTS.md).
//
// On wider data the choice between Newton and SDCA (or cocoa) is made by
// their predicted costs (predictedCosts), at every width: SDCA's passes
// grow like 1 + κ/n with κ/n = mean ‖aₖ‖²/(λγn) (sdcaKappaPerSample), so it
// wins where κ/n is small (url-shaped data: κ/n = 0.025 to 0.125, five
// passes to a 1e-6 gap, against Newton's 30 to 55), and Newton, whose
// passes grow far more slowly, wins where κ/n is large (news20 at
// λ = 1e-6, or rows of unscaled counts, where κ/n reaches 10² to 10⁴ and
// SDCA stops at its epoch limit).
//
// A smooth loss with an L1 term goes to newGLMNET (glmnet.go). Wherever
// neither takes the problem (the hinge, weights or a centre with L1), SDCA
// is picked if it takes it, and with two or more threads cocoa (SDCA on
// each thread's own samples) or sdca-async (SDCA's steps on every thread
// against one shared v) where coCoAGain or asyncGain predicts it at least
// 1.5× faster: sdca-async where its gain is within asyncMargin of cocoa's
// or above, cocoa otherwise. sdca-async's model depends on how its workers
// interleave, so Options.Deterministic leaves it out. An explicit m > 1 or
// block size asks for a mini-batch coordinate method, and gets the first
// registered solver that takes the problem, as Train does.
func AutoSolver(prob Problem, opt Options) (Solver, string) {
	kappa := sync.OnceValue(func() float64 { return sdcaKappaPerSample(prob) })
	if prob.SampleWeights != nil {
		// Only newton and glmnet weight the rows.
		for _, s := range []Solver{SolverNewton, SolverGLMNET} {
			if e := driver.Lookup(s); e != nil && acceptsProblem(e, prob, Options{Solver: s}.With(driver.Coordinate{M: opt.Coordinate().M, BlockSize: opt.Coordinate().BlockSize})) == nil {
				return s, "sample weights, which newton (L2) and glmnet (L1) take"
			}
		}
		return "", "no solver takes sample weights with this loss and regularizer: newton needs a smooth loss with L2, glmnet one with L1"
	}
	opt.Solver = SolverNewton
	newtonOK := driver.Lookup(SolverNewton).Accepts(prob, opt) == nil
	newtonWhy := func(what string) string {
		t := driver.SweepWorkers(prob.X, opt.Threads)
		sweeps := "and its sweeps run on one thread (too few nonzeros to share)"
		if t > 1 {
			sweeps = fmt.Sprintf("and its sweeps over rows run on %d threads", t)
		}
		return fmt.Sprintf("%s: Newton's steps do not depend on feature scale, %s (Options.Solver \"sdca\" or Options.Solver \"adaspdc\", or a batch of M blocks with CoordinateSettings.M, for a coordinate method)", what, sweeps)
	}
	if newtonOK {
		n, d := prob.X.Rows, prob.X.Cols
		if d <= n {
			return SolverNewton, newtonWhy(fmt.Sprintf("a smooth loss with an L2 term on data with d = %d ≤ n = %d", d, n))
		}
		if lo, hi := columnScaleRange(prob.X); hi > 1e3*lo {
			return SolverNewton, newtonWhy(fmt.Sprintf("a smooth loss with an L2 term on features whose scales range from %.3g to %.3g", lo, hi))
		}
	}
	if opt.Coordinate().M <= 1 && opt.Coordinate().BlockSize <= 1 {
		o := opt
		o.Solver = SolverGLMNET
		if driver.Lookup(SolverGLMNET).Accepts(prob, o) == nil {
			return SolverGLMNET, "a smooth loss with an L1 term: newGLMNET's Newton steps, whose models coordinate descent minimises over the features not shrunk, reach a 1e-6 gap in a fraction of the passes of the dual coordinate methods (Options.Solver \"sdca\" or Options.Solver \"adaptreg\" for another method)"
		}
		if e := driver.Lookup(SolverSDCA); e != nil {
			o := opt
			o.Solver = SolverSDCA
			if e.Accepts(prob, o) == nil {
				k, gain := coCoAGain(prob, opt, kappa())
				ka, gainAsync := asyncGain(prob, opt)
				if newtonOK {
					sdcaCost, newtonCost := predictedCosts(prob, opt, kappa(), max(1, gain, gainAsync))
					if newtonCost < sdcaCost {
						return SolverNewton, newtonWhy(fmt.Sprintf("a smooth loss with an L2 term, κ/n = %.3g: predicted %.3g sweeps' time for Newton against %.3g for SDCA", kappa(), newtonCost, sdcaCost))
					}
				}
				if gainAsync >= 1.5 && gainAsync > asyncMargin*gain {
					_, steps := sdca.BufferedColumns(prob.X, ka)
					return SolverSDCAAsync, fmt.Sprintf("SDCA's steps on %d threads against one shared model, each thread's changes to the frequent columns added into it every %d of its steps, the passes of SDCA on one thread (κ/n = %.3g) at a predicted %.2g× its speed, where cocoa's merge predicts %.2g× but recomputes the model before it stops; Options.Deterministic or Options.Solver \"cocoa\" for a model that does not depend on the threads' timing, Options.Solver \"sdca\" for one thread", ka, steps, kappa(), gainAsync, gain)
				}
				if gain >= 1.5 {
					return SolverCoCoA, fmt.Sprintf("SDCA on %d threads, each on its own share of the samples against a private copy of the model, merged every epoch by the step the dual picks along the summed change: about %.2g× SDCA's passes here, so predicted %.2g× faster than SDCA on one thread; Options.Solver \"sdca\" for one thread, Options.Solver \"newton\" or Options.Solver \"adaspdc\" for another method", k, float64(k)*coCoAEpochEfficiency/gain, gain)
				}
				return SolverSDCA, fmt.Sprintf("one sample at a time with exact dual steps, κ/n = %.3g: predicted to need few passes on these data (Options.Solver \"newton\" or Options.Solver \"adaspdc\" for another method, CoordinateSettings.M for mini-batches)", kappa())
			}
		}
	}
	opt.Solver = ""
	e, err := chooseSolver(prob, opt)
	if err != nil {
		return "", err.Error()
	}
	return e.Name, "the first solver (by preference) that takes this loss and regularizer"
}

// The cost model AutoSolver weighs Newton against SDCA with, in units of
// one SDCA pass over the data on one thread. Calibrated on news20
// (binarised, unit rows and raw counts), url-shaped and rcv1-shaped data,
// logistic loss, to a 1e-6 gap (bench/RESULTS.md):
//
//   - SDCA takes sdcaPassesPerKappa·(1 + κ/n) passes: 7 and 41 passes on
//     news20 at κ/n = 1.57 and 15.7 (λ = 1e-5, 1e-6);
//   - Newton takes newtonPasses·max(1, κ/n)^¼ passes: 40, 64 and 290
//     passes at κ/n = 1.57, 15.7 and 123 (500 at 2·10⁴); its passes grow
//     with the Hessian's condition through CG, far more slowly than SDCA's;
//   - one of Newton's passes costs newtonPassCost of SDCA's (streamed rows
//     and no per-sample dual step: 0.35 on unit rows, 0.5 on raw counts),
//     and its sweeps run on all its workers at newtonThreadEfficiency each.
const (
	sdcaPassesPerKappa     = 2.5
	newtonPasses           = 40
	newtonPassCost         = 0.4
	newtonThreadEfficiency = 0.9
)

// predictedCosts returns SDCA's (divided by gain, cocoa's predicted
// speed-up over it) and Newton's predicted times to a 1e-6 gap, in units
// of one SDCA pass on one thread, from kappa = κ/n.
func predictedCosts(prob Problem, opt Options, kappa, gain float64) (sdca, newton float64) {
	sdca = sdcaPassesPerKappa * (1 + kappa) / gain
	t := float64(driver.SweepWorkers(prob.X, opt.Threads))
	speedup := 1 + newtonThreadEfficiency*(t-1)
	newton = newtonPasses * math.Pow(math.Max(1, kappa), 0.25) * newtonPassCost / speedup
	return sdca, newton
}

// coCoAGain returns the workers K that cocoa would run on and the speed-up
// over one-thread SDCA that its rate predicts, for kappa = κ/n
// (sdcaKappaPerSample): K workers step up to K times the samples per
// second, but each step is damped by ωⱼ ≤ K (see cocoa), and
// SDCA's passes to a given gap grow like 1 + κ/n with κ = mean qₖ/γ
// (Shalev-Shwartz & Zhang: n + R²/(λγ) steps per factor e, γ the strong
// convexity of φ*). With every ωⱼ taken as K, an upper bound that needs no
// column counts, the passes grow by ρ = (1 + Kκ/n)/(1 + κ/n), and the
// gain is K/ρ; without smoothness (γ = 0: the hinge) ρ = K, and the gain 1.
//
// Where g is plain L2, each merge searches the plane of the summed change
// and the previous step (cocoa's stepSearch, whose points cost O(1) each
// there), and the longer steps it takes undo part of the damping, the more
// the larger κ/n: the passes measured to a 1e-6 gap with K = 2 (logistic,
// λ = 1e-5) were ρ/(κ/n)^⅓ of SDCA's to within 10% at κ/n from 1.6 to 14
// (news20 binarised with unit rows, url-shaped rows of 0/1 tokens at 1M and
// 200k rows), so ρ is divided by max(1, (κ/n)^⅓), and kept at least 1:
// a gain above K, fewer passes than SDCA's, was measured (url-shaped, 200k
// rows) but is not predicted.
//
// An epoch of K workers steps fewer than K times SDCA's samples per
// second: it adds a merge over all d coordinates of the K replicas, and
// the replicas' footprint in cache; the measured epochs (url-shaped, 200k
// and 1M rows, K = 2, on two cores shared with other work) ran at 0.6·K
// to 0.8·K of SDCA's speed, and the gain is K·coCoAEpochEfficiency/ρ,
// with the upper end. On url-shaped 0/1 rows at 1M rows (κ/n = 2.9) K = 2
// gives 1.3, and SDCA stays (cocoa's certified run was no faster there);
// with unit rows (κ/n = 0.025) 1.6; on news20 with unit rows (κ/n = 1.6)
// 1.2.
func coCoAGain(prob Problem, opt Options, kappa float64) (int, float64) {
	k := driver.Lookup(SolverCoCoA).Workers(prob.X, opt.Threads)
	if k < 2 || math.IsInf(kappa, 1) {
		return k, 1
	}
	rho := (1 + float64(k)*kappa) / (1 + kappa)
	if en, ok := prob.Reg.AsElasticNet(); ok && en.Plain() && en.L1 == 0 {
		rho = math.Max(1, rho/math.Max(1, math.Cbrt(kappa)))
	}
	return k, float64(k) * coCoAEpochEfficiency / rho
}

// asyncGain returns the workers K that sdca-async would run on and its
// predicted speed-up over one-thread SDCA: K·asyncEpochEfficiency, or 1
// where it does not apply. Its steps are SDCA's, against a v that misses at
// most a few thousand of the other workers' latest steps (see sdca-async),
// so it takes SDCA's passes (15 on url-shaped 0/1 rows at 1M rows, as
// sdca); only its epochs are faster.
//
// They are faster only where each worker buffers its changes to the
// frequent columns: the frequent columns must come first (train's grouping
// of wide data puts them there) and the rest must be rare. Where fewer
// than half of the entries fall in the buffered columns, or those are more
// than a sixteenth of the width (the rest of the entries then crowd into
// few unbuffered columns), steps would move frequent columns' cache lines
// between the cores, and the gain is 1. It is 1 too where
// Options.Deterministic asks for a model that does not depend on the
// workers' timing.
//
// The epochs measured on url-shaped rows at 1M rows (K = 2, two cores) ran
// at 0.73–0.95 of K times SDCA's samples per second on 0/1 rows and
// 0.65–0.73 on unit rows; asyncEpochEfficiency is 0.75.
//
// The gains compare epochs only. cocoa's certificate recomputes v before
// the run may stop, which on wide data costs more than an epoch, where
// sdca-async's bounds the drift of its running v and recomputes nothing;
// so sdca-async is taken wherever its gain is within asyncMargin of
// cocoa's, the models' resolution. On url-shaped unit rows (κ/n = 0.025,
// gains 1.5 and 1.56) both take five epochs, and sdca-async, without
// cocoa's last recomputation, trained faster to a 1e-6 gap (bench/RESULTS.md,
// "The second core on raw wide data").
func asyncGain(prob Problem, opt Options) (int, float64) {
	k := sdca.AsyncWorkers(prob.X, opt.Threads)
	if k < 2 || opt.Deterministic {
		return k, 1
	}
	h, _ := sdca.BufferedColumns(prob.X, k)
	if h == 0 || prob.X.Cols < 16*h || leadingShare(prob.X, h) < 0.5 {
		return k, 1
	}
	return k, float64(k) * asyncEpochEfficiency
}

// asyncEpochEfficiency is the share of K times SDCA's samples per second
// that an epoch of K sdca-async workers steps (see asyncGain).
const asyncEpochEfficiency = 0.75

// asyncMargin is the share of cocoa's predicted gain above which
// sdca-async's is taken (see asyncGain).
const asyncMargin = 0.9

// leadingShare returns the share of the entries of x in its first h
// columns, counted over at most 4096 rows spread evenly over x.
func leadingShare(x *sparse.CSR, h int) float64 {
	step := max(1, x.Rows/4096)
	var in, all int
	for k := 0; k < x.Rows; k += step {
		_, idx := x.Row(k)
		for _, j := range idx {
			if int(j) < h {
				in++
			}
		}
		all += len(idx)
	}
	if all == 0 {
		return 0
	}
	return float64(in) / float64(all)
}

// coCoAEpochEfficiency is the share of K times SDCA's samples per second
// that an epoch of K cocoa workers steps (see coCoAGain).
const coCoAEpochEfficiency = 0.8

// sdcaKappaPerSample returns κ/n = mean ‖aₖ‖²/(λγn), the term by which
// SDCA's passes per factor e of the gap exceed one (Shalev-Shwartz &
// Zhang: n + R²/(λγ) steps per factor e, with the mean qₖ for R²; γ the
// strong convexity of φ*), or +Inf where the loss is not smooth (γ = 0)
// or the regularizer has no L2 term.
func sdcaKappaPerSample(prob Problem) float64 {
	x := prob.X
	en, ok := prob.Reg.AsElasticNet()
	gamma := prob.Loss.Gamma()
	if !ok || !(gamma > 0) || !(en.StrongConvexity() > 0) || x.Rows == 0 {
		return math.Inf(1)
	}
	n := float64(x.Rows)
	return kernels.Dot(x.Values, x.Values) / n / (en.StrongConvexity() * gamma) / n
}

// columnScaleRange returns the smallest and the largest, over the columns
// with a nonzero, of the column's largest |aₖⱼ|.
func columnScaleRange(x *sparse.CSR) (lo, hi float64) {
	// Every column's largest |aₖⱼ| lies between the smallest and the largest
	// |aₖⱼ| of the whole matrix, so where those are within 10³ of each other
	// (unit rows of binary features, scaled data) they answer the only
	// question asked, at the cost of a stream over the values instead of a
	// scattered pass over a d-vector, which on data of millions of
	// features costs a noticeable share of a run. The stream runs on every
	// core (sparse's AbsRange).
	lo, hi = x.AbsRange()
	if hi <= 1e3*lo || hi == 0 {
		return lo, hi
	}
	m := make([]float64, x.Cols)
	for p, j := range x.Indices {
		m[j] = math.Max(m[j], math.Abs(x.Values[p]))
	}
	lo = math.Inf(1)
	for _, v := range m {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi
}
