package harness

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/sparse"
)

// TestSweepNsPerNNZ: the bare sweep's timing is a positive finite figure
// on one thread and on several, including more threads than rows, and NaN
// where there is nothing to time.
func TestSweepNsPerNNZ(t *testing.T) {
	data, err := LoadData("synth:rcv1:200")
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2, 3} {
		ns := SweepNsPerNNZ(data.X, threads, 3, 10*time.Millisecond)
		if !(ns > 0) || math.IsInf(ns, 0) {
			t.Errorf("%d thread(s): %v ns per nonzero, want a positive finite figure", threads, ns)
		}
	}
	tiny := &sparse.CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 1, 3}, Indices: []int32{0, 1, 2}, Values: []float64{1, 2, 3}}
	if ns := SweepNsPerNNZ(tiny, 8, 1, 0); !(ns > 0) || math.IsInf(ns, 0) {
		t.Errorf("8 threads on 2 rows: %v ns per nonzero", ns)
	}
	empty := &sparse.CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 0, 0}}
	if ns := SweepNsPerNNZ(empty, 1, 3, 0); !math.IsNaN(ns) {
		t.Errorf("no nonzeros: %v, want NaN", ns)
	}
	if ns := SweepNsPerNNZ(data.X, 1, 0, 0); !math.IsNaN(ns) {
		t.Errorf("no sweeps: %v, want NaN", ns)
	}
}

// TestSweepShares: the shares cover every row once, in order, and split
// the nonzeros about evenly, so that the T-thread sweep is the bare sweep
// over the same rows and its time is not that of one overloaded share.
func TestSweepShares(t *testing.T) {
	data, err := LoadData("synth:rcv1:300")
	if err != nil {
		t.Fatal(err)
	}
	x := data.X
	for _, threads := range []int{1, 2, 3, 7} {
		b := sweepShares(x, threads)
		if len(b) != threads+1 || b[0] != 0 || b[len(b)-1] != x.Rows {
			t.Fatalf("%d threads: bounds %v, want %d shares from 0 to %d", threads, b, threads, x.Rows)
		}
		nnz := x.Indptr[x.Rows]
		maxRow := int64(0)
		for i := 0; i < x.Rows; i++ {
			maxRow = max(maxRow, int64(x.RowNNZ(i)))
		}
		for i := 0; i+1 < len(b); i++ {
			if b[i+1] <= b[i] {
				t.Fatalf("%d threads: bounds %v are not increasing", threads, b)
			}
			share := x.Indptr[b[i+1]] - x.Indptr[b[i]]
			if d := share - nnz/int64(threads); d > maxRow || d < -maxRow {
				t.Errorf("%d threads: share %d has %d nonzeros, %d from an even split (longest row %d)", threads, i, share, d, maxRow)
			}
		}
	}
	tiny := &sparse.CSR{Rows: 2, Cols: 3, Indptr: []int64{0, 1, 3}, Indices: []int32{0, 1, 2}, Values: []float64{1, 2, 3}}
	if b := sweepShares(tiny, 5); !slices.Equal(b, []int{0, 1, 2}) {
		t.Errorf("5 threads on 2 rows: bounds %v, want [0 1 2]", b)
	}
}

// oldScaleColumns are the columns runs.csv had before the sweep's were
// added: they must keep their names and places, so that readers that
// index them by position keep working.
var oldScaleColumns = []string{"data", "rows", "cols", "nnz", "loss", "lambda", "solver", "m", "threads", "threads_used",
	"repeat", "seed", "epochs", "passes", "seconds", "iter_seconds", "setup_seconds", "sec_per_pass",
	"speedup", "final_rel_gap", "stop", "error",
	"passes_to_1e-02", "seconds_to_1e-02", "iter_seconds_to_1e-02",
	"passes_to_1e-04", "seconds_to_1e-04", "iter_seconds_to_1e-04",
	"passes_to_1e-06", "seconds_to_1e-06", "iter_seconds_to_1e-06",
	"passes_to_1e-08", "seconds_to_1e-08", "iter_seconds_to_1e-08",
	"cpu", "cores", "simd_flags", "kernels", "go", "commit"}

