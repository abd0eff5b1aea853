package rpengine

import (
	"github.com/gamelink-go/gamelink/rpengine/card"
)

// ReplyRequest asks a character to reply to an event: what the player said
// or did, as text, as recorded speech or both. Zero fields take the
// default stated on each. A field the engine would refuse is a
// *FieldError naming it, returned before anything is sent.
type ReplyRequest struct {
	IntegrationID string // required: the game's id
	CharacterID   string // required: the character's id within the game
	// Card is the character, required: a valid Character Card V2 (see
	// card.New and card.Load). It goes to the engine whole, as a patch or
	// as a reference to what the engine holds, whichever is smallest.
	Card *card.Card
	// RequestID and EventID identify the request; if empty, unique ids
	// are generated (Reply.RequestID returns the request's).
	RequestID, EventID string
	// Text is the event as text. Speech is the player's recorded speech:
	// mono 16-bit samples at 16 kHz, at most 30 s, which is what
	// audio.Recording.Samples holds. SpeechFloat is the same as float
	// samples (full scale is 1; finite, not clamped), sent as they are
	// (the engine's pcm_f32le): what audio.Recording.Float32 returns,
	// without a round trip through 16 bits, or a 16 kHz mono
	// audio.WAV's Samples. Text or one of the two speeches is required;
	// not both speeches. Neither is copied: do not modify them until
	// Reply returns.
	Text        string
	Speech      []int16
	SpeechFloat []float32
	// SpeechLanguage is a hint for the speech: en, ar, es, ja, ko, vi, uk or
	// zh. If empty, the engine detects the language.
	SpeechLanguage string
	// Language is the reply's language (en, ko, es, pt, fr, de, it, pl,
	// ru, nl, cs, ar, zh, ja, hu, tr, fi, sk, da, hr, el, sv, nb, he, uk,
	// id, ms, vi, th, ro, bg). If empty, "en".
	Language string
	// Voice makes the reply spoken, in one of the voices F1-F5 and M1-M5,
	// its speech arriving as EventSegment. If empty, the reply is text
	// only.
	Voice string
	// AudioProfile processes the spoken reply: "narrowband_voice" or
	// "cinematic_radio". If empty, none. It needs Voice.
	AudioProfile string
	// Rules extract tagged content from the reply into Result.Extracted,
	// and may remove it from what is shown and spoken. At most 8. With
	// rules the engine sends the reply once it is whole: the first
	// EventText is the complete text.
	Rules []Rule
	// PlayerName is the player's name, which the card's {{user}} stands
	// for. If empty, the engine uses "Player".
	PlayerName string
	// Prompt is the scene and directive the engine builds its prompt
	// from. If nil, the engine's defaults.
	Prompt *Prompt
}

// CaptureRequest starts a voice capture through the RPEngine page's
// microphone: what the player says becomes the event, and the reply
// streams as for a ReplyRequest. Its fields mean what ReplyRequest's do.
type CaptureRequest struct {
	IntegrationID, CharacterID string // required
	Card                       *card.Card
	RequestID, EventID         string
	Language                   string
	Voice, AudioProfile        string
	Rules                      []Rule
	PlayerName                 string
	Prompt                     *Prompt
	// Transcript asks for the transcript of what the player said
	// (CaptureStatus.Transcript).
	Transcript bool
	// KeepListening keeps the capture listening through silence. If
	// false, as the engine does by default, 8 s of silence fail it.
	KeepListening bool
}

// Rule is one response-processing rule: the engine waits for the whole
// reply, finds the rule's pattern in it, reports what it captured in
// Result.Extracted under ID, and removes what Remove says from the text,
// the speech or both (docs/rpengine-protocol.md, "Buffered response
// processing").
type Rule struct {
	// ID names the rule: ^[a-z][a-z0-9_.-]{0,63}$, unique in the
	// request. Required.
	ID string
	// Pattern is a regular expression in Rust's regex syntax, 1 to 1024
	// bytes, with at most 16 capture groups. Required.
	Pattern string
	// Flags are distinct letters of "ims": case-insensitive, multi-line,
	// dot matches newline. If empty, none.
	Flags string
	// Group is the capture group extracted; 0, the default, is the whole
	// match.
	Group int
	// Occurrence is which matches are taken: "first" (the default),
	// "last" or "all".
	Occurrence string
	// Remove is what is removed from the reply: "none" (the default),
	// "match" or "capture".
	Remove string
	// RemoveFrom is where it is removed: "text", "audio" or both. If
	// empty, both; it must be empty with Remove "none".
	RemoveFrom []string
}

