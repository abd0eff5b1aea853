package neurosan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// Sentinels a caller branches on. A [*StatusError] matches the status ones
// with errors.Is.
var (
	// ErrBadRequest: the server answered 400 (for StreamingChat, a body it
	// could not parse).
	ErrBadRequest = errors.New("neurosan: bad request")
	// ErrForbidden: the server answered 403 (the authorizer refused).
	ErrForbidden = errors.New("neurosan: forbidden")
	// ErrNotFound: the server answered 404 (unknown agent network; the body
	// is empty).
	ErrNotFound = errors.New("neurosan: agent not found")
	// ErrUnavailable: the server answered 503 ("Too many concurrent
	// requests", "Server is shutting down") on every attempt.
	ErrUnavailable = errors.New("neurosan: service unavailable")
	// ErrServer: the server answered another 5xx status.
	ErrServer = errors.New("neurosan: server error")

	// ErrIdleTimeout: nothing arrived on the stream for
	// Options.IdleTimeout.
	ErrIdleTimeout = errors.New("neurosan: idle read timeout")
	// ErrTurnTimeout: the turn took longer than Options.TurnTimeout.
	// It matches context.DeadlineExceeded too.
	ErrTurnTimeout = fmt.Errorf("neurosan: turn timeout: %w", context.DeadlineExceeded)
	// ErrAfterAnswer: the stream failed after a complete answer (an
	// {"error": …} object the server wrote while cleaning up, a cut
	// connection, a timeout). Stream.Answer and Conversation.Send keep the
	// answer; the error comes from Stream.Next and Stream.Err.
	ErrAfterAnswer = errors.New("neurosan: error after the answer")
	// ErrNoAnswer: the stream ended cleanly without an AGENT_FRAMEWORK
	// message (for example the request had no text, and the server sent {}).
	ErrNoAnswer = errors.New("neurosan: stream ended without an answer")
	// ErrMessageTooBig: one JSON object in the stream, or a response body,
	// exceeded Options.ReadLimit.
	ErrMessageTooBig = errors.New("neurosan: message too big")
	// ErrInvalidAgent: an agent name is empty or has an empty, "." or ".."
	// path segment, or a tool name is empty or has a '/'.
	ErrInvalidAgent = errors.New("neurosan: invalid agent or tool name")
	// ErrBusy: Conversation.Send was called while a turn was in flight.
	ErrBusy = errors.New("neurosan: conversation turn already in flight")
	// ErrConnectionCut: the connection closed or failed before the end of
	// the stream (the server crashed, a proxy dropped it). The error says at
	// which byte, and wraps the transport's error (io.ErrUnexpectedEOF for
	// a chunked body cut short). It is never retried: the agents may
	// already have acted.
	ErrConnectionCut = errors.New("neurosan: connection cut")
	// ErrClosed is returned by methods of a closed [Client], and by a
	// stream's Next after its Close or the client's. It is [net.ErrClosed],
	// so errors.Is(err, net.ErrClosed) also holds.
	ErrClosed = net.ErrClosed
)

// ConfigError reports an invalid [Options] field; [New] returns it.
type ConfigError struct {
	Field  string // the Options field, for example "RetryBackoff"
	Reason string // what is wrong with it
}

// Error returns "neurosan: option <field>: <reason>".
func (e *ConfigError) Error() string { return "neurosan: option " + e.Field + ": " + e.Reason }

// StatusError is a non-200 HTTP answer, before any stream started. Its text
// is wrapped by the operation: `neurosan: function: agent "x": 404 Not
// Found`.
type StatusError struct {
	// Op is the operation, for example "streaming_chat".
	Op string
	// Agent is the agent network asked, empty for List.
	Agent string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the body's "error" string when the body is {"error": …},
	// otherwise the body itself (trimmed and cut to 512 bytes); empty for
	// the 404 with an empty body.
	Message string
	// Attempts is how many requests were made (more than 1 after 503
	// retries).
	Attempts int
}

// Error returns `agent "x": 404 Not Found: message (after n attempts)`,
// leaving out the parts that are empty.
func (e *StatusError) Error() string {
	// No "neurosan: op" prefix: the exported operation that returns it
	// adds one.
	var b strings.Builder
	if e.Agent != "" {
		fmt.Fprintf(&b, "agent %q: ", e.Agent)
	}
	fmt.Fprintf(&b, "%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		b.WriteString(": " + peertext.Clip(e.Message, peertext.LineBytes)) // the server's text (issue #31)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is matches ErrBadRequest, ErrForbidden, ErrNotFound, ErrUnavailable and
// ErrServer by status code.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrUnavailable:
		return e.StatusCode == http.StatusServiceUnavailable
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode != http.StatusServiceUnavailable
	}
	return false
}

// StreamError is an {"error": …} object inside a 200 stream: the server
// failed after the stream had started ("Request timeout" when the network's
// request timeout fired, "Internal server error" otherwise). It is never
// retried automatically: the agents may already have acted.
type StreamError struct {
	// Message is the "error" value when it is a string, else its raw JSON.
	Message string
	// Offset is the byte offset just past the object in the response body.
	Offset int64
}

// Error returns the message, clipped (internal/peertext: it is the
// server's text, and is logged), with the offset where the object ended.
func (e *StreamError) Error() string {
	return fmt.Sprintf("stream error ending at byte %d: %s", e.Offset, peertext.Clip(e.Message, peertext.LineBytes))
}

// Timeout reports whether the server's per-network request timeout ended
// the turn.
func (e *StreamError) Timeout() bool { return e.Message == "Request timeout" }

// DecodeError is a stream body that is not a sequence of JSON objects, or
// that ended, as a complete HTTP body, in the middle of one. (A connection
// cut short is ErrConnectionCut instead.)
type DecodeError struct {
	// Offset is the byte offset in the response body where decoding
	// failed: just past the bad byte of a syntax error, the end of what
	// was read for a body that ended inside an object or an object over
	// ReadLimit, the end of a value that is not an object.
	Offset int64
	// Err says what was wrong: a *json.SyntaxError, io.ErrUnexpectedEOF,
	// ErrMessageTooBig, or a value that is not a JSON object.
	Err error
}

// Error returns the offset and what was wrong there.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("bad stream at byte %d: %v", e.Offset, e.Err)
}

// Unwrap returns Err, so that errors.Is(err, ErrMessageTooBig) and
// io.ErrUnexpectedEOF (a body that ended inside an object) match.
func (e *DecodeError) Unwrap() error { return e.Err }