// TestScaleSweepColumns runs a small sweep and checks that runs.csv keeps
// its old columns first and gives every run positive finite sweep figures
// that agree with its own columns: ns_per_nnz = iter_seconds / epochs /
// nnz × 1e9, x_sweep = ns_per_nnz / sweep_ns_per_nnz and x_sweep_T =
// ns_per_nnz / sweep_ns_per_nnz_T, with the T-thread sweep the one-thread
// one on one thread; and that summary.md has the table.
func TestScaleSweepColumns(t *testing.T) {
	cfg := ScaleConfig{Data: "synth:rcv1:200", Loss: "logistic", Lambda: 1e-3, Solvers: []string{"adaspdc"},
		Ms: []int{1, 4}, Threads: []int{1, 2}, Repeats: 1, Seed: 3, Tol: 1e-4, MaxEpochs: 50, Command: "test"}
	res, err := Scale(context.Background(), cfg, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	if !slices.Equal(head[:min(len(head), len(oldScaleColumns))], oldScaleColumns) {
		t.Fatalf("runs.csv's first columns are %v, want the old ones unchanged: %v", head, oldScaleColumns)
	}
	if want := append(slices.Clone(oldScaleColumns), "sweep_ns_per_nnz", "ns_per_nnz", "x_sweep", "sweep_ns_per_nnz_T", "x_sweep_T"); !slices.Equal(head, want) {
		t.Fatalf("header %v, want %v", head, want)
	}
	if len(rows) != 1+len(cfg.Ms)*len(cfg.Threads) {
		t.Fatalf("%d rows", len(rows)-1)
	}
	col := func(row []string, name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(row[slices.Index(head, name)], 64)
		if err != nil {
			t.Fatalf("column %s: %v", name, err)
		}
		return v
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Abs(b) }
	for i, row := range rows[1:] {
		for _, c := range sweepCSVHeader {
			if v := col(row, c); !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("row %d: %s = %v, want positive and finite", i, c, v)
			}
		}
		ns, sweep, sweepT := col(row, "ns_per_nnz"), col(row, "sweep_ns_per_nnz"), col(row, "sweep_ns_per_nnz_T")
		if want := col(row, "iter_seconds") / col(row, "epochs") / col(row, "nnz") * 1e9; !near(ns, want) {
			t.Errorf("row %d: ns_per_nnz %v, want iter_seconds / epochs / nnz × 1e9 = %v", i, ns, want)
		}
		if x := col(row, "x_sweep"); !near(x, ns/sweep) {
			t.Errorf("row %d: x_sweep %v, want ns_per_nnz / sweep_ns_per_nnz = %v", i, x, ns/sweep)
		}
		if x := col(row, "x_sweep_T"); !near(x, ns/sweepT) {
			t.Errorf("row %d: x_sweep_T %v, want ns_per_nnz / sweep_ns_per_nnz_T = %v", i, x, ns/sweepT)
		}
		if col(row, "threads") == 1 && sweep != sweepT {
			t.Errorf("row %d: on one thread the T-thread sweep %v is not the one-thread sweep %v", i, sweepT, sweep)
		}
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Iteration time against the bare sweep", "ns per nonzero on one thread", "on 2 threads",
		"| solver | m | threads | used | ns/nnz | × sweep | × T-thread sweep |", "| adaspdc | 4 | 2 |"} {
		if !strings.Contains(string(sum), s) {
			t.Errorf("summary.md does not contain %q", s)
		}
	}
}

// TestSetSweep: a run without iteration time or epochs, or a sweep
// without a figure, leaves the ratios empty instead of writing 0 or Inf.
func TestSetSweep(t *testing.T) {
	r := Run{Epochs: 10, IterSeconds: 0.5}
	r.setSweep(2, 1, 1000)
	if r.NsPerNNZ != 0.5/10/1000*1e9 || r.XSweep != r.NsPerNNZ/2 || r.XSweepT != r.NsPerNNZ {
		t.Errorf("%+v", r)
	}
	r.setSweep(math.NaN(), 0, 1000)
	if !math.IsNaN(r.XSweep) || !math.IsNaN(r.XSweepT) || !(r.NsPerNNZ > 0) {
		t.Errorf("no sweep figure: x_sweep %v, x_sweep_T %v", r.XSweep, r.XSweepT)
	}
	failed := Run{IterSeconds: math.NaN()}
	failed.setSweep(2, 2, 1000)
	if !math.IsNaN(failed.NsPerNNZ) || !math.IsNaN(failed.XSweep) {
		t.Errorf("a failed run got ns_per_nnz %v, x_sweep %v", failed.NsPerNNZ, failed.XSweep)
	}
}
