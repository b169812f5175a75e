//go:build !race

package enginetest

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = false
