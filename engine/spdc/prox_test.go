package spdc

import (
	"context"
	"github.com/adaspdc/adaspdc/engine/driver"
	"testing"

	"github.com/adaspdc/adaspdc/engine/internal/enginetest"
	"github.com/adaspdc/adaspdc/engine/objective"
)

// TestLogisticProxExps counts the exponentials of the logistic dual prox
// over every call of converging runs, one sample and 16 blocks per
// iteration: warm-started from the logit the sample's previous prox ended
// at, it should mostly take one (none once the dual has settled), and its
// mean must stay at or below 1.5.
func TestLogisticProxExps(t *testing.T) {
	type data struct {
		name string
		load func(t *testing.T) (objective.Problem, bool)
	}
	sets := []data{
		{"synthetic", func(t *testing.T) (objective.Problem, bool) {
			x, y := enginetest.SparseData(3000, 500, 12, 5)
			for k := range y {
				if y[k] >= 0 {
					y[k] = 1
				} else {
					y[k] = -1
				}
			}
			return objective.Problem{X: x, B: y, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-4}}, true
		}},
		{"a9a", func(t *testing.T) (objective.Problem, bool) {
			if testing.Short() {
				return objective.Problem{}, false
			}
			x, y := enginetest.SharedData(t, "a9a")
			return objective.Problem{X: x, B: y, Loss: objective.Logistic{}, Reg: objective.ElasticNet{Lambda: 1e-5}}, true
		}},
	}
	for _, ds := range sets {
		for _, m := range []int{1, 16} {
			prob, ok := ds.load(t)
			if !ok {
				continue
			}
			opt := enginetest.AdaSPDCOptions()
			opt.Threads = 1
			opt = opt.WithCoordinate(func(c *driver.Coordinate) { c.M = m })
			s, err := newSolver(context.Background(), prob, opt)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				if _, err := s.RunEpochs(context.Background(), 1); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Certify(); err != nil {
					t.Fatal(err)
				}
			}
			s.pool.Close()
			mean := float64(s.proxExps()) / float64(s.sampled)
			t.Logf("%s m=%d: %.3f exponentials per prox over %d calls", ds.name, m, mean, s.sampled)
			if mean > 1.5 {
				t.Errorf("%s m=%d: the logistic prox took %.3f exponentials per call, want ≤ 1.5", ds.name, m, mean)
			}
		}
	}
}
