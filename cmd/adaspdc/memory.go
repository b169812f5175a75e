package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Training holds, beside the data, vectors of d and of n doubles: the
// primal point and its copies (Newton's gradient, diagonal, step and four
// CG vectors; AdaSPDC's extrapolated point and lazy segments; SDCA's dual
// image), and per worker an accumulator or a private model copy (cocoa,
// Newton's sweeps). The bounds below are generous for every solver, so that
// a run refused for memory would really not have fit.
const (
	perColumnVectors = 10 // d-vectors a solver keeps whatever its threads
	perThreadVectors = 2  // d-vectors each worker may add
	perRowVectors    = 8  // n-vectors: duals, margins, curvatures, steps
)

// trainingBytes bounds the memory a solver needs beyond the data for n
// rows, d columns and the given workers.
func trainingBytes(n, d, threads int) int64 {
	return 8 * (int64(d)*int64(perColumnVectors+perThreadVectors*threads) + int64(n)*perRowVectors)
}

// availableMemory returns the memory the kernel says a new allocation can
// have without swapping (MemAvailable in /proc/meminfo), or 0 where that is
// not known.
func availableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// checkMemory refuses a run whose vectors would not fit in avail bytes
// (0: unknown, no check): the solver's vectors over the solveCols columns
// it trains on, and the model's dense weight vector over all modelCols,
// which must leave half the memory for the rest. used is the number of
// columns that hold an entry, for the advice.
func checkMemory(name string, n, solveCols, modelCols, used, threads int, avail int64) error {
	if avail <= 0 {
		return nil
	}
	need := trainingBytes(n, solveCols, threads)
	model := 8 * int64(modelCols)
	if need+model <= avail && 2*model <= avail {
		return nil
	}
	advice := "use fewer -threads, or a machine with more memory"
	if used < modelCols/2 {
		advice = fmt.Sprintf("only %d of the %d columns hold an entry: renumber the features densely (the largest index sets the model's width)", used, modelCols)
	}
	return fmt.Errorf("%s: training on %d rows and %d features needs about %s (the model alone %s), and this machine has %s available: %s",
		name, n, modelCols, formatBytes(need+model), formatBytes(model), formatBytes(avail), advice)
}

// formatBytes writes a byte count in binary units.
func formatBytes(b int64) string {
	const unit = 1 << 10
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, exp := float64(b), 0
	for v >= unit && exp < 5 {
		v /= unit
		exp++
	}
	return fmt.Sprintf("%.3g %ciB", v, "KMGTP"[exp-1])
}

// expandWeights returns the weights of a model trained on the columns in
// used, placed at their original columns of a model of width cols; the
// weights past len(used) (a bias) follow at cols, cols + 1, ….
func expandWeights(w []float64, used []int32, cols int) []float64 {
	out := make([]float64, cols+len(w)-len(used))
	for k, j := range used {
		out[j] = w[k]
	}
	copy(out[cols:], w[len(used):])
	return out
}
