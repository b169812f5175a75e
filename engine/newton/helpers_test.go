package newton

import "github.com/adaspdc/adaspdc/engine/internal/enginetest"

func init() { enginetest.ForceWorkers() }
