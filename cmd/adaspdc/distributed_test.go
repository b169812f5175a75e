package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/comm"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

var distSummaryRE = regexp.MustCompile(`^epochs=\d+ passes=[\d.]+ primal=(\S+) dual=(\S+) gap=(\S+) rel_gap=(\S+) seconds=[\d.]+ threads=\d+ ranks=(\d+) allreduces=(\d+) solver=(\w+)\n$`)

// trainRanks runs the command line's distributed training on p in-process
// ranks with the flags f, and returns each rank's error, rank 0's stdout
// and stderr.
func trainRanks(t *testing.T, p int, f trainFlags, data string) ([]error, string, string) {
	t.Helper()
	loss, err := engine.LossByName(f.loss, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := engine.Options{Tol: f.tol, MaxEpochs: f.maxEpochs, Seed: f.seed, Threads: f.threads}
	errs := make([]error, p)
	var out, errOut bytes.Buffer
	comm.RunLocal(p, func(c comm.Comm) error {
		var so, se bytes.Buffer
		err := trainDistributed(c, f, opt, loss, data, 0, false, true, &so, &se)
		errs[c.Rank()] = err
		if c.Rank() == 0 {
			out, errOut = so, se
		} else if so.Len() > 0 {
			t.Errorf("rank %d printed %q", c.Rank(), so.String())
		}
		return err
	})
	return errs, out.String(), errOut.String()
}

// TestTrainDistributedRanks runs the distributed path of adaspdc train on
// two and three in-process ranks, each reading its byte range of
// heart_scale or its own file (-data 'part-%d'), and checks the summary
// (ranks=P), that rank 0 alone writes the model, and that the primal
// agrees with a single-process cocoa run within the printed gaps.
func TestTrainDistributedRanks(t *testing.T) {
	status, single, errOut := runCmd("train", "-quiet", "-solver", "cocoa", "-tol", "1e-8")
	if status != 0 {
		t.Fatalf("single process: status %d, %s", status, errOut)
	}
	if strings.Contains(single, "ranks=") {
		t.Errorf("a single process printed ranks=: %q", single)
	}
	m := summaryRE.FindStringSubmatch(single)
	if m == nil {
		t.Fatalf("single-process summary %q", single)
	}
	p1, _ := strconv.ParseFloat(m[1], 64)
	g1, _ := strconv.ParseFloat(m[3], 64)

	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/heart_scale")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	for r := range 3 {
		part := strings.Join(lines[len(lines)*r/3:len(lines)*(r+1)/3], "")
		if err := os.WriteFile(filepath.Join(dir, "part-"+strconv.Itoa(r)), []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	allreduces := map[string]string{}
	for _, c := range []struct {
		ranks  int
		data   string
		solver string
	}{
		{1, "../../testdata/heart_scale", ""}, {2, "../../testdata/heart_scale", ""}, {3, filepath.Join(dir, "part-%d"), ""},
		{2, "../../testdata/heart_scale", "cocoa"}, {3, filepath.Join(dir, "part-%d"), "cocoa"},
	} {
		model := filepath.Join(dir, "model-"+strconv.Itoa(c.ranks)+c.solver+".json")
		f := trainFlags{loss: "logistic", tol: 1e-8, maxEpochs: 5000, seed: 1, quiet: true, model: model, solver: c.solver}
		errs, out, errOut := trainRanks(t, c.ranks, f, c.data)
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%d ranks: rank %d: %v (%s)", c.ranks, r, err, errOut)
			}
		}
		m := distSummaryRE.FindStringSubmatch(out)
		want := c.solver
		if want == "" {
			want = "newton" // the default for a smooth loss with an L2 term
		}
		if m == nil || m[5] != strconv.Itoa(c.ranks) || m[7] != want {
			t.Fatalf("%d ranks, -solver %q: summary %q", c.ranks, c.solver, out)
		}
		if want == "newton" {
			// Newton's collectives do not depend on the ranks here.
			if a, ok := allreduces[want]; ok && a != m[6] {
				t.Errorf("%d ranks: allreduces=%s, against %s on fewer ranks", c.ranks, m[6], a)
			}
			allreduces[want] = m[6]
		}
		p, _ := strconv.ParseFloat(m[1], 64)
		g, _ := strconv.ParseFloat(m[3], 64)
		// P* lies in [p − g, p] and in [p1 − g1, p1].
		if d := p - p1; d > g+1e-12 || -d > g1+1e-12 {
			t.Errorf("%d ranks: primal %.12g, single process %.12g, gaps %.3g and %.3g", c.ranks, p, p1, g, g1)
		}
		saved, err := modelio.Load(model)
		if err != nil {
			t.Fatalf("%d ranks: %v", c.ranks, err)
		}
		if saved.Dim != 13 || len(saved.Labels) != 2 {
			t.Errorf("%d ranks: model of %d features, labels %v", c.ranks, saved.Dim, saved.Labels)
		}
	}
}

