package audio

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Segment is one complete piece of speech to play: for RPEngine, one
// sentence of a reply (rpengine/stream assembles them). Samples are mono.
type Segment struct {
	// Reply identifies the reply (the request id) the segment belongs to.
	Reply string
	// Index is the segment's sequence number within the reply.
	Index int
	// Final marks the reply's last segment. Running dry after a non-final
	// segment counts as an underrun; after a final one it is the end.
	Final bool
	// SampleRate is the rate of Samples in Hz (44100 for RPEngine speech).
	SampleRate int
	// Samples holds mono PCM. Enqueue copies it.
	Samples []int16
}

// PlayerOptions configures [Output.NewPlayer]. The zero value is usable.
type PlayerOptions struct {
	// Volume is the initial linear gain. If zero, 1 is used; call
	// SetVolume(0) to mute.
	Volume float32
	// Pan is the initial stereo position, -1 (left) to 1 (right).
	Pan float32
	// Fade is the length of the fade applied when Interrupt or Pause cuts
	// the sound, and of the fade-in when Resume restarts it or late audio
	// ends an underrun. If zero, 5 ms. Negative cuts without a fade
	// (clicks).
	Fade time.Duration
	// MaxSegments bounds the queued segments (the ring's slots). If zero,
	// 256.
	MaxSegments int
	// MaxQueued bounds the queued audio. If zero, 5 minutes.
	MaxQueued time.Duration
}

func (o *PlayerOptions) withDefaults() PlayerOptions {
	var c PlayerOptions
	if o != nil {
		c = *o
	}
	if c.Volume == 0 {
		c.Volume = 1
	}
	if c.Fade == 0 {
		c.Fade = 5 * time.Millisecond
	}
	if c.MaxSegments <= 0 {
		c.MaxSegments = 256
	}
	if c.MaxQueued <= 0 {
		c.MaxQueued = 5 * time.Minute
	}
	return c
}

// Position is what a player has played of a reply. Frames count as played
// when the device callback takes them; the listener hears them one device
// buffer later (about 30 ms with the default 10 ms period, as miniaudio
// keeps 3 periods), well inside lip-sync tolerance (notes/audio.md §6.3).
type Position struct {
	// Reply is the reply of the segment playing (or last played).
	Reply string
	// Segment is that segment's [Segment.Index].
	Segment int
	// Offset is how far into that segment playback is.
	Offset time.Duration
	// Heard is how much of the reply has been played in total.
	Heard time.Duration
	// Done is true once the reply's final segment played to its end.
	Done bool
	// Interrupted is true when Interrupt cut the reply short.
	Interrupted bool
}

// PlayerStats are a player's counters.
type PlayerStats struct {
	// Underruns counts times the queue ran dry in the middle of a reply;
	// UnderrunFrames the device frames of silence played for them.
	Underruns, UnderrunFrames int64
	// Queued is the audio waiting to be played.
	Queued time.Duration
}

type slot struct {
	reply   string
	index   int
	final   bool
	samples []float32    // mono at the device rate
	played  atomic.Int64 // frames consumed; written by the audio thread only
}

// Player plays segments gapless and in order on an [Output], with its own
// volume, pan, pause and interrupt. Several players on one Output are mixed.
//
// Segments go through a pre-allocated single-producer/single-consumer ring
// of slots: Enqueue (under the player's mutex) fills a slot and publishes
// it; the device callback consumes slots with atomics only.
//
// All methods may be called concurrently.
type Player struct {
	out        *Output
	fadeFrames int
	maxFrames  int64
	mask       uint64

	slots []slot
	write atomic.Uint64 // next slot to fill (producer)
	read  atomic.Uint64 // slot being played (consumer)

	volume, pan    atomic.Uint32 // float32 bits
	paused         atomic.Bool
	interruptGen   atomic.Uint64
	interruptTo    atomic.Uint64
	underruns      atomic.Int64
	underrunFrames atomic.Int64
	mouth          atomic.Uint32 // float32 bits

	mu       sync.Mutex // guards following (producer side; never the callback)
	closed   bool
	released uint64     // slots below this are reclaimed
	rs       *Resampler // converts segments whose rate differs from the device
	rsReply  string
	history  map[string]*replyRecord // bounded by historyLen
	order    []string
	last     Position

	// audio thread only
	gen          uint64
	dropping     bool
	dropTo       uint64
	fadePos      int // fade gain is fadePos/fadeFrames
	inReply      bool
	starving     bool
	gainL, gainR float32
	lip          LipSync
}

