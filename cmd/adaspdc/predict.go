package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

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

func runPredict(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc", "predict", stderr)
	dataPath, features := dataFlags(fs)
	modelPath := fs.String("model", "", "model `file` written by adaspdc train -model or -liblinear-model, or by liblinear-train (required)")
	output := fs.String("output", "", "write one prediction per line to this `file`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc predict -model FILE -data FILE [-output FILE]\n\n"+
			"Prints accuracy=… for a classification model, rmse=… for a regression one.\n"+
			"Data whose labels are all placeholders outside the model's classes (0, as\n"+
			"LIBLINEAR's users write for unknown labels) are predicted without metrics.\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return cli.UsageErrorf(fs, "-model is required")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["data"] || *dataPath == "" {
		// train's default data set would be scored silently in its place.
		return cli.UsageErrorf(fs, "-data is required: the file to predict")
	}
	if *features < 0 || *features >= math.MaxInt32 {
		return cli.UsageErrorf(fs, "-features %d: must be 0 (the largest index in the data) or more, and below 2³¹ − 1", *features)
	}
	if *output != "" {
		if err := checkWritable(*output); err != nil {
			return cli.UsageErrorf(fs, "-output %s: %v", *output, err)
		}
		if err := checkCollisions([]namedPath{{"data", *dataPath}, {"model", *modelPath}}, []namedPath{{"output", *output}}); err != nil {
			return cli.UsageErrorf(fs, "%v", err)
		}
	}
	model, err := modelio.Load(*modelPath)
	if err != nil {
		return err
	}
	ds, err := loadData(*dataPath, sparse.ReadOptions{NumFeatures: *features})
	if err != nil {
		return err
	}

	// Features the model never saw carry no weight: LIBLINEAR ignores them
	// too, but silently. Say how many there were.
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
	if ds.X.Cols < model.Dim {
		fmt.Fprintf(stderr, "adaspdc predict: note: the data use %d features and the model was trained on %d; check that the files belong together (a wrong pairing predicts without any error)\n", ds.X.Cols, model.Dim)
	}
	// Labels outside the model's classes are placeholders when all are
	// (unlabeled data: predict without metrics); a mix is a mistake.
	unlabeled := false
	if model.Labels != nil {
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
			unlabeled = true
		case firstUnknown >= 0:
			return fmt.Errorf("%s: row %d has label %v, not one of the model's labels %v (%d of %d rows have the model's labels; unlabeled data need a placeholder label on every row)",
				ds.Name, firstUnknown+1, ds.Y[firstUnknown], model.Labels, known, ds.X.Rows)
		}
	}
	preds := make([]float64, ds.X.Rows)
	var correct int
	var sse float64
	for i := 0; i < ds.X.Rows; i++ {
		val, idx := ds.X.Row(i)
		p := model.Predict(val, idx)
		preds[i] = p
		if p == ds.Y[i] {
			correct++
		}
		sse += (p - ds.Y[i]) * (p - ds.Y[i])
	}
	if *output != "" {
		err := modelio.WriteFileAtomic(*output, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			for _, p := range preds {
				bw.WriteString(strconv.FormatFloat(p, 'g', -1, 64))
				bw.WriteByte('\n')
			}
			return bw.Flush()
		})
		if err != nil {
			return err
		}
	}
	n := float64(ds.X.Rows)
	switch {
	case unlabeled:
		_, err = fmt.Fprintf(stdout, "rows=%d (labels unknown: no accuracy)\n", ds.X.Rows)
	case model.Labels != nil:
		_, err = fmt.Fprintf(stdout, "accuracy=%.4f%% (%d/%d)\n", 100*float64(correct)/n, correct, ds.X.Rows)
	default:
		_, err = fmt.Fprintf(stdout, "rmse=%.6g\n", math.Sqrt(sse/n))
	}
	return err
}
