package harness

import (
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The tasks a peer comparison can time beside its objectives: what a user
// runs to choose a model, whole processes against LIBLINEAR's own, on the
// logistic loss with an intercept (ours -bias 1, LIBLINEAR -B 1). They
// have no suboptimality to reach; each reports what it found, and the
// comparison notes both results beside the times.
const (
	// TaskCV is 5-fold cross-validation at C = 1 (λ = 1/n): adaspdc
	// train -cv 5 against liblinear-train -s 0 -v 5, each reporting its
	// held-out accuracy.
	TaskCV = "cv"
	// TaskLambdaAuto is the search over λ by 5-fold cross-validation:
	// adaspdc train -lambda auto against liblinear-train -s 0 -C -v 5,
	// each reporting its best C (ours 1/(nλ)) and its accuracy there.
	TaskLambdaAuto = "lambda-auto"
)

// PeerTask is one task on one data set: each tool's time and result.
type PeerTask struct {
	Data                   string
	Task                   string
	Rows                   int
	Ours                   PeerTiming
	Peer                   PeerTiming
	OursResult, PeerResult string
	Notes                  []string
}

// taskArgs returns the command lines of a task on the data file path of
// n rows: ours, and LIBLINEAR's.
func taskArgs(cfg PeersConfig, task, path string, n int, ll string) (ours, peer []string, err error) {
	threads := strconv.Itoa(cfg.Threads)
	switch task {
	case TaskCV:
		lambda := strconv.FormatFloat(1/float64(n), 'g', -1, 64)
		ours = []string{cfg.Self, "train", "-quiet", "-data", path, "-loss", "logistic", "-bias", "1", "-lambda", lambda, "-cv", "5", "-threads", threads}
		peer = []string{ll, "-s", "0", "-B", "1", "-c", "1", "-v", "5", path}
	case TaskLambdaAuto:
		ours = []string{cfg.Self, "train", "-quiet", "-data", path, "-loss", "logistic", "-bias", "1", "-lambda", "auto", "-threads", threads}
		peer = []string{ll, "-s", "0", "-B", "1", "-C", "-v", "5", path}
	default:
		return nil, nil, fmt.Errorf("unknown task %q: %s or %s", task, TaskCV, TaskLambdaAuto)
	}
	return ours, peer, nil
}

var (
	liblinearCVAccuracy = regexp.MustCompile(`Cross Validation Accuracy = ([0-9.]+)%`)
	liblinearBestC      = regexp.MustCompile(`Best C = ([0-9.eE+-]+)\s+CV accuracy = ([0-9.]+)%`)
)

// taskResult reads what a tool's run of a task found from its output: an
// accuracy for TaskCV; the best C and its accuracy for TaskLambdaAuto
// (ours reports λ, shown as C = 1/(nλ) beside it).
func taskResult(task, tool, out string, n int) (string, error) {
	if tool == "adaspdc" {
		acc := outputField(strings.ReplaceAll(out, "%", ""), "cv_accuracy")
		if math.IsNaN(acc) {
			return "", fmt.Errorf("adaspdc printed no cv_accuracy: %s", lastLine(out))
		}
		if task == TaskCV {
			return fmt.Sprintf("%.2f%% held-out accuracy", acc), nil
		}
		lambda := outputField(out, "best_lambda")
		if !(lambda > 0) {
			return "", fmt.Errorf("adaspdc printed no best_lambda: %s", lastLine(out))
		}
		return fmt.Sprintf("best λ = %.3g (C = %.3g), %.2f%%", lambda, 1/(float64(n)*lambda), acc), nil
	}
	if task == TaskCV {
		m := liblinearCVAccuracy.FindStringSubmatch(out)
		if m == nil {
			return "", fmt.Errorf("LIBLINEAR printed no cross-validation accuracy: %s", lastLine(out))
		}
		return m[1] + "% held-out accuracy", nil
	}
	m := liblinearBestC.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("LIBLINEAR printed no best C: %s", lastLine(out))
	}
	c, _ := strconv.ParseFloat(m[1], 64)
	return fmt.Sprintf("best C = %.3g, %s%%", c, m[2]), nil
}

// peersTask runs a task on the data file path (n rows) with ours and
// LIBLINEAR: once each for its result, then timed in rounds.
func peersTask(ctx context.Context, cfg PeersConfig, name, path string, n int, task, ll string, log io.Writer) (*PeerTask, error) {
	pt := &PeerTask{Data: name, Task: task, Rows: n,
		Ours: PeerTiming{Tool: "adaspdc", Seconds: math.NaN()}, Peer: PeerTiming{Tool: "liblinear -s 0", Seconds: math.NaN()}}
	ours, peer, err := taskArgs(cfg, task, path, n, ll)
	if err != nil {
		return nil, err
	}
	var jobs []timedJob
	for _, tool := range []struct {
		name   string
		argv   []string
		result *string
		timing *PeerTiming
	}{{"adaspdc", ours, &pt.OursResult, &pt.Ours}, {"liblinear -s 0", peer, &pt.PeerResult, &pt.Peer}} {
		if tool.argv[0] == "" {
			pt.Notes = append(pt.Notes, "LIBLINEAR is not installed: ours alone is timed")
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		out, err := exec.CommandContext(tctx, tool.argv[0], tool.argv[1:]...).CombinedOutput()
		timedOut := tctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if timedOut {
			pt.Notes = append(pt.Notes, fmt.Sprintf("%s ran past the %v limit: not timed", tool.name, cfg.Timeout))
			continue
		}
		if err != nil {
			pt.Notes = append(pt.Notes, fmt.Sprintf("%s failed: %v: %s", tool.name, err, lastLine(strings.TrimSpace(string(out)))))
			continue
		}
		res, err := taskResult(task, tool.name, string(out), n)
		if err != nil {
			pt.Notes = append(pt.Notes, err.Error())
			continue
		}
		*tool.result = res
		fmt.Fprintf(log, "peers: %s %s: %s: %s\n", name, task, tool.name, res)
		argv, timing := tool.argv, tool.timing
		jobs = append(jobs, timedJob{
			mk:  func() *exec.Cmd { return exec.CommandContext(ctx, argv[0], argv[1:]...) },
			set: func(sec, cpu float64) { timing.Seconds, timing.CPU = sec, cpu },
		})
	}
	timeInRounds(cfg.Runs, jobs)
	fmt.Fprintf(log, "peers: %s %s: ours %s, LIBLINEAR %s\n", name, task, taskSeconds(pt.Ours), taskSeconds(pt.Peer))
	return pt, nil
}
