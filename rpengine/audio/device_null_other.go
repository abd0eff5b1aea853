//go:build !linux

package audio

import "time"

func newPacer(period time.Duration) pacer { return newTickPacer(period) }
