package audio

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// Position is what a speaker has played of a reply. Frames count as
// played when the mixer renders them: when the device callback takes them,
// or when [Mixer.Read] returns them, held back by [MixerOptions.Latency].
// A [Device]'s listener hears them one device buffer later (about 30 ms
// with the default 10 ms period, as miniaudio keeps 3 periods), well
// inside lip-sync tolerance (docs/audio.md).
type Position struct {
	// Reply is the reply of the segment playing (or last played).
	Reply string
	// Segment is that segment's index ([stream.Segment.Index]).
	Segment int
	// Offset is how far into that segment playback is.
	Offset time.Duration
	// Heard is how much of the reply has been played in total.
	Heard time.Duration
	// Done is true once the reply was ended ([Speaker.End]) and all of it,
	// with the resampler's tail, has played.
	Done bool
	// Interrupted is true when Interrupt cut the reply short.
	Interrupted bool
}

// SpeakerStats are a speaker's counters.
type SpeakerStats struct {
	// Underruns counts the times a reply's audio ran out before its next
	// segment was queued; UnderrunFrames counts the frames of silence
	// played for them. An underrun is counted when the late segment starts:
	// the silence after a reply's last segment (until [Speaker.End], or
	// for good) is not one, nor is idle or paused time.
	Underruns, UnderrunFrames int64
	// Queued is the audio waiting to be played.
	Queued time.Duration
}

// slot is one entry of a speaker's ring: a segment, or a reply's end.
//
// A slot holds its samples at the segment's rate; the mixing thread
// resamples them to the mixer's rate as it plays them (see ready), so
// that Enqueue does no filtering and a segment's first frames can play
// before its last are converted. The frames a slot plays are those its
// resampler emits while it takes the slot's samples: the same frames,
// bit for bit, as resampling the whole segment at once.
type slot struct {
	reply   string
	index   int
	final   bool       // the reply's end: the tail of rs, if any, and no samples
	samples []float32  // mono, at the segment's rate
	rs      *Resampler // converts samples to the mixer's rate (nil: same rate); on a final slot, the one whose tail plays
	flush   *Resampler // a resampler whose tail plays first (the reply's rate changed), or nil
	frames  int64      // frames at the mixer's rate it is expected to play (exact without resampling)

	start  atomic.Int64 // frames of the segment before this slot's (a tail's offset); exact once it plays
	played atomic.Int64 // frames played; written by the mixing thread only
	done   atomic.Bool  // every frame played (not cut by Interrupt); mixing thread
}

// empty reports whether the slot plays no frame at all.
func (sl *slot) empty() bool {
	return len(sl.samples) == 0 && sl.flush == nil && !(sl.final && sl.rs != nil)
}

// cursor is a point in a speaker's ring: slot, frames played of it, and
// the mouth openness there.
type cursor struct {
	slot   uint64
	played int64
	mouth  float32
}

// Speaker plays the speech of one character: the segments of replies,
// gapless and in order, with its own volume, pan, pause and interrupt.
// Several speakers on one [Device] or [Mixer] are mixed. Playing a reply
// is Enqueue for each of its segments as they arrive, then End once the
// reply's audio is complete:
//
//	case segment:       err = speaker.Enqueue(replyID, seg) // a stream.Segment
//	case audio complete: err = speaker.End(replyID)
//
// Segments go through a pre-allocated single-producer/single-consumer ring
// of slots: Enqueue (under the speaker's mutex) fills a slot and publishes
// it; the mixer consumes slots with atomics only.
//
// All methods may be called concurrently.
type Speaker struct {
	mix        *Mixer
	fadeFrames int
	maxFrames  int64
	maxSlots   uint64 // slots Enqueue may fill; End may use one more
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

	// The heard cursor, published by the mixing thread under a sequence
	// lock (odd while writing): the render cursor, delayed by the Latency.
	heardSeq    atomic.Uint64
	heardSlot   atomic.Uint64
	heardPlayed atomic.Int64
	heardMouth  atomic.Uint32 // float32 bits

	mu        sync.Mutex // guards following (producer side; never the mixer)
	closed    bool
	released  uint64                  // slots below this are reclaimed
	rs        *Resampler              // the resampler handed to the slots of segments whose rate differs from the mixer's
	rsLive    bool                    // slots of the open reply feed rs: its End flushes it
	open      bool                    // reply has segments queued and no end yet
	reply     string                  // the reply being queued
	lastIndex int                     // its last segment's index
	lastLen   int64                   // and that segment's frames (expected)
	history   map[string]*replyRecord // bounded by historyLen
	order     []string
	last      Position
	free      [][]float32 // samples of reclaimed slots, for the next segments (at most maxFreeFloats in all)
	freeLen   int         // their capacity in all

	// mixing thread only
	gen          uint64
	dropping     bool
	dropTo       uint64
	fadePos      int    // fade gain is fadePos/fadeFrames
	inReply      bool   // the reply of the last slot played has not ended
	playing      string // that reply
	gap          int64  // frames of silence since the queue ran dry in it
	gainL, gainR float32
	lip          LipSync
	delay        []cursor // the last Latency of cursors, one per tick
	delayAt      int
	conv         converter // the slot being played, as it is converted
}

