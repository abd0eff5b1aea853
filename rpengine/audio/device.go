package audio

import "time"

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

// device is the seam between the player/recorder and the sound card:
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
