package sparse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// benchFiles are the real files the loading benchmarks use, small to large.
var benchFiles = []string{"a9a", "w8a", "news20"}

func benchPath(b *testing.B, name string) string {
	b.Helper()
	path := filepath.Join(sharedData, name)
	if _, err := os.Stat(path); err != nil {
		b.Skipf("shared data absent: %v", err)
	}
	return path
}

// BenchmarkReadFile measures ReadFile on LIBSVM text with one parser
// goroutine and with GOMAXPROCS of them, next to the plain strings/strconv
// reader of the tests (referenceRead) as a baseline. The throughput is in
// bytes of text.
func BenchmarkReadFile(b *testing.B) {
	for _, name := range benchFiles {
		b.Run(name+"/reference", func(b *testing.B) {
			path := benchPath(b, name)
			for b.Loop() {
				text, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				if d, _, _ := referenceRead(string(text), 0); d == nil {
					b.Fatal("reference reader failed")
				}
				b.SetBytes(int64(len(text)))
			}
		})
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/threads=%d", name, threads), func(b *testing.B) {
				path := benchPath(b, name)
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(fi.Size())
				cpu0, ok := processCPU()
				for b.Loop() {
					if _, err := ReadFile(path, ReadOptions{Threads: threads}); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu0, ok)
			})
		}
	}
}