const historyLen = 32

// replyRecord is what was played of a reply; frames keeps Heard exact.
type replyRecord struct {
	pos    Position
	frames int64
}

// NewPlayer returns a player mixed into o. Close removes it.
func (o *Output) NewPlayer(opts *PlayerOptions) (*Player, error) {
	c := opts.withDefaults()
	n := uint64(1)
	for n < uint64(c.MaxSegments) {
		n <<= 1
	}
	p := &Player{
		out:        o,
		fadeFrames: max(0, int(math.Round(float64(o.rate)*c.Fade.Seconds()))),
		maxFrames:  int64(min(float64(math.MaxInt64/2), float64(o.rate)*c.MaxQueued.Seconds())),
		mask:       n - 1,
		slots:      make([]slot, n),
		history:    make(map[string]*replyRecord),
	}
	p.fadePos = p.fadeFrames
	p.lip.init(o.rate)
	p.SetVolume(c.Volume)
	p.SetPan(c.Pan)
	p.gainL, p.gainR = p.targetGains(o.channels)
	if err := o.add(p); err != nil {
		return nil, fmt.Errorf("audio: new player: %w", err)
	}
	return p, nil
}

// Close removes the player from its Output; queued audio is dropped. It is
// idempotent.
func (p *Player) Close() error {
	p.out.remove(p)
	p.markClosed()
	return nil
}

func (p *Player) markClosed() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// SetVolume sets the linear gain (1 is unchanged, 0 mutes). Changes are
// ramped over one device period so they do not click.
func (p *Player) SetVolume(v float32) {
	p.volume.Store(math.Float32bits(max(0, v)))
}

// SetPan sets the stereo position from -1 (left) through 0 (centre, both
// channels at full level) to 1 (right); the far channel is attenuated
// linearly (a balance law).
func (p *Player) SetPan(pan float32) {
	p.pan.Store(math.Float32bits(min(1, max(-1, pan))))
}

// Pause fades the player out and holds its place; Resume fades back in.
// Paused time is not an underrun.
func (p *Player) Pause() { p.paused.Store(true) }

// Resume undoes [Player.Pause].
func (p *Player) Resume() { p.paused.Store(false) }

// Mouth returns the mouth openness (0..1) of what the player is playing
// now, for lip sync (see [LipSync]).
func (p *Player) Mouth() float32 { return math.Float32frombits(p.mouth.Load()) }

// Err returns the Output's sticky device error.
func (p *Player) Err() error { return p.out.Err() }

// Enqueue queues a segment to play after everything queued before it. It
// copies the samples, converting them to the device rate, and does not
// block. It fails with [ErrQueueFull] when MaxSegments or MaxQueued would be
// exceeded, [ErrClosed] after Close, or the Output's sticky error.
func (p *Player) Enqueue(seg Segment) (err error) {
	if seg.SampleRate < minResampleRate || seg.SampleRate > maxResampleRate {
		return fmt.Errorf("audio: enqueue %s/%d: sample rate %d Hz outside %d..%d", seg.Reply, seg.Index, seg.SampleRate, minResampleRate, maxResampleRate)
	}
	if err := p.out.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.reclaimLocked()
	w := p.write.Load()
	if w-p.released >= uint64(len(p.slots)) {
		return fmt.Errorf("%w: %d segments queued", ErrQueueFull, len(p.slots))
	}
	if q := p.queuedFramesLocked(); q+int64(len(seg.Samples))*int64(p.out.rate)/int64(seg.SampleRate) > p.maxFrames {
		return fmt.Errorf("%w: %v of audio queued", ErrQueueFull, p.duration(q))
	}
	s := &p.slots[w&p.mask]
	s.reply, s.index, s.final = seg.Reply, seg.Index, seg.Final
	s.samples = p.convertLocked(seg)
	s.played.Store(0)
	p.write.Store(w + 1) // publish
	return nil
}

