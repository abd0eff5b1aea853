package rpengine

import (
	"github.com/gamelink-go/gamelink/rpengine/card"
)

// ReplyRequest is a reply.request: an event for a character, answered by a
// streamed reply. Zero fields take the defaults stated on each.
type ReplyRequest struct {
	IntegrationID string     // required: the game's id
	CharacterID   string     // required
	Card          *card.Card // required; sent as snapshot, patch or reference as the planner decides
	// RequestID and EventID identify the request; if empty, unique ids are
	// generated. A resync retry keeps both.
	RequestID string
	EventID   string
	// Text is the event text; Audio is recorded speech. At least one is
	// required.
	Text  string
	Audio *AudioInput
	// Output says what the reply contains; see Output for defaults.
	Output Output
	// Player fills {{user}}; if nil the engine uses "Player".
	Player *Player
	// InteractionMode ("auto_event" or "direct_user"), PromptScene and
	// PromptDirective go together: all three or none.
	InteractionMode string
	PromptScene     *PromptScene
	PromptDirective *PromptDirective
}

// CaptureRequest is a voice.capture.start: the player speaks through the
// RPEngine page's microphone, the transcript becomes the event and the
// reply streams as for a ReplyRequest.
type CaptureRequest struct {
	IntegrationID   string
	CharacterID     string
	Card            *card.Card
	RequestID       string
	EventID         string
	Output          Output
	Player          *Player
	InteractionMode string
	PromptScene     *PromptScene
	PromptDirective *PromptDirective
	// ReturnTranscript asks for voice.capture.transcript.
	ReturnTranscript bool
	// SilenceBehavior is "error" (the engine's default: 8 s of silence
	// fails the capture) or "restart" (keep listening). Empty omits it.
	SilenceBehavior string
}

// AudioInput is recorded speech: 16 kHz mono PCM, at most 30 s.
type AudioInput struct {
	// Format is "pcm_s16le" or "pcm_f32le". If empty, "pcm_s16le".
	Format string `json:"format"`
	// SampleRate in Hz; must be 16000. If zero, 16000.
	SampleRate int `json:"sampleRate"`
	// Channels must be 1. If zero, 1.
	Channels int `json:"channels"`
	// Data is the raw little-endian PCM (sent as base64). Not copied; do
	// not modify it until the call returns.
	Data []byte `json:"data"`
	// Language is an optional hint: en ar es ja ko vi uk zh.
	Language string `json:"language,omitempty"`
}

// Output is the output field of a request.
type Output struct {
	// Modalities must contain "text" and may add "audio". If empty,
	// ["text"], or ["text","audio"] when Audio is set.
	Modalities []string `json:"modalities"`
	// Language of the reply (en, ko, es, ...). If empty, "en".
	Language string `json:"language"`
	// Audio is required iff the modalities contain "audio".
	Audio *OutputAudio `json:"audio,omitempty"`
	// ResponseProcessing extracts tagged content from the reply.
	ResponseProcessing *ResponseProcessing `json:"responseProcessing,omitempty"`
}

// OutputAudio selects the reply's voice.
type OutputAudio struct {
	// Model must be "gemtavern-supertonic-3". If empty, that.
	Model string `json:"model"`
	// Voice is F1-F5 or M1-M5.
	Voice string `json:"voice"`
	// Format, if set, must be "pcm_s16le".
	Format string `json:"format,omitempty"`
	// Processing is the optional audio processing profile.
	Processing *AudioProcessing `json:"processing,omitempty"`
}

// AudioProcessing is output.audio.processing.
type AudioProcessing struct {
	Profile string `json:"profile"` // "narrowband_voice" or "cinematic_radio"
}

// ResponseProcessing is output.responseProcessing.
type ResponseProcessing struct {
	Mode  string `json:"mode"` // "buffered"; if empty, "buffered"
	Rules []Rule `json:"rules"`
}

// Rule is one responseProcessing rule.
type Rule struct {
	ID           string   `json:"id"`
	Matcher      Matcher  `json:"matcher"`
	CaptureGroup int      `json:"captureGroup"`
	Occurrence   string   `json:"occurrence"` // first, last or all
	Remove       string   `json:"remove"`     // match, capture or none
	RemoveFrom   []string `json:"removeFrom"` // subset of text, audio; empty iff Remove is none
}

// Matcher is a rule's matcher.
type Matcher struct {
	Type    string `json:"type"`    // "regex"; if empty, "regex"
	Pattern string `json:"pattern"` // Rust regex syntax, at most 1024 bytes
	// Flags is a string of distinct letters from "ims" ("i", "ms"): case
	// insensitive, multi-line, dot matches newline. Empty omits it. The
	// engine refuses anything else, an array included (issue #15).
	Flags string `json:"flags,omitempty"`
}

// Player is the player's description.
type Player struct {
	DisplayName string `json:"displayName"`
}

// PromptScene is the promptScene field.
type PromptScene struct {
	Kind      string  `json:"kind"`
	Family    string  `json:"family"`
	Label     string  `json:"label"`
	SceneLine string  `json:"sceneLine"`
	Priority  float64 `json:"priority"`
}

// PromptDirective is the promptDirective field.
type PromptDirective struct {
	ProtocolVersion int    `json:"protocolVersion"`
	SceneContext    string `json:"sceneContext"`
	AutoEventGuide  string `json:"autoEventGuide"`
	DirectUserGuide string `json:"directUserGuide"`
	PromptVersion   string `json:"promptVersion,omitempty"`
}

// requestPayload is the wire form of reply.request and voice.capture.start.
type requestPayload struct {
	RequestID        string           `json:"requestId"`
	EventID          string           `json:"eventId"`
	IntegrationID    string           `json:"integrationId"`
	CharacterID      string           `json:"characterId"`
	Event            *eventPayload    `json:"event,omitempty"`
	Output           Output           `json:"output"`
	Player           *Player          `json:"player,omitempty"`
	Card             card.Transfer    `json:"card"`
	InteractionMode  string           `json:"interactionMode,omitempty"`
	PromptScene      *PromptScene     `json:"promptScene,omitempty"`
	PromptDirective  *PromptDirective `json:"promptDirective,omitempty"`
	ReturnTranscript *bool            `json:"returnTranscript,omitempty"`
	SilenceBehavior  string           `json:"silenceBehavior,omitempty"`
}

type eventPayload struct {
	Text  string      `json:"text,omitempty"`
	Audio *AudioInput `json:"audio,omitempty"`
}

type idPayload struct {
	RequestID string `json:"requestId"`
}
