package neurosan

import (
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gamelink-go/gamelink/internal/optdef"
)

// Defaults of the Options fields. The turn and idle timeouts have none:
// the server has none (see Options).
const (
	defaultHandshakeTimeout = 10 * time.Second
	defaultReadLimit        = 64 << 20
	defaultRetries          = 3
	defaultRetryBackoff     = 500 * time.Millisecond
	maxRetryBackoff         = 30 * time.Second
)

// Options configures a [Client]. A nil *Options means defaults. For every
// number and duration, zero means the default stated on it, and a
// negative value disables the setting where the field says so and is a
// [*ConfigError] otherwise.
type Options struct {
	// HTTPClient sends the requests. If nil, a client over
	// http.DefaultTransport is used. Its Timeout must be zero: it would cut
	// long streams, and New refuses it; use TurnTimeout instead. Tests use
	// the fake's in-memory neurosantest.Server.Client. A redirect is
	// followed only to an http:// or https:// URL without user
	// information that stays on this machine when the base URL is on it,
	// and is not plain http:// to another host than the base URL's; then
	// as its CheckRedirect says (if nil, up to 10 redirects).
	HTTPClient *http.Client
	// Header is added to every request, for example the forwarded metadata
	// headers "request_id" and "user_id" that the server copies into its
	// logs. New copies it.
	Header http.Header
	// HandshakeTimeout bounds [Client.Connect]'s readiness probe. If zero,
	// 10 s. Negative is invalid.
	HandshakeTimeout time.Duration
	// TurnTimeout bounds a whole turn (and a List, Function, Connectivity,
	// CallTool or probe call), from the request to the end of the
	// response, on top of the caller's context. If zero, there is none,
	// as on the server: a network has no request timeout unless its
	// request_timeout_seconds sets one (the server then ends the turn
	// itself with {"error": "Request timeout"}), and turns of several
	// minutes are normal. If set, make it exceed that timeout: cutting a
	// turn does not stop the agents (see [Stream.Close]). Negative also
	// means none.
	TurnTimeout time.Duration
	// IdleTimeout bounds the wait for the next bytes of a response. If
	// zero, there is none: the server's heartbeat is off by default, so a
	// MINIMAL turn is silent until its answer, however long the agents
	// work. When the server writes heartbeats (an interval N set with
	// AGENT_STREAM_KEEP_ALIVE_WITH_PROGRESS_INTERVAL_SECONDS), set it to
	// about 3N to notice a dead server or a dropped proxy connection
	// within that. Negative also means none.
	IdleTimeout time.Duration
	// ReadLimit bounds one JSON object of a stream, and a whole List,
	// Function or Connectivity body, in bytes. chat_context grows with the
	// history, and MAXIMAL echoes it on every line. If zero, 64 MiB.
	// Negative disables the limit.
	ReadLimit int64
	// Retries is how many times a request answered with 503 (before any
	// stream started) is sent again: "Too many concurrent requests" beyond
	// the server's concurrent_requests_limit (unlimited by default), or
	// "Server is shutting down" (it drains for up to 30 s). It is never
	// retried once a 200 stream has begun, because the agents may already
	// have acted. If zero, 3. Negative disables retries.
	Retries int
	// RetryBackoff is the wait before the first retry; it doubles on each
	// retry, with up to 25% jitter, capped at 30 s. A Retry-After header in
	// seconds overrides it (also capped). If zero, 500 ms. Negative is
	// invalid.
	RetryBackoff time.Duration
	// Logger receives what has no caller to return to: a plain http:// URL
	// to a host that is not loopback (warn, at New), an error after a
	// complete answer that [Conversation.Send] kept (warn). If nil,
	// slog.Default().
	Logger *slog.Logger
	// Recorder, if not nil, receives a JSON Lines log of every request body
	// sent and every object or error body received (see internal/jsonl),
	// one Write a line. The recording is asynchronous and bounded: a
	// goroutine of the client's own, started by the first request, writes
	// the lines, so a slow or blocked writer never holds up a request or a
	// stream; at most 32 MiB of lines wait, and past that lines are dropped
	// and a line counts them. Close writes what waits, but gives up after
	// 5 s without a Write returning (logged as a warning; the goroutine
	// stuck in that Write ends when it returns); what a request still in
	// flight records after Close is not written. The client never closes
	// it. The log contains sly_data: treat it as private.
	Recorder io.Writer
}

// withDefaults validates o and returns a copy with every default applied.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.HTTPClient == nil {
		r.HTTPClient = &http.Client{}
	}
	if r.HTTPClient.Timeout != 0 {
		return r, &ConfigError{Field: "HTTPClient", Reason: "Timeout must be zero (it would cut long streams); use TurnTimeout"}
	}
	r.HTTPClient = followRedirects(r.HTTPClient)
	r.Header = r.Header.Clone()
	if r.ReadLimit == 0 {
		r.ReadLimit = defaultReadLimit
	}
	if r.Retries == 0 {
		r.Retries = defaultRetries
	}
	if f, why := optdef.Apply(
		optdef.Positive("HandshakeTimeout", &r.HandshakeTimeout, defaultHandshakeTimeout),
		optdef.Positive("RetryBackoff", &r.RetryBackoff, defaultRetryBackoff),
	); f != "" {
		return r, &ConfigError{Field: f, Reason: why}
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r, nil
}
