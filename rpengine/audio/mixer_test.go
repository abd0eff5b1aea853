package audio

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
)

func newTestMixer(t *testing.T, opts *MixerOptions) *Mixer {
	t.Helper()
	m, err := NewMixer(opts)
	testutil.Success(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// reader reads a Mixer in sizes drawn from rng (1 byte to a few periods,
// so reads split frames and samples), keeping all it got.
type reader struct {
	m   *Mixer
	rng *rand.Rand
	buf []byte
	got []byte
}

func (r *reader) read(bytes int) {
	for bytes > 0 {
		n := min(bytes, 1+r.rng.IntN(5000))
		if r.rng.IntN(4) == 0 {
			n = min(bytes, 1+r.rng.IntN(7)) // tiny reads, inside a frame
		}
		k, err := r.m.Read(r.buf[:n])
		if err != nil || k != n {
			panic("short read")
		}
		r.got = append(r.got, r.buf[:n]...)
		bytes -= n
	}
}

func newReader(t *testing.T, m *Mixer, stream uint64) *reader {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return &reader{m: m, rng: rand.New(rand.NewPCG(seed, stream)), buf: make([]byte, 5000)}
}

// TestMixer_readReply plays a whole reply through Read as an engine with
// its own mixer pulls it: 16-bit stereo at 48 kHz, 44.1 kHz segments
// enqueued between reads of odd sizes, End after the last. Every sample of
// the resampler's exact output is delivered once, in both channels, then
// silence; no underrun; Done. Issue #17 and #23.
func TestMixer_readReply(t *testing.T) {
	t.Parallel()
	m := newTestMixer(t, &MixerOptions{SampleRate: 48000})
	s, err := m.NewSpeaker(nil)
	testutil.Success(t, err)
	x := speech(44100)
	want, _ := resampled(t, x, 44100, 48000)
	r := newReader(t, m, 3)
	segs := splitReply(x, 9000, 13000, 4000)
	for i, sg := range segs {
		testutil.Success(t, s.Enqueue("r", sg))
		if i < len(segs)-1 {
			r.read(4 * 4000) // less than a segment: the next one is in time
		}
	}
	testutil.Success(t, s.End("r"))
	r.read(4*len(want) - len(r.got) + 4*4800) // the rest, and 100 ms more
	frames := len(r.got) / 4
	delivered := 0
	for i := range frames {
		l := int16(binary.LittleEndian.Uint16(r.got[4*i:]))
		rt := int16(binary.LittleEndian.Uint16(r.got[4*i+2:]))
		if l != rt {
			t.Fatalf("frame %d: left %d, right %d", i, l, rt)
		}
		if i >= len(want) {
			if l != 0 {
				t.Fatalf("frame %d after the reply is %d", i, l)
			}
			continue
		}
		if w := toInt16(want[i]); l != w {
			t.Fatalf("frame %d: %d, want %d", i, l, w)
		}
		delivered++
	}
	t.Logf("delivered %d frames through %d bytes of reads; the resampler's exact output is %d", delivered, len(r.got), len(want))
	testutil.Equal(t, "delivered", delivered, len(want))
	testutil.Equal(t, "underruns", s.Stats().Underruns, int64(0))
	pos, _ := s.Heard("r")
	testutil.Equal(t, "done", pos.Done, true)
	testutil.Equal(t, "heard", pos.Heard, time.Duration(len(want))*time.Second/48000)
}

// TestMixer_float32 reads float32 mono: the samples are the resampler's
// output bit for bit.
func TestMixer_float32(t *testing.T) {
	t.Parallel()
	m := newTestMixer(t, &MixerOptions{SampleRate: 22050, Channels: 1, Encoding: EncodingF32LE})
	s, err := m.NewSpeaker(nil)
	testutil.Success(t, err)
	x := speech(4410)
	testutil.Success(t, s.Enqueue("r", seg(0, 44100, x)))
	testutil.Success(t, s.End("r"))
	want, _ := resampled(t, x, 44100, 22050)
	r := newReader(t, m, 4)
	r.read(4 * (len(want) + 100))
	got, err := AppendDecode(nil, EncodingF32LE, r.got)
	testutil.Success(t, err)
	testutil.Equal(t, "samples", got[:len(want)], want)
	testutil.Equal(t, "then silence", got[len(want):], make([]float32, 100))
}

// TestMixer_latency checks that with a Latency the speaker's reports
// follow what is heard, one Latency after it was read: the position, the
// mouth, and Done.
func TestMixer_latency(t *testing.T) {
	t.Parallel()
	const ms = 48 // frames per millisecond
	m := newTestMixer(t, &MixerOptions{SampleRate: 48000, Channels: 1, Latency: 100 * time.Millisecond})
	s, err := m.NewSpeaker(nil)
	testutil.Success(t, err)
	testutil.Success(t, s.Enqueue("r", seg(0, 48000, AppendInt16(nil, sine(48000, 200, 0.3, 200*ms)))))
	testutil.Success(t, s.End("r"))
	r := newReader(t, m, 5)
	r.read(2 * 60 * ms)
	testutil.Equal(t, "heard after reading 60 ms", s.Position().Heard, time.Duration(0))
	testutil.Equal(t, "mouth after reading 60 ms", s.Mouth(), float32(0))
	r.read(2 * 90 * ms)
	// 150 ms read, 100 ms of it still in the consumer's buffer.
	testutil.Equal(t, "heard after reading 150 ms", s.Position(), Position{Reply: "r", Offset: 50 * time.Millisecond, Heard: 50 * time.Millisecond})
	if mouth := s.Mouth(); mouth < 0.5 {
		t.Errorf("mouth %v 50 ms into a loud vowel, want open", mouth)
	}
	r.read(2 * 150 * ms)
	if pos := s.Position(); pos.Done || pos.Heard != 200*time.Millisecond {
		t.Errorf("after reading 300 ms: %+v, want all 200 ms heard but not yet done", pos)
	}
	r.read(2 * 10 * ms)
	testutil.Equal(t, "done 100 ms after the end was read", s.Position().Done, true)
}

func TestMixer_close(t *testing.T) {
	t.Parallel()
	m, err := NewMixer(nil)
	testutil.Success(t, err)
	s, err := m.NewSpeaker(nil)
	testutil.Success(t, err)
	n, err := m.Read(make([]byte, 10))
	testutil.Success(t, err)
	testutil.Equal(t, "read before close", n, 10)
	testutil.Success(t, m.Close())
	testutil.Success(t, m.Close())
	n, err = m.Read(make([]byte, 10))
	testutil.ErrorIs(t, err, io.EOF)
	testutil.Equal(t, "read after close", n, 0)
	testutil.ErrorIs(t, s.Enqueue("r", seg(0, 44100, nil)), ErrClosed)
	testutil.ErrorIs(t, s.End("r"), ErrClosed)
	_, err = m.NewSpeaker(nil)
	testutil.ErrorIs(t, err, ErrClosed)
}

func TestMixer_readAllocs(t *testing.T) {
	testutil.SkipAllocs(t)
	for _, latency := range []time.Duration{0, 50 * time.Millisecond} {
		m := newTestMixer(t, &MixerOptions{SampleRate: 48000, Latency: latency})
		for i := range 3 {
			s, err := m.NewSpeaker(&SpeakerOptions{Pan: float32(i) - 1})
			testutil.Success(t, err)
			testutil.Success(t, s.Enqueue("r", seg(0, 44100, make([]int16, 44100))))
		}
		p := make([]byte, 1923) // 10 ms and a partial frame
		allocs := testing.AllocsPerRun(100, func() { _, _ = m.Read(p) })
		testutil.Equal(t, "Read allocs", allocs, 0.0)
	}
}
