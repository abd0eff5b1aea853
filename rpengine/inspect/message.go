package inspect

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// message holds the fields of every message type the inspector reads
// (docs/rpengine-protocol.md, "Game to engine" and "Engine to game").
type message struct {
	Type      string `json:"type"`
	MessageID string `json:"messageId"`
	RequestID string `json:"requestId"` // null (request.error) decodes as ""

	// hello, welcome
	ClientVersion string `json:"clientVersion"`
	SessionID     string `json:"sessionId"`
	ServerVersion string `json:"serverVersion"`

	// ack
	AcknowledgedMessageID string `json:"acknowledgedMessageId"`

	// capacity.update, reply.accepted
	QueueDepth        *int  `json:"queueDepth"`
	QueueLimit        int   `json:"queueLimit"`
	AcceptingRequests *bool `json:"acceptingRequests"`

	// reply.request, voice.capture.start, character.sync
	IntegrationID   string          `json:"integrationId"`
	CharacterID     string          `json:"characterId"`
	Card            json.RawMessage `json:"card"`
	Event           *eventField     `json:"event"`
	Output          *outputField    `json:"output"`
	Player          *struct{ DisplayName string }
	InteractionMode string          `json:"interactionMode"`
	PromptScene     json.RawMessage `json:"promptScene"`
	PromptDirective json.RawMessage `json:"promptDirective"`

	// replies
	Delta                string   `json:"delta"`
	Text                 string   `json:"text"`
	TokenCount           int      `json:"tokenCount"`
	ElapsedMs            *float64 `json:"elapsedMs"`
	SampleRate           int      `json:"sampleRate"`
	SegmentSequence      *int     `json:"segmentSequence"`
	SegmentChunkSequence int      `json:"segmentChunkSequence"`
	SegmentChunkCount    int      `json:"segmentChunkCount"`
	Data                 []byte   `json:"data"` // base64 in the message
	DurationSeconds      float64  `json:"durationSeconds"`
	SegmentCount         int      `json:"segmentCount"`
	Reason               string   `json:"reason"`
	State                string   `json:"state"`
	TargetHash           string   `json:"targetHash"`
	SourceMessageID      string   `json:"sourceMessageId"`
	Code                 string   `json:"code"`
	Message              string   `json:"message"`
	Retryable            bool     `json:"retryable"`

	// file mode's reply.audio.segment
	SpokenText string `json:"spokenText"`
}

type eventField struct {
	Text  string `json:"text"`
	Audio *struct {
		SampleRate int    `json:"sampleRate"`
		Data       []byte `json:"data"`
		Language   string `json:"language"`
	} `json:"audio"`
}

type outputField struct {
	Modalities []string `json:"modalities"`
	Language   string   `json:"language"`
	Audio      *struct {
		Voice      string `json:"voice"`
		Processing *struct {
			Profile string `json:"profile"`
		} `json:"processing"`
	} `json:"audio"`
	ResponseProcessing *struct {
		Rules []struct {
			ID string `json:"id"`
		} `json:"rules"`
	} `json:"responseProcessing"`
}

// elide returns msg as the page shows it: base64 audio (a chunk's data,
// a request's event.audio.data) replaced by a string giving its decoded
// size. msg is compact JSON (the recorder compacts every message), so in
// it the text `"data":"` can only start a member: inside a string every
// quote is escaped. The result does not alias msg.
func elide(msg []byte, m *message) []byte {
	n := len(m.Data)
	if m.Event != nil && m.Event.Audio != nil {
		n = len(m.Event.Audio.Data)
	}
	if n == 0 {
		return bytes.Clone(msg)
	}
	key := []byte(`"data":"`)
	if m.Event != nil && m.Event.Audio != nil {
		// The event's audio object, then its data: the game writes the
		// event before the output and the card.
		at := bytes.Index(msg, []byte(`"event":{`))
		if i := bytes.Index(msg[max(at, 0):], []byte(`"audio":{`)); at >= 0 && i >= 0 {
			if j := bytes.Index(msg[at+i:], key); j >= 0 {
				return splice(msg, at+i+j+len(key), n)
			}
		}
		return bytes.Clone(msg)
	}
	if i := bytes.Index(msg, key); i >= 0 { // a chunk is flat: its one data member
		return splice(msg, i+len(key), n)
	}
	return bytes.Clone(msg)
}

// splice replaces the string body starting at i (just past its opening
// quote) with a note of n bytes.
func splice(msg []byte, i, n int) []byte {
	j := bytes.IndexByte(msg[i:], '"')
	if j < 0 {
		return bytes.Clone(msg)
	}
	out := make([]byte, 0, i+64+len(msg)-(i+j))
	out = append(out, msg[:i]...)
	out = append(out, "(base64 audio elided: "...)
	out = strconv.AppendInt(out, int64(n), 10)
	out = append(out, " bytes)"...)
	return append(out, msg[i+j:]...)
}
