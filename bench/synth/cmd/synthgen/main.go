// Command synthgen writes a bench/synth dataset as LIBSVM text, so that
// whole-process measurements (time, peak memory) can read it from a file.
//
// Usage:
//
//	go run ./bench/synth/cmd/synthgen -shape url -rows 400000 -seed 1 -o /tmp/url400k.svm
//
// The output is sparse.WriteLIBSVM's canonical form; the same flags give the
// same bytes on every machine.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/sparse"
)

func main() {
	shape := flag.String("shape", "url", "url, rcv1 or correlated (synth.URLLike, synth.RCV1Like, or synth.CorrelatedDense: 11,000 dense rows of 68 correlated columns, whatever -rows says)")
	rows := flag.Int("rows", 400_000, "number of rows")
	seed := flag.Uint64("seed", 1, "generator seed")
	out := flag.String("o", "", "output `file` (default: standard output)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: synthgen [-shape url|rcv1|correlated] [-rows N] [-seed S] [-o FILE]")
		os.Exit(2)
	}
	if err := run(*shape, *rows, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "synthgen:", err)
		os.Exit(1)
	}
}

func run(shape string, rows int, seed uint64, out string) error {
	var x *sparse.CSR
	var y []float64
	var err error
	switch shape {
	case "url":
		x, y, err = synth.Generate(synth.URLLike(rows, seed))
	case "rcv1":
		x, y, err = synth.Generate(synth.RCV1Like(rows, seed))
	case "correlated":
		// The dense set of correlated columns; -rows is its own (11,000).
		x, y, _, err = synth.GenerateCorrelated(synth.CorrelatedDense(seed))
	default:
		return fmt.Errorf("unknown -shape %q: want url, rcv1 or correlated", shape)
	}
	if err != nil {
		return err
	}
	var w io.Writer = os.Stdout
	var f *os.File
	if out != "" {
		if f, err = os.Create(out); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = sparse.WriteLIBSVM(bw, &sparse.Dataset{Name: shape, X: x, Y: y})
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
