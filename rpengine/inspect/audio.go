package inspect

import (
	"bytes"
	"fmt"
	"os"
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

// segmentAudio is a file-mode segment's audio, read from its slot.
type segmentAudio struct {
	pcm  []byte
	rate int
	err  error
}

// readSlot reads the WAV that a reply.audio.segment names, from the
// mailbox folder the server logged at start ("rpengine: serving
// mailbox"): the same checks as the server (the path must be the slot's,
// a regular file inside the folder, at most 64 MiB), through os.Root. It
// races with the engine, which puts the silent placeholder back once the
// game answered reply.audio.segment.consumed; this read starts as the
// server's does (both follow the same message), so it wins by the
// engine's poll interval, and a lost race is said on the page.
func (in *Inspector) readSlot(m *message) segmentAudio {
	in.mu.Lock()
	dir := in.sess.MailboxDir
	in.mu.Unlock()
	switch {
	case dir == "":
		return segmentAudio{err: fmt.Errorf("no mailbox folder known (its log line was not seen)")}
	case m.SlotIndex == nil || (m.Path != mbx.SlotPath(*m.SlotIndex) && m.Path != mbx.SlotName(*m.SlotIndex)):
		return segmentAudio{err: fmt.Errorf("path %q is not an audio slot", m.Path)}
	case m.ByteLength <= 0 || m.ByteLength > int64(min(in.o.MaxReplyBytes, mbx.MaxSlotBytes)):
		return segmentAudio{err: fmt.Errorf("byteLength %d is not kept", m.ByteLength)}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return segmentAudio{err: err}
	}
	defer root.Close()
	b, err := mbx.ReadRegular(root, mbx.SlotPath(*m.SlotIndex), mbx.MaxSlotBytes)
	if err != nil {
		return segmentAudio{err: err}
	}
	if int64(len(b)) != m.ByteLength {
		return segmentAudio{err: fmt.Errorf("the slot held %d bytes, not %d: the engine restored its placeholder before the inspector read it", len(b), m.ByteLength)}
	}
	w, err := mbx.DecodeWAV(b)
	if err != nil || w.Channels != 1 {
		return segmentAudio{err: fmt.Errorf("not a mono PCM16 WAV: %v", err)}
	}
	return segmentAudio{pcm: w.PCM, rate: w.Rate}
}

// slotSegmentLocked takes file mode's reply.audio.segment, with the
// audio readSlot got for it.
func (in *Inspector) slotSegmentLocked(r *reply, t time.Time, m *message, a *segmentAudio) {
	if m.SegmentSequence == nil || *m.SegmentSequence < 0 {
		return
	}
	s, fresh := in.segmentLocked(r, t, *m.SegmentSequence)
	if s == nil || !fresh {
		return
	}
	s.view.SpokenText = clip(m.SpokenText)
	switch {
	case a.err != nil:
		in.dropLocked(r, s, a.err.Error())
	case !in.chargeLocked(r, len(a.pcm)):
		in.dropLocked(r, s, overBudget)
	default:
		s.pcm, s.view.SampleRate = a.pcm, a.rate
		in.completeLocked(r, s)
	}
}
