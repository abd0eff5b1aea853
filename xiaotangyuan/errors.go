package xiaotangyuan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JSON-RPC error codes used by the protocol. The Harness answers every
// validation and runtime failure with CodeServer and free text, and
// malformed frames with CodeParse (never -32600).
const (
	CodeParse          = -32700 // not JSON, or not a JSON-RPC 2.0 object
	CodeInvalidParams  = -32602 // sent by this client for bad game.atom.execute params
	CodeMethodNotFound = -32601 // sent by this client for Harness requests it does not know
	CodeServer         = -32000 // any Harness validation or runtime error
	CodeAtomFailed     = -32010 // an atom handler failed (the DST adapter convention)
)

var (
	// ErrDisconnected matches every error caused by a lost or missing
	// connection: calls made while disconnected, and calls pending when the
	// connection dropped. Use errors.As with [*DisconnectError] for the close
	// status.
	ErrDisconnected = errors.New("xiaotangyuan: disconnected")

	// ErrMessageTooLarge is returned, wrapped with the method and size, when
	// an outbound message would exceed [MaxMessageSize]. Nothing is sent: the
	// real Harness closes the connection with 1009 and can crash on such a
	// frame.
	ErrMessageTooLarge = errors.New("xiaotangyuan: message too large")

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
var errConnected = errors.New("xiaotangyuan: Connect was already called")

// RPCError is an error response from the Harness. Its text is
// "xiaotangyuan: harness error <code>: <message>"; returned by a method,
// it reads "xiaotangyuan: <method>: harness error <code>: <message>".
type RPCError struct {
	Method  string          // the method called
	Code    int             // JSON-RPC error code, usually CodeServer
	Message string          // the Harness's text (English or Chinese)
	Data    json.RawMessage // the error's data member, if any
}

// Error returns "xiaotangyuan: harness error <code>: <message>".
func (e *RPCError) Error() string {
	return fmt.Sprintf("%sharness error %d: %s", prefix, e.Code, e.Message)
}

// ValidationError reports a value refused locally before anything was sent:
// the Harness would refuse it too, or it breaks a rule of the protocol.
type ValidationError struct {
	Field  string // the JSON field, for example "context.roleInstructions"
	Reason string // what is wrong with it
}

// Error returns "xiaotangyuan: invalid <field>: <reason>".
func (e *ValidationError) Error() string {
	return fmt.Sprintf("xiaotangyuan: invalid %s: %s", e.Field, e.Reason)
}

// DisconnectError says why a connection ended. It matches
// [ErrDisconnected] with errors.Is and unwraps to the underlying cause
// (net.ErrClosed after [Client.Close]).
type DisconnectError struct {
	Code   int    // WebSocket close code (1001 "gateway shutting down", 1009 too big), 0 if none was received
	Reason string // close reason or a local description
	Err    error  // underlying cause, may be nil
}

// Error describes the close code, reason and cause, as available.
func (e *DisconnectError) Error() string {
	s := "xiaotangyuan: disconnected"
	if e.Code != 0 {
		s += fmt.Sprintf(" (close %d)", e.Code)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + bare(e.Err)
	}
	return s
}

// Is makes every DisconnectError match ErrDisconnected.
func (e *DisconnectError) Is(target error) bool { return target == ErrDisconnected }

// Unwrap returns the underlying cause.
func (e *DisconnectError) Unwrap() error { return e.Err }

// prefix starts the text of every error of the package, once.
const prefix = "xiaotangyuan: "

// opError is what an exported operation returns when it fails. Its text
// names the package and the operation once, whatever its cause says:
// "xiaotangyuan: chat.send: harness error -32000: ...", never
// "xiaotangyuan: chat.send: xiaotangyuan: chat.send: ..." (issue #20).
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return prefix + e.op + ": " + bare(e.err) }
func (e *opError) Unwrap() error { return e.err }

// wrap replaces a non-nil *err by an *opError for op. Exported operations
// defer it, as errd.Wrap elsewhere in the module.
func wrap(err *error, op string) {
	if *err != nil {
		*err = &opError{op: op, err: *err}
	}
}

// bare returns err's text without the package prefix, for errors that
// quote another: the prefix is said once, at the start.
func bare(err error) string { return strings.TrimPrefix(err.Error(), prefix) }
