package engine

import (
	"github.com/adaspdc/adaspdc/engine/driver"
)

// Certify is driver.Certify: the certificate of any weights w, at the
// dual point the optimality conditions pair with them.
func Certify(prob Problem, w []float64) (TracePoint, error) { return driver.Certify(prob, w) }
