//go:build race

package engine

// raceEnabled: the race detector slows the engine tenfold, so the
// longest tests shrink their data under it (the concurrent paths they
// exercise stay the same).
const raceEnabled = true
