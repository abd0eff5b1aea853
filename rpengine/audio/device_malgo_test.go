//go:build cgo

package audio

import (
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// These tests run the real malgo path on miniaudio's null backend, whose
// callbacks come at real-time pace: each takes a few hundred ms.

// TestDevice_nullBackend plays a reply of two 44.1 kHz segments on the
// null device at 48 kHz through the real malgo path: it ends (Done), all
// of it with the resampler's tail is heard, and no underrun is counted.
// Issue #17.
func TestDevice_nullBackend(t *testing.T) {
	t.Parallel()
	d, err := openDevice(&DeviceOptions{SampleRate: 48000}, nullBackendOpener)
	testutil.Success(t, err)
	defer func() { testutil.Success(t, d.Close()) }()
	testutil.Equal(t, "rate", d.SampleRate(), 48000)
	testutil.Equal(t, "channels", d.Channels(), 2)
	p, err := d.NewSpeaker(nil)
	testutil.Success(t, err)
	// 200 ms of 44.1 kHz speech-rate audio, resampled to the device rate.
	x := AppendInt16(nil, sine(44100, 440, 0.3, 8820))
	testutil.Success(t, p.Enqueue("r", seg(0, 44100, x[:5000])))
	testutil.Success(t, p.Enqueue("r", seg(1, 44100, x[5000:])))
	testutil.Success(t, p.End("r"))
	want, _ := resampled(t, x, 44100, 48000)
	deadline := time.Now().Add(3 * time.Second)
	for {
		pos, _ := p.Heard("r")
		if pos.Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("playback did not finish: %+v, stats %+v", pos, p.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	testutil.Success(t, d.Err())
	testutil.Equal(t, "underruns", p.Stats().Underruns, int64(0))
	testutil.Equal(t, "underrun frames", p.Stats().UnderrunFrames, int64(0))
	pos, _ := p.Heard("r")
	testutil.Equal(t, "heard", pos.Heard, time.Duration(len(want))*time.Second/48000)
}

func TestRecorder_nullBackend(t *testing.T) {
	t.Parallel()
	r, err := openRecorder(nil, nullBackendOpener)
	testutil.Success(t, err)
	defer func() { testutil.Success(t, r.Close()) }()
	testutil.Success(t, r.Start())
	time.Sleep(250 * time.Millisecond)
	c, err := r.Stop()
	// The null capture device delivers zeros: exactly what a missing
	// microphone permission looks like.
	testutil.ErrorIs(t, err, ErrSilentInput)
	if c.Duration() < 100*time.Millisecond {
		t.Errorf("captured only %v in 250 ms", c.Duration())
	}
	testutil.Success(t, r.Err())
}

// TestOpen_backendUnavailable checks that a backend that cannot open
// (malgo.BackendNull is really miniaudio's "custom" backend, which has no
// implementation) yields an error wrapping ErrNoDevice, the game's cue to
// fall back, for both directions.
func TestOpen_backendUnavailable(t *testing.T) {
	t.Parallel()
	open := func(cfg deviceConfig) (device, error) { return openMalgo(cfg, []malgo.Backend{malgo.BackendNull}) }
	_, err := openDevice(nil, open)
	testutil.ErrorIs(t, err, ErrNoDevice)
	_, err = openRecorder(nil, open)
	testutil.ErrorIs(t, err, ErrNoDevice)
}

// TestNullBackend_isNull guards maBackendNull against an upstream fix of
// malgo's off-by-one enum: the backend it selects must be miniaudio's null
// backend, whose only playback device has this name.
func TestNullBackend_isNull(t *testing.T) {
	t.Parallel()
	ctx, err := malgo.InitContext([]malgo.Backend{maBackendNull}, malgo.ContextConfig{}, nil)
	testutil.Success(t, err)
	defer func() {
		testutil.Success(t, ctx.Uninit())
		ctx.Free()
	}()
	devs, err := ctx.Devices(malgo.Playback)
	testutil.Success(t, err)
	if len(devs) == 0 {
		t.Fatal("null backend lists no playback device")
	}
	testutil.Equal(t, "device name", devs[0].Name(), "NULL Playback Device")
}
