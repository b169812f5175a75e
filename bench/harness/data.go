package harness

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adaspdc/adaspdc/bench/synth"
	"github.com/adaspdc/adaspdc/engine"
	"github.com/adaspdc/adaspdc/sparse"
)

// Data is a loaded data set: the matrix and the targets as read (raw
// labels for classification data).
type Data struct {
	Name string // the file's base name, or the generator spec
	Spec string // what -data said
	X    *sparse.CSR
	Y    []float64
}

// LoadData reads a LIBSVM file, or generates data from a spec of the form
// synth:rcv1:ROWS[:SEED] or synth:url:ROWS[:SEED] (bench/synth's RCV1Like
// and URLLike; the seed defaults to 1).
func LoadData(spec string) (*Data, error) {
	if spec == "" {
		return nil, errors.New("no data: give a LIBSVM file or synth:rcv1:ROWS / synth:url:ROWS")
	}
	if rest, ok := strings.CutPrefix(spec, "synth:"); ok {
		parts := strings.Split(rest, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("data %q: want synth:rcv1:ROWS[:SEED] or synth:url:ROWS[:SEED]", spec)
		}
		rows, err := strconv.Atoi(parts[1])
		if err != nil || rows < 1 {
			return nil, fmt.Errorf("data %q: rows %q must be a positive integer", spec, parts[1])
		}
		seed := uint64(1)
		if len(parts) == 3 {
			if seed, err = strconv.ParseUint(parts[2], 10, 64); err != nil {
				return nil, fmt.Errorf("data %q: seed %q must be a non-negative integer", spec, parts[2])
			}
		}
		var s synth.Spec
		switch parts[0] {
		case "rcv1":
			s = synth.RCV1Like(rows, seed)
		case "url":
			s = synth.URLLike(rows, seed)
		default:
			return nil, fmt.Errorf("data %q: unknown generator %q (want rcv1 or url)", spec, parts[0])
		}
		x, y, err := synth.Generate(s)
		if err != nil {
			return nil, err
		}
		return &Data{Name: spec, Spec: spec, X: x, Y: y}, nil
	}
	ds, err := sparse.ReadFile(spec, sparse.ReadOptions{})
	if err != nil {
		return nil, err
	}
	return &Data{Name: filepath.Base(spec), Spec: spec, X: ds.X, Y: ds.Y}, nil
}

// Problem builds the L2-regularised problem of loss name at strength
// lambda (≤ 0: 1/n) on d, mapping classification labels to ±1.
func (d *Data) Problem(loss string, lambda float64) (engine.Problem, error) {
	l, err := engine.LossByName(loss, 1)
	if err != nil {
		return engine.Problem{}, err
	}
	b := d.Y
	if l.Classification() {
		if b, _, err = sparse.BinaryLabels(d.Y); err != nil {
			return engine.Problem{}, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	if lambda <= 0 {
		lambda = 1 / float64(d.X.Rows)
	}
	return engine.Problem{X: d.X, B: b, Loss: l, Reg: engine.ElasticNet{Lambda: lambda}}, nil
}
