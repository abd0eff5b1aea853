package audio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// deviceConfig describes the device to open. The device always exchanges
// interleaved float32 frames with the data callback (one canonical format;
// conversions happen at the edges, once).
type deviceConfig struct {
	capture    bool          // capture instead of playback
	sampleRate int           // Hz; 0 asks for the device's native rate
	channels   int           // 0 asks for the device's native count
	period     time.Duration // callback period; 0 means 10 ms
	// data runs on the audio thread for every period. For playback buf is
	// zeroed and must be filled; for capture it holds the input. buf is
	// valid only during the call. It must not block, allocate or lock.
	data func(buf []float32)
	// failed runs (on any thread) when the device stops by itself.
	failed func(err error)
}

// device is the seam between the mixer/recorder and the sound card:
// malgo in device_malgo.go, a stub without cgo, a fake in tests.
type device interface {
	// start begins calling data; stop returns once no call is running.
	start() error
	stop() error
	close() error
	// format reports the sample rate (Hz) and channel count in use.
	format() (sampleRate, channels int)
}

// opener opens a device; the package uses defaultOpener, tests a fake.
type opener func(cfg deviceConfig) (device, error)

// Device is an open playback device. It plays a [Mixer] of its own, so
// speakers attach to it as to a Mixer ([Device.NewSpeaker]), one per
// speaking character; a game whose engine has its own mixer uses a
// [Mixer] instead and opens no Device.
//
// A sound card that stops calling back for 2 s (its sound server
// died, it was unplugged) is lost: [Device.Err] then returns an error
// wrapping [ErrDeviceLost], the speakers go on in real time in silence
// (so positions, Heard and Done do not stall), and the Device opens the
// sound card again every second until it is back, when Err returns nil
// again and speech is heard from where it is.
//
// All methods may be called concurrently. The device callback takes no
// lock, does not allocate and never waits on a caller.
type Device struct {
	mix      *Mixer
	cfg      deviceConfig // of the sound card, at the mixer's rate and channels
	open     opener       // of the sound card; nil for a Null device
	base     time.Time    // when it was opened: the origin of lastCall
	lastCall atomic.Int64 // ns from base to the last callback
	lost     atomic.Pointer[error]
	wake     chan struct{} // the card said it was lost: the driver looks now
	stopc    chan struct{} // closed by Close: the driver returns
	done     chan struct{} // closed when the driver has returned

	mu    sync.Mutex // guards following
	dev   device     // the sound card, or the null device while it is lost
	muted bool       // dev is the null device of a lost card
}

// Timing of the lost-device watch: a sound card that has not called back
// for lostAfter is lost, and is opened again every retryEvery.
const (
	lostAfter  = 2 * time.Second
	retryEvery = time.Second
)

// OpenDevice opens the default playback device and starts it (it plays
// silence until a speaker has audio). An invalid option is an
// [*OptionsError]. Without cgo, or without a usable sound card, the error
// wraps [ErrNoDevice]; the caller can fall back to a Null device
// ([DeviceOptions.Null]), a [Mixer] or writing WAV files. Close releases
// the device.
//
// With [DeviceOptions.Null] it opens no sound card and cannot fail but on
// an invalid option.
func OpenDevice(opts *DeviceOptions) (*Device, error) {
	if opts != nil && opts.Null {
		return openDevice(opts, nullOpener)
	}
	d, err := openDevice(opts, defaultOpener)
	if err == nil {
		d.watch(defaultOpener)
	}
	return d, err
}

// openDevice opens a Device on what open opens, unwatched (see watch).
func openDevice(opts *DeviceOptions, open opener) (*Device, error) {
	c, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Mixer{}
	d := &Device{mix: m, base: time.Now(), wake: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{})}
	d.cfg = deviceConfig{sampleRate: c.SampleRate, channels: c.Channels, period: c.Period, data: d.render, failed: d.failed}
	dev, err := open(d.cfg)
	if err != nil {
		return nil, err // wraps ErrNoDevice and says so
	}
	rate, ch := dev.format()
	m.init(rate, ch, 0, 0)
	if err := dev.start(); err != nil {
		_ = dev.close()
		return nil, fmt.Errorf("%w: start: %v", ErrNoDevice, err)
	}
	d.dev = dev
	close(d.done)
	return d, nil
}

