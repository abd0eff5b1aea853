package audio

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// OutputOptions configures [OpenOutput]. The zero value is usable.
type OutputOptions struct {
	// SampleRate is the device rate in Hz. If zero, the device's native
	// rate is used and segments at other rates are resampled in Go
	// (miniaudio's own converter is not good enough; notes/audio.md §5.3).
	SampleRate int
	// Channels is the device channel count. If zero, 2 (stereo). With 1,
	// pan is ignored; with more than 2, players use the first two.
	Channels int
	// Period is the device callback period. If zero, 10 ms.
	Period time.Duration
}

func (o *OutputOptions) withDefaults() OutputOptions {
	var c OutputOptions
	if o != nil {
		c = *o
	}
	if c.Channels == 0 {
		c.Channels = 2
	}
	if c.Period == 0 {
		c.Period = 10 * time.Millisecond
	}
	return c
}

// Output is an open playback device that mixes any number of [Player]s,
// one per speaking character.
//
// All methods may be called concurrently. The device callback takes no
// lock, does not allocate and never waits on a caller.
type Output struct {
	dev      device
	rate     int
	channels int
	players  atomic.Pointer[[]*Player] // snapshot read by the callback
	err      stickyError               // set on the audio thread

	mu     sync.Mutex // guards following
	list   []*Player
	closed bool

	// audio thread only
	scratch []float32
}

// maxBlockFrames is the mixing block; longer callbacks are split.
const maxBlockFrames = 4096

// OpenOutput opens the default playback device and starts it (it plays
// silence until a player has audio). Without cgo, or without a usable sound
// card, the error wraps [ErrNoDevice]; the caller can fall back to writing
// WAV files. Close releases the device.
func OpenOutput(opts *OutputOptions) (*Output, error) {
	return openOutput(opts, defaultOpener)
}

func openOutput(opts *OutputOptions, open opener) (_ *Output, err error) {
	c := opts.withDefaults()
	if c.SampleRate != 0 && (c.SampleRate < minResampleRate || c.SampleRate > maxResampleRate) || c.Channels < 1 || c.Channels > 64 {
		return nil, fmt.Errorf("audio: open output: invalid options %d Hz, %d channels", c.SampleRate, c.Channels)
	}
	o := &Output{scratch: make([]float32, maxBlockFrames)}
	o.players.Store(new([]*Player))
	dev, err := open(deviceConfig{sampleRate: c.SampleRate, channels: c.Channels, period: c.Period, data: o.render, failed: o.fail})
	if err != nil {
		return nil, fmt.Errorf("audio: open output: %w", err)
	}
	o.dev = dev
	o.rate, o.channels = dev.format()
	if err := dev.start(); err != nil {
		_ = dev.close()
		return nil, fmt.Errorf("audio: open output: %w: start: %v", ErrNoDevice, err)
	}
	return o, nil
}

func (o *Output) fail(err error) { o.err.set(err) }

// Err returns the first error the device reported on its own thread (for
// example a device that stopped unexpectedly), or nil. Once set it stays.
func (o *Output) Err() error { return o.err.get() }

// SampleRate returns the device rate in Hz.
func (o *Output) SampleRate() int { return o.rate }

// Channels returns the device channel count.
func (o *Output) Channels() int { return o.channels }

// Close stops the device and closes every player. It is idempotent.
func (o *Output) Close() error {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	list := o.list
	o.list = nil
	o.players.Store(new([]*Player))
	o.mu.Unlock()
	for _, p := range list {
		p.markClosed()
	}
	return errors.Join(o.dev.stop(), o.dev.close())
}

func (o *Output) add(p *Player) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return ErrClosed
	}
	o.list = append(o.list, p)
	snap := append([]*Player(nil), o.list...)
	o.players.Store(&snap)
	return nil
}

func (o *Output) remove(p *Player) {
	o.mu.Lock()
	defer o.mu.Unlock()
	snap := make([]*Player, 0, len(o.list))
	for _, q := range o.list {
		if q != p {
			snap = append(snap, q)
		}
	}
	o.list = snap
	o.players.Store(&snap)
}

// render is the device callback: it mixes every player into buf
// (interleaved, zeroed) and clips the sum to [-1, 1].
func (o *Output) render(buf []float32) {
	players := *o.players.Load()
	ch := o.channels
	for len(buf) >= ch { // a trailing partial frame stays silent
		frames := min(len(buf)/ch, maxBlockFrames)
		block := buf[:frames*ch]
		for _, p := range players {
			p.mixInto(block, ch, o.scratch[:frames])
		}
		for i, v := range block {
			block[i] = min(1, max(-1, v))
		}
		buf = buf[frames*ch:]
	}
}
