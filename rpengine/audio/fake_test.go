package audio

import (
	"errors"
	"sync"
)

// fakeDevice is a device driven by the test: each pull or push is one
// period of a synthetic clock, run synchronously on the test goroutine.
type fakeDevice struct {
	cfg      deviceConfig
	rate, ch int

	mu      sync.Mutex
	started bool
	closed  bool
	buf     []float32
}

func fakeOpener(rate, ch int, out **fakeDevice) opener {
	return func(cfg deviceConfig) (device, error) {
		r, c := cfg.sampleRate, cfg.channels
		if r == 0 {
			r = rate
		}
		if c == 0 {
			c = ch
		}
		f := &fakeDevice{cfg: cfg, rate: r, ch: c, buf: make([]float32, 0, 1<<16)}
		*out = f
		return f, nil
	}
}

func (f *fakeDevice) start() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("fake: closed")
	}
	f.started = true
	return nil
}

func (f *fakeDevice) stop() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = false
	return nil
}

func (f *fakeDevice) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started, f.closed = false, true
	return nil
}

func (f *fakeDevice) format() (int, int) { return f.rate, f.ch }

func (f *fakeDevice) running() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

// pull runs one playback period of frames frames and returns the output
// (valid until the next pull). A stopped device renders nothing.
func (f *fakeDevice) pull(frames int) []float32 {
	b := f.buf[:frames*f.ch]
	clear(b)
	if f.running() {
		f.cfg.data(b)
	}
	return b
}

// push runs one capture period with the given interleaved input.
func (f *fakeDevice) push(in []float32) {
	if f.running() {
		f.cfg.data(in)
	}
}
