package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	ebaudio "github.com/hajimehoshi/ebiten/v2/audio"

	"github.com/gamelink-go/gamelink/rpengine/audio"
)

// The game's audio format: Ebitengine's context rate, 16-bit stereo, and
// the player's buffer, which the mixer's Latency matches so that the
// character's mouth and Heard follow what is heard rather than what
// Ebitengine has read ahead.
const (
	sampleRate  = 48000
	audioBuffer = 100 * time.Millisecond
	speechRate  = audio.CaptureRate // what push to talk records: 16 kHz mono
)

// voice is the character's speech, played through Ebitengine's own audio
// (no second sound device): the library's Mixer is an io.Reader that an
// Ebitengine player pulls, and the character's Speaker is mixed into it.
// It also holds the microphone for push to talk.
type voice struct {
	mix     *audio.Mixer
	player  *ebaudio.Player
	speaker *audio.Speaker
	pulled  atomic.Int64 // bytes Ebitengine read from the mixer
	silent  []byte       // --mute: one tick of audio, read by tick

	rec    *audio.Recorder // opened at the first push to talk
	recErr error           // why it could not be opened

	lastPulled int64     // watchOutput's: pulled at pulledAt
	pulledAt   time.Time // when Ebitengine last pulled
}

// openVoice plays the mixer through Ebitengine; muted, the game reads it
// itself in real time (see tick), so speech still moves the mouth.
func openVoice(mute bool) (*voice, error) {
	mix, err := audio.NewMixer(&audio.MixerOptions{SampleRate: sampleRate, Latency: audioBuffer})
	if err != nil {
		return nil, err
	}
	v := &voice{mix: mix}
	if v.speaker, err = mix.NewSpeaker(nil); err != nil {
		return nil, err
	}
	if mute {
		v.silent = make([]byte, 4*sampleRate/ebiten.TPS())
		return v, nil
	}
	ctx := ebaudio.NewContext(sampleRate)
	if v.player, err = ctx.NewPlayer(counter{mix, &v.pulled}); err != nil {
		return nil, err
	}
	v.player.SetBufferSize(audioBuffer)
	v.player.Play()
	return v, nil
}

// noSoundDevice says why no sound device can play, or returns nil.
// Ebitengine's audio, once started, fails the whole game when it finds no
// device (RunGame returns its error), so the game asks first: the library
// opens the default playback device, keeping ALSA's complaints off the
// terminal, and closes it again. Only on Linux, where Ebitengine builds
// with cgo and so does the library's device; elsewhere Ebitengine's audio
// needs no C compiler, and the library's may have none.
func noSoundDevice() error {
	if runtime.GOOS != "linux" {
		return nil
	}
	d, err := audio.OpenDevice(nil)
	if err != nil {
		return err
	}
	return d.Close()
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n *atomic.Int64
}

func (c counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// tick runs once per Update. Muted, it reads one tick of audio from the
// mixer, as Ebitengine's player would have.
func (v *voice) tick() {
	v.watchOutput(time.Now())
	if v.silent != nil {
		_, _ = counter{v.mix, &v.pulled}.Read(v.silent)
	}
}

// pulledFrames is how many frames Ebitengine has read from the mixer.
func (v *voice) pulledFrames() int64 { return v.pulled.Load() / 4 } // 16-bit stereo

// startTalking opens the microphone (once) and starts recording.
func (v *voice) startTalking() error {
	if v.rec == nil && v.recErr == nil {
		v.rec, v.recErr = audio.OpenRecorder(nil)
	}
	if v.recErr != nil {
		return fmt.Errorf("no microphone: %w", v.recErr)
	}
	return v.rec.Start()
}

// stopTalking ends the recording and returns it, 16 kHz mono.
func (v *voice) stopTalking() ([]int16, error) {
	if v.rec == nil || !v.rec.Recording() {
		return nil, nil
	}
	r, err := v.rec.Stop()
	if errors.Is(err, audio.ErrSilentInput) {
		return nil, errors.New("the microphone heard only silence (is the game allowed to use it?)")
	}
	if err != nil {
		return nil, err
	}
	return r.Samples, nil
}

// listening reports the recording's length and level while push to talk
// is held.
func (v *voice) listening() (time.Duration, float32, bool) {
	if v.rec == nil || !v.rec.Recording() {
		return 0, 0, false
	}
	l := v.rec.Level()
	return time.Duration(l.Seconds * float64(time.Second)), l.RMS, true
}

// limitReached reports whether the recording hit its 30 s cap.
func (v *voice) limitReached() bool {
	if v.rec == nil {
		return false
	}
	select {
	case <-v.rec.Limit():
		return true
	default:
		return false
	}
}

func (v *voice) close() {
	if v.rec != nil {
		v.rec.Close()
	}
	if v.player != nil {
		v.player.Close()
	}
	v.mix.Close()
}
