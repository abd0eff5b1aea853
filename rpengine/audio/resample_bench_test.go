package audio

import (
	"fmt"
	"testing"
)

// BenchmarkResampler converts one second of mono audio in 10 ms chunks
// and reports x realtime (seconds of audio per second of CPU), with the
// fastest kernel and with the pure-Go one.
func BenchmarkResampler(b *testing.B) {
	for _, p := range []ratePair{{48000, 16000}, {44100, 16000}, {44100, 48000}} {
		for _, generic := range []bool{false, true} {
			name := fmt.Sprintf("%d-%d", p.in, p.out)
			if generic {
				name += "/go"
			} else if hasAVX2 {
				name += "/avx2"
			}
			b.Run(name, func(b *testing.B) {
				r, err := NewResampler(p.in, p.out, 1)
				if err != nil {
					b.Fatal(err)
				}
				r.dot = kernel(generic)
				x := sine(float64(p.in), 1000, 0.5, p.in)
				chunk := p.in / 100
				dst := make([]float32, 0, r.MaxOutFrames(chunk))
				b.ReportAllocs()
				b.SetBytes(int64(4 * len(x)))
				b.ResetTimer()
				for range b.N {
					for i := 0; i+chunk <= len(x); i += chunk {
						dst, _ = r.Append(dst[:0], x[i:i+chunk])
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
			})
		}
	}
}

// BenchmarkOutput_render measures the playback callback: three players
// (one resampled from 44.1 kHz at enqueue time is not part of this) mixed
// into a 48 kHz stereo device in 10 ms periods; x realtime is seconds of
// output per second of CPU.
func BenchmarkOutput_render(b *testing.B) {
	var f *fakeDevice
	o, err := openOutput(&OutputOptions{SampleRate: 48000, Channels: 2}, fakeOpener(48000, 2, &f))
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	for i := range 3 {
		p, _ := o.NewPlayer(&PlayerOptions{Pan: float32(i) - 1, Volume: 0.7})
		_ = p.Enqueue(Segment{Reply: "r", SampleRate: 48000, Samples: make([]int16, 48000*600)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.pull(480)
	}
	b.ReportMetric(float64(b.N)/100/b.Elapsed().Seconds(), "x_realtime")
}

// BenchmarkPlayer_enqueue measures the producer side: converting and
// resampling a 3 s 44.1 kHz sentence to a 48 kHz device.
func BenchmarkPlayer_enqueue(b *testing.B) {
	var f *fakeDevice
	o, err := openOutput(&OutputOptions{SampleRate: 48000, Channels: 2}, fakeOpener(48000, 2, &f))
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	p, _ := o.NewPlayer(&PlayerOptions{MaxQueued: 1 << 62})
	seg := Segment{Reply: "r", SampleRate: 44100, Samples: AppendInt16(nil, sine(44100, 300, 0.5, 3*44100))}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := p.Enqueue(seg); err != nil {
			b.Fatal(err)
		}
		p.Interrupt()
		f.pull(480)
	}
	b.ReportMetric(3*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