// Prompt is a request's prompt context: how the event is framed, the
// scene and the directive the engine builds its prompt from
// (docs/rpengine-protocol.md, "Game to engine"). Every string but Version
// must be non-empty.
type Prompt struct {
	// Mode is "direct_user" (the player talks to the character; the
	// default) or "auto_event" (the game reports an event).
	Mode string
	// Kind, Family, Label and SceneLine describe the scene; Priority
	// ranks it (a finite number).
	Kind, Family, Label, SceneLine string
	Priority                       float64
	// SceneContext and the guides for each mode are the directive.
	SceneContext, AutoEventGuide, DirectUserGuide string
	// Version is the directive's own version. If empty, none is sent; it
	// must not be blank otherwise.
	Version string
	// DirectiveVersion is the directive format's version, at least 1. If
	// zero, 1.
	DirectiveVersion int
}

// The wire forms of the requests (docs/rpengine-protocol.md, "Game to
// engine").

// requestPayload is reply.request and voice.capture.start.
type requestPayload struct {
	RequestID        string            `json:"requestId"`
	EventID          string            `json:"eventId"`
	IntegrationID    string            `json:"integrationId"`
	CharacterID      string            `json:"characterId"`
	Event            *eventPayload     `json:"event,omitempty"`
	Output           outputPayload     `json:"output"`
	Player           *playerPayload    `json:"player,omitempty"`
	Card             card.Transfer     `json:"card"`
	InteractionMode  string            `json:"interactionMode,omitempty"`
	PromptScene      *scenePayload     `json:"promptScene,omitempty"`
	PromptDirective  *directivePayload `json:"promptDirective,omitempty"`
	ReturnTranscript *bool             `json:"returnTranscript,omitempty"`
	SilenceBehavior  string            `json:"silenceBehavior,omitempty"`
}

type eventPayload struct {
	Text  string        `json:"text,omitempty"`
	Audio *audioPayload `json:"audio,omitempty"`
}

type audioPayload struct {
	Format     string `json:"format"`
	SampleRate int    `json:"sampleRate"`
	Channels   int    `json:"channels"`
	Data       []byte `json:"data"` // base64
	Language   string `json:"language,omitempty"`
}

type outputPayload struct {
	Modalities         []string           `json:"modalities"`
	Language           string             `json:"language"`
	Audio              *outputAudio       `json:"audio,omitempty"`
	ResponseProcessing *processingPayload `json:"responseProcessing,omitempty"`
}

type outputAudio struct {
	Model      string               `json:"model"`
	Voice      string               `json:"voice"`
	Format     string               `json:"format,omitempty"` // only pcm_s16le exists: left out
	Processing *audioProcessingWire `json:"processing,omitempty"`
}

type audioProcessingWire struct {
	Profile string `json:"profile"`
}

type processingPayload struct {
	Mode  string        `json:"mode"`
	Rules []rulePayload `json:"rules"`
}

type rulePayload struct {
	ID           string         `json:"id"`
	Matcher      matcherPayload `json:"matcher"`
	CaptureGroup int            `json:"captureGroup"`
	Occurrence   string         `json:"occurrence"`
	Remove       string         `json:"remove"`
	RemoveFrom   []string       `json:"removeFrom"`
}

type matcherPayload struct {
	Type    string `json:"type"`
	Pattern string `json:"pattern"`
	// Flags is a string (issue #15: the engine refuses an array).
	Flags string `json:"flags,omitempty"`
}

type playerPayload struct {
	DisplayName string `json:"displayName"`
}

type scenePayload struct {
	Kind      string  `json:"kind"`
	Family    string  `json:"family"`
	Label     string  `json:"label"`
	SceneLine string  `json:"sceneLine"`
	Priority  float64 `json:"priority"`
}

type directivePayload struct {
	ProtocolVersion int    `json:"protocolVersion"`
	SceneContext    string `json:"sceneContext"`
	AutoEventGuide  string `json:"autoEventGuide"`
	DirectUserGuide string `json:"directUserGuide"`
	PromptVersion   string `json:"promptVersion,omitempty"`
}

// syncPayload is character.sync.
type syncPayload struct {
	IntegrationID string        `json:"integrationId"`
	CharacterID   string        `json:"characterId"`
	Card          card.Transfer `json:"card"`
}

type idPayload struct {
	RequestID string `json:"requestId"`
}
