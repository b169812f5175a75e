package main

import (
	"bufio"
	"fmt"
	"github.com/adaspdc/adaspdc/internal/cli"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/adaspdc/adaspdc/engine/modelio"
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
	modelPath := fs.String("model", "", "model `file` written by adaspdc train -model (required)")
	output := fs.String("output", "", "write one prediction per line to this `file`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc predict -model FILE [-data FILE] [-output FILE]\n\n"+
			"Prints accuracy=… for a classification model, rmse=… for a regression one.\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *modelPath == "" {
		return cli.UsageErrorf(fs, "-model is required")
	}
	model, err := modelio.Load(*modelPath)
	if err != nil {
		return err
	}
	var out *bufio.Writer
	if *output != "" {
		if err := checkWritable(*output); err != nil {
			return cli.UsageErrorf(fs, "-output %s: %v", *output, err)
		}
	}
	ds, err := loadData(*dataPath, sparse.ReadOptions{NumFeatures: *features})
	if err != nil {
		return err
	}
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		out = bufio.NewWriter(f)
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
	if model.Labels != nil {
		for _, y := range ds.Y {
			if y != model.Labels[0] && y != model.Labels[1] {
				return fmt.Errorf("%s: label %v is not one of the model's labels %v and %v", ds.Name, y, model.Labels[0], model.Labels[1])
			}
		}
	}
	var correct int
	var sse float64
	for i := 0; i < ds.X.Rows; i++ {
		val, idx := ds.X.Row(i)
		p := model.Predict(val, idx)
		if p == ds.Y[i] {
			correct++
		}
		sse += (p - ds.Y[i]) * (p - ds.Y[i])
		if out != nil {
			out.WriteString(strconv.FormatFloat(p, 'g', -1, 64))
			out.WriteByte('\n')
		}
	}
	if out != nil {
		if err := out.Flush(); err != nil {
			return err
		}
	}
	n := float64(ds.X.Rows)
	if model.Labels != nil {
		_, err = fmt.Fprintf(stdout, "accuracy=%.4f%% (%d/%d)\n", 100*float64(correct)/n, correct, ds.X.Rows)
	} else {
		_, err = fmt.Fprintf(stdout, "rmse=%.6g\n", math.Sqrt(sse/n))
	}
	return err
}
