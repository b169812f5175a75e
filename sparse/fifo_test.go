//go:build unix

package sparse

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadFileFromPipe reads text and a cache through a named pipe, which
// has no size and cannot seek: ReadFile must fall back to streaming.
func TestReadFileFromPipe(t *testing.T) {
	d := smallDataset(t)
	cache := encodeCache(t, d)
	text := "+1 1:0.708333 2:1 3:1 4:-0.320755 13:-1\n-1 \n-1 2:-0 5:4.9e-324 13:1e150\n+1 1:0.166667 12:-1\n"
	for name, content := range map[string][]byte{"text": []byte(text), "cache": cache} {
		path := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			// Opening for writing blocks until the reader opens too.
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				f.Write(content)
				f.Close()
			}
		}()
		got, err := ReadFile(path, ReadOptions{NumFeatures: 14})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		assertSameDataset(t, got, d)
	}
}
