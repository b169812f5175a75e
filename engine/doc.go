// Package engine trains regularized linear models with certified methods:
// AdaSPDC, the adaptive stochastic primal-dual coordinate method of Zhu &
// Storkey (ECML-PKDD 2015), and its relatives; SDCA and its parallel forms;
// truncated Newton and newGLMNET; the variance-reduced methods; Wang &
// Xiao's; Pdprox; and the reductions of Allen-Zhu & Hazan. Every run is
// certified by a duality gap, computed in one place.
//
// # Embedding
//
// NewProblem turns a sparse.Dataset into a Problem (raw labels mapped to
// ±1 and kept, an optional bias column), and Train with DefaultOptions
// picks the solver from the problem (AutoSolver, the choice adaspdc train
// makes too, with the reason in Result.Choice) and returns a Model whose
// Predict gives raw labels on raw rows. A cancelled context or
// Options.TimeLimit ends a run with the model of its best certificate;
// Options.Callback sees every certificate. TrainOneVsRest trains several
// classes one against the rest, TrainMultinomial as one softmax model,
// CrossValidate and the paths choose λ, and TrainDistributed trains over
// the ranks of a comm.Comm (MPI, or goroutines in tests): truncated Newton
// for a smooth loss with an L2 term, CoCoA+ rounds otherwise. The
// Example functions show each in a few lines.
//
// # Layers
//
// The packages below engine run one way, each using only those under it:
//
//	engine            Train, the automatic choice, models, one-vs-rest,
//	                  cross-validation and paths: what a program embeds
//	engine/spdc …     the solver families (below), each a package that
//	                  registers its methods with the driver
//	engine/driver     the method contract: the Method interface, Run (the
//	                  driver: certificate schedule, stopping, divergence,
//	                  stall, trace, best model), Solve (one solver's run),
//	                  the registry, Options, the trace and result types,
//	                  the worker policy and the row sweep
//	engine/objective  the problem, the losses, the regularizers and the one
//	                  certificate (objective.Evaluator)
//	sparse, blocks, sched, kernels, internal/hugepage
//
// engine itself holds no method. It imports every family, which registers
// its solvers from init, and keeps the names of the lower layers (Problem,
// Options, Result, the losses and regularizers, the solver names) as
// aliases, so that a program imports engine alone.
//
// # The families
//
//	spdc     AdaSPDC and SPDC: per-block or common steps, ESO batch steps,
//	         lazy primal updates; the flagship, and the subject of the
//	         scaling studies (package doc has the mathematics)
//	sdca     Prox-SDCA and its mini-batch form, asynchronous SDCA
//	         (PASSCoDe), CoCoA+ on thread-private replicas, asynchronous
//	         SPDC (one sample per worker step, the L2 prox in closed form on
//	         SDCA's state), dual-free SDCA
//	newton   truncated Newton for L2 (scale-invariant steps, CG on the
//	         formed Hessian where d is small) and newGLMNET for L1, which
//	         share the curvature of the losses and the row sweeps
//	vr       SAG, SAGA and SVRG over one coordinate store (dense or lazy)
//	wx       Wang & Xiao's batch and stochastic primal-dual methods, their
//	         adaptive and dual-free forms
//	pdprox   Pdprox (Yang et al.) for the losses with a bilinear dual
//	reduce   AdaptReg, AdaptSmooth and JointAdapt, which run another
//	         family's solver on a sequence of strongly convex, smooth
//	         stages
//
// Two boundaries differ from the obvious one per method. Asynchronous SPDC
// lives with SDCA, whose state (duals, v, steps, certificate) it shares,
// not with SPDC, whose batch loop it does not use. Newton and newGLMNET
// are one family: both are Newton-type primal methods that need φ″ and
// sweep the rows the same way.
//
// # The certificate
//
// P(x), D(y) and the gap that a user sees all come from
// objective.Evaluator: compensated sums in fixed chunks of rows, v =
// (1/n) Σₖ yₖaₖ summed by column owners in row order, so the result is
// bit-identical whatever the number of workers; dual points scaled into
// dom g* where g* is an indicator; sample weights applied in the one
// place. A method chooses the dual point (its own duals, the point paired
// with x, or the better of the two) and may hand the evaluator what it has
// computed anyway (margins, the loss gradient, a running v, its sweep's
// sums, see AtGradient, AtDualVector and AtMarginsDualVector), but not a
// formula of its own. The values that only steer a method come from
// objective too: Ada-BPD adapts its steps by AtMarginsDualVector's gap at
// its running v, newton's forcing term reads the certificate newton
// reports, and CoCoA+'s step search over ranks compares D at its trial
// points by objective.DualPlane, from the ranks' allreduced sums.
// Certify is the same certificate for any weights.
//
// # Adding a method
//
// A method is one file in its family's package, with the mathematics above
// its step. It implements driver.Method: RunEpochs(ctx, k) runs k epochs,
// Certify returns the certificate at the current point from a
// driver.NewEvaluator, Point returns x, and Passes, Threads and
// DivergenceHint report on it; a method that holds workers also
// implements driver.Finisher, one with duals driver.DualIterate (and
// driver.DualWarmStarter, to serve as a reduction's inner solver).
// Everything else, stopping, the trace, the best model, divergence and
// stalls, a user's StopRule, the time limit, is the driver's. The file
// registers the method from init with driver.Register: its SolverInfo for
// `adaspdc solvers` (with what it declares: parallel, importance sampling,
// stage warm starts, the families of settings it Reads, and what it Takes
// beyond its losses and an L2 term: an L1 term, sample weights, warm
// duals, groups), a Rank for the listing, an Accepts function that refuses
// the problems and options it cannot take, with the reason, and a Start
// function that builds it at its starting point. Validation, the automatic
// choice and the command line read those declarations, not lists of
// names. Worker counts come from the driver's policy (driver.WorkersFor,
// SweepWorkers, MinBatchWork), never from runtime.GOMAXPROCS.
//
// driver.Options holds the run alone (the solver, threads, seed, the stop
// rules, the warm start, the callback). A method's own parameters are its
// family's settings: a type in the family's package with a Family name
// (reduce.Settings, sdca.Settings; the coordinate settings that several
// families read, driver.Coordinate, which spdc.Settings names), carried in
// Options.Settings (Options.With adds them) and read with
// driver.SettingsOf; a solver names the families it reads in
// SolverInfo.Reads, and Options.Validate refuses other families' settings
// that are not at their defaults. For example, plain proximal SGD would be
//
//	// sgd.go
//	type sgd struct {
//		prob driver.Problem
//		x    []float64
//		eval *objective.Evaluator
//		seen int64
//	}
//
//	// RunEpochs: for each of n random k, z = aₖᵀx, then
//	// x ← prox_{ηg}(x − η·φ'(z, bₖ)·aₖ).
//	func (m *sgd) Certify() (driver.TracePoint, error) {
//		c, err := m.eval.At(m.x, nil, objective.PairedDuals)
//		return driver.TracePointOf(c), err
//	}
//	func (m *sgd) Point() []float64 { return m.x }
//	func (m *sgd) Passes() float64  { return float64(m.seen) / float64(m.prob.X.Rows) }
//	...
//	func init() {
//		driver.Register(&driver.Entry{
//			SolverInfo: driver.SolverInfo{Name: "sgd", Summary: "proximal SGD", ...},
//			Rank:       90,
//			Accepts:    func(p driver.Problem, o driver.Options) error { ... },
//			Start:      func(ctx context.Context, p driver.Problem, o driver.Options) (driver.Method, error) { ... },
//		})
//	}
//
// A new family is a package under engine that engine imports (families.go)
// and whose solvers it names. Its tests use engine/internal/enginetest
// (shared data, a Train that runs a named solver through driver.Solve);
// tests that compare it with another family's solver live in engine.
//
// # Where things live in engine
//
//	solvers.go      Train: the checks, the automatic choice, the model
//	choice.go       AutoSolver and its cost model
//	model.go        Model: prediction on raw rows, several classes
//	multiclass.go   one-vs-rest, the classes sharing the cores
//	multinomial.go  the softmax model, by the solvers that register for it
//	                (driver.RegisterMultinomial: newton's L-BFGS, sdca's
//	                exact dual steps), certified by
//	                objective.MultinomialEvaluator
//	distributed.go  training over ranks: newton.TrainDistributed (on
//	                driver.WorldSweep) or sdca.TrainDistributed (CoCoA+)
//	crossval.go     folds, cross-validation, the λ and L1 paths
//	certify.go      Certify
//	objective.go, facade.go, families.go   the lower layers' names
//	modelio/        model files (JSON, LIBLINEAR's format)
package engine
