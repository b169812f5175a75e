package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/engine/modelio"
)

// The tests in this file pin down how train ends: which status, which
// model and which words each way of stopping gives. Each failed before
// its fix.

// TestStallWindowFromEngine: -stall-epochs takes Options.StallEpochs's
// values as they are: 0 (or no flag) is the engine's default, 2000 epochs
// for the hinge and 200 otherwise, and a negative value never stalls; the
// help says both.
func TestStallWindowFromEngine(t *testing.T) {
	_, _, errOut := runCmd("train", "-h")
	for _, want := range []string{"2000 for the non-smooth losses", "negative (-1): never"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("train -h does not say %q about the stall window", want)
		}
	}
}

// TestTolZeroCutShort: with -tol 0 the goal is -max-epochs, so a time
// limit ends the run short of it: status 3, with the reason.
func TestTolZeroCutShort(t *testing.T) {
	status, out, errOut := runCmd("train", "-quiet", "-solver", "sdca", "-tol", "-1", "-max-epochs", "100000000", "-time-limit", "200ms")
	if status != exitShort || !strings.Contains(errOut, "stopped (-time-limit 200ms)") || !strings.Contains(errOut, "asked for 100000000 epochs") {
		t.Errorf("status %d, stdout %q, stderr %q; want status 3 and the time limit named", status, out, errOut)
	}
}

// TestNewtonAtRounding: Newton asked for -tol 0 reaches the optimum to
// rounding and stops there: that is convergence (status 0), not a
// failure; a -target-primal below the optimum is out of reach, and the
// message says so (status 3).
func TestNewtonAtRounding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	status, out, errOut := runCmd("train", "-solver", "newton", "-tol", "0", "-max-epochs", "50", "-model", path)
	if status != 0 || !strings.Contains(errOut, "at the optimum to rounding") || strings.Contains(errOut, "failed") {
		t.Errorf("status %d, stdout %q, stderr %q; want 0 and the optimum to rounding", status, out, errOut)
	}
	if _, err := modelio.Load(path); err != nil {
		t.Error(err)
	}
	status, _, errOut = runCmd("train", "-quiet", "-solver", "newton", "-tol", "0", "-target-primal", "0.3")
	if status != exitShort || !strings.Contains(errOut, "no model reaches it") {
		t.Errorf("unreachable target: status %d, stderr %q", status, errOut)
	}
}

// TestTrainOutputCollisions: an output that names an input, or another
// output, is refused before anything is read or written; symbolic links
// and other spellings of a path count as the path.
func TestTrainOutputCollisions(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	body := []byte("+1 1:1\n-1 2:1\n+1 1:0.5 2:0.1\n-1 2:2\n")
	if err := os.WriteFile(data, body, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"-data", data, "-model", data},
		{"-data", data, "-model", link},
		{"-data", data, "-trace", filepath.Join(dir, ".", "data")},
		{"-data", data, "-model", out, "-liblinear-model", out},
		{"-data", data, "-model", out, "-trace", filepath.Join(dir, "sub", "..", "out")},
	} {
		status, _, errOut := runCmd(append([]string{"train", "-quiet"}, args...)...)
		if status != 2 || !strings.Contains(errOut, "overwrite") {
			t.Errorf("train %v: status %d, stderr %q; want status 2", args, status, errOut)
		}
	}
	if got, _ := os.ReadFile(data); string(got) != string(body) {
		t.Error("the training data were overwritten")
	}
}

// TestTrainEarlyRefusals: mistakes in the command line are status 2 and
// are found before the data is read (the path does not exist).
func TestTrainEarlyRefusals(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-lambda", "inf"}, "-lambda +Inf"},
		{[]string{"-features", "-5"}, "-features -5"},
		{[]string{"-solver", "newton", "-l1", "1e-3"}, "takes no L1 term"},
		{[]string{"-solver", "newton", "-step-scale", "1.5"}, "-step-scale"},
		{[]string{"-solver", "newton", "-partition", "norm"}, "-partition"},
		{[]string{"-solver", "sdca", "-inner", "sdca"}, "only the reductions"},
	} {
		status, _, errOut := runCmd(append([]string{"train", "-quiet", "-data", missing}, c.args...)...)
		if status != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "no-such-data") {
			t.Errorf("train %v: status %d, stderr %q; want 2 and %q", c.args, status, errOut, c.want)
		}
	}
}