// watch starts the driver, which declares the device lost when it stops
// calling back and opens it again with open. Tests whose fake device is
// driven by the test itself leave it unwatched.
func (d *Device) watch(open opener) {
	// A card opened again must take what the mixer makes.
	d.cfg.sampleRate, d.cfg.channels, d.open = d.mix.rate, d.mix.channels, open
	d.done = make(chan struct{})
	go d.drive()
}

// render is the sound card's callback.
func (d *Device) render(buf []float32) {
	d.lastCall.Store(int64(time.Since(d.base)))
	d.mix.mix(buf)
}

// failed takes an error from the device's thread: a lost device is
// handled by the driver, anything else is kept for Err.
func (d *Device) failed(err error) {
	if errors.Is(err, ErrDeviceLost) {
		d.lost.CompareAndSwap(nil, &err)
		select {
		case d.wake <- struct{}{}:
		default: // the driver is woken already
		}
		return
	}
	d.mix.err.set(err)
}

// drive watches the sound card and, once it is lost, plays the mixer on a
// null device and opens the card again every retryEvery. It runs from
// openDevice to Close. While the card plays it wakes once every lostAfter
// (when the card could first be lost, counted from its last callback),
// not every 100 ms as it did: a wakeup costs as much CPU as the mixing of
// a few callbacks (issue #31).
func (d *Device) drive() {
	defer close(d.done)
	t := time.NewTimer(lostAfter)
	defer t.Stop()
	var retry time.Duration // while muted: when to open the card again, from base
	for {
		select {
		case <-d.stopc:
			return
		case <-d.wake:
		case <-t.C:
		}
		now := time.Since(d.base)
		wait := retry - now
		d.mu.Lock()
		switch quiet := now - time.Duration(d.lastCall.Load()); {
		case d.muted && wait > 0: // woken early
		case d.muted && d.reopen():
			d.lastCall.Store(int64(now)) // it has lostAfter to call back
			wait = lostAfter
		case d.muted:
			retry, wait = now+retryEvery, retryEvery
		case d.lost.Load() != nil || quiet >= lostAfter:
			d.lose(quiet)
			retry, wait = now+retryEvery, retryEvery
		default:
			wait = lostAfter - quiet
		}
		d.mu.Unlock()
		t.Reset(wait)
	}
}

// lose replaces the silent sound card with a null device, so that the
// speakers go on in real time. d.mu must be held.
func (d *Device) lose(quiet time.Duration) {
	err := fmt.Errorf("%w: no callback from the sound card for %v", ErrDeviceLost, quiet.Round(100*time.Millisecond))
	if p := d.lost.Load(); p != nil {
		err = *p
	}
	d.lost.Store(&err)
	_ = d.dev.stop() // no callback of it runs after this
	_ = d.dev.close()
	null, _ := openNull(d.cfg) // cannot fail
	_ = null.start()
	d.dev, d.muted = null, true
}

// reopen opens the sound card again and, if it starts, plays through it
// instead of the null device. d.mu must be held.
func (d *Device) reopen() bool {
	dev, err := d.open(d.cfg)
	if err != nil {
		return false
	}
	if rate, ch := dev.format(); rate != d.mix.rate || ch != d.mix.channels {
		_ = dev.close()
		return false
	}
	_ = d.dev.stop() // the null device: its goroutine has returned
	if err := dev.start(); err != nil {
		_ = dev.close()
		_ = d.dev.start()
		return false
	}
	d.dev, d.muted = dev, false
	d.lost.Store(nil)
	return true
}

// NewSpeaker returns a speaker mixed into the device; see
// [Mixer.NewSpeaker].
func (d *Device) NewSpeaker(opts *SpeakerOptions) (*Speaker, error) {
	return d.mix.NewSpeaker(opts)
}

// Err returns an error wrapping [ErrDeviceLost] while the sound card is
// lost (see [Device]), and nil once it is back; or the first other error
// the device reported on its own thread, which stays. It never blocks.
func (d *Device) Err() error {
	if err := d.mix.err.get(); err != nil {
		return err
	}
	if p := d.lost.Load(); p != nil {
		return *p
	}
	return nil
}

// SampleRate returns the device rate in Hz.
func (d *Device) SampleRate() int { return d.mix.rate }

// Channels returns the device channel count.
func (d *Device) Channels() int { return d.mix.channels }

// Close stops the device and closes every speaker. It is idempotent.
func (d *Device) Close() error {
	if !d.mix.close() {
		return nil
	}
	if d.open != nil {
		close(d.stopc)
	}
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return errors.Join(d.dev.stop(), d.dev.close())
}
