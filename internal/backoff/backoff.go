// Package backoff is the capped exponential back-off every reconnecting
// client of the module uses (neuro and xiaotangyuan reconnect with it,
// neurosan spaces its 503 retries with it): the first wait is Min, each
// later one doubles, up to Max, optionally with random jitter added.
//
// A Backoff is a passive value (no goroutines, no clock); [Wait] is the
// one helper that sleeps.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff computes successive waits. Set Min and Max: Max caps every wait,
// the first one too; the zero value of the rest is ready to use. It is not
// safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	// Jitter is the largest fraction of a wait added at random (0.25 adds
	// up to 25%), still capped at Max. Zero adds none.
	Jitter float64

	cur time.Duration // the last wait returned; 0 after Reset
}

// Next returns the next wait: Min the first time after [Backoff.Reset] (or
// ever), then twice the previous one, never more than Max.
func (b *Backoff) Next() time.Duration {
	hi := b.Max
	switch {
	case b.cur <= 0:
		b.cur = b.Min
	case b.cur >= hi/2:
		b.cur = hi // doubling would pass the cap (or overflow)
	default:
		b.cur *= 2
	}
	d := min(b.cur, hi)
	if b.Jitter > 0 && d > 0 {
		d += time.Duration(rand.Float64() * b.Jitter * float64(d))
		d = min(d, hi)
	}
	return d
}

// Reset makes the next wait Min again, after a success.
func (b *Backoff) Reset() { b.cur = 0 }

// Wait sleeps d, or less when ctx ends first, and then returns
// context.Cause(ctx).
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
