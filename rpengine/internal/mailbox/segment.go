package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"

	"github.com/gamelink-go/gamelink/rpengine/internal/session"
)

// File-mode message types (docs/rpengine-protocol.md, "File transport").
const (
	typeAudioSegment  = "reply.audio.segment"
	typeSegmentUsed   = "reply.audio.segment.consumed"
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

// slotReader is what reading a segment needs of the mailbox: its folder (nil
// while it is created again), its slot count, this game's
// peerInstanceId, and its Logger.
type slotReader struct {
	root  *os.Root
	count int
	peer  string
	log   *slog.Logger
}

// readSegment reads file mode's reply.audio.segment for the session: the
// sentence's WAV from its slot, checked, and the answer that gives the
// slot back (reply.audio.segment.consumed), which the session sends once
// it took the segment, or at once for a reply that ended already (the
// engine then puts the silent placeholder back). A segment that names no
// slot of this game's gets no answer. It returns the slot named, or -1
// for none. Reader goroutine.
func (m slotReader) readSegment(data []byte) (*session.FileSegment, int) {
	var sg segmentMsg
	samples, err := m.checkSegment(data, &sg)
	seg := &session.FileSegment{Rate: sg.SampleRate, Speech: samples, Err: err, AnswerType: typeSegmentUsed}
	if sg.SegmentSequence != nil {
		seg.Sequence = *sg.SegmentSequence
	}
	if sg.SegmentSequence == nil || sg.SlotIndex == nil || *sg.SlotIndex < 0 || *sg.SlotIndex >= m.count || sg.PeerInstanceID != m.peer {
		return seg, -1
	}
	seg.Answer = segmentUsed{RequestID: sg.RequestID, SegmentSequence: *sg.SegmentSequence, SlotIndex: *sg.SlotIndex, PeerInstanceID: m.peer}
	return seg, *sg.SlotIndex
}

// checkSegment checks a reply.audio.segment against the manifest and its
// slot file and returns the samples. The path must name the slot of
// slotIndex inside the audio folder (audio/slot_NNNN.wav, or the bare
// slot name): no "..", no absolute path, no other file; the slot must be
// a regular file (symlinks are not followed) inside the mailbox (os.Root).
func (m slotReader) checkSegment(data []byte, sg *segmentMsg) ([]int16, error) {
	if err := json.Unmarshal(data, sg); err != nil {
		return nil, fmt.Errorf("%w: %v", errSegment, err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errSegment}, args...)...)
	}
	switch {
	case sg.SegmentSequence == nil || *sg.SegmentSequence < 0:
		return nil, bad("segmentSequence missing or negative")
	case sg.SlotIndex == nil || *sg.SlotIndex < 0 || *sg.SlotIndex >= m.count:
		return nil, bad("slotIndex missing or outside 0..%d", m.count-1)
	case sg.Path != SlotPath(*sg.SlotIndex) && sg.Path != SlotName(*sg.SlotIndex):
		return nil, bad("path %q is not slot %d of the audio folder (%s)", sg.Path, *sg.SlotIndex, SlotPath(*sg.SlotIndex))
	case sg.Format != AudioFormat:
		return nil, bad("format %q, want %q", sg.Format, AudioFormat)
	case sg.SampleRate != SampleRate:
		return nil, bad("sampleRate %d, want %d", sg.SampleRate, SampleRate)
	case sg.Channels != 1:
		return nil, bad("channels %d, want 1", sg.Channels)
	case sg.PeerInstanceID != m.peer:
		return nil, bad("peerInstanceId %q is not this game's %q", sg.PeerInstanceID, m.peer)
	case sg.ByteLength <= 0 || sg.ByteLength > MaxSlotBytes:
		return nil, bad("byteLength %d outside 1..%d", sg.ByteLength, MaxSlotBytes)
	}
	root := m.root
	if root == nil {
		return nil, bad("the mailbox folder is being created again")
	}
	if fi, err := root.Lstat(AudioDir); err != nil || !fi.IsDir() {
		return nil, bad("audio folder is missing or not a plain folder")
	}
	name := SlotPath(*sg.SlotIndex)
	f, fi, err := OpenRegular(root, name, MaxSlotBytes)
	if err != nil {
		return nil, bad("%v", err)
	}
	defer f.Close()
	// A hard link shares the file with another folder, perhaps outside
	// the mailbox (issue #16).
	if err := CheckSingleLink(f); err != nil {
		return nil, bad("%s: %v", name, err)
	}
	w, err := ReadWAV(f, fi.Size())
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
