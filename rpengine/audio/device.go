package audio

import (
	"errors"
	"fmt"
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
// All methods may be called concurrently. The device callback takes no
// lock, does not allocate and never waits on a caller.
type Device struct {
	dev device
	mix *Mixer
}

// OpenDevice opens the default playback device and starts it (it plays
// silence until a speaker has audio). An invalid option is an
// [*OptionsError]. Without cgo, or without a usable sound card, the error
// wraps [ErrNoDevice]; the caller can fall back to a [Mixer] or to writing
// WAV files. Close releases the device.
//
// With [DeviceOptions.Null] it opens no sound card and cannot fail but on
// an invalid option.
func OpenDevice(opts *DeviceOptions) (*Device, error) {
	if opts != nil && opts.Null {
		return openDevice(opts, nullOpener)
	}
	return openDevice(opts, defaultOpener)
}

func openDevice(opts *DeviceOptions, open opener) (*Device, error) {
	c, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Mixer{}
	dev, err := open(deviceConfig{sampleRate: c.SampleRate, channels: c.Channels, period: c.Period, data: m.mix, failed: m.err.set})
	if err != nil {
		return nil, err // wraps ErrNoDevice and says so
	}
	rate, ch := dev.format()
	m.init(rate, ch, 0, 0)
	if err := dev.start(); err != nil {
		_ = dev.close()
		return nil, fmt.Errorf("%w: start: %v", ErrNoDevice, err)
	}
	return &Device{dev: dev, mix: m}, nil
}

// NewSpeaker returns a speaker mixed into the device; see
// [Mixer.NewSpeaker].
func (d *Device) NewSpeaker(opts *SpeakerOptions) (*Speaker, error) {
	return d.mix.NewSpeaker(opts)
}

// Err returns the first error the device reported on its own thread (for
// example a device that stopped unexpectedly), or nil. Once set it stays.
func (d *Device) Err() error { return d.mix.err.get() }

// SampleRate returns the device rate in Hz.
func (d *Device) SampleRate() int { return d.mix.rate }

// Channels returns the device channel count.
func (d *Device) Channels() int { return d.mix.channels }

// Close stops the device and closes every speaker. It is idempotent.
func (d *Device) Close() error {
	if !d.mix.close() {
		return nil
	}
	return errors.Join(d.dev.stop(), d.dev.close())
}
