package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
	"github.com/adaspdc/adaspdc/internal/cli"
	"github.com/adaspdc/adaspdc/sparse"
)

func init() {
	commands["predict"] = command{
		summary: "apply a model to a dataset and print its accuracy or RMSE",
		run:     runPredict,
	}
}

// predictFlags holds the command line of adaspdc predict once parsed.
type predictFlags struct {
	data, model, output string
	features            int
	scores, probs       bool
}

// runPredict is adaspdc predict: its steps are predict's, and a mistake in
// the command line that a step finds is said as a usage error.
func runPredict(args []string, stdout, stderr io.Writer) error {
	return reportMistake("predict", stderr, predict(args, stdout, stderr))
}

// predict runs the steps of adaspdc predict: the flags and their checks,
// before anything is read; the model and the data, checked against each
// other; the predictions; the -output file; the metrics on stdout.
func predict(args []string, stdout, stderr io.Writer) error {
	f, set, err := parsePredictFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := f.validate(set); err != nil {
		return err
	}
	model, err := modelio.Load(f.model)
	if err != nil {
		return err
	}
	ds, err := loadData(f.data, sparse.ReadOptions{NumFeatures: f.features})
	if err != nil {
		return err
	}
	unlabeled, err := checkPredictData(model, ds, f, stderr)
	if err != nil {
		return err
	}
	p := predictRows(model, ds, f.scores || f.probs, f.probs)
	if f.output != "" {
		if err := writePredictions(f.output, p); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, predictionReport(model, ds, p, unlabeled, f))
	return err
}

// parsePredictFlags parses adaspdc predict's command line and returns the
// flags and which of them were given.
func parsePredictFlags(args []string, stderr io.Writer) (predictFlags, map[string]bool, error) {
	fs := cli.NewFlagSet("adaspdc", "predict", stderr)
	var f predictFlags
	dataPath, features := dataFlags(fs)
	fs.StringVar(&f.model, "model", "", "model `file` written by adaspdc train -model or -liblinear-model, or by liblinear-train (required)")
	fs.StringVar(&f.output, "output", "", "write one prediction per line to this `file`")
	fs.BoolVar(&f.scores, "scores", false, "also write the decision values (the margins, one per class of a one-vs-rest model) after each label, under a \"labels …\" header naming the columns; print AUC for a binary model")
	fs.BoolVar(&f.probs, "probabilities", false, "logistic models: write LIBLINEAR's -b 1 format (a \"labels …\" header, then the label and one probability per class: the sigmoid, normalised over the classes of a one-vs-rest model as LIBLINEAR does); print the log-loss")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc predict -model FILE -data FILE [-output FILE]\n\n"+
			"Prints accuracy=… for a classification model, rmse=… for a regression one.\n"+
			"Data whose labels are all placeholders outside the model's classes (0, as\n"+
			"LIBLINEAR's users write for unknown labels) are predicted without metrics.\n"+
			"Several classes add each class's precision and recall; regression adds R².\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return f, nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f.data, f.features = *dataPath, *features
	return f, set, nil
}

// validate refuses, before the model or the data is read, every mistake
// that the flags alone show.
func (f predictFlags) validate(set map[string]bool) error {
	if f.model == "" {
		return mistakef("-model is required")
	}
	if !set["data"] || f.data == "" {
		// train's default data set would be scored silently in its place.
		return mistakef("-data is required: the file to predict")
	}
	if f.features < 0 || f.features >= math.MaxInt32 {
		return mistakef("-features %d: must be 0 (the largest index in the data) or more, and below 2³¹ − 1", f.features)
	}
	if f.scores && f.probs {
		return mistakef("-scores and -probabilities: choose one")
	}
	if f.output != "" {
		if err := checkOutput(f.output); err != nil {
			return mistakef("-output %s: %v", f.output, err)
		}
		if err := checkCollisions([]namedPath{{"data", f.data}, {"model", f.model}}, []namedPath{{"output", f.output}}); err != nil {
			return mistakef("%v", err)
		}
	}
	return nil
}

