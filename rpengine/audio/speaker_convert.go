package audio

// A speaker converts the samples of a segment to the mixer's rate as the
// mixing thread plays them, a step of at most convFrames frames at a
// time, instead of all at once in Enqueue: Enqueue then costs a copy (a
// 3 s sentence took milliseconds to resample before its first frame could
// play), and the filtering is spread over the callbacks that play it
// (bench/, issue #24). The resampler streams, and its output does not
// depend on how its input is cut, so the frames are those of resampling
// the reply whole, tail included.

// convFrames is the capacity of a speaker's converted frames: what one
// step of its resampler may emit.
const convFrames = 1024

// maxStepSamples bounds the samples one step feeds a resampler, within
// the input buffer it is made with.
const maxStepSamples = 1024

// silence is the zeros a resampler's tail is made from (Flush allocates
// its own); read only.
var silence [4096]float32

// Stages of a slot as it is converted.
const (
	stageFlush = iota // the tail of the resampler of the reply's previous rate (slot.flush)
	stageBody         // the slot's samples
	stageTail         // a final slot's tail (slot.rs)
	stageDone
)

// converter is the mixing thread's side of the slot being played: how far
// it got, and the frames its resampler emitted that did not play yet.
type converter struct {
	stage   int
	started bool       // the slot's first frame was asked for
	inAt    int        // samples of the slot taken
	tail    int        // zeros of a tail fed
	pend    []float32  // frames emitted: pend[pendAt:] did not play (capacity convFrames)
	pendAt  int        //
	live    *Resampler // the resampler that holds input, until its tail played
	prev    int64      // frames the last segment slot played (a tail's offset)
}

// ready returns frames of sl ready to play, converting the next step of
// it when none are pending, or nil once every frame of it has played.
// Mixing thread only; it does not allocate.
func (s *Speaker) ready(sl *slot) []float32 {
	c := &s.conv
	for c.pendAt == len(c.pend) {
		switch c.stage {
		case stageFlush:
			if !c.started {
				c.started = true
				if sl.final {
					sl.start.Store(c.prev)
				}
			}
			if sl.flush != nil && c.tailStep(sl.flush) {
				continue
			}
			c.stage = stageBody
		case stageBody:
			if c.inAt == len(sl.samples) {
				c.stage = stageTail
				continue
			}
			if sl.rs == nil {
				return sl.samples[c.inAt:] // the mixer's rate: as it is
			}
			k := min(len(sl.samples)-c.inAt, stepSamples(sl.rs))
			c.pend, _ = sl.rs.Append(c.pend[:0], sl.samples[c.inAt:c.inAt+k])
			c.pendAt, c.inAt, c.live = 0, c.inAt+k, sl.rs
		case stageTail:
			if sl.final && sl.rs != nil && c.tailStep(sl.rs) {
				continue
			}
			c.stage = stageDone
		default:
			return nil
		}
	}
	return c.pend[c.pendAt:]
}

// tailStep feeds rs the next zeros of its tail and reports true; once it
// fed taps of them, as Flush does, it resets rs, as Flush does, and
// reports false.
func (c *converter) tailStep(rs *Resampler) bool {
	if c.tail == rs.taps {
		c.tail = 0
		rs.Reset()
		if c.live == rs {
			c.live = nil
		}
		return false
	}
	k := min(rs.taps-c.tail, stepSamples(rs))
	c.pend, _ = rs.Append(c.pend[:0], silence[:k])
	c.pendAt, c.tail = 0, c.tail+k
	return true
}

// consume records that n frames of what ready returned played.
func (c *converter) consume(n int) {
	if c.pendAt < len(c.pend) {
		c.pendAt += n
	} else {
		c.inAt += n
	}
}

// next gets ready for the slot after sl, every frame of which played.
func (c *converter) next(sl *slot) {
	if !sl.final {
		c.prev = sl.played.Load()
	}
	c.reset()
}

// drop forgets the slot being played, sl (nil when none), which Interrupt
// cut: the resamplers that hold its input start clean for what follows.
func (c *converter) drop(sl *slot) {
	if sl != nil && sl.rs != nil {
		sl.rs.Reset()
	}
	if sl != nil && sl.flush != nil {
		sl.flush.Reset()
	}
	if c.live != nil {
		c.live.Reset()
		c.live = nil
	}
	c.reset()
}

func (c *converter) reset() {
	c.stage, c.started, c.inAt, c.tail = stageFlush, false, 0, 0
	c.pend, c.pendAt = c.pend[:0], 0
}

// stepSamples is how many samples a step feeds rs: as many as fill
// convFrames frames at most (MaxOutFrames), up to maxStepSamples.
func stepSamples(rs *Resampler) int {
	return max(1, min(maxStepSamples, (convFrames-2)*rs.m/rs.l))
}

// tailFrames is about how many frames the tail of rs plays (taps zeros).
func tailFrames(rs *Resampler) int64 { return int64(rs.taps) * int64(rs.l) / int64(rs.m) }

// newPlayResampler returns a mono Resampler for a speaker whose mixer runs
// at out Hz, with its buffers grown, on the caller's goroutine, to what
// the mixing thread's steps need, so that it never allocates there: a
// step's samples and a margin for where in its phase a step starts.
func newPlayResampler(in, out int) *Resampler {
	rs, _ := NewResampler(in, out, 1)
	n := stepSamples(rs) + 2*((rs.m+rs.l-1)/rs.l) + 2
	_, _ = rs.Append(nil, silence[:n])
	rs.Reset()
	return rs
}
