package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// The benchmarks call the exported functions with each supported
// implementation switched in, so they measure what a caller gets,
// wrapper and indirect call included. Compare implementations with
//
//	go test ./kernels -run '^$' -bench . -count 5 | tee new.txt
//	benchstat -col /impl new.txt

var denseSizes = []int{100, 1000, 10_000, 100_000}

// benchImpls runs f once per supported implementation, with that
// implementation behind the exported functions.
func benchImpls(b *testing.B, f func(b *testing.B)) {
	defer use(choose(os.Getenv(envVar), supportedImpls()))
	for _, im := range supportedImpls() {
		b.Run("impl="+im.name, func(b *testing.B) {
			use(im)
			f(b)
		})
	}
}

func randVector(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	randFloats(rng, s)
	return s
}

// cpuClock measures the CPU time of a benchmark loop; see processCPUNanos.
type cpuClock int64

func startCPU() cpuClock { return cpuClock(processCPUNanos()) }

// report adds the CPU time per operation since c was started to b's
// results, as cpu-ns/op.
func (c cpuClock) report(b *testing.B) {
	if c != 0 && b.N > 0 {
		b.ReportMetric(float64(processCPUNanos()-int64(c))/float64(b.N), "cpu-ns/op")
	}
}

// sink keeps results alive so the compiler cannot drop the calls.
var sink float64

func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range denseSizes {
		x, y := randVector(rng, n), randVector(rng, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			setBytes := func(b *testing.B) { b.SetBytes(int64(16 * n)) }
			benchImpls(b, func(b *testing.B) {
				setBytes(b)
				cpu := startCPU()
				for b.Loop() {
					sink += Dot(x, y)
				}
				cpu.report(b)
			})
			b.Run("impl=gonum-floats", func(b *testing.B) {
				setBytes(b)
				cpu := startCPU()
				for b.Loop() {
					sink += floats.Dot(x, y)
				}
				cpu.report(b)
			})
			b.Run("impl=gonum-blas64", func(b *testing.B) {
				setBytes(b)
				vx, vy := blas64.Vector{N: n, Inc: 1, Data: x}, blas64.Vector{N: n, Inc: 1, Data: y}
				cpu := startCPU()
				for b.Loop() {
					sink += blas64.Dot(vx, vy)
				}
				cpu.report(b)
			})
		})
	}
}

func BenchmarkAxpy(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	// alpha is tiny so that y stays bounded however often it is updated.
	const alpha = 1e-9
	for _, n := range denseSizes {
		x, y := randVector(rng, n), randVector(rng, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			setBytes := func(b *testing.B) { b.SetBytes(int64(24 * n)) }
			benchImpls(b, func(b *testing.B) {
				setBytes(b)
				cpu := startCPU()
				for b.Loop() {
					Axpy(alpha, x, y)
				}
				cpu.report(b)
			})
			b.Run("impl=gonum-floats", func(b *testing.B) {
				setBytes(b)
				cpu := startCPU()
				for b.Loop() {
					floats.AddScaled(y, alpha, x)
				}
				cpu.report(b)
			})
			b.Run("impl=gonum-blas64", func(b *testing.B) {
				setBytes(b)
				vx, vy := blas64.Vector{N: n, Inc: 1, Data: x}, blas64.Vector{N: n, Inc: 1, Data: y}
				cpu := startCPU()
				for b.Loop() {
					blas64.Axpy(alpha, vx, vy)
				}
				cpu.report(b)
			})
		})
	}
}

// rowSet is a set of sparse rows stored back to back, CSR style.
type rowSet struct {
	ptr []int
	val []float64
	idx []int32
	dim int
}

// newRowSet makes rows rows of nnz sorted distinct indices below dim. If
// binary is set all values are 1, as in w8a.
func newRowSet(rng *rand.Rand, rows, nnz, dim int, binary bool) *rowSet {
	s := &rowSet{ptr: make([]int, rows+1), dim: dim}
	for r := range rows {
		idx := distinct(rng, nnz, dim)
		slices.Sort(idx)
		for range idx {
			v := 1.0
			if !binary {
				v = rng.Float64()
			}
			s.val = append(s.val, v)
		}
		s.idx = append(s.idx, idx...)
		s.ptr[r+1] = len(s.idx)
	}
	return s
}

func (s *rowSet) row(r int) ([]float64, []int32) {
	lo, hi := s.ptr[r], s.ptr[r+1]
	return s.val[lo:hi], s.idx[lo:hi]
}

