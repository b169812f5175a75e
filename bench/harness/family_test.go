package harness

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// TestFamilyTiny runs a two-family study on 300 synthetic rows (a direct
// family and a reduction with a fixed-parameter baseline) and checks that
// it takes a few seconds, that every run's CSV curve starts at pass 0 and
// reaches the stated suboptimality (the direct methods converge: below
// 1e-6 of P*, and never more than rounding below it, P* being certified to
// 1e-10), that the summary's table agrees with the curves, and that the
// figures are written and non-empty.
func TestFamilyTiny(t *testing.T) {
	x, y, err := synth.Generate(synth.RCV1Like(300, 3))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.WriteLIBSVM(f, &sparse.Dataset{X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fams := []Family{
		{Name: "direct", Title: "direct", Data: "tiny", Loss: "logistic", Lambda: 1e-2, Passes: 60, Reference: engine.SolverAdaSPDC,
			Runs: []FamilyRun{{Label: "sdca", Solver: "sdca"}, {Label: "saga", Solver: "saga"}}},
		{Name: "smooth", Title: "smooth", Data: "tiny", Loss: "hinge", Lambda: 1e-2, Passes: 20, Reference: "sdca",
			Runs: []FamilyRun{{Label: "adaptsmooth", Solver: engine.SolverAdaptSmooth, Inner: "sdca"}, {Label: "fixed", Baseline: smoothedHinge(1e-2)}}},
	}
	start := time.Now()
	results, err := RunFamilies(context.Background(), FamilyConfig{DataDir: dir, Families: fams, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, r := range results {
		if err := r.Write(filepath.Join(out, "family-"+r.Family.Name), "test", ThisMachine()); err != nil {
			t.Fatal(err)
		}
	}
	// Under -short (CI runs it with the race detector) only the output is
	// checked, not the time.
	if d := time.Since(start); d > 10*time.Second && !testing.Short() {
		t.Errorf("the tiny family run took %v, want a few seconds", d)
	}
	for ri, r := range results {
		name := r.Family.Name
		for _, ext := range []string{".png", ".svg", ".csv"} {
			if st, err := os.Stat(filepath.Join(out, "family-"+name, name+ext)); err != nil || st.Size() < 500 {
				t.Errorf("%s%s: %v, want a non-empty file", name, ext, err)
			}
		}
		md, err := os.ReadFile(filepath.Join(out, "family-"+name, "summary.md"))
		if err != nil || !strings.Contains(string(md), "passes to 1e-06") || !strings.Contains(string(md), "test") {
			t.Errorf("summary.md of %s: %v, want the table and the command", name, err)
		}
		rows := readFamilyCSV(t, filepath.Join(out, "family-"+name, name+".csv"))
		for _, c := range r.Curves {
			if c.Err != "" {
				t.Errorf("%s/%s: %s", name, c.Run.Label, c.Err)
			}
			got := rows[c.Run.Label]
			if len(got) != len(c.Passes) || len(got) < 2 || got[0][0] != 0 {
				t.Errorf("%s/%s: %d CSV rows for %d points, want them all from pass 0", name, c.Run.Label, len(got), len(c.Passes))
				continue
			}
			last := got[len(got)-1][1]
			if ri == 0 && (last > 1e-6 || last < -1e-9) {
				t.Errorf("%s/%s: final suboptimality %.3g, want in [−1e-9, 1e-6]", name, c.Run.Label, last)
			}
			if p := c.PassesTo(1e-2); !math.IsNaN(p) && !strings.Contains(string(md), c.Run.Label) {
				t.Errorf("%s: summary lacks %s", name, c.Run.Label)
			}
		}
	}
}

// readFamilyCSV returns each solver's (pass, suboptimality) rows.
func readFamilyCSV(t *testing.T, path string) map[string][][2]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "solver,pass,suboptimality" {
		t.Fatalf("%s: header %v", path, recs[:min(1, len(recs))])
	}
	out := map[string][][2]float64{}
	for _, r := range recs[1:] {
		p, err1 := strconv.ParseFloat(r[1], 64)
		s, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: row %v", path, r)
		}
		out[r[0]] = append(out[r[0]], [2]float64{p, s})
	}
	return out
}

// TestFamilyPassesTo: the passes to a threshold are where the curve
// enters it for good, not a first dip.
func TestFamilyPassesTo(t *testing.T) {
	c := FamilyCurve{Passes: []float64{0, 1, 2, 3, 4}, Subopt: []float64{1, 1e-3, 1e-1, 1e-3, 1e-5}}
	if p := c.PassesTo(1e-2); p != 3 {
		t.Errorf("passes to 1e-2: %v, want 3", p)
	}
	if p := c.PassesTo(1e-6); !math.IsNaN(p) {
		t.Errorf("passes to 1e-6: %v, want NaN", p)
	}
}
