// Command esomean prints, for a LIBSVM file and a list of batch sizes m,
// the mean over the nonzero rows of vᵢ/‖aᵢ‖², where vᵢ is the expected
// separable over-approximation parameter of row i under τ-nice sampling of
// m rows (engine.MeanESO): 1 when a batch's rows share no feature, m when
// they share all. It is the figure that bench/README.md's table of passes
// against m ("ESO steps") prints beside the passes; it does not depend on
// the rows' scaling, so -normalize unit data need not be written out.
//
// Usage:
//
//	go run ./bench/esomean -data FILE -m 1,16,256,1024,8192
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

func main() {
	data := flag.String("data", "", "LIBSVM `file`")
	ms := flag.String("m", "1,16,256,1024,8192", "comma-separated batch sizes")
	flag.Parse()
	if err := run(*data, *ms); err != nil {
		fmt.Fprintln(os.Stderr, "esomean:", err)
		os.Exit(1)
	}
}

func run(path, ms string) error {
	if path == "" {
		return fmt.Errorf("-data is required")
	}
	ds, err := sparse.ReadFile(path, sparse.ReadOptions{})
	if err != nil {
		return err
	}
	fmt.Println("m,mean_v_over_norm2")
	for _, f := range strings.Split(ms, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("bad m %q: %w", f, err)
		}
		v, err := engine.MeanESO(ds.X, m)
		if err != nil {
			return err
		}
		fmt.Printf("%d,%.4g\n", m, v)
	}
	return nil
}
