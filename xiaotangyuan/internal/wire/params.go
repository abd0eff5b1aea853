package wire

import "encoding/json"

// Hello is the params of adapter.hello.
type Hello struct {
	AdapterID       string   `json:"adapterId"`
	GameID          string   `json:"gameId"`
	Version         string   `json:"version"`
	ProtocolVersion string   `json:"protocolVersion"`
	ProcessID       int      `json:"processId,omitempty"`
	SaveID          string   `json:"saveId,omitempty"`
	Capabilities    []string `json:"capabilities"`
}

// HelloResult is the result of adapter.hello.
type HelloResult struct {
	Accepted        bool   `json:"accepted"`
	ProtocolVersion string `json:"protocolVersion"`
}

// Accepted is the result of state.update, voice.start and voice.stop.
type Accepted struct {
	Accepted bool `json:"accepted"`
}

// Pong is the result of gateway.ping.
type Pong struct {
	Pong bool `json:"pong"`
}

// Chat is the params of chat.send, chat.retry and assistant.compose.
type Chat struct {
	Text    string   `json:"text,omitempty"`
	Context *Context `json:"context,omitempty"`
}

// Context is a chat's optional structured context.
type Context struct {
	RoleInstructions string          `json:"roleInstructions,omitempty"`
	PlayerName       string          `json:"playerName,omitempty"`
	Location         string          `json:"location,omitempty"`
	Date             string          `json:"date,omitempty"`
	Time             string          `json:"time,omitempty"`
	NearbyNPC        string          `json:"nearbyNpc,omitempty"`
	SaveID           string          `json:"saveId,omitempty"`
	Observation      json.RawMessage `json:"observation,omitempty"`
}

// Reply is the result of chat.send, chat.retry and assistant.compose.
type Reply struct {
	Reply         string `json:"reply"`
	SessionID     string `json:"sessionId"`
	InteractionID string `json:"interactionId"`
}

// State is the params of state.update.
type State struct {
	Observation json.RawMessage `json:"observation"`
	SaveID      string          `json:"saveId,omitempty"`
}

// Atom is the params of game.atom.execute.
type Atom struct {
	Atom      string          `json:"atom"`
	Arguments json.RawMessage `json:"arguments"`
}

// The notifications, as the gateway writes them: every member present.

// Ready is gateway.ready.
type Ready struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    []string `json:"capabilities"`
}

// TextStart is assistant.text.start.
type TextStart struct {
	InteractionID string `json:"interactionId"`
	Source        string `json:"source"`
}

// TextDelta is assistant.text.delta (and the legacy assistant.delta):
// Text is the cumulative text of the current model step.
type TextDelta struct {
	InteractionID string  `json:"interactionId"`
	Delta         string  `json:"delta"`
	Text          string  `json:"text"`
	ElapsedMs     float64 `json:"elapsedMs"`
	Source        string  `json:"source"`
}

// TextDone is assistant.text.done.
type TextDone struct {
	InteractionID string `json:"interactionId"`
	Text          string `json:"text"`
	Source        string `json:"source"`
}

// TextCancel is assistant.text.cancel; it names no interaction.
type TextCancel struct {
	Reason string `json:"reason"`
}

// Present is assistant.present.
type Present struct {
	Text   string `json:"text"`
	Source string `json:"source"`
}

// Status is assistant.status.
type Status struct {
	Status     string `json:"status"`
	Transcript string `json:"transcript,omitempty"`
}

// ErrorNote is assistant.error.
type ErrorNote struct {
	Message string `json:"message"`
}

// Note is the union of the notifications' params, as the client reads
// them: pointers tell a member that is absent from one that is empty.
type Note struct {
	InteractionID   string   `json:"interactionId"`
	Source          string   `json:"source"`
	Delta           string   `json:"delta"`
	Text            *string  `json:"text"`
	ElapsedMs       float64  `json:"elapsedMs"`
	Status          string   `json:"status"`
	Transcript      string   `json:"transcript"`
	Message         string   `json:"message"`
	Reason          string   `json:"reason"`
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    []string `json:"capabilities"`
}