// sparseShapes are the benchmarked row shapes: single rows of growing size
// (dimension ten times the nonzeros), then many short rows cycled so that
// they come from L2/L3 rather than L1, like a solver's epoch. rcv1 has
// about 75 nonzeros per row over 47,236 features; w8a about 12 binary
// nonzeros over 300.
var sparseShapes = []struct {
	name   string
	rows   int
	nnz    int
	dim    int
	binary bool
}{
	{"nnz=100", 1, 100, 1000, false},
	{"nnz=1000", 1, 1000, 10_000, false},
	{"nnz=10000", 1, 10_000, 100_000, false},
	{"nnz=100000", 1, 100_000, 1_000_000, false},
	{"rcv1-like", 8192, 75, 47_236, false},
	{"w8a-like", 16384, 12, 300, true},
}

// benchSparse runs body on every shape and implementation; body is given a
// row and the two dense vectors, and bytesPerNNZ sets the throughput unit.
func benchSparse(b *testing.B, bytesPerNNZ int, body func(val []float64, idx []int32, x, y []float64)) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sh := range sparseShapes {
		rs := newRowSet(rng, sh.rows, sh.nnz, sh.dim, sh.binary)
		x, y := randVector(rng, sh.dim), randVector(rng, sh.dim)
		b.Run(sh.name, func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				b.SetBytes(int64(bytesPerNNZ * sh.nnz))
				r := 0
				cpu := startCPU()
				for b.Loop() {
					val, idx := rs.row(r)
					body(val, idx, x, y)
					if r++; r == sh.rows {
						r = 0
					}
				}
				cpu.report(b)
			})
		})
	}
}

// Bytes per nonzero: val 8 and idx 4, plus 8 per dense element read and 16
// per dense element updated.

func BenchmarkSparseDot(b *testing.B) {
	benchSparse(b, 20, func(val []float64, idx []int32, x, _ []float64) {
		sink += SparseDot(val, idx, x)
	})
}

func BenchmarkSparseAxpy(b *testing.B) {
	benchSparse(b, 28, func(val []float64, idx []int32, _, y []float64) {
		SparseAxpy(1e-9, val, idx, y)
	})
}

func BenchmarkSparseDotAxpy(b *testing.B) {
	benchSparse(b, 36, func(val []float64, idx []int32, x, y []float64) {
		sink += SparseDotAxpy(1e-9, val, idx, x, y)
	})
}

// BenchmarkRows compares a product of many short rows by one call of
// SparseDotRows or SparseAxpyRows with the same product by one SparseDot
// or SparseAxpy call a row, on the many-row shapes of sparseShapes (rows
// of 12 and of 75 entries), under the selected implementation. One op is
// one product over all the rows; the bytes count as in BenchmarkSparseDot.
func BenchmarkRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, sh := range sparseShapes {
		if sh.rows == 1 {
			continue
		}
		rs := newRowSet(rng, sh.rows, sh.nnz, sh.dim, sh.binary)
		ptr := make([]int64, len(rs.ptr))
		for i, p := range rs.ptr {
			ptr[i] = int64(p)
		}
		x, y := randVector(rng, sh.dim), randVector(rng, sh.dim)
		out, coef := make([]float64, sh.rows), randVector(rng, sh.rows)
		for i := range coef {
			coef[i] *= 1e-9
		}
		bytes := int64(20 * sh.rows * sh.nnz)
		run := func(name string, body func()) {
			b.Run(sh.name+"/"+name, func(b *testing.B) {
				b.SetBytes(bytes)
				for b.Loop() {
					body()
				}
			})
		}
		run("dot-per-row", func() {
			for r := range sh.rows {
				val, idx := rs.row(r)
				out[r] = SparseDot(val, idx, x)
			}
		})
		run("dot-rows", func() { SparseDotRows(ptr, rs.val, rs.idx, x, out) })
		run("axpy-per-row", func() {
			for r, c := range coef {
				val, idx := rs.row(r)
				SparseAxpy(c, val, idx, y)
			}
		})
		run("axpy-rows", func() { SparseAxpyRows(ptr, coef, rs.val, rs.idx, y) })
	}
}

// BenchmarkTranscend times ExpNeg and Log1pUnit on 128 values (the block
// of a sweep's loss terms), in every implementation, beside math.Exp and
// math.Log1p a value at a time.
func BenchmarkTranscend(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	x, u, dst := make([]float64, 128), make([]float64, 128), make([]float64, 128)
	for i := range x {
		x[i] = -8 * rng.Float64()
		u[i] = math.Exp(x[i])
	}
	b.Run("ExpNeg", func(b *testing.B) {
		benchImpls(b, func(b *testing.B) {
			for b.Loop() {
				ExpNeg(dst, x)
			}
		})
	})
	b.Run("ExpNeg/math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				dst[i] = math.Exp(v)
			}
		}
	})
	b.Run("Log1pUnit", func(b *testing.B) {
		benchImpls(b, func(b *testing.B) {
			for b.Loop() {
				Log1pUnit(dst, u)
			}
		})
	})
	b.Run("Log1pUnit/math.Log1p", func(b *testing.B) {
		for b.Loop() {
			for i, v := range u {
				dst[i] = math.Log1p(v)
			}
		}
	})
}
