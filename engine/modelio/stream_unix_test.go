//go:build linux

package modelio

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
)

// TestDiskFullMidwayLeavesTargetUntouched: when the file system refuses
// more bytes after the first megabyte has been streamed (a file-size limit
// stands in for a full disk), both writers report it, the old model stays
// and no temporary file is left.
func TestDiskFullMidwayLeavesTargetUntouched(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	// Past the limit, the kernel sends SIGXFSZ, which would end the test
	// binary, and fails the write with EFBIG once the signal is ignored.
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)

	dir := t.TempDir()
	m := &engine.Model{Loss: "logistic", Lambda: 1e-6, Labels: []float64{-1, 1}, Dim: 500_000, Weights: randomWidths(500_000, 0, 10)}
	for _, tc := range []struct {
		name string
		save func(string, *engine.Model) error
	}{{"m.json", Save}, {"m.liblinear", SaveLIBLINEAR}} {
		path := filepath.Join(dir, tc.name)
		if err := tc.save(path, smallModelForStream()); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		limit := syscall.Rlimit{Cur: 1 << 20, Max: old.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Skip(err)
		}
		err := tc.save(path, m)
		if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
			t.Fatal(rerr)
		}
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Path != path || !errors.Is(err, syscall.EFBIG) {
			t.Errorf("%s: writing past the file-size limit: %v; want an *os.PathError for %s, file too large", tc.name, err, path)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
			t.Errorf("%s: a failed write changed the file", tc.name)
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}
