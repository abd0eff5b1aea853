package audio

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func newTestRecorder(t *testing.T, rate, ch int, opts *RecorderOptions) (*Recorder, *fakeDevice) {
	t.Helper()
	var f *fakeDevice
	r, err := openRecorder(opts, fakeOpener(rate, ch, &f))
	testutil.Success(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r, f
}

// stereoTone returns frames of a tone in both channels of an interleaved
// stereo stream.
func stereoTone(rate, f, amp float64, frames int) []float32 {
	m := sine(rate, f, amp, frames)
	st := make([]float32, 0, 2*frames)
	for _, v := range m {
		st = append(st, v, v)
	}
	return st
}

func pushChunks(f *fakeDevice, x []float32, chunk int) {
	for len(x) > 0 {
		n := min(chunk*f.ch, len(x))
		f.push(x[:n])
		x = x[n:]
	}
}

func TestRecorder_capture(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 48000, 2, nil)
	testutil.ErrorIs(t, func() error { _, err := r.Stop(); return err }(), errNotRecording)
	testutil.Success(t, r.Start())
	testutil.ErrorIs(t, r.Start(), errRecording)
	pushChunks(f, stereoTone(48000, 1000, 0.5, 24000), 480) // 0.5 s of -6 dBFS stereo
	lvl := r.Level()
	if lvl.Seconds < 0.45 || lvl.Seconds > 0.5 || math.Abs(float64(lvl.Peak)-0.5) > 0.01 || math.Abs(float64(lvl.RMS)-0.5/math.Sqrt2) > 0.01 {
		t.Errorf("level %+v, want about {0.5 s, peak 0.5, rms 0.354}", lvl)
	}
	c, err := r.Stop()
	testutil.Success(t, err)
	testutil.Equal(t, "recording", r.Recording(), false)
	testutil.Equal(t, "limited", c.Limited, false)
	testutil.Equal(t, "silent", c.Silent, false)
	// 0.5 s at 16 kHz plus the flushed filter tail: Stop must flush at
	// least the resampler's delay, or the last 1.8 ms of speech is lost.
	tail := int(r.rs.Delay() * CaptureRate / time.Second)
	if n := len(c.Samples); n < 8000+tail || n > 8000+200 {
		t.Errorf("%d samples, want 8000 + a tail of at least %d", n, tail)
	}
	a, e := fitSine(AppendFloat32(nil, c.Samples[100:7900]), 1000, CaptureRate)
	thdn := db(a / math.Sqrt2 / e)
	t.Logf("48 kHz stereo capture -> 16 kHz mono 16-bit: gain %.4f dB, THD+N %.1f dB", db(a/0.5), thdn)
	// The recording is 16-bit, as RPEngine takes it, so the floor is
	// quantisation (about 92 dB for a -6 dBFS tone; the resampler alone
	// reaches 128 dB, see resample_quality_test.go).
	if math.Abs(db(a/0.5)) > 0.01 || thdn < 90 {
		t.Errorf("gain %.4f dB, THD+N %.1f dB", db(a/0.5), thdn)
	}
	if d := c.Duration(); d < 500*time.Millisecond || d > 520*time.Millisecond {
		t.Errorf("duration %v", d)
	}
	// A second capture starts from scratch.
	testutil.Success(t, r.Start())
	pushChunks(f, stereoTone(48000, 1000, 0.5, 4800), 480)
	c2, err := r.Stop()
	testutil.Success(t, err)
	if len(c2.Samples) > 1600+200 {
		t.Errorf("second capture has %d samples: the first leaked in", len(c2.Samples))
	}
}

// TestRecorder_level checks the meter window by window: each reading covers
// exactly the last 50 ms (the default) and nothing before it.
func TestRecorder_level(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, CaptureRate, 1, nil) // native 16 kHz: no filter
	dc := func(v float32, n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = v
		}
		return x
	}
	testutil.Success(t, r.Start())
	testutil.Equal(t, "before any window", r.Level(), Level{})
	pushChunks(f, dc(-0.5, 799), 160)
	testutil.Equal(t, "window incomplete", r.Level(), Level{})
	pushChunks(f, dc(-0.5, 1), 1)
	testutil.Equal(t, "first window", r.Level(), Level{Seconds: 0.05, Peak: 0.5, RMS: 0.5})
	pushChunks(f, dc(0.25, 400), 160)
	testutil.Equal(t, "second window incomplete", r.Level(), Level{Seconds: 0.05, Peak: 0.5, RMS: 0.5})
	pushChunks(f, dc(0, 400), 160)
	// Half at 0.25, half silent: peak 0.25, RMS 0.25/sqrt(2).
	lvl := r.Level()
	testutil.Equal(t, "second window end", lvl.Seconds, 0.1)
	testutil.Equal(t, "second window peak", lvl.Peak, float32(0.25))
	if math.Abs(float64(lvl.RMS)-0.25/math.Sqrt2) > 1e-6 {
		t.Errorf("second window RMS %v, want %v", lvl.RMS, 0.25/math.Sqrt2)
	}
	_, err := r.Stop()
	testutil.Success(t, err)
}

func TestRecorder_limit(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 44100, 1, &RecorderOptions{MaxDuration: 100 * time.Millisecond})
	testutil.Success(t, r.Start())
	pushChunks(f, sine(44100, 440, 0.3, 44100/5), 441)
	select {
	case <-r.Limit():
	default:
		t.Fatal("no limit signal after 200 ms with a 100 ms cap")
	}
	c, err := r.Stop()
	testutil.Success(t, err)
	testutil.Equal(t, "limited", c.Limited, true)
	testutil.Equal(t, "samples", len(c.Samples), 1600)
}

