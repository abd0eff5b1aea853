package audio

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// soundServer stands in for a sound server that can be killed: its
// devices are null devices (real-time, in the synctest bubble's clock)
// that stop calling back while it is down, and opening one fails then,
// as miniaudio's PulseAudio backend does (docs/audio.md, "tested against
// a real sound server").
type soundServer struct {
	down  atomic.Bool
	opens atomic.Int32
}

func (s *soundServer) open(cfg deviceConfig) (device, error) {
	if s.down.Load() {
		return nil, fmt.Errorf("%w: connection refused", ErrNoDevice)
	}
	s.opens.Add(1)
	data := cfg.data
	cfg.data = func(b []float32) {
		if !s.down.Load() {
			data(b)
		}
	}
	return openNull(cfg)
}

// Issue #35: a sound server killed in the middle of a reply left the
// Device silent for the rest of the session, with no word why. Now Err
// says the device was lost, the speakers go on in real time (nothing a
// game waits on stalls), Enqueue still takes segments, and once the
// server is back the Device has opened the card again and Err is nil.
func TestDevice_lostAndBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var srv soundServer
		d, err := openDevice(&DeviceOptions{SampleRate: 48000, Channels: 1}, srv.open)
		testutil.Success(t, err)
		d.watch(srv.open)
		p, err := d.NewSpeaker(nil)
		testutil.Success(t, err)
		testutil.Success(t, p.Enqueue("r", seg(0, 48000, make([]int16, 5*48000))))
		heard := func() time.Duration { pos, _ := p.Heard("r"); return pos.Heard }
		time.Sleep(500 * time.Millisecond)
		testutil.Success(t, d.Err())
		srv.down.Store(true) // killed
		time.Sleep(lostAfter + 200*time.Millisecond)
		testutil.ErrorIs(t, d.Err(), ErrDeviceLost)
		t.Log(d.Err())
		h := heard()
		time.Sleep(500 * time.Millisecond)
		if got := heard() - h; got < 400*time.Millisecond {
			t.Fatalf("while lost the speaker advanced %v in 500 ms, want it paced in real time", got)
		}
		testutil.Success(t, p.Enqueue("r", seg(1, 48000, make([]int16, 4800))))
		time.Sleep(2 * retryEvery) // tries while down fail
		testutil.Equal(t, "opens while down", srv.opens.Load(), int32(1))
		srv.down.Store(false) // back
		time.Sleep(retryEvery + 200*time.Millisecond)
		testutil.Success(t, d.Err())
		testutil.Equal(t, "opens", srv.opens.Load(), int32(2))
		h = heard()
		time.Sleep(300 * time.Millisecond)
		if got := heard() - h; got < 250*time.Millisecond {
			t.Fatalf("after the server came back the speaker advanced %v in 300 ms", got)
		}
		testutil.Success(t, d.Close())
	})
}

// Issue #35: the microphone lost during a capture: Stop does not hang and
// returns what was captured with an error wrapping ErrDeviceLost, Err says
// so too, a Start while the server is down fails saying why, and the
// first Start once it is back opens the microphone again.
func TestRecorder_lostAndBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var srv soundServer
		r, err := openRecorder(nil, srv.open)
		testutil.Success(t, err)
		testutil.Success(t, r.Start())
		time.Sleep(500 * time.Millisecond)
		srv.down.Store(true)
		time.Sleep(lostAfter + 500*time.Millisecond)
		c, err := r.Stop()
		testutil.ErrorIs(t, err, ErrDeviceLost)
		t.Log(err)
		if d := c.Duration(); d < 400*time.Millisecond || d > 600*time.Millisecond {
			t.Fatalf("captured %v, want the 500 ms before the loss", d)
		}
		testutil.ErrorIs(t, r.Err(), ErrDeviceLost)
		err = r.Start()
		testutil.ErrorIs(t, err, ErrDeviceLost)
		testutil.ErrorIs(t, err, ErrNoDevice)
		srv.down.Store(false)
		testutil.Success(t, r.Start())
		testutil.Success(t, r.Err())
		time.Sleep(300 * time.Millisecond)
		c, err = r.Stop()
		testutil.ErrorIs(t, err, ErrSilentInput) // the null device's zeros, not a loss
		if d := c.Duration(); d < 250*time.Millisecond {
			t.Fatalf("captured %v in 300 ms after the server came back", d)
		}
		testutil.Equal(t, "opens", srv.opens.Load(), int32(2))
		testutil.Success(t, r.Close())
	})
}
