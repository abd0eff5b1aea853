package audio

import (
	"fmt"
	"math"
	"time"
)

// Every option struct follows one rule, stated again in each field's doc:
// zero means the default; negative disables where disabling makes sense
// (only SpeakerOptions.Fade); any other value outside the documented range
// is invalid, and the constructor returns an [*OptionsError] naming it.
// The checks and the defaults live here, in one withDefaults per struct.

// Limits of the options.
const (
	maxChannels     = 64
	maxPeriod       = time.Second
	maxLatency      = 2 * time.Second
	maxFade         = time.Second
	maxSegments     = 1 << 16
	maxQueuedLimit  = time.Hour
	maxCapture      = 10 * time.Minute
	minLevelWindow  = time.Millisecond
	maxLevelWindow  = 10 * time.Second
	defaultMixRate  = 48000
	defaultChannels = 2
)

// DeviceOptions configures [OpenDevice]. A nil *DeviceOptions and the zero
// value mean every default.
type DeviceOptions struct {
	// SampleRate is the device rate in Hz, 1000 to 768000. If zero, the
	// device's native rate is used and segments at other rates are
	// resampled in Go (miniaudio's own converter aliases; docs/audio.md).
	// Other values are invalid.
	SampleRate int
	// Channels is the device channel count, 1 to 64. If zero, 2 (stereo).
	// With 1, pan is ignored; with more than 2, speakers use the first two.
	// Other values are invalid.
	Channels int
	// Period is the device callback period, 1 ms to 1 s. If zero, 10 ms.
	// Other values are invalid.
	Period time.Duration
	// Null opens no sound card: the device plays in real time, period by
	// period, into nothing, driven by a goroutine of its own that Close
	// ends. Speakers advance as on a card (positions, Heard, Done, Mouth),
	// so a game runs the same without sound: on a machine without a sound
	// card, in CI, muted, or without cgo (it needs neither). SampleRate 0
	// then means 48000.
	Null bool
}

func (o *DeviceOptions) withDefaults() (DeviceOptions, error) {
	var c DeviceOptions
	if o != nil {
		c = *o
	}
	if c.Channels == 0 {
		c.Channels = defaultChannels
	}
	if c.Period == 0 {
		c.Period = 10 * time.Millisecond
	}
	switch {
	case c.SampleRate != 0 && !validRate(c.SampleRate):
		return c, optionsErrorf("DeviceOptions.SampleRate", "%d Hz outside %d..%d", c.SampleRate, minResampleRate, maxResampleRate)
	case c.Channels < 1 || c.Channels > maxChannels:
		return c, optionsErrorf("DeviceOptions.Channels", "%d outside 1..%d", c.Channels, maxChannels)
	case c.Period < time.Millisecond || c.Period > maxPeriod:
		return c, optionsErrorf("DeviceOptions.Period", "%v outside 1ms..%v", c.Period, maxPeriod)
	}
	return c, nil
}

// MixerOptions configures [NewMixer]. A nil *MixerOptions and the zero
// value mean every default: 48 kHz stereo 16-bit, what Ebitengine's
// audio.Context.NewPlayer reads from a 48 kHz context.
type MixerOptions struct {
	// SampleRate is the rate of the PCM that Read produces, in Hz, 1000 to
	// 768000: the consumer's rate (for Ebitengine, the audio.Context's).
	// If zero, 48000. Other values are invalid.
	SampleRate int
	// Channels is the number of interleaved channels Read produces, 1 to
	// 64. If zero, 2 (Ebitengine reads stereo). Other values are invalid.
	Channels int
	// Encoding is the sample encoding Read produces: [EncodingS16LE]
	// (Ebitengine's NewPlayer) or [EncodingF32LE] (NewPlayerF32). If zero,
	// EncodingS16LE. Other values are invalid.
	Encoding Encoding
	// Latency is how long after a Read the consumer plays what it read:
	// its own buffer. Speaker positions, Heard, Done and Mouth are held
	// back by it (in 5 ms steps) so they follow what is heard rather than
	// what was read. For Ebitengine, the Player's buffer size: set the
	// same value with Player.SetBufferSize. 0 to 2 s; if zero, nothing is
	// held back. Other values are invalid.
	Latency time.Duration
}

func (o *MixerOptions) withDefaults() (MixerOptions, error) {
	var c MixerOptions
	if o != nil {
		c = *o
	}
	if c.SampleRate == 0 {
		c.SampleRate = defaultMixRate
	}
	if c.Channels == 0 {
		c.Channels = defaultChannels
	}
	if c.Encoding == 0 {
		c.Encoding = EncodingS16LE
	}
	switch {
	case !validRate(c.SampleRate):
		return c, optionsErrorf("MixerOptions.SampleRate", "%d Hz outside %d..%d", c.SampleRate, minResampleRate, maxResampleRate)
	case c.Channels < 1 || c.Channels > maxChannels:
		return c, optionsErrorf("MixerOptions.Channels", "%d outside 1..%d", c.Channels, maxChannels)
	case c.Encoding.BytesPerSample() == 0:
		return c, optionsErrorf("MixerOptions.Encoding", "%v is not EncodingS16LE or EncodingF32LE", c.Encoding)
	case c.Latency < 0 || c.Latency > maxLatency:
		return c, optionsErrorf("MixerOptions.Latency", "%v outside 0..%v", c.Latency, maxLatency)
	}
	return c, nil
}

