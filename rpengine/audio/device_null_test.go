package audio

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// Issue #32: a Null device plays in real time without a sound card or
// cgo: after t of the (synthetic) clock, a speaker has been heard for
// exactly the periods due by then, the reply ends Done with no underrun,
// nothing is rendered while nothing is due, and Close ends the pacing
// goroutine (synctest fails on one left blocked).
func TestDevice_null(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		d, err := OpenDevice(&DeviceOptions{Null: true, Channels: 1, Period: 20 * time.Millisecond})
		testutil.Success(t, err)
		testutil.Equal(t, "rate", d.SampleRate(), 48000)
		p, err := d.NewSpeaker(nil)
		testutil.Success(t, err)
		testutil.Success(t, p.Enqueue("r", seg(0, 48000, make([]int16, 48000)))) // 1 s
		testutil.Success(t, p.End("r"))
		time.Sleep(510 * time.Millisecond)
		pos, _ := p.Heard("r")
		testutil.Equal(t, "heard after 510 ms of 20 ms periods", pos.Heard, 500*time.Millisecond)
		time.Sleep(600 * time.Millisecond)
		pos, _ = p.Heard("r")
		testutil.Equal(t, "done", pos.Done, true)
		testutil.Equal(t, "heard", pos.Heard, time.Second)
		testutil.Equal(t, "underruns", p.Stats().Underruns, int64(0))
		testutil.Success(t, d.Err())
		testutil.Success(t, d.Close())
		testutil.Success(t, d.Close())
	})
}

// After a stall (here the first period's callback takes 500 ms) the Null
// device goes on from the present: the 50 periods missed are not rendered
// in a burst. A stop and a start begin the clock again.
func TestNullDevice_stall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		dev, _ := openNull(deviceConfig{channels: 1, data: func([]float32) {
			if calls++; calls == 1 {
				time.Sleep(500 * time.Millisecond)
			}
		}})
		d := dev.(*nullDevice)
		testutil.Success(t, d.start())
		time.Sleep(555 * time.Millisecond)
		synctest.Wait()
		if calls > 8 {
			t.Fatalf("%d periods rendered by 555 ms after a 500 ms stall, want the missed ones skipped", calls)
		}
		testutil.Success(t, d.stop())
		n := calls
		testutil.Success(t, d.start())
		time.Sleep(95 * time.Millisecond)
		synctest.Wait()
		testutil.Equal(t, "periods in 95 ms after a restart", calls-n, 9)
		testutil.Success(t, d.close())
	})
}
