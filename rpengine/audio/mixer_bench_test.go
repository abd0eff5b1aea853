package audio

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkDevice_render measures the playback callback: three speakers
// mixed into a 48 kHz stereo device in 10 ms periods, their speech at the
// device's rate, and at the engine's 44.1 kHz (converted as it plays);
// x realtime is seconds of output per second of CPU. It is the reference
// for BenchmarkMixer_Read, which adds the encoding of the same mix.
func BenchmarkDevice_render(b *testing.B) {
	for _, rate := range []int{48000, 44100} {
		b.Run(fmt.Sprintf("speech=%dHz", rate), func(b *testing.B) {
			var f *fakeDevice
			d, err := openDevice(&DeviceOptions{SampleRate: 48000, Channels: 2}, fakeOpener(48000, 2, &f))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			refill := speakersPlaying(b, d.mix, 3, rate)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				refill(i)
				f.pull(480)
			}
			b.ReportMetric(float64(b.N)/100/b.Elapsed().Seconds(), "x_realtime")
		})
	}
}

// BenchmarkMixer_Read measures one 10 ms Read at 48 kHz stereo (1920
// bytes of s16, 3840 of f32), as an engine with its own mixer pulls it:
// with no speaker, and with three speakers playing, with and without a
// Latency (which splits the mix into 5 ms ticks).
func BenchmarkMixer_Read(b *testing.B) {
	for _, enc := range []Encoding{EncodingS16LE, EncodingF32LE} {
		for _, speakers := range []int{0, 3} {
			for _, latency := range []time.Duration{0, 100 * time.Millisecond} {
				name := fmt.Sprintf("%s/speakers=%d/latency=%v", enc, speakers, latency)
				b.Run(name, func(b *testing.B) {
					m, err := NewMixer(&MixerOptions{SampleRate: 48000, Encoding: enc, Latency: latency})
					if err != nil {
						b.Fatal(err)
					}
					defer m.Close()
					refill := speakersPlaying(b, m, speakers, m.rate)
					p := make([]byte, 480*2*enc.BytesPerSample())
					b.SetBytes(int64(len(p)))
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						refill(i)
						if _, err := m.Read(p); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/100/b.Elapsed().Seconds(), "x_realtime")
				})
			}
		}
	}
}

// speakersPlaying adds n speakers to m with 20 s of audio each at rate
// Hz, and returns a function to call before each 10 ms period i that tops
// them up every 20 s of output, with the timer stopped, so they never run
// dry.
func speakersPlaying(b *testing.B, m *Mixer, n, rate int) func(i int) {
	audio := seg(0, rate, dcSamples(1000, 20*rate))
	var speakers []*Speaker
	for i := range n {
		s, err := m.NewSpeaker(&SpeakerOptions{Pan: float32(i) - 1, Volume: 0.7})
		if err != nil {
			b.Fatal(err)
		}
		speakers = append(speakers, s)
	}
	return func(i int) {
		if i%2000 != 0 {
			return
		}
		b.StopTimer()
		for _, s := range speakers {
			if err := s.Enqueue("r", audio); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
}

// BenchmarkSpeaker_enqueue measures the producer side of a 3 s 44.1 kHz
// sentence for a 48 kHz device: a copy as float32 (the device's callback
// converts it to 48 kHz as it plays it, see BenchmarkDevice_render).
func BenchmarkSpeaker_enqueue(b *testing.B) {
	var f *fakeDevice
	d, err := openDevice(&DeviceOptions{SampleRate: 48000, Channels: 2}, fakeOpener(48000, 2, &f))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s, _ := d.NewSpeaker(&SpeakerOptions{MaxQueued: time.Hour})
	sg := seg(0, 44100, AppendInt16(nil, sine(44100, 300, 0.5, 3*44100)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Enqueue("r", sg); err != nil {
			b.Fatal(err)
		}
		s.Interrupt()
		f.pull(480)
	}
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
