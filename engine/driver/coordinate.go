package driver

import (
	"fmt"
	"strings"
)

// Coordinate holds the settings of the coordinate and primal-dual methods:
// AdaSPDC's and SPDC's batches, blocks, partition, sampling, lazy updates
// and steps, of which SDCA reads M (its mini-batch), the variance-reduced
// methods Lazy and StepScale, and Wang & Xiao's, Pdprox and asynchronous
// SPDC StepScale. Since several families read them, they are declared
// here, below the families, and not in one of them; spdc.Settings names
// the same type. A solver that reads any of them lists CoordinateFamily in
// SolverInfo.Reads, and refuses in its Accepts the fields it cannot honour
// (a full-batch method refuses M > 1).
//
// Each field's zero value is its default, noted on the field.
type Coordinate struct {
	M         int       // blocks per iteration (SDCA: samples per mini-batch); zero: 1
	BlockSize int       // samples per dual block; zero: 1
	Partition Partition // zero: PartitionShuffle
	Sampling  Sampling  // zero: SamplingUniform
	Lazy      Lazy      // zero: LazyAuto

	// StepScale multiplies the dual steps σᵢ and the primal step τ of
	// Eq. 10 and 12; zero: 1, the paper's steps, for which στRᵢR_max = 1/4.
	// It must lie in (0, 2]: at 2 the steps reach the Chambolle–Pock
	// condition στ‖K‖² ≤ 1, and beyond it no proof covers them. Values
	// above 1 leave the paper's own proof; a run that diverges stops with
	// an error. The other methods that read it scale their own steps by it.
	StepScale float64
	// Steps chooses AdaSPDC's and SPDC's step rule for batches of m > 1
	// blocks: StepsESO (the zero value's default), which shrinks the steps
	// only as much as a batch's rows share features, or StepsPaper, Zhu &
	// Storkey's as printed. The two agree at m = 1.
	Steps Steps
}

// CoordinateFamily is the family name of Coordinate, as SolverInfo.Reads
// lists it.
const CoordinateFamily = "coordinate"

// Family returns CoordinateFamily.
func (Coordinate) Family() string { return CoordinateFamily }

// IsDefault reports whether every field is at its default.
func (c Coordinate) IsDefault() bool { return c.WithDefaults() == Coordinate{}.WithDefaults() }

// WithDefaults returns c with every zero that stands for a default filled
// in: m and the block size 1, the shuffle partition, uniform sampling,
// automatic lazy updates, step scale 1, ESO steps.
func (c Coordinate) WithDefaults() Coordinate {
	if c.M == 0 {
		c.M = 1
	}
	if c.BlockSize == 0 {
		c.BlockSize = 1
	}
	if c.Partition == "" {
		c.Partition = PartitionShuffle
	}
	if c.Sampling == "" {
		c.Sampling = SamplingUniform
	}
	if c.Lazy == "" {
		c.Lazy = LazyAuto
	}
	if c.StepScale == 0 {
		c.StepScale = 1
	}
	if c.Steps == "" {
		c.Steps = StepsESO
	}
	return c
}

// Validate reports the first field that no data could make valid: an
// unknown partition, sampling, lazy mode or step rule, a step scale
// outside (0, 2], a block size or m below 1.
func (c Coordinate) Validate() error {
	c = c.WithDefaults()
	switch c.Partition {
	case PartitionShuffle, PartitionContiguous, PartitionNorm:
	default:
		return fmt.Errorf("engine: unknown partition %q (want shuffle, contiguous or norm)", c.Partition)
	}
	switch c.Lazy {
	case LazyAuto, LazyOn, LazyOff:
	default:
		return fmt.Errorf("engine: unknown lazy mode %q (want auto, on or off)", c.Lazy)
	}
	switch c.Sampling {
	case SamplingUniform, SamplingImportance:
	default:
		return fmt.Errorf("engine: unknown sampling %q (want uniform or importance)", c.Sampling)
	}
	if !(c.StepScale > 0 && c.StepScale <= 2) {
		return fmt.Errorf("engine: step scale %v: must be in (0, 2], where the steps keep the Chambolle–Pock condition στ‖K‖² ≤ 1", c.StepScale)
	}
	switch c.Steps {
	case StepsESO, StepsPaper:
	default:
		return fmt.Errorf("engine: unknown step rule %q (want eso or paper)", c.Steps)
	}
	if c.BlockSize < 1 {
		return fmt.Errorf("engine: block size %d: must be at least 1", c.BlockSize)
	}
	if c.M < 1 {
		return fmt.Errorf("engine: m = %d blocks per iteration: must be at least 1", c.M)
	}
	return nil
}

// describe names the settings for a message: for the coordinate settings,
// the fields away from their defaults, as CoordinateSettings (their name
// in package engine) fields.
func describe(st Settings) string {
	c, ok := st.(Coordinate)
	if !ok {
		return fmt.Sprintf("%T", st)
	}
	d, def := c.WithDefaults(), Coordinate{}.WithDefaults()
	var set []string
	add := func(differs bool, field string, v any) {
		if differs {
			set = append(set, fmt.Sprintf("CoordinateSettings.%s %v", field, v))
		}
	}
	add(d.M != def.M, "M", d.M)
	add(d.BlockSize != def.BlockSize, "BlockSize", d.BlockSize)
	add(d.Partition != def.Partition, "Partition", d.Partition)
	add(d.Sampling != def.Sampling, "Sampling", d.Sampling)
	add(d.Lazy != def.Lazy, "Lazy", d.Lazy)
	add(d.StepScale != def.StepScale, "StepScale", d.StepScale)
	add(d.Steps != def.Steps, "Steps", d.Steps)
	return strings.Join(set, ", ")
}

// ValidateFor refuses a block larger than the n samples.
func (c Coordinate) ValidateFor(n int) error {
	if c.BlockSize > n {
		return fmt.Errorf("engine: block size %d is larger than the %d samples", c.BlockSize, n)
	}
	return nil
}
