package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/adaspdc/adaspdc/sparse"
)

// runCmd runs the command line args and returns the exit status and output.
func runCmd(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

// sharedShapes are the figures of /work/shared/data/SOURCES.md for each
// file: rows, largest index (the inferred column count) and stored entries;
// the label part is what info prints for the counts listed there.
var sharedShapes = map[string]string{
	"w8a":                 "rows=49749 cols=300 nnz=579586 labels=-1:48270,1:1479",
	"w8a.t":               "rows=14951 cols=300 nnz=174276 labels=-1:14497,1:454",
	"a9a":                 "rows=32561 cols=123 nnz=451592 labels=-1:24720,1:7841",
	"a9a.t":               "rows=16281 cols=122 nnz=225731 labels=-1:12435,1:3846",
	"a1a":                 "rows=1605 cols=119 nnz=22249 labels=-1:1210,1:395",
	"mushrooms":           "rows=8124 cols=112 nnz=170604 labels=1:3916,2:4208",
	"ijcnn1":              "rows=49990 cols=22 nnz=649870 labels=-1:45137,1:4853",
	"heart_scale":         "rows=270 cols=13 nnz=3378 labels=-1:150,1:120",
	"australian":          "rows=690 cols=14 nnz=9660 labels=-1:383,1:307",
	"breast-cancer":       "rows=683 cols=10 nnz=6830 labels=2:444,4:239",
	"breast-cancer_scale": "rows=683 cols=10 nnz=6830 labels=-1:444,1:239",
	"news20":              "rows=15935 cols=62061 nnz=1272569 labels=20 distinct (1..20)",
	"housing_scale":       "rows=506 cols=13 nnz=6578 labels=229 distinct (5..50)",
	"abalone_scale":       "rows=4177 cols=8 nnz=32080 labels=28 distinct (1..29)",
}

func TestInfoSharedData(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("shared data absent: %v", err)
	}
	seen := 0
	for _, e := range entries {
		if e.Name() == "SOURCES.md" {
			continue
		}
		want, ok := sharedShapes[e.Name()]
		if !ok {
			t.Errorf("%s: not in the table of SOURCES.md figures", e.Name())
			continue
		}
		seen++
		status, out, errOut := runCmd("info", "-data", filepath.Join(dir, e.Name()))
		if status != 0 || out != want+"\n" || errOut != "" {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want %q", e.Name(), status, out, errOut, want)
		}
	}
	if seen != len(sharedShapes) {
		t.Errorf("checked %d files, the table has %d", seen, len(sharedShapes))
	}
	// a9a.t has 123 features of which the last never occurs.
	if _, out, _ := runCmd("info", "-data", filepath.Join(dir, "a9a.t"), "-features", "123"); !strings.HasPrefix(out, "rows=16281 cols=123 ") {
		t.Errorf("a9a.t with -features 123: %q", out)
	}
}

func TestInfoBundled(t *testing.T) {
	status, out, _ := runCmd("info")
	if status != 0 || out != sharedShapes["heart_scale"]+"\n" {
		t.Errorf("status %d, stdout %q", status, out)
	}
}

