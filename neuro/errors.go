package neuro

import (
	"errors"
	"fmt"
	"net"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// ErrClosed is returned by methods of a closed [Client]. It is
// [net.ErrClosed], so errors.Is(err, net.ErrClosed) also holds.
var ErrClosed = net.ErrClosed

// ErrForceBusy is returned by [Client.Force] with [ForceRefuse] when another
// force is still outstanding. Neuro handles one force at a time.
var ErrForceBusy = errors.New("neuro: a force is already outstanding")

// ErrQueueFull is returned when a bounded queue (outgoing messages, queued
// forces) has no room. Nothing is dropped silently: the caller gets this
// error and decides.
var ErrQueueFull = errors.New("neuro: queue full")

// ErrMessageTooBig is returned (wrapped) when an outgoing message exceeds
// [Options.ReadLimit].
var ErrMessageTooBig = errors.New("neuro: message too big")

// ErrUnknownAction is returned when a force names an action that is not in
// the client's action set.
var ErrUnknownAction = errors.New("neuro: unknown action")

// errConnected is returned by a second Connect: the client reconnects by
// itself, so one successful Connect is all it takes.
var errConnected = errors.New("neuro: Connect already succeeded; the client reconnects by itself")

// ConfigError reports an invalid [Options] field; [New] returns it.
type ConfigError struct {
	Field  string // the Options field, for example "ReconnectMin"
	Reason string // what is wrong with it
}

// Error returns "neuro: option <field>: <reason>".
func (e *ConfigError) Error() string { return "neuro: option " + e.Field + ": " + e.Reason }

// NameError reports an action name that breaks the naming rule: lowercase
// letters and digits, words separated by '_' or '-'.
type NameError struct {
	Name   string // the offending name
	Reason string // what is wrong with it
}

// Error implements error.
func (e *NameError) Error() string {
	return fmt.Sprintf("neuro: invalid action name %q: %s", e.Name, e.Reason)
}

// ConflictError reports a second, different definition of an action name
// that is already in the set. The API and the conformance tool keep the
// first definition (docs/neuro-protocol.md), a server that replaced it
// would differ, and either way the game would not get what it asked, so
// the SDK refuses the second locally; [Client.SetActions] redefines an
// action by unregistering and registering it again, which is right either
// way.
type ConflictError struct {
	Name string // the action name defined twice
}

// Error implements error.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("neuro: action %q is already registered with a different definition (the server keeps the first; unregister it first)", e.Name)
}

// SchemaError reports an action schema that is not usable: not JSON, root not
// of type "object", or not compilable as JSON Schema.
type SchemaError struct {
	Action string // the action whose schema is bad
	Reason string
}

// Error implements error.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("neuro: schema of action %q: %s", e.Action, e.Reason)
}

// DataError reports action data from Neuro that is malformed or does not
// match the action's schema. Its Error text is what the SDK sends back to
// Neuro in the failing action/result, so it is written for her: it says
// where the data was wrong and what was expected.
type DataError struct {
	Action string // the action name
	Path   string // JSON Pointer into the data ("" for the whole value)
	Reason string // what was wrong
}

// Error implements error. Path and Reason may quote her data (a
// property name, a value), so they are clipped (internal/peertext), as
// everything of hers the SDK sends back is (issue #31).
func (e *DataError) Error() string {
	reason := peertext.Clip(e.Reason, peertext.LineBytes)
	if e.Path == "" {
		return fmt.Sprintf("invalid data for action %q: %s", e.Action, reason)
	}
	return fmt.Sprintf("invalid data for action %q at %s: %s", e.Action, peertext.Clip(e.Path, peertext.LogBytes), reason)
}

// ProtocolError reports an incoming message that could not be understood.
// The connection stays open (the API ignores malformed messages); the error
// is logged (Options.Logger, under the key "err") and recorded.
type ProtocolError struct {
	Command string // the command, if it could be read
	Reason  string
}

// Error implements error. The command and the reason come from the peer
// in part, so they are clipped (internal/peertext): the text is logged,
// and sent back in the result of a malformed action (issue #31).
func (e *ProtocolError) Error() string {
	reason := peertext.Clip(e.Reason, peertext.LineBytes)
	if e.Command == "" {
		return "neuro: bad incoming message: " + reason
	}
	return "neuro: bad incoming " + peertext.Quote(e.Command, peertext.LogBytes) + " message: " + reason
}

// DialError reports a failed connection attempt: [Client.Connect] returns
// it, and a failed reconnect attempt logs it (Options.Logger, under the
// key "err"; as a warning once per outage).
type DialError struct {
	URL string
	Err error
}

// Error implements error.
func (e *DialError) Error() string { return "neuro: dial " + e.URL + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *DialError) Unwrap() error { return e.Err }
