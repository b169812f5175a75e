package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/bench/harness"
	"github.com/adaspdc/adaspdc/internal/cli"
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
	if !strings.Contains(string(sum), "## Iteration time against the bare sweep") {
		t.Errorf("summary.md has no table against the bare sweep")
	}
	if !strings.Contains(errOut.String(), "× sweep") {
		t.Errorf("progress does not give each run's x-sweep: %q", errOut.String())
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
		{[]string{"scale", "-data", "synth:nope:10", "-threads", "1", "-repeats", "1", "-out", t.TempDir()}, 1, "unknown generator"},
		{[]string{"paper"}, 2, "zhu-storkey-fig1"},
		{[]string{"paper", "nope"}, 2, "unknown paper"},
		{[]string{"paper", "wang-xiao-fig2-3", "-scales", "0"}, 2, "not a positive number"},
		{[]string{"paper", "allen-zhu-hazan", "-passes", "0"}, 2, "at least 1"},
		{[]string{"paper", "zhu-storkey-fig2-3", "-data-dir", "/nonexistent", "-out", t.TempDir()}, 1, "nonexistent"},
		{[]string{"scale", "-data", "synth:rcv1:200", "-out", "/dev/null/x"}, 2, "-out /dev/null/x"},
		{[]string{"peers", "-data", "x", "-out", "/dev/null/x"}, 2, "-out /dev/null/x"},
		{[]string{"peers"}, 2, "-data"},
		{[]string{"peers", "-data", "x", "-objectives", "hinge:1e-5"}, 2, "must be logistic"},
		{[]string{"peers", "-data", "x", "-objectives", "logistic:l1=0"}, 2, "loss:l1=X"},
		{[]string{"peers", "-data", "x", "-objectives", "logistic:l1=x"}, 2, "loss:l1=X"},
		{[]string{"peers", "-data", "x", "-objectives", "multinomial:l1=1e-3"}, 2, "takes λ, not l1"},
		{[]string{"peers", "-data", "x", "-objectives", "ovr:l1=1e-3"}, 2, "the ovr objective takes λ, not l1"},
		{[]string{"peers", "-data", "x", "-tasks", "cv,grid"}, 2, `-tasks: "grid" is not cv or lambda-auto`},
		{[]string{"peers", "-data", "x", "-objectives", ""}, 2, "give -objectives or -tasks"},
		{[]string{"peers", "-data", "x", "-normalize", "rows"}, 2, "-normalize must be none or unit"},
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

// TestBenchVersion: -version, --version and the version subcommand print
// the line internal/cli makes from the build information (the module's
// version, the commit where the build was stamped, the Go version) and,
// where the build has no stamp, as a test binary has not, the commit the
// results will name; the usage names -version.
func TestBenchVersion(t *testing.T) {
	line := cli.Version("adaspdc-bench")
	for _, arg := range []string{"-version", "--version", "version"} {
		var out, errOut bytes.Buffer
		status := run([]string{arg}, &out, &errOut)
		first, rest, _ := strings.Cut(out.String(), "\n")
		if status != 0 || first != line || !strings.HasPrefix(first, "adaspdc-bench ") || !strings.Contains(first, "go1.") {
			t.Errorf("%s: status %d, stdout %q, stderr %q", arg, status, out.String(), errOut.String())
		}
		if stamped := strings.Contains(line, " commit "); stamped && rest != "" ||
			!stamped && !strings.Contains(rest, "results will name commit "+harness.SourceCommit()) {
			t.Errorf("%s: after the version line %q", arg, rest)
		}
	}
	var out, errOut bytes.Buffer
	if run([]string{"help"}, &out, &errOut); !strings.Contains(out.String(), "-version") {
		t.Errorf("the usage does not name -version:\n%s", out.String())
	}
}

// lockedBuffer is a buffer the sweep and the signal's announcement can
// write to from their own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// onWrite, when set, sees everything written so far after each write.
	onWrite func(all string)
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf.Write(p)
	all := b.buf.String()
	b.mu.Unlock()
	if b.onWrite != nil {
		b.onWrite(all)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls until cond holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSignalContextSIGTERM: SIGTERM, which timeout, systemd, Slurm and
// docker stop send, cancels the context as Ctrl-C does instead of killing
// the process, and is announced on stderr.
func TestSignalContextSIGTERM(t *testing.T) {
	var stderr lockedBuffer
	ctx, stop := signalContext(&stderr)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	if cause := context.Cause(ctx); !strings.Contains(cause.Error(), "terminated") {
		t.Errorf("cause %v, want the signal", cause)
	}
	waitFor(t, "the announcement on stderr", func() bool { return strings.Contains(stderr.String(), "writing what was measured") })
}

// TestBenchScaleSIGTERMWritesRuns: a sweep that receives SIGTERM after its
// first run writes the runs that finished, says so in summary.md, and
// fails, so that a scheduler does not take it for a finished sweep.
func TestBenchScaleSIGTERMWritesRuns(t *testing.T) {
	dir := t.TempDir()
	var once sync.Once
	var out bytes.Buffer
	stderr := &lockedBuffer{onWrite: func(all string) {
		if strings.Contains(all, "1/400 runs") {
			once.Do(func() { syscall.Kill(os.Getpid(), syscall.SIGTERM) })
		}
	}}
	// Far more runs than the signal needs to arrive, so that the sweep
	// cannot end before it.
	status := run([]string{"scale", "-data", "synth:rcv1:100", "-solvers", "adaspdc", "-m", "1", "-threads", "1",
		"-repeats", "400", "-tol", "1e-2", "-out", dir}, &out, stderr)
	if status != 1 || !strings.Contains(stderr.String(), "interrupted after") || !strings.Contains(stderr.String(), "wrote the") {
		t.Fatalf("status %d, want 1 with the interruption reported:\n%s%s", status, out.String(), stderr.String())
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(sum), "**Interrupted** (terminated signal received)") {
		t.Errorf("summary.md does not say the sweep was interrupted (%v):\n%.2000s", err, sum)
	}
	if st, err := os.Stat(filepath.Join(dir, "runs.csv")); err != nil || st.Size() == 0 {
		t.Errorf("runs.csv missing or empty: %v", err)
	}
}

// TestBenchOutChecked: every subcommand that writes to -out refuses a
// folder it cannot create or write to before its first run, with status 2
// and a message naming the folder and the cause, instead of losing a sweep
// when it comes to write its results.
func TestBenchOutChecked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{filepath.Join(file, "x"): "not a directory", file: "not a directory"}
	if os.Geteuid() != 0 {
		// The probe file: a folder that exists but takes no new file.
		ro := filepath.Join(t.TempDir(), "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		outs[ro] = "cannot create files there"
	}
	for out, cause := range outs {
		for _, args := range [][]string{
			{"scale", "-data", "synth:rcv1:200", "-threads", "1", "-repeats", "1"},
			{"peers", "-data", "synth:rcv1:200"},
			{"family", "-data-dir", t.TempDir()},
			{"paper", "zhu-storkey-fig1", "-n", "10", "-d", "10", "-passes", "1", "-seeds", "1"},
			{"paper", "zhu-storkey-fig2-3", "-data-dir", t.TempDir()},
		} {
			var stdout, stderr bytes.Buffer
			status := run(append(args, "-out", out), &stdout, &stderr)
			if status != 2 || !strings.Contains(stderr.String(), "-out "+out+": ") || !strings.Contains(stderr.String(), cause) {
				t.Errorf("%v -out %s: status %d, want 2 naming the folder and %q:\n%s%s", args, out, status, cause, stdout.String(), stderr.String())
			}
			if strings.Contains(stderr.String(), "runs,") {
				t.Errorf("%v -out %s: runs started before the folder was checked:\n%s", args, out, stderr.String())
			}
		}
	}
	// A folder that does not exist yet is made, and the probe leaves
	// nothing behind in it; undo removes what the check made.
	parent := t.TempDir()
	fresh := filepath.Join(parent, "new", "out")
	undo, err := checkOutDir(cli.NewFlagSet("adaspdc-bench", "test", io.Discard), fresh)
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(fresh); err != nil || len(ents) != 0 {
		t.Errorf("%s: %v, %d entries; want an empty folder", fresh, err, len(ents))
	}
	undo()
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("undo left %v in %s", ents, parent)
	}
	// A command refused after the check leaves no empty folder behind.
	for _, args := range [][]string{
		{"paper", "wang-xiao-fig2-3", "-data-dir", t.TempDir()},
		{"scale", "-data", "synth:nope:10", "-threads", "1", "-repeats", "1"},
	} {
		var stdout, stderr bytes.Buffer
		if status := run(append(args, "-out", fresh), &stdout, &stderr); status == 0 {
			t.Errorf("%v: status 0", args)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%v: left %v in %s", args, ents, parent)
		}
	}
}

// peers -adaspdc times the binary it names instead of building one: a
// binary that does not exist reaches no target (LIBLINEAR still does), and
// -normalize unit names the data's rows as scaled.
func TestBenchPeersFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	if _, err := exec.LookPath("liblinear-train"); err != nil {
		t.Skip("liblinear-train is not installed")
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	status := run([]string{"peers", "-data", "../../testdata/heart_scale", "-objectives", "logistic:1e-2", "-m", "1", "-runs", "1",
		"-threads", "1", "-python", "/nonexistent/python3", "-adaspdc", "/nonexistent/adaspdc", "-normalize", "unit", "-out", out}, &stdout, &stderr)
	if status != 0 {
		t.Fatalf("status %d:\n%s%s", status, stdout.String(), stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "peers.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := "| heart_scale (unit rows) | logistic | 0.01 |"
	i := strings.Index(string(md), row)
	if i < 0 {
		t.Fatalf("peers.md has no row %q:\n%s", row, md)
	}
	line, _, _ := strings.Cut(string(md[i:]), "\n")
	if strings.Count(line, "| not reached |") != 3 || !strings.Contains(line, "liblinear -s") {
		t.Errorf("the missing binary should reach no target, LIBLINEAR every one:\n%s", line)
	}
	if strings.Contains(stderr.String(), "building") {
		t.Errorf("built adaspdc although -adaspdc named one:\n%s", stderr.String())
	}
}
