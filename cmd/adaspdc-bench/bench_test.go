package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/kernels"
)

// TestBenchScaleCommand runs a four-run sweep through the command line and
// checks the files it promises and that its report names the machine.
func TestBenchScaleCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	status := run([]string{"scale", "-data", "synth:rcv1:200", "-solvers", "adaspdc", "-m", "1,4",
		"-threads", "1,2", "-repeats", "1", "-tol", "1e-4", "-out", dir}, &out, &errOut)
	if status != 0 {
		t.Fatalf("status %d\n%s%s", status, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), kernels.Impl()) || !strings.Contains(out.String(), "4 runs") {
		t.Errorf("stdout does not name the machine or the runs: %q", out.String())
	}
	if !strings.Contains(errOut.String(), "4/4 runs") {
		t.Errorf("no progress on stderr: %q", errOut.String())
	}
	for _, f := range []string{"runs.csv", "summary.md", "suboptimality_vs_passes.png", "suboptimality_vs_seconds.svg",
		"speedup_vs_threads.png", "passes_to_eps_vs_m.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(sum), "adaspdc-bench scale -data synth:rcv1:200") {
		t.Errorf("summary.md does not record the command")
	}
}

// TestBenchMistakes: usage mistakes exit 2, reproductions whose data
// are missing exit 1 and say so.
func TestBenchMistakes(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		say    string
	}{
		{[]string{}, 2, "Usage: adaspdc-bench"},
		{[]string{"nope"}, 2, "unknown subcommand"},
		{[]string{"scale", "-data", "synth:rcv1:10", "-solvers", "nope"}, 2, "unknown solver"},
		{[]string{"scale", "-data", "synth:rcv1:10", "-m", "0"}, 2, "not a positive integer"},
		{[]string{"scale", "-data", "synth:nope:10", "-threads", "1", "-repeats", "1"}, 1, "unknown generator"},
		{[]string{"paper"}, 2, "zhu-storkey-fig1"},
		{[]string{"paper", "nope"}, 2, "unknown paper"},
		{[]string{"paper", "wang-xiao-fig2-3", "-scales", "0"}, 2, "not a positive number"},
		{[]string{"paper", "allen-zhu-hazan", "-passes", "0"}, 2, "at least 1"},
		{[]string{"paper", "zhu-storkey-fig2-3", "-data-dir", "/nonexistent", "-out", filepath.Join(os.TempDir(), "adaspdc-bench-test")}, 1, "nonexistent"},
		{[]string{"scale", "-data", "synth:rcv1:200", "-out", "/dev/null/x"}, 2, "-out /dev/null/x"},
		{[]string{"peers", "-data", "x", "-out", "/dev/null/x"}, 2, "-out /dev/null/x"},
		{[]string{"peers"}, 2, "-data"},
		{[]string{"peers", "-data", "x", "-objectives", "hinge:1e-5"}, 2, "must be logistic"},
	} {
		var out, errOut bytes.Buffer
		status := run(c.args, &out, &errOut)
		if status != c.status || !strings.Contains(out.String()+errOut.String(), c.say) {
			t.Errorf("%v: status %d, want %d saying %q:\n%s%s", c.args, status, c.status, c.say, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if status := run([]string{"-h"}, &out, &errOut); status != 0 || !strings.Contains(out.String(), "scale") {
		t.Errorf("-h: status %d: %s", status, out.String())
	}
}

// TestBenchVersion: -version names the build and the Go version.
func TestBenchVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if status := run([]string{"-version"}, &out, &errOut); status != 0 || !strings.HasPrefix(out.String(), "adaspdc-bench ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("status %d, stdout %q", status, out.String())
	}
}
