package rpengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	mbx "github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// File-mode message types (docs/rpengine-protocol.md, "File transport").
const (
	typeAudioSegment  = "reply.audio.segment"
	typeSegmentUsed   = "reply.audio.segment.consumed"
	segmentFormatWAV  = mbx.AudioFormat
	segmentDurationOK = 0.05 // seconds of disagreement tolerated on durationSeconds
)

// segmentMsg is reply.audio.segment.
type segmentMsg struct {
	RequestID       string  `json:"requestId"`
	SegmentSequence *int    `json:"segmentSequence"`
	SpokenText      string  `json:"spokenText"`
	SlotIndex       *int    `json:"slotIndex"`
	Path            string  `json:"path"`
	Format          string  `json:"format"`
	SampleRate      int     `json:"sampleRate"`
	Channels        int     `json:"channels"`
	DurationSeconds float64 `json:"durationSeconds"`
	ByteLength      int64   `json:"byteLength"`
	PeerInstanceID  string  `json:"peerInstanceId"`
}

type segmentUsed struct {
	RequestID       string `json:"requestId"`
	SegmentSequence int    `json:"segmentSequence"`
	SlotIndex       int    `json:"slotIndex"`
	PeerInstanceID  string `json:"peerInstanceId"`
}

// errSegment is the cause of a refused reply.audio.segment.
var errSegment = errors.New("refused reply.audio.segment")

// handleReply takes file mode's reply.audio.segment: the sentence's WAV
// is read from its slot, checked, handed to the reply as a whole segment,
// and answered with reply.audio.segment.consumed (the engine then puts
// the silent placeholder back). Reader goroutine.
func (c *mailboxConn) handleReply(r *Reply, typ string, data []byte) bool {
	if typ != typeAudioSegment {
		return false
	}
	m := c.m
	var sg segmentMsg
	samples, err := m.readSegment(data, &sg)
	if err != nil {
		m.log.Warn("rpengine: dropped reply.audio.segment", "requestId", r.id, "reason", peertext.Clip(err.Error(), peertext.LineBytes))
		seq := 0
		if sg.SegmentSequence != nil {
			seq = *sg.SegmentSequence
		}
		r.mu.Lock()
		if !r.ended {
			r.enqueueLocked(Event{Kind: EventAnomaly, Anomaly: stream.Anomaly{Kind: stream.AnomalyInvalidChunk, Segment: seq, Detail: peertext.Clip(err.Error(), peertext.LineBytes)}})
		}
		r.mu.Unlock()
		r.wake()
		return true
	}
	for other := range m.offsets {
		select {
		case <-other.done:
			delete(m.offsets, other)
		default:
		}
	}
	dur := time.Duration(len(samples)) * time.Second / time.Duration(sg.SampleRate)
	off := m.offsets[r]
	m.offsets[r] = off + dur
	m.nextSlot = max(m.nextSlot, *sg.SlotIndex+1)
	r.pushSegment(stream.Segment{Index: *sg.SegmentSequence, SampleRate: sg.SampleRate, Samples: samples, Offset: off, Duration: dur})
	// Posted: the reader does not wait for the write, whose failure the
	// outbox logs.
	c.sess.post(typeSegmentUsed, segmentUsed{RequestID: r.id, SegmentSequence: *sg.SegmentSequence,
		SlotIndex: *sg.SlotIndex, PeerInstanceID: m.peer})
	return true
}

