//go:build !race

package storage

import "testing"

// skipCompactionFaultsUnderRace does nothing without the race detector (see the race
// build's version).
func skipCompactionFaultsUnderRace(t *testing.T) { t.Helper() }