// TestCoordinateFlagsAskForACoordinateMethod: a flag that only the
// coordinate methods read is obeyed, not dropped by an automatic choice
// of Newton.
func TestCoordinateFlagsAskForACoordinateMethod(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-step-scale", "1.5"}, "solver=adaspdc"},
		{[]string{"-partition", "norm"}, "solver=adaspdc"},
		{[]string{"-sampling", "importance"}, "solver=spdc"},
	} {
		status, out, errOut := runCmd(append([]string{"train", "-quiet"}, c.args...)...)
		if status != 0 || !strings.Contains(out, c.want) {
			t.Errorf("train %v: status %d, stdout %q, stderr %q; want %s", c.args, status, out, errOut, c.want)
		}
	}
	if status, _, errOut := runCmd("train", "-quiet", "-inner", "sdca"); status != 2 || !strings.Contains(errOut, "train picked newton") {
		t.Errorf("-inner without a reduction: status %d, stderr %q", status, errOut)
	}
}

// TestTraceWriteFailure: a trace that cannot be written is an error of its
// own; the summary and the model still come, and the run is not called a
// failure.
func TestTraceWriteFailure(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	path := filepath.Join(t.TempDir(), "m.json")
	status, out, errOut := runCmd("train", "-quiet", "-trace", "/dev/full", "-model", path)
	if status != 1 || !summaryRE.MatchString(out) || !strings.Contains(errOut, "writing the trace to /dev/full") || strings.Contains(errOut, "failed") {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if strings.Count(errOut, "writing the trace") != 1 {
		t.Errorf("the trace error is said %d times: %q", strings.Count(errOut, "writing the trace"), errOut)
	}
	if _, err := modelio.Load(path); err != nil {
		t.Errorf("no model: %v", err)
	}
}

// TestRegressionTargetsHint: real-valued targets under a classification
// loss are refused with the advice to use the squared loss.
func TestRegressionTargetsHint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg")
	os.WriteFile(path, []byte("1.5 1:1\n2.25 2:1\n3.5 1:1 2:1\n0.1 1:2\n"), 0o644)
	status, _, errOut := runCmd("train", "-quiet", "-data", path)
	if status != 1 || !strings.Contains(errOut, "-loss squared") {
		t.Errorf("status %d, stderr %q; want the hint to use -loss squared", status, errOut)
	}
}

// TestVersion: adaspdc -version prints the module and the Go version.
func TestVersion(t *testing.T) {
	status, out, _ := runCmd("-version")
	if status != 0 || !strings.HasPrefix(out, "adaspdc ") || !strings.Contains(out, "go1.") {
		t.Errorf("status %d, stdout %q", status, out)
	}
}

// TestMain lets TestSIGTERM run this package's main in a child process.
func TestMain(m *testing.M) {
	if os.Getenv("ADASPDC_TEST_MAIN") == "1" {
		args := os.Args
		for i, a := range args {
			if a == "--" {
				os.Exit(run(args[i+1:], os.Stdout, os.Stderr))
			}
		}
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// TestSIGTERM: SIGTERM, which timeout, systemd, Slurm, Kubernetes and
// docker stop send, ends a run like an interrupt: the model of the best
// certificate is written and the status is 3.
func TestSIGTERM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "train", "-solver", "sdca", "-tol", "-1", "-max-epochs", "1000000000", "-stall-epochs", "-1", "-model", path)
	cmd.Env = append(os.Environ(), "ADASPDC_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var rest strings.Builder
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "epoch ") {
			break // training has begun, so the handler is in place
		}
	}
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "epoch ") {
			rest.WriteString(sc.Text() + "\n")
		}
	}
	err = cmd.Wait()
	status := cmd.ProcessState.ExitCode()
	if status != exitShort || !strings.Contains(rest.String(), "interrupted") {
		t.Errorf("status %d (%v), stderr %q; want 3 and the interrupt named", status, err, rest.String())
	}
	if _, err := modelio.Load(path); err != nil {
		t.Errorf("no model after SIGTERM: %v", err)
	}
}
