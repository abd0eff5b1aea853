//go:build !race

package testutil

// RaceEnabled reports whether the race detector is on. Allocation-count
// tests skip under it: sync.Pool drops items on purpose there.
const RaceEnabled = false
