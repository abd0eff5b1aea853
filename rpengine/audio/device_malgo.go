//go:build cgo

package audio

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/gen2brain/malgo"

	"github.com/gamelink-go/gamelink/rpengine/audio/internal/alsaquiet"
)

// maBackendNull is miniaudio's null backend. malgo's enum lacks
// ma_backend_custom, so malgo.BackendNull (13) selects "custom" and fails
// with "No backend"; the real value is 14 (docs/audio.md, "Devices").
const maBackendNull = malgo.Backend(14)

var (
	defaultOpener     opener = func(cfg deviceConfig) (device, error) { return openMalgo(cfg, nil) }
	nullBackendOpener opener = func(cfg deviceConfig) (device, error) {
		return openMalgo(cfg, []malgo.Backend{maBackendNull})
	}
)

type malgoDevice struct {
	ctx      *malgo.AllocatedContext
	dev      *malgo.Device
	rate, ch int
	stopping atomic.Bool // set while we stop the device ourselves
}

// openMalgo opens one context and one device. backends nil means the
// platform's default order. Failures wrap ErrNoDevice so callers can fall
// back. ALSA's own error printing is kept off the game's stderr while the
// device opens; its first message goes into the error instead.
func openMalgo(cfg deviceConfig, backends []malgo.Backend) (device, error) {
	var d device
	reason, err := alsaquiet.Do(func() (err error) {
		d, err = openMalgoDevice(cfg, backends)
		return err
	})
	if err != nil && reason != "" {
		err = fmt.Errorf("%w (ALSA: %s)", err, strings.TrimSpace(reason))
	}
	return d, err
}

func openMalgoDevice(cfg deviceConfig, backends []malgo.Backend) (device, error) {
	ctx, err := malgo.InitContext(backends, malgo.ContextConfig{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoDevice, err)
	}
	d := &malgoDevice{ctx: ctx}
	mc := malgo.DefaultDeviceConfig(malgo.Playback)
	if cfg.capture {
		mc = malgo.DefaultDeviceConfig(malgo.Capture)
		mc.Capture.Format = malgo.FormatF32
		mc.Capture.Channels = uint32(cfg.channels)
	} else {
		mc.Playback.Format = malgo.FormatF32
		mc.Playback.Channels = uint32(cfg.channels)
	}
	mc.SampleRate = uint32(cfg.sampleRate)
	mc.PeriodSizeInMilliseconds = 10
	if cfg.period > 0 {
		mc.PeriodSizeInMilliseconds = uint32(max(1, cfg.period.Milliseconds()))
	}
	var channels atomic.Int64
	onData := func(out, in []byte, frames uint32) {
		b := out
		if cfg.capture {
			b = in
		}
		n := int(frames) * int(channels.Load())
		if n == 0 || len(b) < 4*n {
			return
		}
		cfg.data(unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n))
	}
	onStop := func() {
		if !d.stopping.Load() && cfg.failed != nil {
			cfg.failed(fmt.Errorf("%w: the device stopped by itself", ErrDeviceLost))
		}
	}
	dev, err := malgo.InitDevice(ctx.Context, mc, malgo.DeviceCallbacks{Data: onData, Stop: onStop})
	if err != nil {
		_ = ctx.Uninit()
		ctx.Free()
		return nil, fmt.Errorf("%w: %v", ErrNoDevice, err)
	}
	d.dev, d.rate = dev, int(dev.SampleRate())
	if cfg.capture {
		d.ch = int(dev.CaptureChannels())
	} else {
		d.ch = int(dev.PlaybackChannels())
	}
	channels.Store(int64(d.ch))
	return d, nil
}

func (d *malgoDevice) start() error {
	d.stopping.Store(false)
	return d.dev.Start()
}

func (d *malgoDevice) stop() error {
	d.stopping.Store(true)
	return d.dev.Stop()
}

func (d *malgoDevice) close() error {
	d.stopping.Store(true)
	d.dev.Uninit()
	err := d.ctx.Uninit()
	d.ctx.Free()
	return err
}

func (d *malgoDevice) format() (int, int) { return d.rate, d.ch }