// TestInfoCache checks that info reads a binary cache like the text file it
// was made from.
func TestInfoCache(t *testing.T) {
	d, err := sparse.ReadLIBSVM(bytes.NewReader(bundledData), "heart_scale", sparse.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "heart_scale.cache")
	var b bytes.Buffer
	if err := sparse.WriteCache(&b, d); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCmd("info", "-data", path)
	if status != 0 || out != sharedShapes["heart_scale"]+"\n" {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if err := os.WriteFile(path, b.Bytes()[:b.Len()-1], 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errOut = runCmd("info", "-data", path)
	if status != 1 || !strings.Contains(errOut, "cache is") {
		t.Errorf("truncated cache: status %d, stderr %q", status, errOut)
	}
}

// TestInfoMalformed runs info on each malformed sample and checks the exit
// status and that the message points at file:line:column.
func TestInfoMalformed(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "malformed")
	want := map[string]string{
		"index_zero.svm":       ":3:4: index 0: feature indices are 1-based",
		"negative_index.svm":   ":2:15: index -2: feature indices are 1-based",
		"descending_index.svm": ":4:19: index 2 after 3: indices must be strictly ascending",
		"duplicate_index.svm":  ":5:17: duplicate index 2",
		"missing_colon.svm":    `:6:10: feature "2" has no ':'`,
		"missing_value.svm":    ":2:17: index 2 has no value after ':'",
		"bad_value.svm":        `:2:17: value "-l" is not a number`,
		"bad_index.svm":        `:3:15: index "2.5" is not a positive integer`,
		"nan_value.svm":        `:4:17: value "nan" is not finite`,
		"inf_value.svm":        `:4:17: value "-inf" is not finite`,
		"overflow_value.svm":   `:5:6: value "1e999" overflows float64`,
		"huge_index.svm":       ":2:15: index 4294967296 exceeds the limit 2147483647",
		"bad_label.svm":        `:3:1: label "positive" is not a number`,
		"nan_label.svm":        `:3:1: label "NaN" is not finite`,
		"missing_label.svm":    `:6:1: missing label`,
		"crlf_duplicate.svm":   ":3:10: duplicate index 1",
	}
	lineCol := regexp.MustCompile(`^adaspdc info: (.+):[0-9]+:[0-9]+: `)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		status, out, errOut := runCmd("info", "-data", path)
		if status != 1 || out != "" {
			t.Errorf("%s: status %d, stdout %q; want 1 and nothing", e.Name(), status, out)
		}
		if e.Name() == "no_data.svm" {
			if errOut != "adaspdc info: "+path+": no data lines\n" {
				t.Errorf("%s: stderr %q", e.Name(), errOut)
			}
			continue
		}
		m := lineCol.FindStringSubmatch(errOut)
		if m == nil || m[1] != path {
			t.Errorf("%s: stderr %q does not start with adaspdc info: %s:line:col:", e.Name(), errOut, path)
		}
		suffix, ok := want[e.Name()]
		if !ok {
			t.Errorf("%s: no expected message", e.Name())
			continue
		}
		if !strings.HasPrefix(errOut, "adaspdc info: "+path+suffix) {
			t.Errorf("%s: stderr %q, want %q", e.Name(), errOut, path+suffix)
		}
	}
}

func TestUsageAndDispatch(t *testing.T) {
	status, _, errOut := runCmd()
	if status != 2 || !strings.Contains(errOut, "info ") || !strings.Contains(errOut, "Usage: adaspdc <command>") {
		t.Errorf("no arguments: status %d, stderr %q", status, errOut)
	}
	status, out, _ := runCmd("-h")
	if status != 0 || !strings.Contains(out, "info ") {
		t.Errorf("-h: status %d, stdout %q", status, out)
	}
	status, _, errOut = runCmd("frobnicate")
	if status != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: status %d, stderr %q", status, errOut)
	}
	status, _, errOut = runCmd("info", "-bogus")
	if status != 2 || !strings.Contains(errOut, "flag provided but not defined: -bogus") {
		t.Errorf("bad flag: status %d, stderr %q", status, errOut)
	}
	status, _, errOut = runCmd("info", "stray")
	if status != 2 || !strings.Contains(errOut, `unexpected argument "stray"`) {
		t.Errorf("positional argument: status %d, stderr %q", status, errOut)
	}
	if status, _, _ = runCmd("info", "-h"); status != 0 {
		t.Errorf("info -h: status %d", status)
	}
	status, _, errOut = runCmd("info", "-data", "no/such/file")
	if status != 1 || !strings.HasPrefix(errOut, "adaspdc info: open no/such/file: ") {
		t.Errorf("absent file: status %d, stderr %q", status, errOut)
	}
	// A command-line mistake, found before the data is read.
	status, _, errOut = runCmd("info", "-features", "-3")
	if status != 2 || !strings.Contains(errOut, "-features -3: must be 0") {
		t.Errorf("negative -features: status %d, stderr %q", status, errOut)
	}
	status, _, errOut = runCmd("bench", "peers")
	if status != 2 || !strings.Contains(errOut, "go run ./cmd/adaspdc-bench") {
		t.Errorf("bench: status %d, stderr %q", status, errOut)
	}
}