const historyLen = 32

// maxFreeFloats bounds the samples of reclaimed slots a speaker keeps for
// reuse (2 MiB): a segment's float32 samples come from there instead of
// a new allocation (zeroed, then overwritten) per segment (issue #24).
const maxFreeFloats = 1 << 19

// replyRecord is what was played of a reply; frames keeps Heard exact.
type replyRecord struct {
	pos    Position
	frames int64
}

// NewSpeaker returns a speaker mixed into m. An invalid option is an
// [*OptionsError]; after Close it fails with [ErrClosed]. Close removes
// the speaker.
func (m *Mixer) NewSpeaker(opts *SpeakerOptions) (*Speaker, error) {
	c, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	n := uint64(1)
	for n < uint64(c.MaxSegments)+1 {
		n <<= 1
	}
	s := &Speaker{
		mix:        m,
		fadeFrames: int(math.Round(float64(m.rate) * c.Fade.Seconds())),
		maxFrames:  int64(float64(m.rate) * c.MaxQueued.Seconds()),
		maxSlots:   uint64(c.MaxSegments),
		mask:       n - 1,
		slots:      make([]slot, n),
		history:    make(map[string]*replyRecord),
		delay:      make([]cursor, m.delayTicks),
	}
	s.fadePos = s.fadeFrames
	s.conv.pend = make([]float32, 0, convFrames)
	s.lip.init(m.rate)
	s.SetVolume(c.Volume)
	s.SetPan(c.Pan)
	s.gainL, s.gainR = s.targetGains(m.channels)
	if err := m.add(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Close removes the speaker from its mixer; queued audio is dropped. It is
// idempotent.
func (s *Speaker) Close() error {
	s.mix.remove(s)
	s.markClosed()
	return nil
}

func (s *Speaker) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// SetVolume sets the linear gain (1 is unchanged, 0 mutes; negative is
// taken as 0). Changes are ramped over one mixing block so they do not
// click.
func (s *Speaker) SetVolume(v float32) {
	s.volume.Store(math.Float32bits(max(0, v)))
}

// SetPan sets the stereo position from -1 (left) through 0 (centre, both
// channels at full level) to 1 (right), clamped to that range; the far
// channel is attenuated linearly (a balance law).
func (s *Speaker) SetPan(pan float32) {
	s.pan.Store(math.Float32bits(min(1, max(-1, pan))))
}

// Pause fades the speaker out and holds its place; Resume fades back in.
// Paused time is not an underrun.
func (s *Speaker) Pause() { s.paused.Store(true) }

// Resume undoes [Speaker.Pause].
func (s *Speaker) Resume() { s.paused.Store(false) }

// Mouth returns the mouth openness (0..1) of what the speaker plays at the
// heard position, for lip sync (see [LipSync]).
func (s *Speaker) Mouth() float32 { return math.Float32frombits(s.heardMouth.Load()) }

// Err returns the device's sticky error ([Device.Err]); nil on a [Mixer].
func (s *Speaker) Err() error { return s.mix.err.get() }

// Enqueue queues a segment of the given reply to play after everything
// queued before it; seg is a [stream.Segment] as the reply's
// events carry it. It copies the samples (as float32) and does not block;
// a segment at another rate than the mixer's is converted to it as it
// plays (one resampler runs across a reply's segments, so joins are
// gapless), so Enqueue costs a copy whatever the rates. A segment of
// another reply first ends the reply being queued, as [Speaker.End]
// would. It fails with [ErrQueueFull] when MaxSegments or MaxQueued would
// be exceeded, [ErrClosed] after Close, or the device's sticky error.
func (s *Speaker) Enqueue(reply string, seg stream.Segment) error {
	if !validRate(seg.SampleRate) {
		return fmt.Errorf("audio: enqueue %s/%d: sample rate %d Hz outside %d..%d", reply, seg.Index, seg.SampleRate, minResampleRate, maxResampleRate)
	}
	if err := s.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.reclaimLocked(s.heard())
	ends := s.open && s.reply != reply
	need := uint64(1)
	if ends {
		need++
	}
	if used := s.write.Load() - s.released; used+need > s.maxSlots {
		return fmt.Errorf("%w: %d segments queued", ErrQueueFull, used)
	}
	if q := s.queuedFramesLocked(); q+int64(len(seg.Samples))*int64(s.mix.rate)/int64(seg.SampleRate) > s.maxFrames {
		return fmt.Errorf("%w: %v of audio queued", ErrQueueFull, s.duration(q))
	}
	if ends {
		s.endLocked()
	}
	sl := s.segmentLocked(seg)
	s.publishLocked(reply, seg.Index, sl)
	s.open, s.reply, s.lastIndex, s.lastLen = true, reply, seg.Index, sl.frames
	return nil
}

// End says that the reply's audio is complete: no segment of it follows.
// The speaker plays what is queued, then the resampler's tail (the last
// milliseconds, which the filter holds back until it knows the input has
// ended), and [Position.Done] becomes true once all of it has played. The
// silence while waiting for End after the last segment is not counted as
// an underrun. End of a reply that is not being queued (never enqueued,
// ended already, or interrupted) does nothing. It fails with [ErrClosed]
// after Close, or the device's sticky error.
func (s *Speaker) End(reply string) error {
	if err := s.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if !s.open || s.reply != reply {
		return nil
	}
	s.reclaimLocked(s.heard())
	if s.write.Load()-s.released >= uint64(len(s.slots)) {
		// Cannot happen: Enqueue leaves a slot beyond MaxSegments for this.
		return fmt.Errorf("%w: no slot for the end of %s", ErrQueueFull, reply)
	}
	s.endLocked()
	return nil
}

// endLocked queues the end of the open reply: the resampler's tail.
func (s *Speaker) endLocked() {
	end := slotSpec{final: true, start: s.lastLen} // the mixing thread makes start exact
	if s.rsLive {
		end.rs, end.frames = s.rs, tailFrames(s.rs)
		s.rsLive = false
	}
	s.publishLocked(s.reply, s.lastIndex, end)
	s.open = false
}

// slotSpec is what the producer puts in a slot (see slot).
type slotSpec struct {
	final     bool
	samples   []float32
	rs, flush *Resampler
	frames    int64
	start     int64
}

// publishLocked fills the next slot of the ring with reply's segment
// index, as sp says, and publishes it.
func (s *Speaker) publishLocked(reply string, index int, sp slotSpec) {
	w := s.write.Load()
	sl := &s.slots[w&s.mask]
	sl.reply, sl.index, sl.final = reply, index, sp.final
	sl.samples, sl.rs, sl.flush, sl.frames = sp.samples, sp.rs, sp.flush, sp.frames
	sl.start.Store(sp.start)
	sl.played.Store(0)
	sl.done.Store(false)
	s.write.Store(w + 1) // publish
}

// segmentLocked makes the slot of a segment: its samples as float32 at
// its rate, and the resamplers that take them to the mixer's rate as
// they play. One resampler runs across the segments of a reply so joins
// stay gapless; a change of rate within a reply plays the old rate's tail
// first.
func (s *Speaker) segmentLocked(seg stream.Segment) slotSpec {
	sl := slotSpec{samples: AppendFloat32(s.samplesLocked(len(seg.Samples)), seg.Samples), frames: int64(len(seg.Samples))}
	if s.rsLive && s.rs.inRate != seg.SampleRate {
		sl.flush, sl.frames = s.rs, sl.frames+tailFrames(s.rs)
		s.rsLive = false
	}
	if seg.SampleRate == s.mix.rate {
		return sl
	}
	if s.rs == nil || s.rs.inRate != seg.SampleRate {
		s.rs = newPlayResampler(seg.SampleRate, s.mix.rate) // rates checked by the caller
	}
	sl.rs, s.rsLive = s.rs, true
	sl.frames = int64(len(seg.Samples)) * int64(s.mix.rate) / int64(seg.SampleRate)
	if sl.flush != nil {
		sl.frames += tailFrames(sl.flush)
	}
	return sl
}

// samplesLocked returns an empty buffer for n samples: one a reclaimed
// slot held, or nil (AppendFloat32 allocates it).
func (s *Speaker) samplesLocked(n int) []float32 {
	for i := len(s.free) - 1; i >= 0; i-- {
		if b := s.free[i]; cap(b) >= n {
			s.free = slices.Delete(s.free, i, i+1)
			s.freeLen -= cap(b)
			return b[:0]
		}
	}
	return nil
}

// putSamplesLocked keeps the samples of a reclaimed slot for reuse, within
// maxFreeFloats. The mixing thread is past the slot (it was heard to its
// end, or dropped), so it no longer reads them.
func (s *Speaker) putSamplesLocked(b []float32) {
	if cap(b) == 0 || s.freeLen+cap(b) > maxFreeFloats {
		return
	}
	s.free = append(s.free, b[:0])
	s.freeLen += cap(b)
}

func (s *Speaker) duration(frames int64) time.Duration {
	return time.Duration(frames * int64(time.Second) / int64(s.mix.rate))
}

// queuedFramesLocked returns the frames queued at the mixer's rate: exact
// without resampling, otherwise within a few frames per segment.
func (s *Speaker) queuedFramesLocked() int64 {
	var q int64
	for i := s.read.Load(); i < s.write.Load(); i++ {
		sl := &s.slots[i&s.mask]
		q += max(0, sl.frames-sl.played.Load())
	}
	return q
}

// heard reads the heard cursor.
func (s *Speaker) heard() cursor {
	for {
		seq := s.heardSeq.Load()
		if seq&1 == 1 {
			continue
		}
		c := cursor{slot: s.heardSlot.Load(), played: s.heardPlayed.Load()}
		if s.heardSeq.Load() == seq {
			return c
		}
	}
}

// reclaimLocked records the slots heard to their end and frees them for
// reuse.
func (s *Speaker) reclaimLocked(h cursor) {
	for ; s.released < h.slot; s.released++ {
		sl := &s.slots[s.released&s.mask]
		pos := s.recordLocked(sl)
		pos.Interrupted = pos.Interrupted || !sl.done.Load() && !sl.empty()
		pos.Done = sl.final && !pos.Interrupted
		s.last = *pos
		s.putSamplesLocked(sl.samples)
		sl.samples, sl.rs, sl.flush = nil, nil, nil
	}
}

// recordLocked adds a finished slot to its reply's history.
func (s *Speaker) recordLocked(sl *slot) *Position {
	h, ok := s.history[sl.reply]
	if !ok {
		if len(s.order) == historyLen {
			delete(s.history, s.order[0])
			s.order = s.order[1:]
		}
		h = &replyRecord{pos: Position{Reply: sl.reply}}
		s.history[sl.reply] = h
		s.order = append(s.order, sl.reply)
	}
	played := sl.played.Load()
	if played > 0 || h.frames == 0 {
		h.pos.Segment, h.pos.Offset = sl.index, s.duration(sl.start.Load()+played)
	}
	h.frames += played
	h.pos.Heard = s.duration(h.frames)
	return &h.pos
}

// Position reports where playback is at the heard position: the segment
// playing and the offset into it, or, when idle, where the last segment
// ended.
func (s *Speaker) Position() Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heard()
	s.reclaimLocked(h)
	if pos, ok := s.currentLocked(h); ok {
		return pos
	}
	return s.last
}

func (s *Speaker) currentLocked(h cursor) (Position, bool) {
	if h.slot >= s.write.Load() {
		return Position{}, false
	}
	sl := &s.slots[h.slot&s.mask]
	pos := Position{Reply: sl.reply, Segment: sl.index, Offset: s.duration(sl.start.Load() + h.played)}
	total := h.played
	if rec, ok := s.history[sl.reply]; ok {
		total += rec.frames
	}
	pos.Heard = s.duration(total)
	return pos, true
}

// Heard reports how much of the given reply has been played: its last
// segment, the offset reached in it, the total heard, and whether it ended
// or was interrupted. The last 32 replies are remembered; ok is false for
// others.
func (s *Speaker) Heard(reply string) (pos Position, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heard()
	s.reclaimLocked(h)
	if cur, ok := s.currentLocked(h); ok && cur.Reply == reply {
		return cur, true
	}
	if rec, ok := s.history[reply]; ok {
		return rec.pos, true
	}
	return Position{}, false
}

// Interrupt stops the speaker now and drops everything queued so far: the
// sound fades out over SpeakerOptions.Fade, the reply being queued ends
// there (a later End of it does nothing), and the next segment enqueued
// plays normally. It returns the position at the moment of the call, that
// is where the speech was cut; [Speaker.Heard] gives the final account
// once the fade has played.
func (s *Speaker) Interrupt() Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heard()
	s.reclaimLocked(h)
	pos, ok := s.currentLocked(h)
	if !ok {
		pos = s.last
	}
	s.rsLive, s.open = false, false // the mixing thread resets the resampler as it drops
	s.interruptTo.Store(s.write.Load())
	s.interruptGen.Add(1)
	return pos
}

