package engine

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkVREpoch times epochs of SAGA (and SAG, SVRG) against AdaSPDC
// at m = 1 on one thread, logistic loss, on w8a (300 features, 11.6
// nonzeros a row: the lazy stores at d ≈ 26× a row) and news20 (unit rows,
// 1.36 M features), for ridge (the scaled lazy store) and the elastic net
// (the stamped one). Every solver's epoch reads and updates n rows (SVRG's
// outer loop 3n: its time is reported per n rows). It reports ns per
// nonzero of the iterations (certificates and set-up excluded) for each
// solver, and x-saga, SAGA's time over AdaSPDC's (above 1: SAGA slower).
//
//	go test ./engine -run '^$' -bench VREpoch -benchtime 3x
func BenchmarkVREpoch(b *testing.B) {
	for _, file := range []string{"w8a", "news20"} {
		x, y := epochData(b, file)
		nnz := float64(x.NNZ())
		for _, reg := range []ElasticNet{{Lambda: 1e-5}, {Lambda: 1e-5, L1: 1e-5}} {
			b.Run(fmt.Sprintf("%s/%s", file, reg.Name()), func(b *testing.B) {
				prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: reg}
				solvers := []Solver{SolverAdaSPDC, SolverSAGA, SolverSAG, SolverSVRG}
				secs := make([]float64, len(solvers))
				passes := make([]float64, len(solvers))
				for b.Loop() {
					for i, s := range solvers {
						_, res, err := Train(context.Background(), prob, Options{Solver: s, Threads: 1, Tol: -1, MaxEpochs: 5, StallEpochs: -1}.With(CoordinateSettings{M: 1}))
						if err != nil {
							b.Fatal(err)
						}
						secs[i] += res.Final.IterSeconds
						passes[i] += res.Final.Passes
					}
				}
				per := func(i int) float64 { return secs[i] / passes[i] / nnz * 1e9 }
				for i, s := range solvers {
					b.ReportMetric(per(i), string(s)+"-ns/nnz")
				}
				b.ReportMetric(per(1)/per(0), "x-saga")
			})
		}
	}
}
