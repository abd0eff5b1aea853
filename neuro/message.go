package neuro

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gamelink-go/gamelink/neuro/internal/wire"
)

// Wire command names and data (the Neuro game API: docs/neuro-protocol.md),
// shared with the fake server in neuro/internal/wire.
const (
	cmdStartup          = wire.CmdStartup
	cmdContext          = wire.CmdContext
	cmdRegister         = wire.CmdRegister
	cmdUnregister       = wire.CmdUnregister
	cmdForce            = wire.CmdForce
	cmdResult           = wire.CmdResult
	cmdShutdownReady    = wire.CmdShutdownReady
	cmdAction           = wire.CmdAction
	cmdSpeechFinished   = wire.CmdSpeechFinished
	cmdReregisterAll    = wire.CmdReregisterAll
	cmdShutdownGraceful = wire.CmdShutdownGraceful
	cmdShutdownNow      = wire.CmdShutdownNow
)

type (
	wireAction     = wire.Action
	registerData   = wire.Register
	unregisterData = wire.Unregister
	contextData    = wire.Context
	forceData      = wire.Force
	resultData     = wire.Result
	actionMsg      = wire.ActionIn
)

func encodeOut(game, command string, data any) ([]byte, error) {
	return wire.Encode(game, command, data)
}

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

// parseIncoming decodes one Neuro-to-game message into *actionMsg or an
// [Event]. Unknown commands return (nil, nil): the API says they are
// ignored. Malformed messages return a *ProtocolError.
func parseIncoming(b []byte) (any, error) {
	var m wire.In
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
		a, err := wire.DecodeAction(data)
		if a == nil {
			return nil, err
		}
		return a, err
	case cmdStartup:
		var d struct {
			Session *wire.Session `json:"session"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, err
		}
		// No acknowledgement without a session (issue #19): a bare startup
		// from the server names no character.
		switch s := d.Session; {
		case s == nil:
			return nil, fmt.Errorf(`missing required "session"`)
		case *s == wire.Session{}:
			return nil, fmt.Errorf(`"session" is empty`)
		case s.DisplayName == "":
			// Issue #33: the official SDKs name the character by its id
			// when the acknowledgement has no displayName.
			return StartupAck{SessionID: s.SessionID, CharacterID: s.CharacterID, DisplayName: s.CharacterID}, nil
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
