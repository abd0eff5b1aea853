package xiaotangyuan

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// JSON-RPC error codes used by the protocol. The Harness answers every
// validation and runtime failure with CodeServer and free text, and
// malformed frames with CodeParse (never -32600).
const (
	CodeParse          = wire.CodeParse          // not JSON, or not a JSON-RPC 2.0 object
	CodeInvalidParams  = wire.CodeInvalidParams  // sent by this client for bad game.atom.execute params
	CodeMethodNotFound = wire.CodeMethodNotFound // sent by this client for Harness requests it does not know
	CodeServer         = wire.CodeServer         // any Harness validation or runtime error
	CodeAtomFailed     = wire.CodeAtomFailed     // an atom handler failed (the DST adapter convention)
)

// prefix starts the text of every error of the package, once.
const prefix = "xiaotangyuan: "

var (
	// ErrClosed is returned by methods of a closed [Client]. It is
	// [net.ErrClosed], so errors.Is(err, net.ErrClosed) also holds.
	ErrClosed = net.ErrClosed

	// ErrDisconnected matches every error caused by a lost or missing
	// connection: calls made while disconnected, and calls pending when the
	// connection dropped. Use errors.As with [*DisconnectError] for the close
	// status.
	ErrDisconnected = errors.New("xiaotangyuan: disconnected")

	// ErrMessageTooBig is returned, wrapped with the method and size, when
	// an outbound message would exceed [MaxMessageSize]. Nothing is sent: the
	// real Harness closes the connection with 1009 and can crash on such a
	// frame.
	ErrMessageTooBig = errors.New("xiaotangyuan: message too big")

	// ErrTimeout is returned, wrapped with the method, when a call's own
	// timeout (see [Options]) expires before the Harness answers. A response
	// arriving later is dropped.
	ErrTimeout = errors.New("xiaotangyuan: call timed out")

	// ErrNoProcessID is returned by [Client.StartVoice] and
	// [Client.StopVoice] when the hello carried no processId (ProcessID < 0),
	// which the Harness would refuse anyway.
	ErrNoProcessID = errors.New("xiaotangyuan: voice needs a processId in adapter.hello")
)

// errStarted is returned by HandleAtom after Connect: atoms are advertised
// in the hello, so the set is frozen once the first hello is sent.
var errStarted = errors.New("xiaotangyuan: atoms must be registered before Connect")

// errConnected is returned by a second Connect: the client reconnects by
// itself, so one successful Connect is all it takes.
var errConnected = errors.New("xiaotangyuan: Connect already succeeded; the client reconnects by itself")

// ConfigError reports an invalid [Options] field; [New] returns it.
type ConfigError struct {
	Field  string // the Options field, for example "ReconnectMin"
	Reason string // what is wrong with it
}

// Error returns "xiaotangyuan: option <field>: <reason>".
func (e *ConfigError) Error() string { return prefix + "option " + e.Field + ": " + e.Reason }

// RPCError is an error response from the Harness. Its text is
// "xiaotangyuan: harness error <code>: <message>"; returned by a method,
// it reads "xiaotangyuan: <method>: harness error <code>: <message>". The
// message is clipped in the text (2 KiB, control characters escaped) and
// kept whole in Message.
type RPCError struct {
	Method  string          // the method called
	Code    int             // JSON-RPC error code, usually CodeServer
	Message string          // the Harness's text (English or Chinese)
	Data    json.RawMessage // the error's data member, if any
}

// Error returns "xiaotangyuan: harness error <code>: <message>".
func (e *RPCError) Error() string {
	return fmt.Sprintf("%sharness error %d: %s", prefix, e.Code, peertext.Clip(e.Message, peertext.LineBytes))
}

// ValidationError reports a value of a call refused locally before
// anything was sent: the Harness would refuse it too, or it breaks a rule
// of the protocol.
type ValidationError struct {
	Field  string // the JSON field, for example "context.roleInstructions"
	Reason string // what is wrong with it
}

// Error returns "xiaotangyuan: invalid <field>: <reason>".
func (e *ValidationError) Error() string {
	return fmt.Sprintf("%sinvalid %s: %s", prefix, e.Field, e.Reason)
}

// DisconnectError says why a connection ended. It matches
// [ErrDisconnected] with errors.Is and unwraps to the underlying cause
// ([ErrClosed] after [Client.Close]).
type DisconnectError struct {
	Code   int    // WebSocket close code (1001 "gateway shutting down", 1009 too big), 0 if none was received
	Reason string // close reason or a local description
	Err    error  // underlying cause, may be nil
}

// Error describes the close code, reason and cause, as available. The
// reason and the cause may quote the peer (a close reason, a handshake
// response): both are clipped, with control characters escaped.
func (e *DisconnectError) Error() string {
	s := prefix + "disconnected"
	if e.Code != 0 {
		s += fmt.Sprintf(" (close %d)", e.Code)
	}
	if e.Reason != "" {
		s += ": " + peertext.Clip(e.Reason, peertext.LogBytes)
	}
	if e.Err != nil {
		s += ": " + peertext.Clip(errd.Text(e.Err, prefix), peertext.LineBytes)
	}
	return s
}

// Is makes every DisconnectError match ErrDisconnected.
func (e *DisconnectError) Is(target error) bool { return target == ErrDisconnected }

// Unwrap returns the underlying cause.
func (e *DisconnectError) Unwrap() error { return e.Err }

// wrap is errd.Wrap with the package prefix: every exported operation
// defers it, so that its error says once where it came from
// ("xiaotangyuan: chat.send: harness error -32000: ...", issue #20).
func wrap(err *error, op string) { errd.Wrap(err, prefix+op) }
