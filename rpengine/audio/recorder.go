package audio

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// CaptureRate is the rate RPEngine hears the player at: 16 kHz mono.
const CaptureRate = 16000

// Level is one level-meter reading over the last window (50 ms by
// default): the quantities RPEngine reports as voice.capture.level.
type Level struct {
	// Seconds is the capture time at the end of the window.
	Seconds float64
	// Peak is the largest absolute sample, RMS the root mean square, both
	// in full-scale units (0..1).
	Peak, RMS float32
}

// Recording is a finished capture: what RPEngine hears, 16 kHz mono
// 16-bit PCM, ready to be sent as a reply request's speech without
// conversion.
type Recording struct {
	// Samples holds the speech at [CaptureRate] Hz, mono, as signed
	// 16-bit values (RPEngine's "pcm_s16le" before byte encoding).
	Samples []int16
	// Limited is true when the recording hit MaxDuration and was cut.
	Limited bool
	// Silent is true when every input sample was exactly zero.
	Silent bool

	float []float32 // the samples before 16-bit conversion (Float32)
}

// Float32 returns the recording as the Recorder made it before the 16-bit
// conversion of Samples: float samples at [CaptureRate] Hz, full scale 1,
// not clamped (RPEngine's "pcm_f32le", rpengine.ReplyRequest.SpeechFloat).
// For a Recording made elsewhere it converts Samples.
func (r *Recording) Float32() []float32 {
	if r.float == nil && len(r.Samples) > 0 {
		return AppendFloat32(nil, r.Samples)
	}
	return r.float
}

// Duration returns the length of the recording.
func (r *Recording) Duration() time.Duration {
	return time.Duration(int64(len(r.Samples)) * int64(time.Second) / CaptureRate)
}

// Recorder captures the microphone for push to talk: Start when the key
// goes down, Stop when it comes up. It opens the device at its native rate
// and channels and converts to 16 kHz mono in Go on the audio thread,
// into a buffer pre-allocated for MaxDuration, so the callback neither
// allocates nor locks.
//
// All methods may be called concurrently.
type Recorder struct {
	dev      device
	rate, ch int
	maxLen   int
	window   int // level window in output samples
	limit    chan struct{}
	err      stickyError           // set on the audio thread
	lost     atomic.Pointer[error] // the microphone is lost; Start opens it again
	open     opener
	cfg      deviceConfig

	// published by the audio thread
	lastCall atomic.Int64 // ns from the start of the recording to the last callback
	frames   atomic.Int64
	limited  atomic.Bool
	nonzero  atomic.Bool
	// level meter, published under a sequence lock (odd while writing)
	lvlSeq          atomic.Uint64
	lvlSeconds      atomic.Uint64 // float64 bits
	lvlPeak, lvlRMS atomic.Uint32 // float32 bits

	mu        sync.Mutex // guards following
	recording bool
	closed    bool
	started   time.Time // of the recording

	// audio thread only (and the controller while the device is stopped)
	rs        *Resampler
	mono, tmp []float32
	buf       []float32 // the recording, allocated for MaxDuration
	peak      float32
	sum       float64
	n         int
}

// OpenRecorder opens the default capture device without starting it. An
// invalid option is an [*OptionsError]. Without cgo or a usable microphone
// the error wraps [ErrNoDevice].
func OpenRecorder(opts *RecorderOptions) (*Recorder, error) {
	return openRecorder(opts, defaultOpener)
}

func openRecorder(opts *RecorderOptions, open opener) (*Recorder, error) {
	c, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Recorder{
		maxLen: int(c.MaxDuration.Seconds() * CaptureRate),
		window: max(1, int(c.LevelInterval.Seconds()*CaptureRate)),
		limit:  make(chan struct{}, 1),
	}
	r.cfg = deviceConfig{capture: true, sampleRate: c.SampleRate, channels: c.Channels, data: r.consume, failed: r.fail}
	dev, err := open(r.cfg)
	if err != nil {
		return nil, err // wraps ErrNoDevice and says so
	}
	r.dev, r.open = dev, open
	r.rate, r.ch = dev.format()
	r.cfg.sampleRate, r.cfg.channels = r.rate, r.ch // what it is opened again with
	if r.rs, err = NewResampler(r.rate, CaptureRate, 1); err != nil {
		_ = dev.close()
		return nil, fmt.Errorf("%w: the microphone's format: %v", ErrNoDevice, err)
	}
	r.mono = make([]float32, 0, maxBlockFrames)
	r.tmp = make([]float32, 0, r.rs.MaxOutFrames(maxBlockFrames))
	r.buf = make([]float32, 0, r.maxLen)
	r.tmp, _ = r.rs.Append(r.tmp, r.mono[:maxBlockFrames]) // size the history buffer once
	r.rs.Reset()
	return r, nil
}