// checkPredictData checks the data against the model: it notes on stderr
// the features the model never saw, which carry no weight (LIBLINEAR
// ignores them too, but silently), and a data set much narrower than the
// model; it refuses labels of which some, not all, are outside the model's
// classes, and -scores and -probabilities that the model cannot give. It
// reports whether the data are unlabeled: all their labels are
// placeholders outside the model's classes, and they are predicted
// without metrics.
func checkPredictData(model *engine.Model, ds *sparse.Dataset, f predictFlags, stderr io.Writer) (unlabeled bool, err error) {
	if ds.X.Cols > model.Dim {
		used := make(map[int32]bool)
		var entries int
		for _, j := range ds.X.Indices {
			if int(j) >= model.Dim {
				used[j] = true
				entries++
			}
		}
		if entries > 0 {
			fmt.Fprintf(stderr, "adaspdc predict: ignored %d features (%d entries) beyond the model's %d features, as LIBLINEAR does\n",
				len(used), entries, model.Dim)
		}
	}
	// A test file may miss the model's last feature or so (a9a.t has 122
	// of a9a's 123); a tenth or more missing suggests another data set.
	if float64(ds.X.Cols) < 0.9*float64(model.Dim) {
		fmt.Fprintf(stderr, "adaspdc predict: note: the data use %d features and the model was trained on %d; check that the files belong together (a wrong pairing predicts without any error)\n", ds.X.Cols, model.Dim)
	}
	if model.Labels != nil {
		if unlabeled, err = checkLabels(model, ds, f.data); err != nil {
			return false, err
		}
	}
	if f.probs && model.Loss != "logistic" {
		return false, fmt.Errorf("-probabilities: the model's loss is %s; only logistic models give probabilities (use -scores for the decision values)", model.Loss)
	}
	if (f.probs || f.scores) && model.Labels == nil {
		return false, fmt.Errorf("-scores and -probabilities are for classifiers; %s is a regression model", f.model)
	}
	return unlabeled, nil
}

// checkLabels reports whether the data's labels are all outside the
// classifier's classes (unlabeled data), and refuses a mix, naming the
// first row, and its line, whose label is not one of the classes.
func checkLabels(model *engine.Model, ds *sparse.Dataset, dataPath string) (unlabeled bool, err error) {
	known, firstUnknown := 0, -1
	for i, y := range ds.Y {
		if slices.Contains(model.Labels, y) {
			known++
		} else if firstUnknown < 0 {
			firstUnknown = i
		}
	}
	switch {
	case known == 0:
		return true, nil
	case firstUnknown >= 0:
		where := dataPath
		if line := dataLine(dataPath, firstUnknown, ds.Y[firstUnknown]); line > 0 {
			where += ":" + strconv.Itoa(line)
		}
		return false, fmt.Errorf("%s: row %d has label %v, not one of the model's labels %v (%d of %d rows have the model's labels; unlabeled data need a placeholder label on every row)",
			where, firstUnknown+1, ds.Y[firstUnknown], model.Labels, known, ds.X.Rows)
	}
	return false, nil
}

// predictions are a model's predictions of a data set's rows, with the
// counts its metrics need.
type predictions struct {
	preds   []float64
	cols    []float64 // the labels the table's columns stand for
	table   []float64 // per row: the scores or probabilities, in cols' order; nil without -scores or -probabilities
	correct int       // rows predicted as labeled
	sse     float64   // the sum of the squared errors
}

// predictRows predicts every row of ds, with the table of decision values
// (or probabilities, with probs) when withTable.
func predictRows(model *engine.Model, ds *sparse.Dataset, withTable, probs bool) predictions {
	sc := newScorer(model)
	p := predictions{preds: make([]float64, ds.X.Rows), cols: sc.columns()}
	width := len(p.cols)
	if withTable {
		p.table = make([]float64, ds.X.Rows*width)
	}
	for i := 0; i < ds.X.Rows; i++ {
		val, idx := ds.X.Row(i)
		pi := model.Predict(val, idx)
		p.preds[i] = pi
		if pi == ds.Y[i] {
			p.correct++
		}
		p.sse += (pi - ds.Y[i]) * (pi - ds.Y[i])
		if p.table != nil {
			row := p.table[i*width : (i+1)*width]
			if probs {
				sc.probabilities(val, idx, row)
			} else {
				sc.scores(val, idx, row)
			}
		}
	}
	return p
}

