package audio_test

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/audio"
	"github.com/gamelink-go/gamelink/rpengine/stream"
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
	// Output: 160 frames at 16 kHz, delay 1.833333ms
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

// Playing a reply's speech through the sound card: Enqueue each segment
// as the reply's events bring it, End when its audio is complete. Without
// a sound card (or cgo), fall back to a Mixer, or to WAV files.
func ExampleDevice() {
	dev, err := audio.OpenDevice(nil) // the native rate, stereo
	if errors.Is(err, audio.ErrNoDevice) {
		fmt.Println("no sound card:", err)
		return
	}
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	speaker, _ := dev.NewSpeaker(&audio.SpeakerOptions{Pan: -0.5}) // one per character
	// In the reply's event loop:
	seg := stream.Segment{Index: 0, SampleRate: 44100, Samples: make([]int16, 4410)}
	_ = speaker.Enqueue("req-1", seg) // each segment, as it arrives
	_ = speaker.End("req-1")          // once the reply's audio is complete
	// Each game frame: subtitles from speaker.Position(), the mouth from
	// speaker.Mouth(); speaker.Position().Done once it has all played.
}

// A Mixer is a pull source for an engine with its own mixer (Ebitengine's
// audio.Context.NewPlayer reads it as 16-bit stereo). Reads of any size
// advance the speakers by exactly what was read.
func ExampleMixer() {
	mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: 48000}) // 16-bit stereo
	if err != nil {
		panic(err)
	}
	defer mix.Close()
	speaker, _ := mix.NewSpeaker(nil)
	tone := make([]int16, 4410) // 100 ms at 44.1 kHz, as RPEngine speaks
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*220*float64(i)/44100))
	}
	_ = speaker.Enqueue("req-1", stream.Segment{Index: 0, SampleRate: 44100, Samples: tone[:2205]})
	_ = speaker.Enqueue("req-1", stream.Segment{Index: 1, SampleRate: 44100, Samples: tone[2205:]})
	_ = speaker.End("req-1")

	buf := make([]byte, 1000) // what the engine's player pulls
	read := 0
	for !speaker.Position().Done {
		n, _ := mix.Read(buf)
		read += n
	}
	pos := speaker.Position()
	fmt.Printf("read %d bytes; %s heard for %v; underruns: %d\n", read, pos.Reply, pos.Heard, speaker.Stats().Underruns)
	// Output: read 20000 bytes; req-1 heard for 101.833333ms; underruns: 0
}

// Push to talk: Start when the key goes down, Stop when it comes up. The
// recording is 16 kHz mono 16-bit, what RPEngine hears.
func ExampleRecorder() {
	rec, err := audio.OpenRecorder(nil)
	if errors.Is(err, audio.ErrNoDevice) {
		fmt.Println("no microphone:", err)
		return
	}
	if err != nil {
		panic(err)
	}
	defer rec.Close()
	_ = rec.Start() // key down; rec.Level() meters it, <-rec.Limit() fires at 30 s
	// ... key up:
	speech, err := rec.Stop()
	if errors.Is(err, audio.ErrSilentInput) {
		fmt.Println("only silence: is the microphone allowed?")
		return
	}
	fmt.Println(len(speech.Samples), "samples at", audio.CaptureRate, "Hz")
}

// Without a sound card, in CI or without cgo: a Null device plays in real
// time into nothing, and speakers advance as they would on a card, so
// subtitles, lip sync and the end of a reply behave the same.
func ExampleDeviceOptions_null() {
	dev, err := audio.OpenDevice(&audio.DeviceOptions{Null: true})
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	speaker, _ := dev.NewSpeaker(nil)
	_ = speaker.Enqueue("req-1", stream.Segment{Index: 0, SampleRate: 44100, Samples: make([]int16, 4410)}) // 100 ms
	_ = speaker.End("req-1")
	start := time.Now()
	for !speaker.Position().Done {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("heard", speaker.Position().Heard.Round(10*time.Millisecond), "in real time:", time.Since(start) >= 90*time.Millisecond)
	// Output: heard 100ms in real time: true
}