// TestNoPlotting checks that adaspdc does not link gonum's plotting
// packages, whose initialisation cost every process about 4 ms
// (cmd/adaspdc-bench's package comment).
func TestNoPlotting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "gonum.org/v1/plot") {
			t.Errorf("adaspdc links %s", p)
		}
	}
}

// peakChildEnv names the file that the child process of TestInfoPeakMemory
// runs info on.
const peakChildEnv = "ADASPDC_TEST_PEAK_CHILD"

// peakRSS returns the process's peak resident set size in bytes (VmHWM,
// what /usr/bin/time reports as "Maximum resident set size"), or 0 where
// /proc is absent.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// TestInfoPeakMemory is issue 8's check: the peak resident memory of info
// on a LIBSVM file stays within 1.2× the bytes of the matrix it reads (the
// reader used to peak at twice that, parsing into chunks and concatenating
// them). The test runs info in a child process, the test binary itself, on
// a generated file of 5 M entries (a 60 MB matrix), and subtracts the
// child's peak on the bundled 27 KB dataset, which is the runtime's and the
// test binary's own footprint.
func TestInfoPeakMemory(t *testing.T) {
	if path := os.Getenv(peakChildEnv); path != "" {
		var out, errOut bytes.Buffer
		status := run([]string{"info", "-data", path}, &out, &errOut)
		fmt.Printf("status=%d peak=%d %s%s", status, peakRSS(), out.String(), errOut.String())
		return
	}
	if testing.Short() {
		t.Skip("writes a 50 MB file")
	}
	if peakRSS() == 0 {
		t.Skip("no /proc/self/status VmHWM on this system")
	}
	const rows, perRow, cols = 100_000, 50, 1_000_000
	path := filepath.Join(t.TempDir(), "big.svm")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(8, 8))
	var line []byte
	nnz := 0
	for range rows {
		line = append(line[:0], "-1"[rng.IntN(2):]...)
		for j := 1 + rng.IntN(cols/perRow); j <= cols; j += 1 + rng.IntN(2*cols/perRow) {
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(j), 10)
			line = append(line, ":1"...)
			nnz++
		}
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	child := func(data string) (peak int64, out string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInfoPeakMemory$")
		cmd.Env = append(os.Environ(), peakChildEnv+"="+data)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("child on %s: %v", data, err)
		}
		fields := strings.Fields(string(b))
		if len(fields) < 2 || fields[0] != "status=0" {
			t.Fatalf("child on %s: %q", data, b)
		}
		peak, _ = strconv.ParseInt(strings.TrimPrefix(fields[1], "peak="), 10, 64)
		return peak, string(b)
	}
	base, _ := child(filepath.Join("data", "heart_scale"))
	peak, out := child(path)
	if !strings.Contains(out, fmt.Sprintf("rows=%d ", rows)) || !strings.Contains(out, fmt.Sprintf(" nnz=%d ", nnz)) {
		t.Fatalf("child printed %q, want %d rows and %d entries", out, rows, nnz)
	}
	csr := int64(8*(rows+1) + 12*nnz)
	ratio := float64(peak-base) / float64(csr)
	t.Logf("matrix %d bytes; peak resident %d bytes, %d on heart_scale: (peak − base)/matrix = %.3f", csr, peak, base, ratio)
	if ratio > 1.2 {
		t.Errorf("info peaked at %.2f× the matrix's bytes (beyond the start-up footprint), want ≤ 1.2×", ratio)
	}
}

// TestLoadDataRestoresGC checks that reading a data set, which turns the
// garbage collector off meanwhile (pauseGC), gives back the percentage set
// before, after a read that succeeds and after one that fails.
func TestLoadDataRestoresGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(73))
	if _, err := loadData("", sparse.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(73); got != 73 {
		t.Fatalf("after a read, the GC percentage is %d, want 73", got)
	}
	if _, err := loadData(filepath.Join(t.TempDir(), "missing.svm"), sparse.ReadOptions{}); err == nil {
		t.Fatal("a missing file was read")
	}
	if got := debug.SetGCPercent(73); got != 73 {
		t.Fatalf("after a failed read, the GC percentage is %d, want 73", got)
	}
}
