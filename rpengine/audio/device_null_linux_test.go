package audio

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #31: on Linux the Null device is paced by a timerfd, which wakes
// its goroutine without a Go timer, and without allocating; close ends a
// wait in progress. In a testing/synctest bubble it is paced by a ticker,
// which follows the bubble's clock (TestDevice_null runs there).
func TestPacer_timerfd(t *testing.T) { // not parallel: AllocsPerRun
	p, ok := newPacer(time.Millisecond).(*timerfdPacer)
	if !ok {
		t.Fatalf("newPacer outside a bubble is not a timerfd: %T", p)
	}
	testutil.Equal(t, "a period passed", p.wait(), true)
	testutil.Equal(t, "expirations read", p.n != [8]byte{}, true)
	if !testutil.RaceEnabled && testing.CoverMode() == "" {
		testutil.Equal(t, "allocations per wait", testing.AllocsPerRun(10, func() { p.wait() }), 0.0)
	}
	// Expirations pile up while nobody waits; then the next wait is
	// blocked in the poller when close ends it.
	p.wait()
	ended := make(chan bool)
	go func() {
		for p.wait() {
		}
		ended <- true
	}()
	p.close()
	testutil.Equal(t, "a wait after close", <-ended, true)

	synctest.Test(t, func(t *testing.T) {
		p := newPacer(time.Millisecond)
		defer p.close()
		if _, ok := p.(*tickPacer); !ok {
			t.Fatalf("newPacer in a synctest bubble is a %T, want a tickPacer", p)
		}
	})
}
