// Package modelio reads and writes the linear models that engine.Train
// returns. The model type, engine.Model, lives in package engine with its
// check (Validate) and its decision rule (Margin, Predict); this package
// moves models to and from files, in two formats.
//
// # JSON
//
// Save writes, and Load reads, one JSON object with the fields of
// engine.Model:
//
//	loss       the loss's name, as engine.LossByName knows it: "logistic",
//	           "sqhinge", "smoothhinge", "hinge" (classification);
//	           "squared", "absolute", "epsinsensitive", "quantile"
//	           (regression)
//	lambda     λ of the (λ/2)‖x‖² term the model was trained with
//	l1         l1 of the l1‖x‖₁ term (0: pure L2)
//	bias       the value of the constant feature appended to every row
//	           (LIBLINEAR's -B); 0: none
//	normalize  "unit" when rows are scaled to unit norm before the bias
//	           feature is appended; absent otherwise
//	labels     [negative, positive]: the raw labels that a margin ≤ 0 and
//	           a margin > 0 predict; for a one-vs-rest model of K ≥ 3
//	           classes, the K classes in increasing order; absent for a
//	           regression
//	dim        the number of features
//	multinomial  true for a softmax model of K ≥ 3 classes; absent otherwise
//	certificate  {"primal": P, "dual": D}: the objective at the weights and
//	           a lower bound on its optimum, as the run that wrote the
//	           model certified them; absent where none was recorded
//	weights    dim weights, then the bias feature's weight when bias ≠ 0;
//	           for K classes, K such vectors one after another, in the
//	           order of labels
//
// A model with fewer than a quarter of its weights nonzero (an L1 model of
// many features, or one trained with -features far beyond the data's) is
// written sparse instead of weights, so that its file grows with the
// nonzero weights and not with dim: nonzero_index, the increasing 0-based
// positions of the nonzero weights in the weights array above (the bias
// feature's is dim; class k's vector starts at k·(dim+1) with a bias,
// k·dim without), and nonzero_weight, their values:
//
//	"dim": 30000000,
//	"nonzero_index": [0, 4, 29999999, 30000000],
//	"nonzero_weight": [0.25, -1.5, 3e-07, 0.125]
//
// Load reads both forms and refuses a file with both, with indices out of
// order or beyond the weights, or with unequal lengths.
//
// Weights are written with the shortest representation that reads back to
// the same float64, so a round trip is bit-exact. Load rejects a file that
// is not such an object, or whose model fails engine.Model.Validate (a
// weight count that does not match dim, bias and the classes, a non-finite
// weight or bias, an unknown loss or normalize, labels that are not
// distinct, labels on a regression loss), with an error that names the
// file. Load also reads
// LIBLINEAR's format, telling the two apart by the first bytes.
//
// # LIBLINEAR
//
// SaveLIBLINEAR writes the model in the text format of LIBLINEAR's
// save_model, so that liblinear-predict (and LIBLINEAR's load_model) accept
// it and predict what engine.Model.Predict predicts:
//
//	solver_type L2R_LR
//	nr_class 2
//	label 1 -1
//	nr_feature 13
//	bias 1
//	w
//	0.12345678901234567
//	…
//
// The solver type only tells LIBLINEAR which decision rule and which model
// layout to use; it is the LIBLINEAR solver that minimises the same loss:
//
//	logistic     L2R_LR           (-s 0; -s 7 is the same model)
//	hinge        L2R_L1LOSS_SVC_DUAL (-s 3)
//	sqhinge      L2R_L2LOSS_SVC   (-s 2; -s 1 is the same model)
//	smoothhinge  L2R_L2LOSS_SVC   (the same linear sign rule)
//	squared      L2R_L2LOSS_SVR   (-s 11 with ε = 0)
//
// LIBLINEAR predicts its first listed label when wᵀx > 0, so the label line
// lists the positive raw label first; a regression model has no label line.
// LIBLINEAR's labels are integers, so a classifier whose raw labels are not
// is refused. "bias -1" means no bias feature, as in LIBLINEAR; a negative
// bias value, which LIBLINEAR cannot express, is written as its absolute
// value with the bias weight negated, which gives the same margins. The
// weights follow "w", one per line, with 17 significant digits.
//
// LIBLINEAR has no elastic-net solver (its L1 solvers, -s 5 and -s 6, have
// no L2 term), and liblinear-predict would not scale rows to unit norm, so
// LIBLINEARCompatible refuses models with l1 > 0 or a normalize, and models
// whose loss has no LIBLINEAR counterpart. It looks only at the loss, l1
// and normalize, so it can be asked before training.
//
// LoadLIBLINEAR reads two-class, one-vs-rest and regression models of
// LIBLINEAR's solvers, SaveLIBLINEAR's and liblinear-train's (-s 0 to 3,
// 5 to 7, 11 to 13); Load calls it for a file that starts with solver_type. The
// loss is the one whose decision rule the solver's model follows (squared
// for the three regressions), and λ and l1, which the format does not
// keep, read as 0. For two classes LIBLINEAR keeps one weight column and
// predicts its first listed label where wᵀx > 0, whichever order
// liblinear-train found the labels in (their order of appearance), so that
// label becomes the positive one. A one-vs-rest model's columns are
// reordered with its labels into increasing order. Crammer–Singer
// (MCSVM_CS) and one-class models are refused, as their decision rules
// are not ours.
//
// # Duals
//
// SaveDuals writes, and LoadDuals reads, the dual iterate that a checkpoint
// keeps beside its model (Options.Checkpoint's duals), so that a restart by
// a solver that takes warm duals (Options.WarmDuals) goes on from them. The
// file is binary: the line "adaspdc duals", a version byte, the loss's name,
// DataSum of the rows the duals belong to (a sum over the rows that any
// split over ranks adds up to), WeightsSum of the model's weights, the
// number of duals and the duals, little-endian, and a CRC-32C of all of it.
// LoadDuals refuses a file cut short, changed, or of another version; the
// caller compares the sums with the model and the data it has.
//
// # Atomic writes
//
// Both writers, and WriteFileAtomic for other outputs (adaspdc predict
// -output), write to a temporary file in the destination's directory
// (.NAME.tmp-PID-HOST-RAND: the writing process's id and a hash of its
// host's name), sync it, close it and rename it over the destination.
// Readers therefore see the old file or the complete new one, never a
// partial one, even if the process dies or the disk fills up in the
// middle. On any error the temporary file is removed and the destination
// is left as it was; the error, an *os.PathError, names the destination.
// A destination that is a symbolic link is written through (the link
// stays); a replaced file keeps its mode, and a new one gets 0666 less the
// umask, as os.Create gives. Temporary files of the same name that a
// process of this host left and that no longer runs (a crash, a kill -9)
// are removed before writing; another host's are left alone, as its
// process ids mean nothing here. A destination that is a device or a pipe
// (/dev/null, /dev/stdout in a pipeline) is written in place instead, as
// replacing it would break it for everyone else.
package modelio