func TestRecorder_silent(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 48000, 2, nil)
	testutil.Success(t, r.Start())
	pushChunks(f, make([]float32, 2*4800), 480)
	c, err := r.Stop()
	testutil.ErrorIs(t, err, ErrSilentInput)
	testutil.Equal(t, "silent", c.Silent, true)
	testutil.Equal(t, "level", r.Level().Peak, float32(0))
}

func TestRecorder_nativeRate(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 16000, 1, nil)
	testutil.Success(t, r.Start())
	x := sine(16000, 300, 0.25, 1600)
	pushChunks(f, x, 160)
	c, err := r.Stop()
	testutil.Success(t, err)
	testutil.Equal(t, "passthrough", c.Samples, AppendInt16(nil, x))
}

func TestRecorder_close(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 48000, 1, nil)
	testutil.Success(t, r.Start())
	testutil.Success(t, r.Close())
	testutil.Success(t, r.Close())
	testutil.Equal(t, "device stopped", f.running(), false)
	testutil.ErrorIs(t, r.Start(), ErrClosed)
}

func TestRecorder_stickyError(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 48000, 1, nil)
	testutil.Success(t, r.Err())
	boom := errors.New("microphone unplugged")
	f.cfg.failed(boom)
	f.cfg.failed(errors.New("later"))
	testutil.ErrorIs(t, r.Err(), boom)
	testutil.ErrorIs(t, r.Start(), boom)
	testutil.Equal(t, "recording", r.Recording(), false)
}

func TestRecorder_callbackAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	r, f := newTestRecorder(t, 44100, 2, nil)
	testutil.Success(t, r.Start())
	x := stereoTone(44100, 1000, 0.5, 441)
	allocs := testing.AllocsPerRun(100, func() { f.push(x) })
	testutil.Equal(t, "capture callback allocs", allocs, 0.0)
	_, err := r.Stop()
	testutil.Success(t, err)
}

// Issue #17: a Recorder the game feeds (its engine captures the
// microphone, or a test has none) converts what it is pushed as a
// microphone's input, records only between Start and Stop, and Push
// neither allocates nor works on a device's Recorder.
func TestNewRecorder_Push(t *testing.T) {
	t.Parallel()
	r, err := NewRecorder(&RecorderOptions{SampleRate: 48000, Channels: 2})
	testutil.Success(t, err)
	defer r.Close()
	tone := stereoTone(48000, 440, 0.5, 480) // 10 ms
	testutil.Success(t, r.Push(tone))        // not recording: dropped
	testutil.Success(t, r.Start())
	for range 100 { // 1 s
		testutil.Success(t, r.Push(tone))
	}
	if l := r.Level(); l.Peak < 0.45 || l.Peak > 0.55 {
		t.Errorf("level %+v, want a peak near 0.5", l)
	}
	rec, err := r.Stop()
	testutil.Success(t, err)
	if n := len(rec.Samples); n < CaptureRate || n > CaptureRate+CaptureRate/100 { // and the resampler's tail
		t.Errorf("%d samples for one second at 16 kHz", n)
	}
	testutil.Success(t, r.Push(tone)) // stopped: dropped
	testutil.Success(t, r.Start())
	rec, err = r.Stop()
	testutil.ErrorIs(t, err, ErrSilentInput)
	testutil.Equal(t, "nothing kept from before Start", len(rec.Samples) < 100, true)

	dr, _ := newTestRecorder(t, 48000, 2, nil)
	testutil.Error(t, dr.Push(tone))
	_, err = NewRecorder(&RecorderOptions{SampleRate: 1})
	var oe *OptionsError
	testutil.ErrorAs(t, err, &oe)
}

// Issue #17: Push, the game's capture callback, allocates nothing.
func TestRecorder_Push_allocs(t *testing.T) {
	testutil.SkipAllocs(t)
	r, err := NewRecorder(&RecorderOptions{SampleRate: 48000, Channels: 2})
	testutil.Success(t, err)
	defer r.Close()
	tone := stereoTone(48000, 440, 0.5, 480)
	testutil.Success(t, r.Start())
	allocs := testing.AllocsPerRun(50, func() { _ = r.Push(tone) })
	testutil.Equal(t, "allocs per push", allocs, 0.0)
	_, err = r.Stop()
	testutil.Success(t, err)
}

// Issue #33: the recording as floats, before the 16-bit conversion, for
// RPEngine's pcm_f32le: Samples is its conversion, and it is not
// quantised (the resampler's floor, not 16 bits').
func TestRecorder_float32(t *testing.T) {
	t.Parallel()
	r, f := newTestRecorder(t, 48000, 2, nil)
	testutil.Success(t, r.Start())
	pushChunks(f, stereoTone(48000, 1000, 0.5, 24000), 480)
	c, err := r.Stop()
	testutil.Success(t, err)
	fl := c.Float32()
	testutil.Equal(t, "Samples is its 16-bit conversion", AppendInt16(nil, fl), c.Samples)
	a, e := fitSine(fl[100:7900], 1000, CaptureRate)
	if thdn := db(a / math.Sqrt2 / e); thdn < 110 {
		t.Errorf("THD+N %.1f dB: quantised", thdn)
	}
	made := &Recording{Samples: []int16{-32768, 16384}}
	testutil.Equal(t, "a Recording made elsewhere", made.Float32(), []float32{-1, 0.5})
}
