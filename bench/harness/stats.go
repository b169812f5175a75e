package harness

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// spread is the median and range of a set of measurements.
type spread struct {
	Median, Min, Max float64
	N, Of            int // measurements that exist (a tolerance reached), out of how many runs
}

// summarize returns the median and range of the finite values of v; Of is
// len(v), so that "reached in 2 of 3 runs" can be told apart.
func summarize(v []float64) spread {
	var ok []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			ok = append(ok, x)
		}
	}
	s := spread{N: len(ok), Of: len(v), Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(ok) == 0 {
		return s
	}
	slices.Sort(ok)
	s.Min, s.Max = ok[0], ok[len(ok)-1]
	if len(ok)%2 == 1 {
		s.Median = ok[len(ok)/2]
	} else {
		s.Median = (ok[len(ok)/2-1] + ok[len(ok)/2]) / 2
	}
	return s
}

// format writes the median with its range in brackets, "–" when nothing
// was measured, and how many runs reached it when not all did.
func (s spread) format(f string) string {
	if s.N == 0 {
		return "–"
	}
	out := fmt.Sprintf(f, s.Median)
	if s.N > 1 && s.Min != s.Max {
		out += " [" + fmt.Sprintf(f, s.Min) + "–" + fmt.Sprintf(f, s.Max) + "]"
	}
	if s.N < s.Of {
		out += fmt.Sprintf(" (%d/%d)", s.N, s.Of)
	}
	return out
}

// progress prints runs done and the estimated time left on one line of
// stderr: rewritten in place on a terminal, one line per update otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	done  int
	start time.Time
	label string
}

func newProgress(w io.Writer, tty bool, total int, label string) *progress {
	return &progress{w: w, tty: tty, total: total, start: time.Now(), label: label}
}

// step records one finished run, described by what.
func (p *progress) step(what string) {
	if p == nil || p.w == nil {
		return
	}
	p.done++
	elapsed := time.Since(p.start)
	left := time.Duration(float64(elapsed) / float64(p.done) * float64(p.total-p.done))
	const width = 20
	bar := strings.Repeat("#", p.done*width/max(1, p.total)) + strings.Repeat(".", width-p.done*width/max(1, p.total))
	line := fmt.Sprintf("%s [%s] %d/%d runs, %s elapsed, ~%s left: %s", p.label, bar, p.done, p.total,
		elapsed.Round(time.Second), left.Round(time.Second), what)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		if p.done == p.total {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, line)
}