// Stats returns the speaker's counters.
func (s *Speaker) Stats() SpeakerStats {
	s.mu.Lock()
	q := s.queuedFramesLocked()
	s.mu.Unlock()
	return SpeakerStats{Underruns: s.underruns.Load(), UnderrunFrames: s.underrunFrames.Load(), Queued: s.duration(q)}
}

func (s *Speaker) targetGains(channels int) (l, r float32) {
	v := math.Float32frombits(s.volume.Load())
	if channels == 1 {
		return v, v
	}
	pan := math.Float32frombits(s.pan.Load())
	return v * min(1, 1-pan), v * min(1, 1+pan)
}

// cursor returns the render cursor. Mixing thread only.
func (s *Speaker) cursor() cursor {
	r := s.read.Load()
	c := cursor{slot: r, mouth: s.lip.Openness()}
	if r < s.write.Load() {
		c.played = s.slots[r&s.mask].played.Load()
	}
	return c
}

// report publishes c as the heard cursor. Mixing thread only.
func (s *Speaker) report(c cursor) {
	s.heardSeq.Add(1)
	s.heardSlot.Store(c.slot)
	s.heardPlayed.Store(c.played)
	s.heardMouth.Store(math.Float32bits(c.mouth))
	s.heardSeq.Add(1)
}

