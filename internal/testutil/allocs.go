package testutil

import (
	"testing"
)

// SkipAllocs skips an allocation-count test where counts do not hold: under
// the race detector (sync.Pool drops items on purpose) and under coverage.
func SkipAllocs(tb testing.TB) {
	tb.Helper()
	if RaceEnabled {
		tb.Skip("allocation counts do not hold under -race; the non-race run checks them")
	}
	if testing.CoverMode() != "" {
		tb.Skip("allocation counts do not hold under coverage")
	}
}
