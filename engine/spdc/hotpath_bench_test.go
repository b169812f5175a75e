package spdc

import (
	"context"
	"fmt"
	"github.com/adaspdc/adaspdc/engine/driver"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
	"github.com/adaspdc/adaspdc/kernels"
	"github.com/adaspdc/adaspdc/sparse"
)

// BenchmarkHotPath times AdaSPDC's epochs (the iteration alone: no set-up,
// no certificate) against the bare sweep over the same rows in file order,
// one kernels.SparseDot and one kernels.SparseAxpy per row, interleaved in
// the same benchmark so that the ratio x-sweep is measured under the same
// load. Logistic loss, λ = 1e-5, default options (ESO steps, lazy or dense
// as LazyAuto picks) with the given thread count and no calibration, or,
// for threads=2cal, as Train runs two threads: the warm-up epoch
// calibrates and the epochs fall back to one worker if all run slower; the
// ratio of CPU times, x-sweep-cpu, is steadier on a shared machine. Data:
// a9a, w8a and news20 binarised with unit rows; ADASPDC_HOTPATH_DATA
// (comma-separated) narrows the list.
func BenchmarkHotPath(b *testing.B) {
	defer enginetest.ProductionWorkers()()
	names := []string{"a9a", "w8a", "news20"}
	if v := os.Getenv("ADASPDC_HOTPATH_DATA"); v != "" {
		names = strings.Split(v, ",")
	}
	for _, name := range names {
		var x *sparse.CSR
		var y []float64
		for _, m := range []int{1, 64, 256, 1024} {
			for _, threads := range []string{"1", "2", "2cal"} {
				b.Run(fmt.Sprintf("%s/m=%d/threads=%s", name, m, threads), func(b *testing.B) {
					if x == nil {
						x, y = hotPathData(b, name)
					}
					benchHotPath(b, x, y, m, int(threads[0]-'0'), threads == "2cal")
				})
			}
		}
	}
}

func benchHotPath(b *testing.B, x *sparse.CSR, y []float64, m, threads int, calibrate bool) {
	prob := objective.Problem{X: x, B: y, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-5}}
	opt := enginetest.AdaSPDCOptions()
	opt.Threads, opt.Tol = threads, -1
	opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.M = m })
	ctx := context.Background()
	s, err := newSolver(ctx, prob, opt)
	if err != nil {
		b.Fatal(err)
	}
	defer s.pool.Close()
	s.calibrate = calibrate && len(s.allWorkers) > 1
	if threads > 1 && !calibrate {
		s.setWorkers(len(s.allWorkers))
	}
	if _, err := s.RunEpochs(ctx, 1); err != nil { // warm up (and calibrate)
		b.Fatal(err)
	}
	w := make([]float64, x.Cols)
	nnz := float64(x.NNZ())
	var sweep, epoch float64
	var sweepCPU, epochCPU int64
	for b.Loop() {
		t0, c0 := time.Now(), processCPUNanos()
		for k := 0; k < x.Rows; k++ {
			val, idx := x.Row(k)
			z := kernels.SparseDot(val, idx, w)
			kernels.SparseAxpy(1e-9*(z+1), val, idx, w)
		}
		sweep += time.Since(t0).Seconds()
		t0, c1 := time.Now(), processCPUNanos()
		sweepCPU += c1 - c0
		if _, err := s.RunEpochs(ctx, 1); err != nil {
			b.Fatal(err)
		}
		epoch += time.Since(t0).Seconds()
		epochCPU += processCPUNanos() - c1
	}
	sw := sweep / float64(b.N) * 1e9 / nnz
	ep := epoch / float64(b.N) * 1e9 / nnz
	b.ReportMetric(sw, "sweep-ns/nnz")
	b.ReportMetric(ep, "epoch-ns/nnz")
	b.ReportMetric(ep/sw, "x-sweep")
	b.ReportMetric(float64(len(s.workers)), "workers")
	if sweepCPU > 0 {
		// CPU time counts every worker: the ratio is the work's, and for
		// one worker the same as x-sweep on an idle machine.
		b.ReportMetric(float64(epochCPU)/float64(sweepCPU), "x-sweep-cpu")
	}
}

// hotPathData loads a data set of ../shared/data; news20 binarised
// (label ≤ 10 → −1) with unit rows, as bench/prepare.sh has it.
func hotPathData(b *testing.B, name string) (*sparse.CSR, []float64) {
	if name != "news20" {
		return enginetest.SharedData(b, name)
	}
	x, y := enginetest.News20Binary(b)
	x.NormalizeRowsUnit()
	return x, y
}