// SpeakerOptions configures a [Speaker] ([Device.NewSpeaker],
// [Mixer.NewSpeaker]). A nil *SpeakerOptions and the zero value mean every
// default.
type SpeakerOptions struct {
	// Volume is the initial linear gain, finite and not negative. If zero,
	// 1 (call SetVolume(0) to mute). Other values are invalid.
	Volume float32
	// Pan is the initial stereo position, -1 (left) to 1 (right). Zero,
	// the default, is the centre. Other values are invalid.
	Pan float32
	// Fade is the length of the fade applied when Interrupt or Pause cuts
	// the sound, and of the fade-in when Resume restarts it or late audio
	// ends an underrun, up to 1 s. If zero, 5 ms. Negative disables fades
	// (cuts click). Longer values are invalid.
	Fade time.Duration
	// MaxSegments bounds the queued segments, 1 to 65536. If zero, 256.
	// Other values are invalid (the queue is always bounded).
	MaxSegments int
	// MaxQueued bounds the queued audio, up to 1 hour. If zero, 5
	// minutes. Other values are invalid.
	MaxQueued time.Duration
}

func (o *SpeakerOptions) withDefaults() (SpeakerOptions, error) {
	var c SpeakerOptions
	if o != nil {
		c = *o
	}
	if c.Volume == 0 {
		c.Volume = 1
	}
	switch {
	case c.Fade == 0:
		c.Fade = 5 * time.Millisecond
	case c.Fade < 0:
		c.Fade = 0 // disabled
	}
	if c.MaxSegments == 0 {
		c.MaxSegments = 256
	}
	if c.MaxQueued == 0 {
		c.MaxQueued = 5 * time.Minute
	}
	switch {
	case !(c.Volume >= 0) || math.IsInf(float64(c.Volume), 1):
		return c, optionsErrorf("SpeakerOptions.Volume", "%v is negative or not finite", c.Volume)
	case !(c.Pan >= -1 && c.Pan <= 1):
		return c, optionsErrorf("SpeakerOptions.Pan", "%v outside -1..1", c.Pan)
	case c.Fade > maxFade:
		return c, optionsErrorf("SpeakerOptions.Fade", "%v longer than %v", c.Fade, maxFade)
	case c.MaxSegments < 1 || c.MaxSegments > maxSegments:
		return c, optionsErrorf("SpeakerOptions.MaxSegments", "%d outside 1..%d", c.MaxSegments, maxSegments)
	case c.MaxQueued < 0 || c.MaxQueued > maxQueuedLimit:
		return c, optionsErrorf("SpeakerOptions.MaxQueued", "%v outside 0..%v", c.MaxQueued, maxQueuedLimit)
	}
	return c, nil
}

// RecorderOptions configures [OpenRecorder]. A nil *RecorderOptions and
// the zero value mean every default.
type RecorderOptions struct {
	// MaxDuration caps one recording, 1 ms to 10 minutes (the buffer for
	// it is allocated up front). If zero, 30 s, RPEngine's limit for recorded
	// speech. Reaching it stops recording and signals [Recorder.Limit].
	// Other values are invalid.
	MaxDuration time.Duration
	// LevelInterval is the level meter's window, 1 ms to 10 s. If zero,
	// 50 ms. Other values are invalid.
	LevelInterval time.Duration
	// SampleRate requests a device rate in Hz, 1000 to 768000. If zero,
	// the device's native rate is used and converted in Go (miniaudio's
	// converter aliases; docs/audio.md). Other values are invalid.
	SampleRate int
	// Channels requests a device channel count, 1 to 64, downmixed in Go.
	// If zero, the device's native count. Other values are invalid.
	Channels int
}

func (o *RecorderOptions) withDefaults() (RecorderOptions, error) {
	var c RecorderOptions
	if o != nil {
		c = *o
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 30 * time.Second
	}
	if c.LevelInterval == 0 {
		c.LevelInterval = 50 * time.Millisecond
	}
	switch {
	case c.MaxDuration < time.Millisecond || c.MaxDuration > maxCapture:
		return c, optionsErrorf("RecorderOptions.MaxDuration", "%v outside 1ms..%v", c.MaxDuration, maxCapture)
	case c.LevelInterval < minLevelWindow || c.LevelInterval > maxLevelWindow:
		return c, optionsErrorf("RecorderOptions.LevelInterval", "%v outside %v..%v", c.LevelInterval, minLevelWindow, maxLevelWindow)
	case c.SampleRate != 0 && !validRate(c.SampleRate):
		return c, optionsErrorf("RecorderOptions.SampleRate", "%d Hz outside %d..%d", c.SampleRate, minResampleRate, maxResampleRate)
	case c.Channels < 0 || c.Channels > maxChannels:
		return c, optionsErrorf("RecorderOptions.Channels", "%d outside 1..%d", c.Channels, maxChannels)
	}
	return c, nil
}

func validRate(hz int) bool { return hz >= minResampleRate && hz <= maxResampleRate }

func optionsErrorf(field, format string, args ...any) *OptionsError {
	return &OptionsError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
