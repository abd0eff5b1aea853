package bench

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
)

const captureSeconds = 5

// micInput returns seconds of 48 kHz stereo float frames: a voice-like
// tone mix, different in each channel.
func micInput(seconds int) []float32 {
	s := make([]float32, 2*48000*seconds)
	for n := 0; n < len(s)/2; n++ {
		t := float64(n) / 48000
		s[2*n] = float32(0.3*math.Sin(2*math.Pi*220*t) + 0.1*math.Sin(2*math.Pi*1800*t))
		s[2*n+1] = float32(0.3*math.Sin(2*math.Pi*220*t) + 0.1*math.Sin(2*math.Pi*2600*t))
	}
	return s
}

// capturePath does what the recorder and the request do with a push to
// talk: 10 ms device callbacks of 48 kHz stereo float are downmixed and
// resampled to 16 kHz mono (audio.AppendDownmix, audio.Resampler) and
// kept as 16-bit samples (audio.Recording), which the request encodes as
// the base64 s16le event.audio payload.
type capturePath struct {
	rs        *audio.Resampler
	mono, out []float32
	pcm       []int16
	bytes     []byte
}

// payload is event.audio.
type payload struct {
	Format               string
	SampleRate, Channels int
	Data                 string
}

func newCapturePath(tb testing.TB) *capturePath {
	rs, err := audio.NewResampler(48000, audio.CaptureRate, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return &capturePath{rs: rs, mono: make([]float32, 0, 480), out: make([]float32, 0, captureSeconds*audio.CaptureRate+1024)}
}

func (p *capturePath) run(in []float32) (payload, error) {
	p.rs.Reset()
	p.out = p.out[:0]
	for i := 0; i < len(in); i += 960 { // 480 stereo frames: 10 ms
		var err error
		if p.mono, err = audio.AppendDownmix(p.mono[:0], in[i:i+960], 2); err != nil {
			return payload{}, err
		}
		if p.out, err = p.rs.Append(p.out, p.mono); err != nil {
			return payload{}, err
		}
	}
	p.pcm = audio.AppendInt16(p.pcm[:0], p.out)
	p.bytes = p.bytes[:0]
	for _, s := range p.pcm {
		p.bytes = binary.LittleEndian.AppendUint16(p.bytes, uint16(s))
	}
	return payload{Format: "pcm_s16le", SampleRate: audio.CaptureRate, Channels: 1, Data: base64.StdEncoding.EncodeToString(p.bytes)}, nil
}

// BenchmarkCapture measures a 5 s push to talk from 48 kHz stereo float
// device frames to the base64 16 kHz s16le event.audio payload.
func BenchmarkCapture(b *testing.B) {
	in := micInput(captureSeconds)
	p := newCapturePath(b)
	b.SetBytes(4 * int64(len(in)))
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if _, err := p.run(in); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
	reportRealtime(b, captureSeconds*time.Second)
}

// TestCapturePath checks the payload BenchmarkCapture produces.
func TestCapturePath(t *testing.T) {
	t.Parallel()
	ev, err := newCapturePath(t).run(micInput(captureSeconds))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Format != "pcm_s16le" || ev.SampleRate != 16000 || ev.Channels != 1 {
		t.Fatalf("payload %s %d Hz %d ch", ev.Format, ev.SampleRate, ev.Channels)
	}
	pcm, err := base64.StdEncoding.DecodeString(ev.Data)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pcm) / 2; n < captureSeconds*16000-64 || n > captureSeconds*16000 {
		t.Errorf("%d samples, want about %d", n, captureSeconds*16000)
	}
	var peak int16
	for i := 0; i+1 < len(pcm); i += 2 {
		peak = max(peak, int16(uint16(pcm[i])|uint16(pcm[i+1])<<8))
	}
	if peak < 10000 || peak > 14000 { // 0.3 + 0.1 (both channels' 220 Hz, half of each overtone)
		t.Errorf("peak %d, want about 0.35 full scale", peak)
	}
}