// writePredictions writes -output: one prediction per line, after a
// "labels …" header and followed by the row's table when there is one.
func writePredictions(path string, p predictions) error {
	return modelio.WriteFileAtomic(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		width := len(p.cols)
		if p.table != nil {
			bw.WriteString("labels")
			for _, l := range p.cols {
				bw.WriteString(" " + strconv.FormatFloat(l, 'g', -1, 64))
			}
			bw.WriteByte('\n')
		}
		for i, pi := range p.preds {
			bw.WriteString(strconv.FormatFloat(pi, 'g', -1, 64))
			if p.table != nil {
				for _, v := range p.table[i*width : (i+1)*width] {
					bw.WriteString(" " + strconv.FormatFloat(v, 'g', -1, 64))
				}
			}
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}

// predictionReport returns what predict prints: the rows of unlabeled
// data; a classifier's accuracy (with the log-loss of -probabilities, the
// AUC of a binary model's -scores, and each class's precision and recall
// when there are several); a regression's RMSE and R².
func predictionReport(model *engine.Model, ds *sparse.Dataset, p predictions, unlabeled bool, f predictFlags) string {
	n := float64(ds.X.Rows)
	var b strings.Builder
	switch {
	case unlabeled:
		fmt.Fprintf(&b, "rows=%d (labels unknown: no accuracy)\n", ds.X.Rows)
	case model.Labels != nil:
		fmt.Fprintf(&b, "accuracy=%.4f%% (%d/%d)", 100*float64(p.correct)/n, p.correct, ds.X.Rows)
		if f.probs {
			fmt.Fprintf(&b, " log_loss=%.6g", logLoss(p.table, p.cols, ds.Y))
		}
		if f.scores && model.Classes() == 2 {
			fmt.Fprintf(&b, " auc=%.6f", binaryAUC(p.table, ds.Y, p.cols[0]))
		}
		b.WriteByte('\n')
		if model.Classes() > 2 {
			writeClassMetrics(&b, model.Labels, p.preds, ds.Y)
		}
	default:
		var mean, sst float64
		for _, y := range ds.Y {
			mean += y / n
		}
		for _, y := range ds.Y {
			sst += (y - mean) * (y - mean)
		}
		fmt.Fprintf(&b, "rmse=%.6g r2=%.6g\n", math.Sqrt(p.sse/n), 1-p.sse/sst)
	}
	return b.String()
}

// scorer computes a classifier's decision values and probabilities, in
// the column order of LIBLINEAR's output: for a binary model the positive
// label first (LIBLINEAR's first label is the one a positive margin
// predicts), for a one-vs-rest model the classes in the model's order.
type scorer struct {
	m       *engine.Model
	margins []float64
}

func newScorer(m *engine.Model) *scorer {
	return &scorer{m: m, margins: make([]float64, max(1, m.Classes()))}
}

// columns returns the labels the columns stand for.
func (s *scorer) columns() []float64 {
	switch {
	case s.m.Classes() > 2:
		return s.m.Labels
	case s.m.Labels != nil:
		return []float64{s.m.Labels[1], s.m.Labels[0]}
	}
	return nil
}

// scores sets out to the decision values: the margin for a binary model
// (out has one entry, the positive label's), every class's margin for a
// one-vs-rest model.
func (s *scorer) scores(val []float64, idx []int32, out []float64) {
	if s.m.Classes() > 2 {
		s.m.Margins(val, idx, out)
		return
	}
	out[0] = s.m.Margin(val, idx)
	if len(out) > 1 {
		out[1] = -out[0]
	}
}

// probabilities sets out to the probability of each column's label: σ(z)
// and 1 − σ(z) for a binary logistic model; for a one-vs-rest model each
// class's σ(zₖ), divided by their sum, as LIBLINEAR's predict_probability;
// for a multinomial model the softmax of the margins.
func (s *scorer) probabilities(val []float64, idx []int32, out []float64) {
	sigmoid := func(z float64) float64 {
		if z >= 0 {
			return 1 / (1 + math.Exp(-z))
		}
		e := math.Exp(z)
		return e / (1 + e)
	}
	if s.m.Multinomial {
		// The softmax, from the largest margin so that no exp overflows.
		s.m.Margins(val, idx, out)
		top := slices.Max(out)
		var sum float64
		for k, z := range out {
			out[k] = math.Exp(z - top)
			sum += out[k]
		}
		for k := range out {
			out[k] /= sum
		}
		return
	}
	if s.m.Classes() > 2 {
		s.m.Margins(val, idx, out)
		var sum float64
		for k, z := range out {
			out[k] = sigmoid(z)
			sum += out[k]
		}
		for k := range out {
			out[k] /= sum
		}
		return
	}
	z := s.m.Margin(val, idx)
	out[0], out[1] = sigmoid(z), sigmoid(-z)
}

// logLoss returns the mean of −log p(yᵢ) over the rows, with p clipped to
// [1e-15, 1] as scikit-learn's log_loss does.
func logLoss(table, cols, y []float64) float64 {
	var sum float64
	for i, yi := range y {
		row := table[i*len(cols) : (i+1)*len(cols)]
		p := row[slices.Index(cols, yi)]
		sum -= math.Log(math.Max(p, 1e-15))
	}
	return sum / float64(len(y))
}

// binaryAUC returns the area under the ROC curve of the scores (the first
// column, the positive label's) against the labels: the probability that a
// positive row scores above a negative one, ties counting half, computed
// from the ranks.
func binaryAUC(table, y []float64, pos float64) float64 {
	width := len(table) / len(y)
	type pair struct {
		score float64
		pos   bool
	}
	ps := make([]pair, len(y))
	var npos float64
	for i := range y {
		ps[i] = pair{table[i*width], y[i] == pos}
		if ps[i].pos {
			npos++
		}
	}
	nneg := float64(len(y)) - npos
	if npos == 0 || nneg == 0 {
		return math.NaN()
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.score, b.score) })
	var rankSum float64
	for i := 0; i < len(ps); {
		j := i
		for j < len(ps) && ps[j].score == ps[i].score {
			j++
		}
		rank := float64(i+j+1) / 2 // the mean 1-based rank of the tie
		for k := i; k < j; k++ {
			if ps[k].pos {
				rankSum += rank
			}
		}
		i = j
	}
	return (rankSum - npos*(npos+1)/2) / (npos * nneg)
}

