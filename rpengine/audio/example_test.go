package audio_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// A microphone delivers 48 kHz stereo; RPEngine wants 16 kHz mono.
func ExampleResampler() {
	r, err := audio.NewResampler(48000, 16000, 1)
	if err != nil {
		panic(err)
	}
	stereo := make([]float32, 2*480) // one 10 ms period
	mono, _ := audio.AppendDownmix(nil, stereo, 2)
	out, _ := r.Append(nil, mono)
	fmt.Println(len(out), "frames at 16 kHz, delay", r.Delay())
	// Output: 160 frames at 16 kHz, delay 1.5ms
}

func ExampleDecodeWAV() {
	tone := make([]float32, 441)
	for i := range tone {
		tone[i] = float32(0.5 * math.Sin(2*math.Pi*440*float64(i)/44100))
	}
	file, _ := audio.AppendWAV(nil, 44100, 1, tone)
	var w audio.WAV
	if err := audio.DecodeWAV(&w, file); err != nil {
		panic(err)
	}
	fmt.Println(w.SampleRate, "Hz,", w.Channels, "channel,", w.Frames(), "frames")

	err := audio.DecodeWAV(&w, []byte("RIFF\x04\x00\x00\x00WAVE"))
	var fe *audio.FormatError
	fmt.Println(errors.As(err, &fe), err)
	// Output:
	// 44100 Hz, 1 channel, 441 frames
	// true audio: malformed input at byte 12: no fmt chunk
}

// Playing a reply, with a fallback to WAV files when there is no sound card.
func ExampleOutput() {
	seg := audio.Segment{Reply: "req-1", Index: 0, Final: true, SampleRate: 44100, Samples: make([]int16, 4410)}
	out, err := audio.OpenOutput(nil)
	if errors.Is(err, audio.ErrNoDevice) {
		var buf bytes.Buffer // a game would write a file
		_ = audio.WriteWAV(&buf, seg.SampleRate, 1, audio.AppendFloat32(nil, seg.Samples))
		fmt.Println("no sound card: wrote", buf.Len(), "bytes of WAV")
		return
	}
	if err != nil {
		panic(err)
	}
	defer out.Close()
	p, _ := out.NewPlayer(&audio.PlayerOptions{Pan: -0.5})
	_ = p.Enqueue(seg)
	// ... each game frame: subtitles from p.Position(), mouth from p.Mouth().
}

func ExampleCapture_EventAudio() {
	c := audio.Capture{Samples: make([]float32, 16000)} // from Recorder.Stop
	ev := c.EventAudio(audio.EncodingS16LE)
	fmt.Println(ev.Format, ev.SampleRate, ev.Channels, len(ev.Data), c.Duration())
	// Output: pcm_s16le 16000 1 42668 1s
}
