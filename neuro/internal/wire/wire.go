// Package wire holds the Neuro game API on the wire (text frames of JSON,
// {"command", "game", "data"}), shared by the SDK (package neuro) and its
// fake server (neurotest): command names, the envelope, the data of every
// command, and the decoding of an incoming action, which both read the
// same way.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Game-to-Neuro commands.
const (
	CmdStartup       = "startup"
	CmdContext       = "context"
	CmdRegister      = "actions/register"
	CmdUnregister    = "actions/unregister"
	CmdForce         = "actions/force"
	CmdResult        = "action/result"
	CmdShutdownReady = "shutdown/ready"
)

// Neuro-to-game commands.
const (
	CmdAction           = "action"
	CmdSpeechFinished   = "speech_finished"
	CmdReregisterAll    = "actions/reregister_all"
	CmdShutdownGraceful = "shutdown/graceful"
	CmdShutdownNow      = "shutdown/immediate"
)

// Out is a game-to-Neuro message. Data is omitted when nil (startup and
// shutdown/ready are sent without data, the safest form).
type Out struct {
	Command string `json:"command"`
	Game    string `json:"game"`
	Data    any    `json:"data,omitempty"`
}

// Encode encodes a game-to-Neuro message.
func Encode(game, command string, data any) ([]byte, error) {
	return json.Marshal(Out{Command: command, Game: game, Data: data})
}

// In is a Neuro-to-game message: no game member.
type In struct {
	Command string          `json:"command"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Action is one action as registered.
type Action struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// SameDefinition reports whether two registrations look the same to the
// server: same name and description, and schemas equal as JSON values.
func SameDefinition(a, b Action) bool {
	return a.Name == b.Name && a.Description == b.Description && jsonEqual(a.Schema, b.Schema)
}

func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// Register is the data of actions/register.
type Register struct {
	Actions []Action `json:"actions"`
}

// Unregister is the data of actions/unregister.
type Unregister struct {
	ActionNames []string `json:"action_names"`
}

// Context is the data of context.
type Context struct {
	Message string `json:"message"`
	Silent  bool   `json:"silent"`
}

// Force is the data of actions/force.
type Force struct {
	State            string   `json:"state,omitempty"`
	Query            string   `json:"query"`
	EphemeralContext bool     `json:"ephemeral_context,omitempty"`
	Priority         string   `json:"priority,omitempty"`
	ActionNames      []string `json:"action_names"`
}

// Result is the data of action/result.
type Result struct {
	ID      string `json:"id"`
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
}

// Session is the session of Neuro's startup acknowledgement. An empty
// DisplayName is left out, so that the fake can send an acknowledgement
// without one (docs/neuro-protocol.md, "The server").
type Session struct {
	SessionID   string `json:"sessionId"`
	CharacterID string `json:"characterId"`
	DisplayName string `json:"displayName,omitempty"`
}

// StartupAck is the data of Neuro's startup acknowledgement.
type StartupAck struct {
	Session *Session `json:"session"`
}

// ActionOut is the data of an action Neuro sends. Data is the action's
// data as a JSON-encoded string; nil omits it.
type ActionOut struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Data *string `json:"data,omitempty"`
}

// ActionIn is an incoming action as read: Data is the JSON text of the
// action's data, and HasData says whether there was any.
type ActionIn struct {
	ID      string
	Name    string
	Data    string
	HasData bool
}

// DecodeAction reads the data of an incoming action. A missing id is an
// error with a nil action; a missing name, or data that is a malformed
// string, is an error with the action (its id can still be answered).
// data is a JSON-encoded string; some peers send the object itself, which
// is kept verbatim so that validation can still judge it.
func DecodeAction(data []byte) (*ActionIn, error) {
	var d struct {
		ID   *string         `json:"id"`
		Name *string         `json:"name"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.ID == nil || *d.ID == "" {
		return nil, fmt.Errorf(`missing required "id"`)
	}
	a := &ActionIn{ID: *d.ID}
	if d.Name == nil {
		return a, fmt.Errorf(`missing required "name"`)
	}
	a.Name = *d.Name
	if len(d.Data) == 0 || bytes.Equal(d.Data, []byte("null")) {
		return a, nil
	}
	if d.Data[0] == '"' {
		if err := json.Unmarshal(d.Data, &a.Data); err != nil {
			return a, err
		}
	} else {
		a.Data = string(d.Data)
	}
	a.HasData = true
	return a, nil
}