func (r *Recorder) fail(err error) {
	if errors.Is(err, ErrDeviceLost) {
		r.lost.CompareAndSwap(nil, &err)
		return
	}
	r.err.set(err)
}

// Err returns an error wrapping [ErrDeviceLost] from the moment a
// recording finds the microphone lost until a Start opens it again, or
// the first other error the device reported on its own thread, which
// stays; or nil.
func (r *Recorder) Err() error {
	if err := r.err.get(); err != nil {
		return err
	}
	if p := r.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// Limit receives a value when a capture reaches MaxDuration; recording
// has then stopped taking input and the caller should call Stop.
func (r *Recorder) Limit() <-chan struct{} { return r.limit }

// Level returns the latest complete level-meter window of the current or
// last capture.
func (r *Recorder) Level() Level {
	for {
		s := r.lvlSeq.Load()
		if s&1 == 1 {
			continue
		}
		l := Level{
			Seconds: math.Float64frombits(r.lvlSeconds.Load()),
			Peak:    math.Float32frombits(r.lvlPeak.Load()),
			RMS:     math.Float32frombits(r.lvlRMS.Load()),
		}
		if r.lvlSeq.Load() == s {
			return l
		}
	}
}

func (r *Recorder) publishLevel(l Level) {
	r.lvlSeq.Add(1)
	r.lvlSeconds.Store(math.Float64bits(l.Seconds))
	r.lvlPeak.Store(math.Float32bits(l.Peak))
	r.lvlRMS.Store(math.Float32bits(l.RMS))
	r.lvlSeq.Add(1)
}

// Recording reports whether a capture is in progress.
func (r *Recorder) Recording() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recording
}

var (
	errRecording    = errors.New("audio: already recording")
	errNotRecording = errors.New("audio: not recording")
)

// Start begins a recording (push to talk pressed), discarding the
// previous one.
func (r *Recorder) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return ErrClosed
	case r.recording:
		return errRecording
	}
	if err := r.reopenLocked(); err != nil {
		return err
	}
	if err := r.Err(); err != nil {
		return err
	}
	// The device is stopped: the audio-thread state is ours to reset.
	r.rs.Reset()
	r.buf, r.peak, r.sum, r.n = r.buf[:0], 0, 0, 0
	r.frames.Store(0)
	r.lastCall.Store(0)
	r.limited.Store(false)
	r.nonzero.Store(false)
	r.publishLevel(Level{})
	select {
	case <-r.limit:
	default:
	}
	r.started = time.Now()
	if err := r.dev.start(); err != nil {
		return fmt.Errorf("audio: start capture: %w", err)
	}
	r.recording = true
	return nil
}

// paced reports whether the recorder's device delivers in real time (a
// microphone, not the Push of NewRecorder).
func (r *Recorder) paced() bool {
	_, pushed := r.dev.(*pushedDevice)
	return !pushed
}

// reopenLocked opens the microphone again if it was lost, in the format
// it had. r.mu must be held.
func (r *Recorder) reopenLocked() error {
	p := r.lost.Load()
	if p == nil {
		return nil
	}
	if r.dev != nil {
		_ = r.dev.close()
		r.dev = nil
	}
	dev, err := r.open(r.cfg)
	if err != nil {
		return fmt.Errorf("%w, and opening it again failed: %w", *p, err)
	}
	if rate, ch := dev.format(); rate != r.rate || ch != r.ch {
		_ = dev.close()
		return fmt.Errorf("%w, and it came back as %d Hz %d channels, not %d Hz %d", *p, rate, ch, r.rate, r.ch)
	}
	r.dev = dev
	r.lost.Store(nil)
	return nil
}