// convertLocked converts a segment to float32 at the device rate. One
// resampler runs across the segments of a reply so joins stay gapless; the
// final segment flushes its tail.
func (p *Player) convertLocked(seg Segment) []float32 {
	f := AppendFloat32(nil, seg.Samples)
	if seg.SampleRate == p.out.rate {
		return f
	}
	if p.rs == nil || p.rs.inRate != seg.SampleRate || p.rsReply != seg.Reply {
		p.rs, _ = NewResampler(seg.SampleRate, p.out.rate, 1) // rates checked by the caller
		p.rsReply = seg.Reply
	}
	out, _ := p.rs.Append(make([]float32, 0, p.rs.MaxOutFrames(len(f))+p.rs.taps), f)
	if seg.Final {
		out = p.rs.Flush(out)
		p.rs = nil
	}
	return out
}

func (p *Player) duration(frames int64) time.Duration {
	return time.Duration(frames * int64(time.Second) / int64(p.out.rate))
}

func (p *Player) queuedFramesLocked() int64 {
	var q int64
	for i := p.read.Load(); i < p.write.Load(); i++ {
		s := &p.slots[i&p.mask]
		q += int64(len(s.samples)) - s.played.Load()
	}
	return max(0, q)
}

// reclaimLocked records what the consumer finished with and frees the
// slots for reuse.
func (p *Player) reclaimLocked() {
	r := p.read.Load()
	for ; p.released < r; p.released++ {
		s := &p.slots[p.released&p.mask]
		pos := p.recordLocked(s)
		pos.Done = s.final && s.played.Load() == int64(len(s.samples))
		pos.Interrupted = pos.Interrupted || s.played.Load() < int64(len(s.samples))
		p.last = *pos
		s.samples = nil
	}
}

// recordLocked adds a finished slot to its reply's history.
func (p *Player) recordLocked(s *slot) *Position {
	h, ok := p.history[s.reply]
	if !ok {
		if len(p.order) == historyLen {
			delete(p.history, p.order[0])
			p.order = p.order[1:]
		}
		h = &replyRecord{pos: Position{Reply: s.reply}}
		p.history[s.reply] = h
		p.order = append(p.order, s.reply)
	}
	played := s.played.Load()
	if played > 0 || h.frames == 0 {
		h.pos.Segment, h.pos.Offset = s.index, p.duration(played)
	}
	h.frames += played
	h.pos.Heard = p.duration(h.frames)
	return &h.pos
}

// Position reports where playback is: the segment playing now and the
// offset into it, or, when idle, where the last segment ended.
func (p *Player) Position() Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reclaimLocked()
	if pos, ok := p.currentLocked(); ok {
		return pos
	}
	return p.last
}

func (p *Player) currentLocked() (Position, bool) {
	r := p.read.Load()
	if r >= p.write.Load() {
		return Position{}, false
	}
	s := &p.slots[r&p.mask]
	played := s.played.Load()
	pos := Position{Reply: s.reply, Segment: s.index, Offset: p.duration(played)}
	if h, ok := p.history[s.reply]; ok {
		played += h.frames
	}
	pos.Heard = p.duration(played)
	return pos, true
}

// Heard reports how much of the given reply has been played: its last
// segment, the offset reached in it, the total heard, and whether it ended
// or was interrupted. The last 32 replies are remembered; ok is false for
// others.
func (p *Player) Heard(reply string) (pos Position, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reclaimLocked()
	if cur, ok := p.currentLocked(); ok && cur.Reply == reply {
		return cur, true
	}
	if h, ok := p.history[reply]; ok {
		return h.pos, true
	}
	return Position{}, false
}

// Interrupt stops the player now and drops everything queued so far: the
// sound fades out over PlayerOptions.Fade and the next segment enqueued
// afterwards plays normally. It returns the position at the moment of the
// call, that is where the speech was cut; [Player.Heard] gives the final
// account once the fade has played.
func (p *Player) Interrupt() Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reclaimLocked()
	pos, ok := p.currentLocked()
	if !ok {
		pos = p.last
	}
	p.rs = nil
	p.interruptTo.Store(p.write.Load())
	p.interruptGen.Add(1)
	return pos
}

// Stats returns the player's counters.
func (p *Player) Stats() PlayerStats {
	p.mu.Lock()
	q := p.queuedFramesLocked()
	p.mu.Unlock()
	return PlayerStats{Underruns: p.underruns.Load(), UnderrunFrames: p.underrunFrames.Load(), Queued: p.duration(q)}
}

