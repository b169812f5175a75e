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

// classWeights parses -class-weights: LABEL:W pairs, or "balanced", the
// weight n/(K·n_k) of scikit-learn for each of the K classes of y.
func classWeights(spec string, y []float64) (map[float64]float64, error) {
	cw := map[float64]float64{}
	if spec == "balanced" {
		count := map[float64]int{}
		for _, v := range y {
			count[v]++
		}
		for c, nk := range count {
			cw[c] = float64(len(y)) / (float64(len(count)) * float64(nk))
		}
		return cw, nil
	}
	for _, pair := range strings.Split(spec, ",") {
		l, ws, ok := strings.Cut(strings.TrimSpace(pair), ":")
		label, err1 := strconv.ParseFloat(l, 64)
		w, err2 := strconv.ParseFloat(ws, 64)
		if !ok || errors.Join(err1, err2) != nil || !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("-class-weights %q: want LABEL:WEIGHT pairs with weights > 0, or balanced", pair)
		}
		cw[label] = w
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
