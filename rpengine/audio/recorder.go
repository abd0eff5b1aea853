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

// RecorderOptions configures [OpenRecorder]. The zero value is usable.
type RecorderOptions struct {
	// MaxDuration caps one capture. If zero, 30 s (RPEngine's limit for
	// event.audio). Reaching it stops recording and signals [Recorder.Limit].
	MaxDuration time.Duration
	// LevelInterval is the level meter's window. If zero, 50 ms.
	LevelInterval time.Duration
	// SampleRate and Channels request a device format. If zero, the
	// device's native format is used and converted in Go (downmix, then
	// the package's resampler; miniaudio's converter aliases badly).
	SampleRate, Channels int
}

func (o *RecorderOptions) withDefaults() RecorderOptions {
	var c RecorderOptions
	if o != nil {
		c = *o
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = 30 * time.Second
	}
	if c.LevelInterval <= 0 {
		c.LevelInterval = 50 * time.Millisecond
	}
	return c
}

// Level is one level-meter reading over the last window (50 ms by
// default): the quantities RPEngine reports as voice.capture.level.
type Level struct {
	// Seconds is the capture time at the end of the window.
	Seconds float64
	// Peak is the largest absolute sample, RMS the root mean square, both
	// in full-scale units (0..1).
	Peak, RMS float32
}

// Capture is a finished recording, 16 kHz mono.
type Capture struct {
	// Samples holds the audio at [CaptureRate] Hz, mono, in [-1, 1].
	Samples []float32
	// Limited is true when the recording hit MaxDuration and was cut.
	Limited bool
	// Silent is true when every input sample was exactly zero.
	Silent bool
}

// Duration returns the length of the capture.
func (c *Capture) Duration() time.Duration {
	return time.Duration(int64(len(c.Samples)) * int64(time.Second) / CaptureRate)
}

// EventAudio is the event.audio object of an RPEngine reply.request.
// Its JSON encoding is the wire form.
type EventAudio struct {
	// Format is "pcm_s16le" or "pcm_f32le" ([Encoding.String]).
	Format string `json:"format"`
	// SampleRate is the rate in Hz, always [CaptureRate] (16000).
	SampleRate int `json:"sampleRate"`
	// Channels is always 1 (mono).
	Channels int `json:"channels"`
	// Data is the PCM, base64 (RFC 4648, padded).
	Data string `json:"data"`
	// Language optionally names the spoken language (en ar es ja ko vi uk
	// zh); the caller sets it.
	Language string `json:"language,omitempty"`
}

// EventAudio encodes the capture for event.audio in enc (EncodingS16LE is
// half the size of EncodingF32LE and ample for speech).
func (c *Capture) EventAudio(enc Encoding) EventAudio {
	pcm := AppendEncode(nil, enc, c.Samples)
	return EventAudio{Format: enc.String(), SampleRate: CaptureRate, Channels: 1, Data: string(AppendBase64(nil, pcm))}
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
	err      stickyError // set on the audio thread

	// published by the audio thread
	frames  atomic.Int64
	limited atomic.Bool
	nonzero atomic.Bool
	// level meter, published under a sequence lock (odd while writing)
	lvlSeq          atomic.Uint64
	lvlSeconds      atomic.Uint64 // float64 bits
	lvlPeak, lvlRMS atomic.Uint32 // float32 bits

	mu        sync.Mutex // guards following
	recording bool
	closed    bool

	// audio thread only (and the controller while the device is stopped)
	rs        *Resampler
	mono, tmp []float32
	buf       []float32
	peak      float32
	sum       float64
	n         int
}

// OpenRecorder opens the default capture device without starting it.
// Without cgo or a usable microphone the error wraps [ErrNoDevice].
func OpenRecorder(opts *RecorderOptions) (*Recorder, error) {
	return openRecorder(opts, defaultOpener)
}

func openRecorder(opts *RecorderOptions, open opener) (*Recorder, error) {
	c := opts.withDefaults()
	if c.SampleRate != 0 && (c.SampleRate < minResampleRate || c.SampleRate > maxResampleRate) || c.Channels < 0 || c.Channels > 64 {
		return nil, fmt.Errorf("audio: open recorder: invalid options %d Hz, %d channels", c.SampleRate, c.Channels)
	}
	r := &Recorder{
		maxLen: int(c.MaxDuration.Seconds() * CaptureRate),
		window: max(1, int(c.LevelInterval.Seconds()*CaptureRate)),
		limit:  make(chan struct{}, 1),
	}
	dev, err := open(deviceConfig{capture: true, sampleRate: c.SampleRate, channels: c.Channels, data: r.consume, failed: r.fail})
	if err != nil {
		return nil, fmt.Errorf("audio: open recorder: %w", err)
	}
	r.dev = dev
	r.rate, r.ch = dev.format()
	if r.rs, err = NewResampler(r.rate, CaptureRate, 1); err != nil {
		_ = dev.close()
		return nil, fmt.Errorf("audio: open recorder: %w", err)
	}
	r.mono = make([]float32, 0, maxBlockFrames)
	r.tmp = make([]float32, 0, r.rs.MaxOutFrames(maxBlockFrames))
	r.buf = make([]float32, 0, r.maxLen)
	r.tmp, _ = r.rs.Append(r.tmp, r.mono[:maxBlockFrames]) // size the history buffer once
	r.rs.Reset()
	return r, nil
}

func (r *Recorder) fail(err error) { r.err.set(err) }

// Err returns the first error the device reported on its own thread, or
// nil. Once set it stays.
func (r *Recorder) Err() error { return r.err.get() }

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

// Start begins a capture (push to talk pressed), discarding the previous
// one.
func (r *Recorder) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return ErrClosed
	case r.recording:
		return errRecording
	}
	if err := r.Err(); err != nil {
		return err
	}
	// The device is stopped: the audio-thread state is ours to reset.
	r.rs.Reset()
	r.buf, r.peak, r.sum, r.n = r.buf[:0], 0, 0, 0
	r.frames.Store(0)
	r.limited.Store(false)
	r.nonzero.Store(false)
	r.publishLevel(Level{})
	select {
	case <-r.limit:
	default:
	}
	if err := r.dev.start(); err != nil {
		return fmt.Errorf("audio: start capture: %w", err)
	}
	r.recording = true
	return nil
}

// Stop ends the capture (push to talk released) and returns it. When every
// sample was zero (a missing microphone permission on macOS looks like
// this) it returns the capture together with an error wrapping
// [ErrSilentInput].
func (r *Recorder) Stop() (*Capture, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording {
		return nil, errNotRecording
	}
	r.recording = false
	if err := r.dev.stop(); err != nil { // no callback runs after this
		return nil, fmt.Errorf("audio: stop capture: %w", err)
	}
	c := &Capture{Limited: r.limited.Load(), Silent: !r.nonzero.Load()}
	if !c.Limited {
		r.buf = r.rs.Flush(r.buf)
		r.buf = r.buf[:min(len(r.buf), r.maxLen)]
	}
	c.Samples = slices.Clone(r.buf)
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
	return errors.Join(err, r.dev.close())
}

// consume is the capture callback: downmix, resample to 16 kHz into the
// pre-allocated buffer, meter. Audio thread only.
func (r *Recorder) consume(in []float32) {
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
