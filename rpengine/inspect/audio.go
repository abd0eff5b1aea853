package inspect

import (
	"bytes"
	"time"

	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
)

// chunkLocked takes a reply.audio.chunk: its data goes to its segment,
// which is complete once all its chunks arrived.
func (in *Inspector) chunkLocked(r *reply, t time.Time, m *message) {
	if m.SegmentSequence == nil || *m.SegmentSequence < 0 || m.SegmentChunkCount < 1 || m.SegmentChunkCount > maxChunks ||
		m.SegmentChunkSequence < 0 || m.SegmentChunkSequence >= m.SegmentChunkCount {
		return // the game's Logger has the anomaly
	}
	s, fresh := in.segmentLocked(r, t, *m.SegmentSequence)
	if s == nil {
		return
	}
	if fresh {
		s.view.Of = m.SegmentChunkCount
		s.chunks = make([][]byte, m.SegmentChunkCount)
	}
	if s.view.Complete || s.view.Dropped != "" || m.SegmentChunkCount != len(s.chunks) || s.chunks[m.SegmentChunkSequence] != nil {
		return
	}
	if !in.chargeLocked(r, len(m.Data)) {
		in.dropLocked(r, s, overBudget)
		return
	}
	s.chunks[m.SegmentChunkSequence] = m.Data
	s.view.Chunks++
	if s.view.Chunks < len(s.chunks) {
		if fresh {
			in.emitReplyLocked(r)
		}
		return
	}
	s.pcm = bytes.Join(s.chunks, nil)
	s.chunks = nil
	in.completeLocked(r, s)
}

// segmentLocked returns the segment of index, creating it (and the first
// audio point) when it is new; nil when r keeps no more segments.
func (in *Inspector) segmentLocked(r *reply, t time.Time, index int) (s *segment, fresh bool) {
	if s := r.segs[index]; s != nil {
		return s, false
	}
	if len(r.segs) >= maxSegments || !in.chargeLocked(r, 128) {
		return nil, false
	}
	s = &segment{view: segmentView{Index: index, SampleRate: r.rate}}
	if s.view.SampleRate <= 0 {
		s.view.SampleRate = mbx.SampleRate // the engine's only rate
	}
	r.segs[index] = s
	if !r.gotAudio {
		r.gotAudio = true
		in.pointLocked(r, "first audio", t, "")
	}
	return s, true
}

func (in *Inspector) completeLocked(r *reply, s *segment) {
	s.view.Complete = true
	s.view.Samples = len(s.pcm) / 2
	s.view.Seconds = float64(s.view.Samples) / float64(s.view.SampleRate)
	in.emitReplyLocked(r)
}

// dropLocked gives up on s's audio, releasing what it held, because of
// why.
func (in *Inspector) dropLocked(r *reply, s *segment, why string) {
	held := len(s.pcm)
	for _, c := range s.chunks {
		held += len(c)
	}
	in.replyBytes -= held
	r.bytes -= held
	s.chunks, s.pcm = nil, nil
	s.view.Dropped = why
	if why == overBudget {
		r.view.AudioShort = "audio past MaxReplyBytes was not kept"
	}
	in.emitReplyLocked(r)
}

const overBudget = "over MaxReplyBytes"

// slotSegmentLocked takes file mode's reply.audio.segment: the segment
// and its spoken text. Its audio is the core's reply.segment note, which
// follows: what the game received, so the slot, which the engine reuses
// once answered, is never read again.
func (in *Inspector) slotSegmentLocked(r *reply, t time.Time, m *message) {
	if m.SegmentSequence == nil || *m.SegmentSequence < 0 {
		return
	}
	if s, fresh := in.segmentLocked(r, t, *m.SegmentSequence); s != nil && fresh {
		s.view.SpokenText = clip(m.SpokenText)
		in.emitReplyLocked(r)
	}
}

// samplesLocked takes a whole segment's audio, pcm little-endian PCM16
// at rate (a reply.segment note).
func (in *Inspector) samplesLocked(r *reply, t time.Time, index, rate int, pcm []byte) {
	s, _ := in.segmentLocked(r, t, index)
	switch {
	case s == nil || s.view.Complete || s.view.Dropped != "":
	case !in.chargeLocked(r, len(pcm)):
		in.dropLocked(r, s, overBudget)
	default:
		s.pcm = pcm
		if rate > 0 {
			s.view.SampleRate = rate
		}
		in.completeLocked(r, s)
	}
}
