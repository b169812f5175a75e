package sched

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var hostSink atomic.Int64

func hostSpin(n int) {
	x := 1
	for i := 0; i < n; i++ {
		x = x*1664525 + 1013904223
	}
	hostSink.Add(int64(x))
}

// BenchmarkHostParallelism qualifies every thread-scaling figure taken on
// a shared host: it times a pure compute loop on one goroutine and on two
// at once, and reports the speed-up the host gives ("x-parallel", 2.0 when
// two cores are really there), and the round trip of a flag between two
// spinning goroutines ("ns/roundtrip", a few hundred ns between real cores).
// On the development VM it has given 2.0× and 0.2 µs on quiet days, and
// 1.03× and 15 µs when its two vCPUs were time-sliced on one core: then
// two workers are slower than one whatever the code does.
func BenchmarkHostParallelism(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS ≥ 2: the round trip would wait for preemption")
	}
	const n = 50_000_000
	var one, two time.Duration
	for b.Loop() {
		t0 := time.Now()
		hostSpin(n)
		one += time.Since(t0)
		t0 = time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { hostSpin(n) })
		}
		wg.Wait()
		two += time.Since(t0)
	}
	b.ReportMetric(2*one.Seconds()/two.Seconds(), "x-parallel")

	var flag atomic.Int64
	const rounds = 20000
	done := make(chan struct{})
	go func() {
		for i := int64(0); i < rounds; i++ {
			for flag.Load() != 2*i+1 {
			}
			flag.Store(2*i + 2)
		}
		close(done)
	}()
	t0 := time.Now()
	for i := int64(0); i < rounds; i++ {
		flag.Store(2*i + 1)
		for flag.Load() != 2*i+2 {
		}
	}
	<-done
	b.ReportMetric(float64(time.Since(t0).Nanoseconds())/rounds, "ns/roundtrip")
}
