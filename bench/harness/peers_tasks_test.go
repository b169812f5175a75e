package harness

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTaskResult reads each tool's report of each task, as their outputs
// print it, and refuses outputs without one.
func TestTaskResult(t *testing.T) {
	for _, c := range []struct {
		task, tool, out, want string
	}{
		{TaskCV, "adaspdc", "cv_accuracy=84.8632% folds=5 lambda=3.07e-05\n", "84.86% held-out accuracy"},
		{TaskCV, "liblinear -s 0", "iter  4 act 1.7e-02\nCross Validation Accuracy = 84.7548%\n", "84.7548% held-out accuracy"},
		{TaskLambdaAuto, "adaspdc", "best_lambda=1.53e-05 cv_accuracy=84.8700% nonzeros=124.0 folds=5 grid_points=19\nepochs=3 ...\n", "best λ = 1.53e-05 (C = 2.01), 84.87%"},
		{TaskLambdaAuto, "liblinear -s 0", "log2c= 1.00\trate=84.6\nBest C = 4.000000  CV accuracy = 84.7843%\n", "best C = 4, 84.7843%"},
	} {
		got, err := taskResult(c.task, c.tool, c.out, 32561)
		if err != nil || got != c.want {
			t.Errorf("%s, %s: %q (%v), want %q", c.task, c.tool, got, err, c.want)
		}
	}
	for _, tool := range []string{"adaspdc", "liblinear -s 0"} {
		for _, task := range []string{TaskCV, TaskLambdaAuto} {
			if got, err := taskResult(task, tool, "epochs=3 passes=16.8\n", 100); err == nil {
				t.Errorf("%s, %s: %q from an output without its result", task, tool, got)
			}
		}
	}
}

// TestPeersTasks runs both tasks on two classes against LIBLINEAR where it
// is installed: both tools report and are timed, and the table has them.
func TestPeersTasks(t *testing.T) {
	bin, ll := withLIBLINEAR(t)
	path := writeClasses(t, 200, 8, 2)
	cfg := PeersConfig{Data: []string{path}, Tasks: []string{TaskCV, TaskLambdaAuto},
		Ms: []int{1}, Threads: 1, Runs: 1, Timeout: time.Minute, Self: bin, LIBLINEAR: ll, Python: "/nonexistent"}
	var log bytes.Buffer
	res, err := Peers(context.Background(), cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(res.Tasks) != 2 || len(res.Problems) != 0 {
		t.Fatalf("%d tasks and %d problems, want 2 and 0", len(res.Tasks), len(res.Problems))
	}
	for _, pt := range res.Tasks {
		if math.IsNaN(pt.Ours.Seconds) || math.IsNaN(pt.Peer.Seconds) || pt.OursResult == "" || pt.PeerResult == "" {
			t.Errorf("%s: %+v\n%s", pt.Task, pt, log.String())
		}
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "peers.md"))
	for _, want := range []string{"| classes2 | 5-fold cross-validation", "| classes2 | search over λ", "held-out accuracy", "best C = "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("peers.md lacks %q:\n%s", want, md)
		}
	}
}
