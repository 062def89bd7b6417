//go:build race

package jsvm

// raceEnabled: the race detector slows the engine down about tenfold.
const raceEnabled = true
