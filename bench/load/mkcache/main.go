// Command mkcache converts a LIBSVM file to the adaspdc binary cache, so that
// the loading benchmarks can time `adaspdc info` on a cache.
//
// Usage:
//
//	go run ./bench/load/mkcache -o OUT.cache IN
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/adaspdc/adaspdc/sparse"
)

func main() {
	out := flag.String("o", "", "output cache `file`")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mkcache -o OUT.cache IN")
		os.Exit(2)
	}
	if err := convert(flag.Arg(0), *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkcache:", err)
		os.Exit(1)
	}
}

func convert(in, out string) error {
	d, err := sparse.ReadFile(in, sparse.ReadOptions{})
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := sparse.WriteCache(f, d); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
