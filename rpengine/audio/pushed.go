package audio

import (
	"errors"
	"sync"
)

// NewRecorder returns a Recorder that the game feeds with [Recorder.Push]
// instead of a microphone: for a game whose engine captures the
// microphone itself, and for tests and examples, which have none. Push
// takes interleaved float32 frames at RecorderOptions.SampleRate Hz with
// RecorderOptions.Channels channels (for NewRecorder, zero means 16 kHz
// and mono); the Recorder converts them to 16 kHz mono as it converts a
// microphone's. Start, Stop, Level, Limit and Close work as for
// [OpenRecorder]'s. It opens nothing; an invalid option is an
// [*OptionsError].
func NewRecorder(opts *RecorderOptions) (*Recorder, error) {
	return openRecorder(opts, func(cfg deviceConfig) (device, error) {
		d := &pushedDevice{rate: cfg.sampleRate, ch: cfg.channels, data: cfg.data}
		if d.rate == 0 {
			d.rate = CaptureRate
		}
		if d.ch == 0 {
			d.ch = 1
		}
		return d, nil
	})
}

// errNotPushed is Push's error on a Recorder of a device.
var errNotPushed = errors.New("audio: push: the recorder reads a microphone (use NewRecorder to push)")

// Push feeds a Recorder made by [NewRecorder] what its source captured
// since the last Push: whole interleaved frames in the format of its
// options. While the Recorder is not recording (before Start, after Stop)
// the frames are dropped, as a microphone's are. Push does not keep
// frames, does not allocate, and may be called from any goroutine, one
// at a time. On a Recorder of a device it returns an error.
func (r *Recorder) Push(frames []float32) error {
	d, ok := r.dev.(*pushedDevice)
	if !ok {
		return errNotPushed
	}
	d.push(frames)
	return nil
}

// pushedDevice is the capture "device" of NewRecorder: Push runs the
// recorder's callback on the caller's goroutine while started.
type pushedDevice struct {
	rate, ch int
	data     func([]float32)

	mu      sync.Mutex // guards following; held while data runs
	started bool
	closed  bool
}

func (d *pushedDevice) push(frames []float32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		d.data(frames)
	}
}

func (d *pushedDevice) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	d.started = true
	return nil
}

// stop returns once no Push is running its callback.
func (d *pushedDevice) stop() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started = false
	return nil
}

func (d *pushedDevice) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started, d.closed = false, true
	return nil
}

func (d *pushedDevice) format() (int, int) { return d.rate, d.ch }
