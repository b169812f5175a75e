//go:build race

package enginetest

// RaceEnabled: the race detector slows the engine tenfold, so the
// longest tests shrink their data under it (the concurrent paths they
// exercise stay the same).
const RaceEnabled = true
