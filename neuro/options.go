package neuro

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gamelink-go/gamelink/internal/optdef"
	"github.com/gamelink-go/gamelink/internal/peertext"
)

// Defaults of the Options fields.
const (
	defaultActionTimeout    = 4 * time.Second // under the 5 s at which conformance tools report a timeout
	defaultReconnectMin     = 3 * time.Second // as the official SDKs
	defaultReconnectMax     = 30 * time.Second
	defaultHandshakeTimeout = 10 * time.Second
	defaultReadLimit        = 4 << 20
	defaultMaxQueue         = 256
	defaultMaxEvents        = 256
	defaultMaxInFlight      = 16
)

// Options configures a [Client]. The zero value (or nil) is usable. For
// every number and duration, zero means the default stated on it, and a
// negative value disables the setting where the field says so and is a
// [*ConfigError] otherwise.
type Options struct {
	// URL of the Neuro server. If empty, $NEURO_SDK_WS_URL is used, and
	// if that is unset, [DefaultURL]. The real server may be remote
	// (wss:// included): Neuro is the server, the game the client.
	URL string
	// HTTPClient performs the WebSocket handshake. If nil,
	// http.DefaultClient. Tests use the fake's in-memory
	// neurotest.Server.Client. Whatever its CheckRedirect, the client
	// follows no redirect: the Neuro server never redirects the handshake,
	// so a redirect fails the attempt with a *[DialError].
	HTTPClient *http.Client

	// Prefix is added to every action name on the wire (names are shared
	// by all integrations connected to the same character). It must itself
	// follow the naming rule, e.g. "tictactoe_". Empty means none.
	Prefix string

	// ActionTimeout bounds each action's Validate, well inside the
	// server's ~20 s result window. If zero, 4 s (under the 5 s at which
	// conformance tools report a timeout). Negative is invalid. It is not
	// capped: past ~20 s the server gives up first and discards the
	// result (neurotest's Strict mode does the same).
	ActionTimeout time.Duration

	// ReconnectMin and ReconnectMax bound the reconnect back-off after a
	// lost connection: the first attempt waits ReconnectMin, each failed
	// one doubles the wait, up to ReconnectMax. If zero, 3 s (as the
	// official SDKs) and 30 s (or ReconnectMin, if larger). Negative, or a
	// ReconnectMax below ReconnectMin, is invalid.
	ReconnectMin time.Duration
	ReconnectMax time.Duration
	// HandshakeTimeout bounds one connection attempt (the dial and the
	// WebSocket handshake). If zero, 10 s. Negative is invalid.
	HandshakeTimeout time.Duration

	// ReadLimit is the largest message, in bytes, the client reads; a
	// bigger one closes the connection, which is then re-established.
	// The client refuses to send a bigger one too ([ErrMessageTooBig]),
	// the whole action set's registration included: the server's own
	// limit is not published. If zero, 4 MiB. Negative disables the limit
	// in both directions.
	ReadLimit int64
	// MaxQueue bounds the outgoing messages waiting for the connection
	// (context, forces, shutdown/ready). When it is full those calls
	// return [ErrQueueFull]. Results and registrations are not counted
	// there; instead, when MaxQueue of them wait unsent and Neuro sends
	// another action or reregister_all (she keeps sending but does not
	// read), the connection is closed as a slow peer (its [Disconnected]
	// wraps ErrQueueFull) and re-established. If zero, 256. Negative is
	// invalid.
	MaxQueue int
	// MaxEvents bounds the events waiting to be received ([Client.Next],
	// [Client.Poll]). When it is full, new actions are answered
	// success:false ("the game is busy") and other events are dropped and
	// counted ([Client.Dropped]). If zero, 256. Negative is invalid.
	MaxEvents int
	// MaxInFlight bounds actions being validated at once; more are
	// answered success:false at once. If zero, 16. Negative is invalid.
	MaxInFlight int

	// Logger receives what has no caller to return to: the first failed
	// reconnect attempt of an outage (warn; later ones at debug), and
	// incoming messages that could not be understood (warn, as a
	// *[ProtocolError]). If nil, slog.Default().
	Logger *slog.Logger
	// Recorder, if not nil, receives every message in and out as JSON
	// Lines (see internal/jsonl), one Write a line, for bug reports. The
	// recording is asynchronous and bounded: a goroutine of the client's
	// own writes the lines, so a slow or blocked writer never holds up the
	// connection; at most 32 MiB of lines wait, and past that lines are
	// dropped and a line counts them. Close writes what waits, but gives
	// up after 5 s without a Write returning (logged as a warning; the
	// goroutine stuck in that Write ends when it returns). Lines are never
	// written under the client's lock. The client does not close it.
	Recorder io.Writer
}

// withDefaults validates o and returns a copy with every default applied.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	if r.URL == "" {
		r.URL = URLFromEnv()
	}
	if r.HTTPClient == nil {
		r.HTTPClient = http.DefaultClient
	}
	r.HTTPClient = noRedirects(r.HTTPClient)
	if r.Prefix != "" {
		if err := CheckName(r.Prefix + "x"); err != nil {
			return r, &ConfigError{Field: "Prefix", Reason: fmt.Sprintf("%q: %s", r.Prefix, err.(*NameError).Reason)}
		}
	}
	if r.ReadLimit == 0 {
		r.ReadLimit = defaultReadLimit
	}
	if f, why := optdef.Apply( // a negative delay would reconnect in a tight loop
		optdef.Positive("ActionTimeout", &r.ActionTimeout, defaultActionTimeout),
		optdef.Positive("ReconnectMin", &r.ReconnectMin, defaultReconnectMin),
		optdef.Positive("ReconnectMax", &r.ReconnectMax, max(defaultReconnectMax, r.ReconnectMin)),
		optdef.Positive("HandshakeTimeout", &r.HandshakeTimeout, defaultHandshakeTimeout),
	); f != "" {
		return r, &ConfigError{Field: f, Reason: why}
	}
	if r.ReconnectMax < r.ReconnectMin {
		return r, &ConfigError{Field: "ReconnectMax", Reason: fmt.Sprintf("%v is below ReconnectMin (%v)", r.ReconnectMax, r.ReconnectMin)}
	}
	if f, why := optdef.Apply(
		optdef.Positive("MaxQueue", &r.MaxQueue, defaultMaxQueue),
		optdef.Positive("MaxEvents", &r.MaxEvents, defaultMaxEvents),
		optdef.Positive("MaxInFlight", &r.MaxInFlight, defaultMaxInFlight),
	); f != "" {
		return r, &ConfigError{Field: f, Reason: why}
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r, nil
}

// noRedirects returns a copy of hc that follows no redirect. The Neuro
// server and Randy answer the upgrade themselves and never redirect it
// (docs/neuro-protocol.md, "The handshake"): a redirect comes from
// something else on the way, and following it would take the game to a
// server nobody named, off this machine included (issue #34).
func noRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("neuro: the handshake was redirected to %s; the Neuro API has no redirects, so it is not followed",
			peertext.Quote(req.URL.Redacted(), peertext.LogBytes))
	}
	return &c
}

// tooBig reports whether a message of n bytes is over the limit.
func (o *Options) tooBig(n int) bool { return o.ReadLimit >= 0 && int64(n) > o.ReadLimit }
