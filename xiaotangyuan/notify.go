package xiaotangyuan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// errDropped marks a notification the Assembler dropped on purpose
// (stale interaction, duplicate delta); the recorder notes it.
var errDropped = errors.New("dropped: duplicate or after done/cancel")

// streamParams is the union of the assistant.* notification params.
type streamParams struct {
	InteractionID   string   `json:"interactionId"`
	Source          Source   `json:"source"`
	Delta           string   `json:"delta"`
	Text            *string  `json:"text"`
	ElapsedMs       float64  `json:"elapsedMs"`
	Status          Status   `json:"status"`
	Transcript      string   `json:"transcript"`
	Message         string   `json:"message"`
	Reason          string   `json:"reason"`
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    []string `json:"capabilities"`
}

// decodeNotification turns one Harness notification into an event,
// through a for the stream ones. It returns errDropped for an event a
// drops, and another error for unknown methods or malformed params.
func decodeNotification(a *Assembler, method string, params json.RawMessage) (Event, error) {
	var p streamParams
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return Event{}, fmt.Errorf("%s params: %w", method, err)
		}
	}
	var ev Event
	ok := true
	switch method {
	case "gateway.ready":
		ev = Event{Kind: EventReady, ProtocolVersion: p.ProtocolVersion, Capabilities: p.Capabilities}
	case "assistant.status":
		if p.Status != StatusRecording && p.Status != StatusThinking {
			return ev, fmt.Errorf("%s: unknown status %q", method, p.Status)
		}
		ev = Event{Kind: EventStatus, Status: p.Status, Transcript: p.Transcript}
	case "assistant.text.start":
		if p.InteractionID == "" {
			return ev, fmt.Errorf("%s: missing interactionId", method)
		}
		ev, ok = a.Start(p.InteractionID, p.Source)
	case "assistant.text.delta", "assistant.delta":
		if p.InteractionID == "" || p.Text == nil {
			return ev, fmt.Errorf("%s: missing interactionId or text", method)
		}
		ev, ok = a.Delta(p.InteractionID, p.Source, p.Delta, *p.Text, millis(p.ElapsedMs))
	case "assistant.text.done":
		if p.InteractionID == "" || p.Text == nil {
			return ev, fmt.Errorf("%s: missing interactionId or text", method)
		}
		ev, ok = a.Done(p.InteractionID, p.Source, *p.Text)
	case "assistant.text.cancel":
		ev = a.Cancel(p.Reason)
	case "assistant.present":
		if p.Text == nil {
			return ev, fmt.Errorf("%s: missing text", method)
		}
		ev = Event{Kind: EventPresent, Text: *p.Text, Source: p.Source}
	case "assistant.error":
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