// writeClassMetrics writes each class's precision and recall.
func writeClassMetrics(b *strings.Builder, classes, pred, y []float64) {
	for _, c := range classes {
		var tp, fp, fn float64
		for i := range y {
			switch {
			case pred[i] == c && y[i] == c:
				tp++
			case pred[i] == c:
				fp++
			case y[i] == c:
				fn++
			}
		}
		fmt.Fprintf(b, "class %v: precision=%.4f recall=%.4f (%d rows)\n", c, tp/math.Max(1, tp+fp), tp/math.Max(1, tp+fn), int(tp+fn))
	}
}

// checkOutput reports whether -output can be written: as checkWritable
// asks for a file, which is replaced through a temporary file in its
// folder. A device or a pipe (/dev/null, /dev/stdout in a pipeline, a named
// pipe) is written in place by modelio.WriteFileAtomic, so its folder, which
// the user may not write (/dev), need not take new files.
func checkOutput(path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil
	}
	return checkWritable(path)
}

// dataLine returns the 1-based line of a LIBSVM text file that holds its
// row'th row (0-based), whose label is label, or 0 where it cannot tell (a
// compressed file or a cache, a file that changed). Blank and comment-only
// lines hold no row, so a row's line is its number only in files without
// them. It reads the file again, which only an error message pays for.
func dataLine(path string, row int, label float64) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	if b, err := r.Peek(1); err != nil || !strings.ContainsRune("0123456789+-. \t\r\n#", rune(b[0])) {
		return 0
	}
	rows := 0
	for line := 1; ; line++ {
		text, err := r.ReadSlice('\n')
		head := string(text) // ReadSlice's buffer is reused by the next read
		for errors.Is(err, bufio.ErrBufferFull) {
			// A long line: its label is in the first part, and the rest
			// only has to be skipped.
			_, err = r.ReadSlice('\n')
		}
		data, _, _ := strings.Cut(head, "#")
		if fields := strings.Fields(data); len(fields) > 0 {
			if rows == row {
				if v, perr := strconv.ParseFloat(fields[0], 64); perr == nil && v == label {
					return line
				}
				return 0
			}
			rows++
		}
		if err != nil {
			return 0
		}
	}
}
