package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/engine"
)

// rowWeights returns the weight of each row: the -sample-weights file's,
// times the -class-weights of the row's label. Weights must be finite and
// > 0; a file with the wrong number of weights, or a bad one, is refused
// naming the line.
func rowWeights(path, classes string, y []float64, loss engine.Loss) ([]float64, error) {
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 1
	}
	if path != "" {
		if err := readWeights(path, w); err != nil {
			return nil, err
		}
	}
	if classes != "" {
		if !loss.Classification() {
			return nil, fmt.Errorf("-class-weights: the %s loss is a regression", loss.Name())
		}
		cw, err := classWeights(classes, y)
		if err != nil {
			return nil, err
		}
		for i, v := range y {
			if c, ok := cw[v]; ok {
				w[i] *= c
			}
		}
	}
	return w, nil
}

// readWeights reads one weight per line into w.
func readWeights(path string, w []float64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if line > len(w) {
			if t == "" {
				continue
			}
			return fmt.Errorf("%s:%d: more weights than the data's %d rows", path, line, len(w))
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s:%d: weight %q: want a finite number > 0 (leave a row out rather than weight it 0)", path, line, t)
		}
		w[line-1] = v
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if line < len(w) {
		return fmt.Errorf("%s: %d weights for the data's %d rows", path, line, len(w))
	}
	return nil
}

// parseClassWeights checks the syntax of -class-weights before any data is
// read, so that a mistake in the flag is one of the command line (status
// 2), named with its bad part: "balanced", or LABEL:WEIGHT pairs, each
// label a finite number given once and each weight a finite number > 0.
// It returns the pairs (nil for balanced).
func parseClassWeights(spec string) (map[float64]float64, error) {
	if spec == "balanced" {
		return nil, nil
	}
	cw := map[float64]float64{}
	for _, pair := range strings.Split(spec, ",") {
		pair = strings.TrimSpace(pair)
		l, ws, ok := strings.Cut(pair, ":")
		l, ws = strings.TrimSpace(l), strings.TrimSpace(ws)
		label, lerr := strconv.ParseFloat(l, 64)
		w, werr := strconv.ParseFloat(ws, 64)
		switch {
		case pair == "":
			return nil, fmt.Errorf("-class-weights %s: an empty pair (a stray comma?)", spec)
		case !ok:
			return nil, fmt.Errorf("-class-weights %s: %q is not LABEL:WEIGHT (want pairs such as 1:10,-1:1, or balanced)", spec, pair)
		case l == "":
			return nil, fmt.Errorf("-class-weights %s: %q has no label before the colon", spec, pair)
		case lerr != nil || math.IsNaN(label) || math.IsInf(label, 0):
			return nil, fmt.Errorf("-class-weights %s: label %q of %q is not a finite number", spec, l, pair)
		case ws == "":
			return nil, fmt.Errorf("-class-weights %s: %q has no weight after the colon", spec, pair)
		case werr != nil && !errors.Is(werr, strconv.ErrRange) || math.IsNaN(w):
			return nil, fmt.Errorf("-class-weights %s: weight %q of %q is not a number", spec, ws, pair)
		case !(w > 0) || math.IsInf(w, 0):
			return nil, fmt.Errorf("-class-weights %s: weight %q of %q must be a finite number > 0 (leave a class out to weigh it 1)", spec, ws, pair)
		}
		if _, dup := cw[label]; dup {
			return nil, fmt.Errorf("-class-weights %s: label %q is given twice", spec, l)
		}
		cw[label] = w
	}
	return cw, nil
}

// classWeights returns the weight of each class of -class-weights: the
// LABEL:W pairs, each label one that a row has, or for "balanced" the
// weight n/(K·n_k) of scikit-learn for each of the K classes of y.
func classWeights(spec string, y []float64) (map[float64]float64, error) {
	cw, err := parseClassWeights(spec)
	if err != nil {
		return nil, err
	}
	if cw == nil {
		count := map[float64]int{}
		for _, v := range y {
			count[v]++
		}
		cw = map[float64]float64{}
		for c, nk := range count {
			cw[c] = float64(len(y)) / (float64(len(count)) * float64(nk))
		}
		return cw, nil
	}
	var missing []string
	for c := range cw {
		found := false
		for _, v := range y {
			if v == c {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, strconv.FormatFloat(c, 'g', -1, 64))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("-class-weights: no row has the label %s", strings.Join(missing, ", "))
	}
	return cw, nil
}