// Stop ends the recording (push to talk released) and returns it, with
// the resampler's tail so the last milliseconds are kept. When every
// sample was zero (a missing microphone permission on macOS looks like
// this) it returns the recording together with an error wrapping
// [ErrSilentInput]. When the microphone has not called back for the last
// 2 s of the recording (its sound server died, it was unplugged), it
// returns what was captured with an error wrapping [ErrDeviceLost]; the
// next Start opens the microphone again.
func (r *Recorder) Stop() (*Recording, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording {
		return nil, errNotRecording
	}
	r.recording = false
	if err := r.dev.stop(); err != nil { // no callback runs after this
		return nil, fmt.Errorf("audio: stop capture: %w", err)
	}
	c := &Recording{Limited: r.limited.Load(), Silent: !r.nonzero.Load()}
	if !c.Limited {
		tail := r.rs.Flush(r.tmp[:0])
		r.buf = append(r.buf, tail[:min(len(tail), r.maxLen-len(r.buf))]...)
	}
	c.Samples, c.float = AppendInt16(nil, r.buf), slices.Clone(r.buf)
	took := time.Since(r.started)
	if quiet := took - time.Duration(r.lastCall.Load()); r.lost.Load() != nil || (r.paced() && quiet > lostAfter) {
		err := fmt.Errorf("%w: no callback from the microphone in the last %v of a %v recording", ErrDeviceLost, quiet.Round(time.Millisecond), took.Round(time.Millisecond))
		if !r.lost.CompareAndSwap(nil, &err) {
			err = *r.lost.Load()
		}
		return c, err
	}
	if c.Silent {
		return c, fmt.Errorf("%w (%v captured)", ErrSilentInput, c.Duration())
	}
	return c, nil
}

// Close stops any capture and releases the device. It is idempotent.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.recording {
		r.recording = false
		err = r.dev.stop()
	}
	if r.dev == nil { // lost, and not opened again
		return err
	}
	return errors.Join(err, r.dev.close())
}

// consume is the capture callback: downmix, resample to 16 kHz into the
// pre-allocated buffer, meter. Audio thread only.
func (r *Recorder) consume(in []float32) {
	r.lastCall.Store(int64(time.Since(r.started))) // r.started is set before the device starts
	if !r.nonzero.Load() {
		for _, v := range in {
			if v != 0 {
				r.nonzero.Store(true)
				break
			}
		}
	}
	for len(in) >= r.ch && !r.limited.Load() {
		frames := min(len(in)/r.ch, maxBlockFrames)
		r.mono, _ = AppendDownmix(r.mono[:0], in[:frames*r.ch], r.ch)
		in = in[frames*r.ch:]
		r.tmp, _ = r.rs.Append(r.tmp[:0], r.mono)
		n := min(len(r.tmp), r.maxLen-len(r.buf))
		r.meter(r.tmp[:n])
		r.buf = append(r.buf, r.tmp[:n]...)
		r.frames.Store(int64(len(r.buf)))
		if len(r.buf) == r.maxLen {
			r.limited.Store(true)
			select {
			case r.limit <- struct{}{}:
			default:
			}
		}
	}
}

// meter accumulates peak and RMS and publishes each complete window.
func (r *Recorder) meter(s []float32) {
	done := 0
	for len(s) > 0 {
		k := min(len(s), r.window-r.n)
		var sum float32
		for _, v := range s[:k] {
			r.peak = max(r.peak, float32(math.Abs(float64(v))))
			sum += v * v
		}
		r.sum += float64(sum)
		r.n += k
		s, done = s[k:], done+k
		if r.n == r.window {
			r.publishLevel(Level{
				Seconds: float64(len(r.buf)+done) / CaptureRate,
				Peak:    r.peak,
				RMS:     float32(math.Sqrt(r.sum / float64(r.n))),
			})
			r.peak, r.sum, r.n = 0, 0, 0
		}
	}
}