func (p *Player) targetGains(channels int) (l, r float32) {
	v := math.Float32frombits(p.volume.Load())
	if channels == 1 {
		return v, v
	}
	pan := math.Float32frombits(p.pan.Load())
	return v * min(1, 1-pan), v * min(1, 1+pan)
}

// mixInto renders len(mono) frames of the player and adds them to the
// interleaved block. Audio thread only.
func (p *Player) mixInto(block []float32, ch int, mono []float32) {
	p.renderMono(mono)
	p.lip.Push(mono)
	p.mouth.Store(math.Float32bits(p.lip.Openness()))
	tl, tr := p.targetGains(ch)
	gl, gr := p.gainL, p.gainR
	if gl != tl || gr != tr { // ramp to the new gains over this block
		n := len(mono)
		dl, dr := (tl-gl)/float32(n), (tr-gr)/float32(n)
		for i, v := range mono[:n-1] {
			k := float32(i + 1)
			if ch == 1 {
				block[i] += v * (gl + dl*k)
			} else {
				block[i*ch] += v * (gl + dl*k)
				block[i*ch+1] += v * (gr + dr*k)
			}
		}
		mono, block = mono[n-1:], block[(n-1)*ch:]
		p.gainL, p.gainR = tl, tr
	}
	if ch == 1 {
		for i, v := range mono {
			block[i] += v * tl
		}
		return
	}
	block = block[:len(mono)*ch]
	for i, v := range mono {
		block[i*ch] += v * tl
		block[i*ch+1] += v * tr
	}
}

// renderMono writes the next len(dst) frames of the queue (with fades) to
// dst: the consumer side of the ring. Audio thread only.
func (p *Player) renderMono(dst []float32) {
	if g := p.interruptGen.Load(); g != p.gen {
		p.gen, p.dropping, p.dropTo = g, true, p.interruptTo.Load()
	}
	paused := p.paused.Load()
	for i := 0; i < len(dst); {
		target := p.fadeFrames
		if paused || p.dropping {
			target = 0
		}
		if p.fadeFrames == 0 {
			p.fadePos = target
		}
		if p.dropping && (p.fadePos == 0 || p.read.Load() >= p.dropTo) {
			p.drop(paused)
			continue
		}
		if paused && p.fadePos == 0 {
			clear(dst[i:])
			return
		}
		r := p.read.Load()
		if r >= p.write.Load() {
			clear(dst[i:])
			if paused {
				p.fadePos = 0 // nothing sounds: audio arriving now stays paused
			}
			if p.inReply && !paused {
				if !p.starving {
					p.underruns.Add(1)
					p.starving = true
				}
				p.underrunFrames.Add(int64(len(dst) - i))
				p.fadePos = 0 // the late audio fades in instead of clicking
			}
			return
		}
		s := &p.slots[r&p.mask]
		pos := int(s.played.Load())
		n := min(len(dst)-i, len(s.samples)-pos)
		src := s.samples[pos : pos+n]
		out := dst[i : i+n]
		if p.fadePos == target {
			copy(out, src)
		} else {
			n = p.ramp(out, src, target)
		}
		i += n
		s.played.Store(int64(pos + n))
		p.starving, p.inReply = false, !s.final
		if pos+n == len(s.samples) {
			p.read.Store(r + 1)
		}
	}
}

// ramp copies src to out while moving the fade gain towards target; it
// stops early when the gain arrives at 0 (so a pause or drop takes effect
// right there) and returns the frames written.
func (p *Player) ramp(out, src []float32, target int) int {
	k, full := p.fadePos, p.fadeFrames
	inv := 1 / float32(full)
	for i, v := range src {
		if k < target {
			k++
		} else if k > target {
			k--
		}
		if k == full {
			out[i] = v
		} else {
			out[i] = v * float32(k) * inv
		}
		if k == 0 {
			p.fadePos = 0
			return i + 1
		}
	}
	p.fadePos = k
	return len(src)
}

// drop discards the slots queued before the interrupt and ends the reply.
// What follows starts at full level, or silent if the player is paused.
func (p *Player) drop(paused bool) {
	if r := p.read.Load(); r < p.dropTo {
		p.read.Store(p.dropTo)
	}
	p.dropping, p.inReply, p.starving, p.fadePos = false, false, false, p.fadeFrames
	if paused {
		p.fadePos = 0
	}
}
