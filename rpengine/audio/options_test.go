package audio

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

// TestOptions_invalid checks the one rule of every option struct: an
// out-of-range value (negative ones included, except where negative
// disables) is an *OptionsError naming the field, returned by the
// constructor before it opens anything. Issue #17.
func TestOptions_invalid(t *testing.T) {
	t.Parallel()
	nan := float32(math.NaN())
	var f *fakeDevice
	open := fakeOpener(48000, 2, &f)
	device := func(o DeviceOptions) error { _, err := openDevice(&o, open); return err }
	mixer := func(o MixerOptions) error { _, err := NewMixer(&o); return err }
	speaker := func(o SpeakerOptions) error {
		m, err := NewMixer(nil)
		testutil.Success(t, err)
		_, err = m.NewSpeaker(&o)
		return err
	}
	recorder := func(o RecorderOptions) error { _, err := openRecorder(&o, open); return err }
	cases := []struct {
		field string
		err   error
	}{
		{"DeviceOptions.SampleRate", device(DeviceOptions{SampleRate: -48000})},
		{"DeviceOptions.SampleRate", device(DeviceOptions{SampleRate: 999})},
		{"DeviceOptions.Channels", device(DeviceOptions{Channels: -1})},
		{"DeviceOptions.Channels", device(DeviceOptions{Channels: 65})},
		{"DeviceOptions.Period", device(DeviceOptions{Period: -time.Millisecond})},
		{"DeviceOptions.Period", device(DeviceOptions{Period: 2 * time.Second})},
		{"MixerOptions.SampleRate", mixer(MixerOptions{SampleRate: -1})},
		{"MixerOptions.SampleRate", mixer(MixerOptions{SampleRate: 1_000_000})},
		{"MixerOptions.Channels", mixer(MixerOptions{Channels: -2})},
		{"MixerOptions.Encoding", mixer(MixerOptions{Encoding: 7})},
		{"MixerOptions.Latency", mixer(MixerOptions{Latency: -time.Millisecond})},
		{"MixerOptions.Latency", mixer(MixerOptions{Latency: 3 * time.Second})},
		{"SpeakerOptions.Volume", speaker(SpeakerOptions{Volume: -0.5})},
		{"SpeakerOptions.Volume", speaker(SpeakerOptions{Volume: nan})},
		{"SpeakerOptions.Volume", speaker(SpeakerOptions{Volume: float32(math.Inf(1))})},
		{"SpeakerOptions.Pan", speaker(SpeakerOptions{Pan: 1.5})},
		{"SpeakerOptions.Pan", speaker(SpeakerOptions{Pan: nan})},
		{"SpeakerOptions.Fade", speaker(SpeakerOptions{Fade: 2 * time.Second})},
		{"SpeakerOptions.MaxSegments", speaker(SpeakerOptions{MaxSegments: -1})},
		{"SpeakerOptions.MaxSegments", speaker(SpeakerOptions{MaxSegments: 1 << 20})},
		{"SpeakerOptions.MaxQueued", speaker(SpeakerOptions{MaxQueued: -time.Second})},
		{"SpeakerOptions.MaxQueued", speaker(SpeakerOptions{MaxQueued: 2 * time.Hour})},
		{"RecorderOptions.MaxDuration", recorder(RecorderOptions{MaxDuration: -time.Second})},
		{"RecorderOptions.MaxDuration", recorder(RecorderOptions{MaxDuration: time.Hour})},
		{"RecorderOptions.LevelInterval", recorder(RecorderOptions{LevelInterval: -time.Millisecond})},
		{"RecorderOptions.SampleRate", recorder(RecorderOptions{SampleRate: -16000})},
		{"RecorderOptions.Channels", recorder(RecorderOptions{Channels: -1})},
	}
	for _, c := range cases {
		var oe *OptionsError
		if !errors.As(c.err, &oe) {
			t.Errorf("%s: error %v, want an *OptionsError", c.field, c.err)
			continue
		}
		testutil.Equal(t, "field", oe.Field, c.field)
		t.Logf("%v", oe)
	}
}

// TestOptions_defaults checks that zero means the default and that a
// negative Fade disables fading.
func TestOptions_defaults(t *testing.T) {
	t.Parallel()
	d, err := (*DeviceOptions)(nil).withDefaults()
	testutil.Success(t, err)
	testutil.Equal(t, "device", d, DeviceOptions{Channels: 2, Period: 10 * time.Millisecond})
	m, err := (&MixerOptions{}).withDefaults()
	testutil.Success(t, err)
	testutil.Equal(t, "mixer", m, MixerOptions{SampleRate: 48000, Channels: 2, Encoding: EncodingS16LE})
	s, err := (*SpeakerOptions)(nil).withDefaults()
	testutil.Success(t, err)
	testutil.Equal(t, "speaker", s, SpeakerOptions{Volume: 1, Fade: 5 * time.Millisecond, MaxSegments: 256, MaxQueued: 5 * time.Minute})
	s, err = (&SpeakerOptions{Fade: -1}).withDefaults()
	testutil.Success(t, err)
	testutil.Equal(t, "fade disabled", s.Fade, time.Duration(0))
	r, err := (*RecorderOptions)(nil).withDefaults()
	testutil.Success(t, err)
	testutil.Equal(t, "recorder", r, RecorderOptions{MaxDuration: 30 * time.Second, LevelInterval: 50 * time.Millisecond})
}