// tick moves the delayed report on by one tick: the cursor of one Latency
// ago becomes the heard one. Mixing thread only.
func (s *Speaker) tick(delayTicks int) {
	if len(s.delay) != delayTicks || delayTicks == 0 { // cannot happen: sized by NewSpeaker
		s.report(s.cursor())
		return
	}
	old := s.delay[s.delayAt]
	s.delay[s.delayAt] = s.cursor()
	s.delayAt = (s.delayAt + 1) % len(s.delay)
	s.report(old)
}

// mixInto renders len(mono) frames of the speaker and adds them to the
// interleaved block; it reports false when they were silent and it added
// nothing. Mixing thread only.
func (s *Speaker) mixInto(block []float32, ch int, mono []float32) bool {
	sounding := s.renderMono(mono)
	s.lip.Push(mono)
	tl, tr := s.targetGains(ch)
	gl, gr := s.gainL, s.gainR
	switch {
	case sounding == 0: // silence: nothing to add, no ramp to hear
		s.gainL, s.gainR = tl, tr
		return false
	case gl == tl && gr == tr:
		mono = mono[:sounding] // the rest is silence
	default: // ramp to the new gains over this block
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
		s.gainL, s.gainR = tl, tr
	}
	if ch == 1 {
		for i, v := range mono {
			block[i] += v * tl
		}
		return true
	}
	block = block[:len(mono)*ch]
	for i, v := range mono {
		block[i*ch] += v * tl
		block[i*ch+1] += v * tr
	}
	return true
}

