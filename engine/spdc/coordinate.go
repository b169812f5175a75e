package spdc

import "github.com/adaspdc/adaspdc/engine/driver"

// Settings are AdaSPDC's and SPDC's settings: the batch of M blocks of
// BlockSize samples, the partition, the sampling, the lazy updates and the
// step rule and scale. Other families read some of them (SDCA its
// mini-batch, the variance-reduced methods the step scale and the lazy
// updates), so the type is driver.Coordinate, declared below the families.
type Settings = driver.Coordinate
