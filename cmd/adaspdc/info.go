package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"github.com/adaspdc/adaspdc/internal/cli"
	"io"
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/sparse"
)

func init() {
	commands["info"] = command{
		summary: "print the shape, nonzeros and label counts of a dataset",
		run:     runInfo,
	}
}

// bundledData is LIBSVM's heart_scale (270 × 13), the dataset used when no
// -data flag is given, so that every command works from any directory.
//
//go:embed data/heart_scale
var bundledData []byte

// bundledName names the bundled dataset in messages.
const bundledName = "heart_scale (bundled)"

// pauseGC turns the garbage collector off until the function it returns
// is called, which restores the percentage set before (GOGC's). Reading a
// data set allocates the data set itself, which stays live: a collection
// during the read marks it and frees nothing, and as the heap's goal
// starts at 4 MB and doubles, a read of L MB would take about log₂(L/4)
// of them, each taking one of the cores for its marking. The first
// collection after the read sets the goal from the data. A memory limit
// (GOMEMLIMIT) still holds meanwhile.
func pauseGC() (restore func()) {
	old := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(old) }
}

// dataFlags registers the flags that choose a dataset, shared by the
// commands that read one.
func dataFlags(fs *flag.FlagSet) (path *string, features *int) {
	path = fs.String("data", "", "dataset `file`: LIBSVM/SVMlight text or an adaspdc cache (default: the bundled heart_scale)")
	features = fs.Int("features", 0, "number of features `N`; 0 infers it from the largest index")
	return path, features
}

// loadData reads the dataset at path, or the bundled one if path is empty.
func loadData(path string, opt sparse.ReadOptions) (*sparse.Dataset, error) {
	defer pauseGC()()
	if path == "" {
		return sparse.ReadLIBSVM(bytes.NewReader(bundledData), bundledName, opt)
	}
	return sparse.ReadFile(path, opt)
}

func runInfo(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("adaspdc", "info", stderr)
	path, features := dataFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: adaspdc info [-data FILE] [-features N]\n\n"+
			"Prints one line: rows=N cols=D nnz=Z labels=value:count,...\n\n")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *features < 0 || *features >= math.MaxInt32 {
		return cli.UsageErrorf(fs, "-features %d: must be 0 (the largest index in the data) or more, and below 2³¹ − 1", *features)
	}
	d, err := loadData(*path, sparse.ReadOptions{NumFeatures: *features})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, infoLine(d))
	return err
}

// maxListedLabels is the number of distinct labels up to which info lists
// each with its count; beyond it (multiclass or regression targets) only the
// count and range are printed.
const maxListedLabels = 10

// infoLine formats the summary line of d.
func infoLine(d *sparse.Dataset) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rows=%d cols=%d nnz=%d labels=", d.X.Rows, d.X.Cols, d.X.NNZ())
	values, counts := sparse.LabelCounts(d.Y)
	if len(values) > maxListedLabels {
		fmt.Fprintf(&b, "%d distinct (%s..%s)", len(values), formatFloat(values[0]), formatFloat(values[len(values)-1]))
		return b.String()
	}
	for k, v := range values {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(formatFloat(v))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(counts[k]))
	}
	return b.String()
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
