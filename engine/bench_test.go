package engine

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkEpoch times epochs of logistic regression on real data for a
// range of m and thread counts. ns/epoch counts the iterations only, without
// set-up and certificates; ns/op is a whole 3-epoch run.
func BenchmarkEpoch(b *testing.B) {
	for _, file := range []string{"a9a", "w8a"} {
		x, y := sharedData(b, file)
		for _, m := range []int{1, 8, 64, 512} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/m=%d/threads=%d", file, m, threads), func(b *testing.B) {
					prob := Problem{X: x, B: y, Loss: Logistic{}, Reg: Regularizer{Lambda: 1e-5}}
					var iter float64
					epochs := 0
					for b.Loop() {
						_, res, err := Train(context.Background(), prob, Options{M: m, Threads: threads, Tol: -1, MaxEpochs: 3})
						if err != nil {
							b.Fatal(err)
						}
						iter += res.Final.IterSeconds
						epochs += res.Final.Epoch
					}
					b.ReportMetric(iter/float64(epochs)*1e9, "ns/epoch")
				})
			}
		}
	}
}