// TestTrainDistributedFailures checks that a rank that cannot read its
// file ends every rank with an error, and that the flags a distributed run
// does not take are refused by name.
func TestTrainDistributedFailures(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "part-0"), []byte("1 1:1\n-1 2:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := trainFlags{loss: "logistic", tol: 1e-6, maxEpochs: 100, seed: 1, quiet: true}
	errs, _, _ := trainRanks(t, 2, f, filepath.Join(dir, "part-%d"))
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error with part-1 missing", r)
		}
	}
	var ae *comm.AbortError
	if !errors.As(errs[0], &ae) || ae.Rank != 1 || !strings.Contains(ae.Error(), "part-1") {
		t.Errorf("rank 0's error %v does not name rank 1 and its file", errs[0])
	}
	for _, c := range []struct {
		f    trainFlags
		set  map[string]bool
		want string
	}{
		{trainFlags{solver: "adaspdc"}, nil, "-solver adaspdc"},
		{trainFlags{cv: 5}, nil, "-cv"},
		{trainFlags{multiclass: "multinomial", solver: "sdca"}, nil, "-solver sdca"},
		{trainFlags{}, map[string]bool{"m": true}, "-m"},
	} {
		err := distributedRefusals(c.f, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.f, err, c.want)
		}
	}
	for _, s := range []string{"cocoa", "newton", "owlqn"} {
		if err := distributedRefusals(trainFlags{solver: s}, nil); err != nil {
			t.Errorf("-solver %s refused: %v", s, err)
		}
	}
	for _, s := range []string{"", "lbfgs"} {
		if err := distributedRefusals(trainFlags{multiclass: "multinomial", solver: s}, nil); err != nil {
			t.Errorf("-multiclass multinomial -solver %q refused: %v", s, err)
		}
	}
}

// TestTrainDistributedMoreRanksThanRows: a file of three lines on four
// ranks leaves one rank's byte range without a line, and a rank's own file
// may hold none; both train, as the engine's empty ranks do. Ranks that
// hold no line at all end with an error that names the data.
func TestTrainDistributedMoreRanksThanRows(t *testing.T) {
	dir := t.TempDir()
	three := filepath.Join(dir, "three")
	if err := os.WriteFile(three, []byte("1 1:1 2:0.5\n-1 1:-1 3:1\n1 2:1 3:-0.25\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"part-0", "part-2"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("1 1:1 2:0.5\n-1 1:-1 3:1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "part-1"), []byte("# no rows here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ranks int
		data  string
	}{{4, three}, {8, three}, {3, filepath.Join(dir, "part-%d")}} {
		f := trainFlags{loss: "logistic", lambda: 0.1, tol: 1e-8, maxEpochs: 1000, seed: 1, quiet: true}
		errs, out, errOut := trainRanks(t, c.ranks, f, c.data)
		for r, err := range errs {
			if err != nil {
				t.Errorf("%d ranks on %s: rank %d: %v (%s)", c.ranks, filepath.Base(c.data), r, err, errOut)
			}
		}
		if m := distSummaryRE.FindStringSubmatch(out); m == nil || m[5] != strconv.Itoa(c.ranks) {
			t.Errorf("%d ranks on %s: summary %q", c.ranks, filepath.Base(c.data), out)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := trainFlags{loss: "logistic", tol: 1e-6, maxEpochs: 100, seed: 1, quiet: true}
	errs, _, errOut := trainRanks(t, 2, f, empty)
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: no error on a file without data lines", r)
		}
	}
	if !strings.Contains(errOut, empty) || !strings.Contains(errOut, "no data lines") {
		t.Errorf("no data on any rank: stderr %q, errors %v; want the file and \"no data lines\"", errOut, errs)
	}
}