// renderMono writes the next len(dst) frames of the queue (with fades) to
// dst: the consumer side of the ring. It returns how many of them may
// sound: the rest are silence. Mixing thread only.
func (s *Speaker) renderMono(dst []float32) int {
	if g := s.interruptGen.Load(); g != s.gen {
		s.gen, s.dropping, s.dropTo = g, true, s.interruptTo.Load()
	}
	paused := s.paused.Load()
	for i := 0; i < len(dst); {
		target := s.fadeFrames
		if paused || s.dropping {
			target = 0
		}
		if s.fadeFrames == 0 {
			s.fadePos = target
		}
		if s.dropping && (s.fadePos == 0 || s.read.Load() >= s.dropTo) {
			s.drop(paused)
			continue
		}
		if paused && s.fadePos == 0 {
			clear(dst[i:])
			return i
		}
		r := s.read.Load()
		if r >= s.write.Load() {
			clear(dst[i:])
			if paused {
				s.fadePos = 0 // nothing sounds: audio arriving now stays paused
			} else if s.inReply {
				s.gap += int64(len(dst) - i)
				s.fadePos = 0 // late audio fades in instead of clicking
			}
			return i
		}
		sl := &s.slots[r&s.mask]
		if s.gap > 0 {
			s.endGap(sl)
		}
		src := s.ready(sl)
		if len(src) > 0 {
			n := min(len(dst)-i, len(src))
			out := dst[i : i+n]
			if s.fadePos == target {
				copy(out, src[:n])
			} else {
				n = s.ramp(out, src[:n], target)
			}
			i += n
			s.conv.consume(n)
			sl.played.Add(int64(n))
			s.inReply, s.playing = !sl.final, sl.reply
			if n < len(src) {
				continue
			}
			src = s.ready(sl) // whether more of it follows
		}
		if len(src) == 0 { // every frame of it played
			sl.done.Store(true)
			s.conv.next(sl)
			s.read.Store(r + 1)
			if sl.final && target != 0 {
				s.fadePos = s.fadeFrames // the next reply starts clean
			}
		}
	}
	return len(dst)
}

