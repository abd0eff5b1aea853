package audio

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// maxBlockFrames is the mixing block; longer requests are split.
const maxBlockFrames = 4096

// tick is the step in which a Mixer with a Latency holds positions back.
const tick = 5 * time.Millisecond

// Mixer mixes any number of [Speaker]s, one per speaking character, into
// PCM that the caller pulls with Read: the source for a game engine that
// has its own audio mixer. For Ebitengine:
//
//	mix, _ := audio.NewMixer(&audio.MixerOptions{SampleRate: 48000, Latency: 100 * time.Millisecond})
//	player, _ := audioContext.NewPlayer(mix) // 48 kHz context: 16-bit stereo
//	player.SetBufferSize(100 * time.Millisecond)
//	player.Play()
//	speaker, _ := mix.NewSpeaker(nil)
//
// Read renders on demand: speakers advance by exactly what was read, so
// their positions, Heard, Done and Mouth follow the consumer. What it read
// is heard only once it has played its own buffer; [MixerOptions.Latency]
// holds the reports back by that much. A [Device] plays a Mixer of its own
// through the sound card, so there is one mixing path.
//
// All methods may be called concurrently; concurrent Reads are serialised.
// Read takes no lock a speaker's producer holds and does not allocate.
type Mixer struct {
	rate, channels int
	enc            Encoding                   // Read's encoding; 0 in a Device's Mixer
	tickFrames     int                        // frames per tick; 0 without a Latency
	delayTicks     int                        // the Latency in ticks
	speakers       atomic.Pointer[[]*Speaker] // snapshot read by mix
	err            stickyError                // set on the device thread
	closed         atomic.Bool

	mu   sync.Mutex // guards following
	list []*Speaker

	readMu sync.Mutex // guards following: Read's state
	block  []float32  // interleaved float block for Read
	pend   []byte     // one encoded frame handed out in pieces
	pendAt int        // bytes of pend already read; len(pend) when none

	// mixing thread only (Read under readMu, or the device callback)
	scratch []float32 // one speaker's mono block
	tickPos int       // frames since the last tick
}

// NewMixer returns a Mixer producing PCM in the format of opts (nil means
// 48 kHz stereo 16-bit). An invalid option is an [*OptionsError]. A Mixer
// starts no goroutine; Close ends it.
func NewMixer(opts *MixerOptions) (*Mixer, error) {
	c, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m := new(Mixer)
	m.init(c.SampleRate, c.Channels, c.Encoding, c.Latency)
	return m, nil
}

// init sizes the mixer for rate and channels; enc 0 is a device's float
// mixer.
func (m *Mixer) init(rate, channels int, enc Encoding, latency time.Duration) {
	m.rate, m.channels, m.enc = rate, channels, enc
	if latency > 0 {
		m.tickFrames = max(1, int(int64(rate)*int64(tick)/int64(time.Second)))
		m.delayTicks = int((latency + tick/2) / tick)
	}
	m.speakers.Store(new([]*Speaker))
	m.scratch = make([]float32, maxBlockFrames)
	if enc != 0 {
		m.block = make([]float32, maxBlockFrames*channels)
		m.pend = make([]byte, channels*enc.BytesPerSample())
		m.pendAt = len(m.pend)
	}
}

// SampleRate returns the rate in Hz of what Read produces.
func (m *Mixer) SampleRate() int { return m.rate }

// Channels returns the channel count of what Read produces.
func (m *Mixer) Channels() int { return m.channels }

// Read fills p with the next len(p) bytes of the mix: little-endian
// interleaved samples in the Mixer's encoding, silence when no speaker
// sounds, clipped to full scale. It returns len(p), nil; a read that ends
// inside a frame continues from there the next time. After Close it
// returns 0, io.EOF, which ends an Ebitengine player. Read never blocks
// on a speaker's producer and does not allocate.
func (m *Mixer) Read(p []byte) (int, error) {
	if m.enc == 0 {
		return 0, io.EOF // a Device's mixer is read by the device only
	}
	m.readMu.Lock()
	defer m.readMu.Unlock()
	if m.closed.Load() {
		return 0, io.EOF
	}
	n := copy(p, m.pend[m.pendAt:])
	m.pendAt += n
	frameBytes := len(m.pend)
	for len(p)-n >= frameBytes {
		frames := min((len(p)-n)/frameBytes, maxBlockFrames)
		b := m.block[:frames*m.channels]
		clear(b)
		m.mix(b)
		AppendEncode(p[n:n], m.enc, b)
		n += frames * frameBytes
	}
	if n < len(p) { // a partial frame: render one, hand out its start
		b := m.block[:m.channels]
		clear(b)
		m.mix(b)
		AppendEncode(m.pend[:0], m.enc, b)
		m.pendAt = copy(p[n:], m.pend)
		n = len(p)
	}
	return n, nil
}

// Close detaches every speaker (their methods then return [ErrClosed]);
// Read then returns io.EOF. It is idempotent.
func (m *Mixer) Close() error {
	m.close()
	return nil
}

// close reports whether this call closed the mixer.
func (m *Mixer) close() bool {
	m.mu.Lock()
	if m.closed.Load() {
		m.mu.Unlock()
		return false
	}
	m.closed.Store(true)
	list := m.list
	m.list = nil
	m.speakers.Store(new([]*Speaker))
	m.mu.Unlock()
	for _, s := range list {
		s.markClosed()
	}
	return true
}

func (m *Mixer) add(s *Speaker) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return ErrClosed
	}
	m.list = append(m.list, s)
	snap := append([]*Speaker(nil), m.list...)
	m.speakers.Store(&snap)
	return nil
}

func (m *Mixer) remove(s *Speaker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := make([]*Speaker, 0, len(m.list))
	for _, q := range m.list {
		if q != s {
			snap = append(snap, q)
		}
	}
	m.list = snap
	m.speakers.Store(&snap)
}

// mix renders every speaker into buf (interleaved, zeroed) and clips the
// sum to [-1, 1]. It is the device callback, and Read's renderer. With a
// Latency, blocks end on tick boundaries, where each speaker moves its
// delayed report on by one tick.
func (m *Mixer) mix(buf []float32) {
	speakers := *m.speakers.Load()
	ch := m.channels
	for len(buf) >= ch { // a trailing partial frame stays silent
		frames := min(len(buf)/ch, maxBlockFrames)
		if m.tickFrames > 0 {
			frames = min(frames, m.tickFrames-m.tickPos)
		}
		block := buf[:frames*ch]
		sounds := false
		for _, s := range speakers {
			sounds = s.mixInto(block, ch, m.scratch[:frames]) || sounds
		}
		if sounds { // else block is still all zeros
			clip(block)
		}
		buf = buf[frames*ch:]
		if m.tickFrames == 0 {
			for _, s := range speakers {
				s.report(s.cursor())
			}
			continue
		}
		if m.tickPos += frames; m.tickPos == m.tickFrames {
			m.tickPos = 0
			for _, s := range speakers {
				s.tick(m.delayTicks)
			}
		}
	}
}

// clip clips buf to [-1, 1]. It writes only what is out of range, which
// speech rarely is: a third of the time of min(1, max(-1, v)) for every
// sample, which was a third of the callback's (issue #31). NaN stays NaN.
func clip(buf []float32) {
	for i, v := range buf {
		if v > 1 {
			buf[i] = 1
		} else if v < -1 {
			buf[i] = -1
		}
	}
}