// readSegment checks a reply.audio.segment against the manifest and its
// slot file and returns the samples. The path must name the slot of
// slotIndex inside the audio folder (audio/slot_NNNN.wav, or the bare
// slot name): no "..", no absolute path, no other file; the slot must be
// a regular file (symlinks are not followed) inside the mailbox (os.Root).
func (m *mailbox) readSegment(data []byte, sg *segmentMsg) ([]int16, error) {
	if err := json.Unmarshal(data, sg); err != nil {
		return nil, fmt.Errorf("%w: %v", errSegment, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errSegment}, args...)...)
	}
	switch {
	case sg.SegmentSequence == nil || *sg.SegmentSequence < 0:
		return nil, bad("segmentSequence missing or negative")
	case sg.SlotIndex == nil || *sg.SlotIndex < 0 || *sg.SlotIndex >= m.o.SlotCount:
		return nil, bad("slotIndex missing or outside 0..%d", m.o.SlotCount-1)
	case sg.Path != mbx.SlotPath(*sg.SlotIndex) && sg.Path != mbx.SlotName(*sg.SlotIndex):
		return nil, bad("path %q is not slot %d of the audio folder (%s)", sg.Path, *sg.SlotIndex, mbx.SlotPath(*sg.SlotIndex))
	case sg.Format != segmentFormatWAV:
		return nil, bad("format %q, want %q", sg.Format, segmentFormatWAV)
	case sg.SampleRate != mbx.SampleRate:
		return nil, bad("sampleRate %d, want %d", sg.SampleRate, mbx.SampleRate)
	case sg.Channels != 1:
		return nil, bad("channels %d, want 1", sg.Channels)
	case sg.PeerInstanceID != m.peer:
		return nil, bad("peerInstanceId %q is not this game's %q", sg.PeerInstanceID, m.peer)
	case sg.ByteLength <= 0 || sg.ByteLength > mbx.MaxSlotBytes:
		return nil, bad("byteLength %d outside 1..%d", sg.ByteLength, mbx.MaxSlotBytes)
	}
	root := m.root.Load()
	if root == nil {
		return nil, bad("the mailbox folder is being created again")
	}
	if fi, err := root.Lstat(mbx.AudioDir); err != nil || !fi.IsDir() {
		return nil, bad("audio folder is missing or not a plain folder")
	}
	name := mbx.SlotPath(*sg.SlotIndex)
	f, fi, err := mbx.OpenRegular(root, name, mbx.MaxSlotBytes)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer f.Close()
	// A hard link shares the file with another folder, perhaps outside
	// the mailbox (issue #16).
	if err := mbx.CheckSingleLink(f); err != nil {
		return nil, bad("%s: %v", name, err)
	}
	w, err := mbx.ReadWAV(f, fi.Size())
	if err != nil {
		return nil, bad("%s: %v", name, err)
	}
	switch {
	case fi.Size() != sg.ByteLength && w.DataBytes != sg.ByteLength:
		return nil, bad("%s holds %d bytes (%d of PCM), byteLength says %d", name, fi.Size(), w.DataBytes, sg.ByteLength)
	case w.Rate != sg.SampleRate || w.Channels != sg.Channels:
		return nil, bad("%s is %d Hz %d channels, the envelope says %d Hz %d channels", name, w.Rate, w.Channels, sg.SampleRate, sg.Channels)
	}
	samples := w.Samples
	if got := float64(len(samples)) / float64(w.Rate); sg.DurationSeconds > 0 && math.Abs(got-sg.DurationSeconds) > segmentDurationOK {
		m.log.Debug("rpengine: reply.audio.segment durationSeconds disagrees with its WAV", "durationSeconds", sg.DurationSeconds, "wav", got)
	}
	return samples, nil
}

// consumeOrphan answers a reply.audio.segment of no pending reply without
// reading its audio, when its slot and peer are this game's.
func (c *mailboxConn) consumeOrphan(data []byte) {
	m := c.m
	var sg segmentMsg
	if json.Unmarshal(data, &sg) != nil || sg.SegmentSequence == nil || sg.SlotIndex == nil ||
		*sg.SlotIndex < 0 || *sg.SlotIndex >= m.o.SlotCount || sg.PeerInstanceID != m.peer {
		return
	}
	m.nextSlot = max(m.nextSlot, *sg.SlotIndex+1)
	c.sess.post(typeSegmentUsed, segmentUsed{RequestID: sg.RequestID, SegmentSequence: *sg.SegmentSequence,
		SlotIndex: *sg.SlotIndex, PeerInstanceID: m.peer})
}