// endGap ends the silence since the queue ran dry inside a reply, now that
// sl is to play: a further segment of that reply makes it an underrun; the
// reply's end or another reply does not. Mixing thread only.
func (s *Speaker) endGap(sl *slot) {
	switch {
	case sl.reply != s.playing:
		s.fadePos = s.fadeFrames // a new reply starts clean
	case !sl.final:
		s.underruns.Add(1)
		s.underrunFrames.Add(s.gap)
	}
	s.gap = 0
}

// ramp copies src to out while moving the fade gain towards target; it
// stops early when the gain arrives at 0 (so a pause or drop takes effect
// right there) and returns the frames written.
func (s *Speaker) ramp(out, src []float32, target int) int {
	k, full := s.fadePos, s.fadeFrames
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
			s.fadePos = 0
			return i + 1
		}
	}
	s.fadePos = k
	return len(src)
}

// drop discards the slots queued before the interrupt and ends the reply.
// What follows starts at full level, or silent if the speaker is paused.
func (s *Speaker) drop(paused bool) {
	if r := s.read.Load(); r < s.dropTo {
		s.conv.drop(&s.slots[r&s.mask])
		s.read.Store(s.dropTo)
	} else {
		s.conv.drop(nil)
	}
	s.dropping, s.inReply, s.gap, s.fadePos = false, false, 0, s.fadeFrames
	if paused {
		s.fadePos = 0
	}
}
