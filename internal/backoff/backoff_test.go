package backoff

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func TestBackoff_Next(t *testing.T) {
	t.Parallel()
	s := time.Second
	for _, tc := range []struct {
		name     string
		min, max time.Duration
		want     []time.Duration
	}{
		{"doubles up to max", s, 4 * s, []time.Duration{s, 2 * s, 4 * s, 4 * s}},
		{"max not a power of two", 3 * s, 30 * s, []time.Duration{3 * s, 6 * s, 12 * s, 24 * s, 30 * s, 30 * s}},
		{"max caps min too", 2 * s, s, []time.Duration{s, s}},
		{"huge max does not overflow", time.Duration(math.MaxInt64 / 3), math.MaxInt64,
			[]time.Duration{time.Duration(math.MaxInt64 / 3), time.Duration(math.MaxInt64 / 3 * 2), math.MaxInt64, math.MaxInt64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := Backoff{Min: tc.min, Max: tc.max}
			var got []time.Duration
			for range tc.want {
				got = append(got, b.Next())
			}
			testutil.Equal(t, "waits", got, tc.want)
			b.Reset()
			testutil.Equal(t, "after reset", b.Next(), tc.want[0])
		})
	}
}

func TestBackoff_Jitter(t *testing.T) {
	t.Parallel()
	b := Backoff{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond, Jitter: 0.25}
	for i := range 1000 {
		base := []time.Duration{100, 200, 300}[min(i%4, 2)] * time.Millisecond
		if i%4 == 0 {
			b.Reset()
		}
		d := b.Next()
		if d < base || d > min(base*5/4, 300*time.Millisecond) {
			t.Fatalf("wait %d: %v outside [%v, %v]", i, d, base, min(base*5/4, 300*time.Millisecond))
		}
	}
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		testutil.Success(t, Wait(context.Background(), time.Second))
		testutil.Equal(t, "slept", time.Since(start), time.Second)
		cause := errors.New("closed")
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(time.Second, func() { cancel(cause) })
		testutil.ErrorIs(t, Wait(ctx, time.Hour), cause)
		testutil.Equal(t, "cut short", time.Since(start), 2*time.Second)
	})
}
