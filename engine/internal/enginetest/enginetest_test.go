package enginetest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSharedPathUsesBundledCopies checks that the data sets bundled in
// testdata/ resolve to those copies, inside the repository, so that the
// tests reading them run on a bare clone without ../shared.
func TestSharedPathUsesBundledCopies(t *testing.T) {
	_, self, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(self), "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"heart_scale", "housing_scale"} {
		p, err := filepath.Abs(SharedPath(name))
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := filepath.Rel(root, p); err != nil || rel != filepath.Join("testdata", name) {
			t.Errorf("SharedPath(%q) = %s, want the bundled %s", name, p, filepath.Join(root, "testdata", name))
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("SharedPath(%q): %v", name, err)
		}
	}
	// A file that is not bundled still comes from ../shared/data.
	if p := SharedPath("a9a"); filepath.Base(filepath.Dir(p)) != "data" || filepath.Base(filepath.Dir(filepath.Dir(p))) != "shared" {
		t.Errorf("SharedPath(a9a) = %s, want ../shared/data/a9a", p)
	}
}
