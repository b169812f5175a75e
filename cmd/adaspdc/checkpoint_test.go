package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/engine/modelio"
)

// TestTrainCheckpointOneProcess trains one process with -checkpoint on
// heart_scale with its features spread over ten times the columns, so that
// the solver sees the compacted columns and the models must be widened
// back: the checkpoint written at the best certificate, the last of a run
// that converges, is the model that -model holds. A restart from it (-init)
// certifies the checkpoint's primal first. Several classes, -cv and the
// searches over λ refuse -checkpoint.
func TestTrainCheckpointOneProcess(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/heart_scale")
	if err != nil {
		t.Fatal(err)
	}
	var spread strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(src)), "\n") {
		fields := strings.Fields(line)
		spread.WriteString(fields[0])
		for _, tok := range fields[1:] {
			j, v, _ := strings.Cut(tok, ":")
			k, _ := strconv.Atoi(j)
			fmt.Fprintf(&spread, " %d:%s", 10*k, v)
		}
		spread.WriteString("\n")
	}
	data := filepath.Join(dir, "spread")
	if err := os.WriteFile(data, []byte(spread.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, solver := range []string{"newton", "sdca"} {
		model, ck := filepath.Join(dir, solver+".json"), filepath.Join(dir, solver+"-ck.json")
		status, out, errOut := runCmd("train", "-quiet", "-data", data, "-solver", solver, "-tol", "1e-9", "-model", model, "-checkpoint", ck)
		m := summaryRE.FindStringSubmatch(out)
		if status != 0 || m == nil {
			t.Fatalf("%s: status %d, stdout %q, stderr %q", solver, status, out, errOut)
		}
		ms := loadModels(t, model, ck)
		saved, kept := ms[0], ms[1]
		// The checkpoint records its certificate, the run's last here.
		c := kept.Certificate
		if c == nil || strconv.FormatFloat(c.Primal, 'g', 12, 64) != m[1] || strconv.FormatFloat(c.Dual, 'g', 12, 64) != m[2] {
			t.Errorf("%s: the checkpoint's certificate is %+v, the run's P = %s, D = %s", solver, c, m[1], m[2])
		}
		if saved.Dim != 130 || !reflect.DeepEqual(saved, kept) {
			t.Errorf("%s: the checkpoint (dim %d) is not the model written at the end (dim %d)", solver, kept.Dim, saved.Dim)
		}
	}

	// Restart newton from a loose run's checkpoint: its first certificate
	// is that of the checkpoint's weights.
	ck, trace := filepath.Join(dir, "loose.json"), filepath.Join(dir, "trace.csv")
	status, out, errOut := runCmd("train", "-quiet", "-data", data, "-solver", "newton", "-tol", "1e-2", "-checkpoint", ck)
	first := summaryRE.FindStringSubmatch(out)
	if status != 0 || first == nil {
		t.Fatalf("loose run: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	status, out, errOut = runCmd("train", "-quiet", "-data", data, "-solver", "newton", "-init", ck, "-trace", trace)
	if status != 0 || summaryRE.FindStringSubmatch(out) == nil {
		t.Fatalf("restart: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	start, _ := strconv.ParseFloat(traceRows(t, trace)[1][2], 64)
	ckPrimal, _ := strconv.ParseFloat(first[1], 64)
	if !(abs(start-ckPrimal) <= 1e-11*abs(ckPrimal)) {
		t.Errorf("restart: first primal %.17g, the checkpoint's %.12g", start, ckPrimal)
	}

	three := filepath.Join(dir, "three")
	os.WriteFile(three, []byte("1 1:1\n2 2:1\n3 3:1\n1 1:0.9 2:0.1\n2 2:0.8 3:0.1\n3 1:0.1 3:1.1\n"), 0o644)
	for _, args := range [][]string{
		{"-data", three},
		{"-data", data, "-cv", "3"},
		{"-data", data, "-cv", "3", "-lambda", "auto"},
		{"-data", data, "-lambda", "auto"},
		{"-data", data, "-l1", "auto"},
		{"-data", three, "-multiclass", "multinomial"},
	} {
		status, _, errOut := runCmd(append([]string{"train", "-quiet", "-checkpoint", filepath.Join(dir, "refused.json")}, args...)...)
		if status != 2 || !strings.Contains(errOut, "-checkpoint") {
			t.Errorf("%v: status %d, stderr %q, want a refusal", args, status, errOut)
		}
		if _, err := os.Stat(filepath.Join(dir, "refused.json")); err == nil {
			t.Errorf("%v: a refused run wrote the checkpoint", args)
		}
	}
}

// loadModels loads the model files, failing the test on any error.
func loadModels(t *testing.T, paths ...string) []*engine.Model {
	t.Helper()
	ms := make([]*engine.Model, len(paths))
	for i, p := range paths {
		m, err := modelio.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	return ms
}

// traceRows reads a -trace file, failing the test unless it holds a header
// and at least one certificate.
func traceRows(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("trace %s: %v %v", path, rows, err)
	}
	return rows
}

// TestTrainCheckpointDuals checks that a dual or primal-dual method's
// checkpoint keeps its duals beside the model, and that a restart from the
// model takes them back: the restart's first certificate is the
// checkpoint's, where for a dual method the duals paired with the weights
// alone certify far worse. Duals of other
// rows are left aside with a warning, and a primal method's checkpoint
// removes the duals an earlier run left at its path.
func TestTrainCheckpointDuals(t *testing.T) {
	dir := t.TempDir()
	data := "../../testdata/heart_scale"
	for _, solver := range []string{"sdca", "cocoa", "adaspdc"} {
		ck, first, again := filepath.Join(dir, solver+".json"), filepath.Join(dir, solver+"-1.csv"), filepath.Join(dir, solver+"-2.csv")
		common := []string{"train", "-quiet", "-data", data, "-solver", solver, "-lambda", "1e-2", "-threads", "2"}
		if status, out, errOut := runCmd(append(common, "-max-epochs", "6", "-tol", "-1", "-checkpoint", ck, "-trace", first)...); status != 0 {
			t.Fatalf("%s: status %d, stdout %q, stderr %q", solver, status, out, errOut)
		}
		if _, err := os.Stat(ck + ".duals"); err != nil {
			t.Fatalf("%s: no duals beside the checkpoint: %v", solver, err)
		}
		// The checkpoint's certificate: the trace's best (the smallest
		// gap, then the lower primal), as the driver picks it.
		var best []float64
		for _, row := range traceRows(t, first)[1:] {
			p, _ := strconv.ParseFloat(row[2], 64)
			g, _ := strconv.ParseFloat(row[4], 64)
			if best == nil || g < best[1] || g == best[1] && p < best[0] {
				best = []float64{p, g}
			}
		}
		restart := func() (primal, gap float64, stderr string) {
			status, out, errOut := runCmd(append(common, "-max-epochs", "0", "-init", ck, "-trace", again)...)
			if status != 3 || summaryRE.FindStringSubmatch(out) == nil {
				t.Fatalf("%s: restart: status %d, stdout %q, stderr %q", solver, status, out, errOut)
			}
			row := traceRows(t, again)[1]
			primal, _ = strconv.ParseFloat(row[2], 64)
			gap, _ = strconv.ParseFloat(row[4], 64)
			return primal, gap, errOut
		}
		p, g, errOut := restart()
		if !(abs(p-best[0]) <= 1e-12*abs(best[0]) && abs(g-best[1]) <= 1e-12*max(1, abs(best[0]))) || strings.Contains(errOut, "aside") {
			t.Errorf("%s: restart certified P = %.17g, gap %.17g; the checkpoint P = %.17g, gap %.17g (stderr %q)", solver, p, g, best[0], best[1], errOut)
		}
		// Without its duals, the restart starts from those paired with the
		// weights: for a dual method, far worse (AdaSPDC keeps its primal
		// point, and the paired duals can certify it about as well).
		os.Rename(ck+".duals", ck+".aside")
		if _, g2, _ := restart(); solver != "adaspdc" && !(g2 > 10*best[1]) {
			t.Errorf("%s: restart without the duals: gap %.6g, with them %.6g; the test no longer shows what the duals are for", solver, g2, best[1])
		}
		os.Rename(ck+".aside", ck+".duals")
	}

	// Duals of other rows: the same file with one value changed.
	src, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte(strings.Replace(string(src), "1:0.708333", "1:0.7", 1)), 0o644)
	ck := filepath.Join(dir, "sdca.json")
	status, out, errOut := runCmd("train", "-quiet", "-data", other, "-solver", "sdca", "-lambda", "1e-2", "-max-epochs", "1", "-tol", "-1", "-init", ck)
	if status != 0 || !strings.Contains(errOut, "warning: -init "+ck+": left "+ck+".duals aside: they belong to other data") {
		t.Errorf("other rows: status %d, stdout %q, stderr %q", status, out, errOut)
	}

	// A dual outside the domain of the logistic's conjugate (b·y ∈ [−1, 0]),
	// in a file whose sums match.
	d, err := modelio.LoadDuals(ck + ".duals")
	if err != nil {
		t.Fatal(err)
	}
	d.Y[7] = 5
	if err := modelio.SaveDuals(ck+".duals", d); err != nil {
		t.Fatal(err)
	}
	status, out, errOut = runCmd("train", "-quiet", "-data", data, "-solver", "sdca", "-lambda", "1e-2", "-max-epochs", "1", "-tol", "-1", "-init", ck)
	if status != 0 || !strings.Contains(errOut, "aside: dual 8, 5, is not in the domain of the logistic loss's conjugate") {
		t.Errorf("a dual out of the domain: status %d, stdout %q, stderr %q", status, out, errOut)
	}

	// newton has no duals: its checkpoint at the same path removes sdca's.
	if status, out, errOut := runCmd("train", "-quiet", "-data", data, "-solver", "newton", "-lambda", "1e-4", "-checkpoint", ck); status != 0 {
		t.Fatalf("newton: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if _, err := os.Stat(ck + ".duals"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("newton's checkpoint left sdca's duals: %v", err)
	}
}

// TestTrainCheckpointDualsCollide checks that -checkpoint's duals file may
// not be another output.
func TestTrainCheckpointDualsCollide(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck")
	status, _, errOut := runCmd("train", "-checkpoint", ck, "-model", ck+".duals")
	if status != 2 || !strings.Contains(errOut, "name the same file "+ck+".duals") {
		t.Errorf("status %d, stderr %q", status, errOut)
	}
}

// TestTrainCheckpointRestartFloor restarts sdca from its own checkpoint
// (-init and -checkpoint one file): without the duals kept beside it, the
// restart's first certificates are far worse, and the file keeps its model
// and says so; with them, the restart goes on from the checkpoint's gap and
// replaces the model once it certifies better.
func TestTrainCheckpointRestartFloor(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck.json")
	common := []string{"train", "-quiet", "-data", "../../testdata/heart_scale", "-solver", "sdca", "-lambda", "1e-5", "-tol", "-1", "-checkpoint", ck}
	if status, out, errOut := runCmd(append(common, "-max-epochs", "20")...); status != 0 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	before := loadModels(t, ck)[0]
	os.Rename(ck+".duals", ck+".aside")
	_, _, errOut := runCmd(append(common, "-max-epochs", "1", "-init", ck)...)
	if after := loadModels(t, ck)[0]; !reflect.DeepEqual(before, after) || !strings.Contains(errOut, ck+" still holds the model this run restarted from") {
		t.Errorf("without the duals: the checkpoint went from %+v to %+v (stderr %q)", *before.Certificate, *after.Certificate, errOut)
	}
	os.Rename(ck+".aside", ck+".duals")
	_, _, errOut = runCmd(append(common, "-max-epochs", "5", "-init", ck)...)
	after := loadModels(t, ck)[0]
	gap := func(m *engine.Model) float64 { return m.Certificate.Primal - m.Certificate.Dual }
	if !(gap(after) < gap(before)) || strings.Contains(errOut, "still holds") {
		t.Errorf("with the duals: gap %.6g after five epochs, %.6g before (stderr %q)", gap(after), gap(before), errOut)
	}
}
