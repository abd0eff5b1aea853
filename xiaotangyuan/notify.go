package xiaotangyuan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// errDropped marks a notification the Assembler dropped on purpose
// (stale interaction, duplicate delta); the recorder notes it.
var errDropped = errors.New("dropped: duplicate or after done/cancel")

// maxInteractionID bounds an interactionId, in bytes: the Assembler and
// the line of streaming calls remember up to 352 of them, and the
// Harness's are UUIDs of 36 bytes. A notification with a longer one is
// dropped (issue #31: every remembered id is bounded).
const maxInteractionID = 256

// decodeNotification turns one Harness notification into an event,
// through a for the stream ones. It returns errDropped for an event a
// drops, and another error for unknown methods or malformed params.
func decodeNotification(a *Assembler, method string, params json.RawMessage) (Event, error) {
	var p wire.Note
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return Event{}, fmt.Errorf("%s params: %w", method, err)
		}
	}
	if len(p.InteractionID) > maxInteractionID {
		return Event{}, fmt.Errorf("%s: interactionId of %d bytes, over %d", method, len(p.InteractionID), maxInteractionID)
	}
	src := Source(p.Source)
	var ev Event
	ok := true
	switch method {
	case wire.NoteReady:
		ev = Event{Kind: EventReady, ProtocolVersion: p.ProtocolVersion, Capabilities: p.Capabilities}
	case wire.NoteStatus:
		st := Status(p.Status)
		if st != StatusRecording && st != StatusThinking {
			return ev, fmt.Errorf("%s: unknown status %q", method, p.Status)
		}
		ev = Event{Kind: EventStatus, Status: st, Transcript: p.Transcript}
	case wire.NoteTextStart:
		if p.InteractionID == "" {
			return ev, fmt.Errorf("%s: missing interactionId", method)
		}
		ev, ok = a.Start(p.InteractionID, src)
	case wire.NoteTextDelta, wire.NoteLegacyDelta:
		if p.InteractionID == "" || p.Text == nil {
			return ev, fmt.Errorf("%s: missing interactionId or text", method)
		}
		ev, ok = a.Delta(p.InteractionID, src, p.Delta, *p.Text, millis(p.ElapsedMs))
	case wire.NoteTextDone:
		if p.InteractionID == "" || p.Text == nil {
			return ev, fmt.Errorf("%s: missing interactionId or text", method)
		}
		ev, ok = a.Done(p.InteractionID, src, *p.Text)
	case wire.NoteTextCancel:
		ev = a.Cancel(p.Reason)
	case wire.NotePresent:
		if p.Text == nil {
			return ev, fmt.Errorf("%s: missing text", method)
		}
		ev = Event{Kind: EventPresent, Text: *p.Text, Source: src}
	case wire.NoteError:
		ev = Event{Kind: EventError, Message: p.Message}
	default:
		return ev, fmt.Errorf("unknown notification %q", method)
	}
	if !ok {
		return ev, errDropped
	}
	return ev, nil
}

// millis converts the float elapsedMs (for example 31.304737999999816)
// to a Duration, clamping nonsense to zero.
func millis(ms float64) time.Duration {
	if ms <= 0 || math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
