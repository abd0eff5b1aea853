package neuro

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Wire command names (Neuro API, README.md of VedalAI/neuro-sdk).
const (
	cmdStartup          = "startup"
	cmdContext          = "context"
	cmdRegister         = "actions/register"
	cmdUnregister       = "actions/unregister"
	cmdForce            = "actions/force"
	cmdResult           = "action/result"
	cmdShutdownReady    = "shutdown/ready"
	cmdAction           = "action"
	cmdSpeechFinished   = "speech_finished"
	cmdReregisterAll    = "actions/reregister_all"
	cmdShutdownGraceful = "shutdown/graceful"
	cmdShutdownNow      = "shutdown/immediate"
)

// Priority says how urgently Neuro answers a force while she is speaking.
// The zero value is [PriorityLow], the server's default.
type Priority int

// Priorities, from the actions/force "priority" field.
const (
	PriorityLow      Priority = iota // wait until she finishes speaking
	PriorityMedium                   // finish the current utterance sooner
	PriorityHigh                     // shorten the utterance, then respond
	PriorityCritical                 // interrupt her speech at once; use with care
)

var priorityNames = [...]string{"low", "medium", "high", "critical"}

// String returns the wire name ("low", "medium", "high", "critical").
func (p Priority) String() string {
	if p < 0 || int(p) >= len(priorityNames) {
		return fmt.Sprintf("Priority(%d)", int(p))
	}
	return priorityNames[p]
}

// outMsg is one game-to-Neuro message. Data is omitted when nil (startup
// and shutdown/ready are sent without data, the safest form).
type outMsg struct {
	Command string `json:"command"`
	Game    string `json:"game"`
	Data    any    `json:"data,omitempty"`
}

type wireAction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

type registerData struct {
	Actions []wireAction `json:"actions"`
}

type unregisterData struct {
	ActionNames []string `json:"action_names"`
}

type contextData struct {
	Message string `json:"message"`
	Silent  bool   `json:"silent"`
}

type forceData struct {
	State            string   `json:"state,omitempty"`
	Query            string   `json:"query"`
	EphemeralContext bool     `json:"ephemeral_context,omitempty"`
	Priority         string   `json:"priority,omitempty"`
	ActionNames      []string `json:"action_names"`
}

type resultData struct {
	ID      string `json:"id"`
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
}

func encodeOut(game, command string, data any) ([]byte, error) {
	return json.Marshal(outMsg{Command: command, Game: game, Data: data})
}

// wireSession is the session of Neuro's startup acknowledgement.
type wireSession struct {
	SessionID   string `json:"sessionId"`
	CharacterID string `json:"characterId"`
	DisplayName string `json:"displayName"`
}

// inMsg is the Neuro-to-game envelope.
type inMsg struct {
	Command string          `json:"command"`
	Data    json.RawMessage `json:"data"`
}

// actionMsg is the data of an incoming "action".
type actionMsg struct {
	ID      string
	Name    string
	Data    string
	HasData bool
}

// parseIncoming decodes one Neuro-to-game message into *actionMsg or an
// [Event]. Unknown commands return (nil, nil): the API says they are
// ignored. Malformed messages return a *ProtocolError.
func parseIncoming(b []byte) (any, error) {
	var m inMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &ProtocolError{Reason: "not a JSON object: " + err.Error()}
	}
	if m.Command == "" {
		return nil, &ProtocolError{Reason: `missing "command"`}
	}
	data := m.Data
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	v, err := decodeData(m.Command, data)
	if err != nil {
		// An action with a readable id is returned too, so that it can
		// still be answered with a failing result.
		return v, &ProtocolError{Command: m.Command, Reason: err.Error()}
	}
	return v, nil
}

func decodeData(cmd string, data []byte) (any, error) {
	switch cmd {
	case cmdAction:
		a, err := decodeAction(data)
		if a == nil {
			return nil, err
		}
		return a, err
	case cmdStartup:
		var d struct {
			Session *wireSession `json:"session"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		// No acknowledgement without a session (issue #19): a bare startup
		// from the server names no character.
		switch s := d.Session; {
		case s == nil:
			return nil, fmt.Errorf(`missing required "session"`)
		case *s == wireSession{}:
			return nil, fmt.Errorf(`"session" is empty`)
		default:
			return StartupAck{SessionID: s.SessionID, CharacterID: s.CharacterID, DisplayName: s.DisplayName}, nil
		}
	case cmdSpeechFinished:
		var d struct {
			IsFinal   *bool  `json:"isFinal"`
			Cancelled bool   `json:"cancelled"`
			Reason    string `json:"reason"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		if d.IsFinal == nil {
			return nil, fmt.Errorf(`missing required "isFinal"`)
		}
		return SpeechFinished{IsFinal: *d.IsFinal, Cancelled: d.Cancelled, Reason: d.Reason}, nil
	case cmdReregisterAll:
		return ReregisterAll{}, nil
	case cmdShutdownGraceful:
		var d struct {
			WantsShutdown bool `json:"wants_shutdown"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		return ShutdownGraceful{WantsShutdown: d.WantsShutdown}, nil
	case cmdShutdownNow:
		return ShutdownImmediate{}, nil
	}
	return nil, nil
}

func decodeAction(data []byte) (*actionMsg, error) {
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
	a := &actionMsg{ID: *d.ID}
	if d.Name == nil {
		return a, fmt.Errorf(`missing required "name"`)
	}
	a.Name = *d.Name
	if len(d.Data) == 0 || bytes.Equal(d.Data, []byte("null")) {
		return a, nil
	}
	// data is a JSON-encoded string; some peers send the object itself,
	// which is kept verbatim so that validation can still judge it.
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