// reportCPU adds the process's CPU time per operation since cpu0
// ("cpu-ns/op", all threads, system time included). On a shared machine it
// varies less than the elapsed time: other jobs delay the benchmark but do
// not add to its CPU time.
func reportCPU(b *testing.B, cpu0 int64, ok bool) {
	if cpu1, ok1 := processCPU(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkCache compares loading a binary cache with ReadFile against two
// floors for the same number of bytes: os.ReadFile of the cache file (the
// system call and page-cache copy that any loader pays) and a plain copy
// between two in-memory buffers. The throughput is in bytes of cache.
func BenchmarkCache(b *testing.B) {
	for _, name := range benchFiles {
		b.Run(name, func(b *testing.B) {
			d, err := ReadFile(benchPath(b, name), ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			cache := filepath.Join(b.TempDir(), name+".cache")
			f, err := os.Create(cache)
			if err != nil {
				b.Fatal(err)
			}
			if err := WriteCache(f, d); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			raw, err := os.ReadFile(cache)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("ReadFile", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, err := ReadFile(cache, ReadOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("os.ReadFile", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					if _, err := os.ReadFile(cache); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("copy", func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					dst := make([]byte, len(raw))
					copy(dst, raw)
				}
			})
		})
	}
}

// BenchmarkParseChunk measures the tokenizer alone on one in-memory chunk
// holding a whole file, without reading, scheduling or assembly.
func BenchmarkParseChunk(b *testing.B) {
	for _, name := range benchFiles {
		b.Run(name, func(b *testing.B) {
			text, err := os.ReadFile(benchPath(b, name))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				var res chunk
				parseOwn(&res, text, ReadOptions{})
				if res.err != nil {
					b.Fatal(res.err)
				}
			}
		})
	}
}

// BenchmarkParseChunkWarm is BenchmarkParseChunk into arrays allocated once,
// before the timing: the tokenizer without the allocator's clearing of
// fresh arrays.
func BenchmarkParseChunkWarm(b *testing.B) {
	for _, name := range benchFiles {
		b.Run(name, func(b *testing.B) {
			text, err := os.ReadFile(benchPath(b, name))
			if err != nil {
				b.Fatal(err)
			}
			rows, nnz := bytes.Count(text, []byte{'\n'})+1, bytes.Count(text, []byte{':'})
			labels, ends := make([]float64, rows), make([]int64, rows)
			ind, val := make([]int32, nnz), make([]float64, nnz)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				var c chunk
				parseChunk(&c, text, labels, ends, 0, ind, val, 0, false)
				if c.err != nil || c.fatal != nil {
					b.Fatal(c.err, c.fatal)
				}
			}
		})
	}
}

// BenchmarkChunkSize reads each file from memory with GOMAXPROCS threads
// and fixed chunk sizes, next to the default choice, to justify it.
func BenchmarkChunkSize(b *testing.B) {
	for _, name := range benchFiles {
		for _, size := range []int{0, 64 << 10, 256 << 10, 1 << 20, 4 << 20} {
			label := "default"
			if size > 0 {
				label = fmt.Sprintf("%dKiB", size>>10)
			}
			b.Run(name+"/"+label, func(b *testing.B) {
				text, err := os.ReadFile(benchPath(b, name))
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if _, err := ReadLIBSVM(bytes.NewReader(text), name, ReadOptions{chunkSize: size}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMulVecRowsOrder times one MulVecRows over all rows of a real
// file, one thread, in the file's order and with the rows sorted by their
// number of entries within windows of 256 rows (a copy made before the
// timing). The rows kernels' loops branch on a row's length (blocks of
// eight, of four, and the last entries); where lengths vary from row to
// row, as w8a's do (0 to 114 entries, median 9), the predictor misses
// those branches, and the sorted rows show what that costs. a9a's rows
// all hold 13 or 14 entries.
func BenchmarkMulVecRowsOrder(b *testing.B) {
	for _, name := range []string{"a9a", "w8a"} {
		var x *CSR
		load := func(b *testing.B) {
			if x != nil {
				return
			}
			d, err := ReadFile(benchPath(b, name), ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			x = d.X
		}
		for _, sorted := range []bool{false, true} {
			order := "file"
			if sorted {
				order = "sorted256"
			}
			b.Run(name+"/"+order, func(b *testing.B) {
				load(b)
				m := x
				if sorted {
					m = rowsSortedByLength(x, 256)
				}
				w := make([]float64, m.Cols)
				for j := range w {
					w[j] = float64(j%7) - 3
				}
				out := make([]float64, m.Rows)
				b.SetBytes(12 * m.NNZ()) // an index and a value per entry
				for b.Loop() {
					m.MulVecRows(0, m.Rows, w, out)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.Rows), "ns/row")
			})
		}
	}
}

// rowsSortedByLength returns a copy of x whose rows are x's, sorted by
// their number of entries within each window of the given number of rows
// (stably, so rows of one length keep their order).
func rowsSortedByLength(x *CSR, window int) *CSR {
	order := make([]int, x.Rows)
	for i := range order {
		order[i] = i
	}
	for lo := 0; lo < x.Rows; lo += window {
		slices.SortStableFunc(order[lo:min(lo+window, x.Rows)], func(a, b int) int { return x.RowNNZ(a) - x.RowNNZ(b) })
	}
	y := &CSR{Rows: x.Rows, Cols: x.Cols, Indptr: make([]int64, x.Rows+1),
		Values: make([]float64, 0, x.NNZ()), Indices: make([]int32, 0, x.NNZ())}
	for i, r := range order {
		val, idx := x.Row(r)
		y.Values = append(y.Values, val...)
		y.Indices = append(y.Indices, idx...)
		y.Indptr[i+1] = int64(len(y.Indices))
	}
	return y
}

// BenchmarkSortRowsByLength times SortRowsByLength on a real file's rows
// in the file's order (restored from a copy, untimed, before each run).
func BenchmarkSortRowsByLength(b *testing.B) {
	for _, name := range []string{"a9a", "w8a"} {
		b.Run(name, func(b *testing.B) {
			d, err := ReadFile(benchPath(b, name), ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			x := d.X
			ptr, idx, val := slices.Clone(x.Indptr), slices.Clone(x.Indices), slices.Clone(x.Values)
			b.SetBytes(12 * x.NNZ())
			for b.Loop() {
				b.StopTimer()
				copy(x.Indptr, ptr)
				copy(x.Indices, idx)
				copy(x.Values, val)
				b.StartTimer()
				x.SortRowsByLength(256)
			}
		})
	}
}
