package xiaotangyuan

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/internal/optdef"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// DefaultURL is the Harness's default address.
const DefaultURL = "ws://127.0.0.1:32145"

// Defaults of the Options fields.
const (
	defaultReadLimit        = 4 << 20 // what the Stardew adapter reads
	defaultHandshakeTimeout = 5 * time.Second
	defaultChatTimeout      = 120 * time.Second
	defaultCallTimeout      = 10 * time.Second
	defaultAtomTimeout      = 15 * time.Second // the Harness's own limit
	defaultPingInterval     = 10 * time.Second
	defaultPingTimeout      = 5 * time.Second
	defaultReconnectMin     = 2 * time.Second // the DST adapter's period
	defaultReconnectMax     = 30 * time.Second
	defaultStateInterval    = 15 * time.Second
	defaultMaxInFlight      = 16
	defaultMaxEvents        = 256
)

// Options configure a [Client]. AdapterID, GameID and Version are
// required. For every number and duration, zero means the default stated
// on it, and a negative value disables the setting where the field says
// so and is a [*ConfigError] otherwise.
type Options struct {
	// URL of the Harness. If empty, DefaultURL. Only ws:// to 127.0.0.1,
	// localhost or ::1 on a port 1024-65535 is accepted, as the Harness
	// itself only binds loopback.
	URL string
	// HTTPClient performs the WebSocket handshake. If nil,
	// http.DefaultClient. Tests use the fake Harness's in-memory
	// xtytest.Server.Client. The client uses a copy whose CheckRedirect
	// refuses every redirect: the Harness never redirects, and following
	// one could lead off loopback.
	HTTPClient *http.Client

	AdapterID string // adapter.hello adapterId, for example "my-game-adapter"
	GameID    string // adapter.hello gameId; sessions are "game-<gameId>-<uuid>"
	Version   string // adapter.hello version: your adapter's version

	// ProcessID is sent in adapter.hello so that the Windows media host
	// only answers the foreground game. If zero, os.Getpid(). Negative
	// sends none, and StartVoice/StopVoice then return ErrNoProcessID.
	ProcessID int

	// SaveID is sent in adapter.hello, trimmed, when not blank; see
	// SaveID and ValidateSaveID. Change it with Client.SetSaveID.
	SaveID string

	// Capabilities are extra protocol features for adapter.hello, each
	// starting with "assistant." or "speech.". "assistant.text-stream" is
	// always sent (so the Harness never sends the legacy assistant.delta);
	// registered atoms are added automatically.
	Capabilities []string

	// ReadLimit is the largest incoming message, in bytes. If zero, 4 MiB,
	// as the Stardew adapter reads. Negative disables the limit. The
	// Harness limits only what it receives (MaxMessageSize, 1 MiB), not
	// what it sends: a long reply, or atom arguments filled in from
	// earlier results, can be bigger (docs/xiaotangyuan-protocol.md, "Size
	// limits"), so a positive value below MaxMessageSize is invalid. A
	// bigger message closes the connection with status 1009, and the
	// calls pending on it fail.
	ReadLimit int64

	// HandshakeTimeout bounds the WebSocket handshake, then adapter.hello,
	// each. If zero, 5 s. Negative is invalid.
	HandshakeTimeout time.Duration
	// ChatTimeout bounds chat.send, chat.retry and assistant.compose. If
	// zero, 120 s. Negative disables it: only the call's ctx bounds them.
	ChatTimeout time.Duration
	// CallTimeout bounds every other call. If zero, 10 s. Negative
	// disables it: only the call's ctx bounds them.
	CallTimeout time.Duration

	// AtomTimeout bounds each atom handler's context. If zero, 15 s, the
	// Harness's own limit; a result produced later is not sent. Negative
	// is invalid.
	AtomTimeout time.Duration

	// MaxInFlight bounds the atom handlers running at once. If zero, 16.
	// A request beyond it is answered with CodeAtomFailed "adapter busy"
	// without running. Every request gets exactly one answer: when the
	// Harness sends faster than it reads them (64 answers or 1 MiB
	// waiting), the client stops reading until there is room. Negative
	// is invalid.
	MaxInFlight int

	// PingInterval is the period of WebSocket ping frames (not
	// gateway.ping, which waits behind a running chat). If zero, 10 s.
	// Negative disables pings.
	PingInterval time.Duration
	// PingTimeout is how long a ping may go unanswered before the
	// connection is dropped. If zero, 5 s. Negative is invalid.
	PingTimeout time.Duration

	// ReconnectMin and ReconnectMax bound the reconnect back-off after a
	// lost connection: the first attempt waits ReconnectMin, each failed
	// one doubles the wait, up to ReconnectMax. If zero, 2 s (the DST
	// adapter's period) and 30 s (or ReconnectMin, if larger). Negative,
	// or a ReconnectMax below ReconnectMin, is invalid.
	ReconnectMin time.Duration
	ReconnectMax time.Duration

	// State, when set, is called every StateInterval on the heartbeat
	// goroutine while connected, and its result is sent as a state.update
	// notification, as the DST adapter does. It must be safe to call
	// concurrently with the game and must not block. saveID may be empty.
	State func() (observation any, saveID string)
	// StateInterval is the heartbeat's period. If zero, 15 s. Negative is
	// invalid.
	StateInterval time.Duration

	// MaxEvents bounds the events waiting to be received ([Client.Next]).
	// If zero, 256. When it is full, new events are dropped and counted
	// (Client.Dropped); every dropped event is noted in the recorder.
	// Negative is invalid.
	MaxEvents int

	// Logger receives what has no caller to return to: the first failed
	// reconnect attempt of an outage (warn; later attempts at debug), a
	// state heartbeat that could not be sent (warn). If nil,
	// slog.Default().
	Logger *slog.Logger
	// Recorder, if not nil, receives every message in and out as JSON
	// Lines (see internal/jsonl), one Write a line, for bug reports. The
	// recording is asynchronous and bounded: a goroutine of the client's
	// own writes the lines, so a slow or blocked writer never holds up the
	// connection; at most 32 MiB of lines wait, and past that lines are
	// dropped and a line counts them. Close writes what waits, but gives
	// up after 5 s without a Write returning (logged as a warning; the
	// goroutine stuck in that Write ends when it returns). Lines are never
	// written under the client's lock. The client never closes it.
	Recorder io.Writer
}

// withDefaults validates o and returns a copy with every default applied.
// It is one flat list of checks, hence its length.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	for _, f := range []struct{ name, v string }{{"AdapterID", r.AdapterID}, {"GameID", r.GameID}, {"Version", r.Version}} {
		if wire.Trim(f.v) == "" {
			return r, &ConfigError{Field: f.name, Reason: "must not be empty"}
		}
	}
	if r.URL == "" {
		r.URL = DefaultURL
	}
	if err := checkURL(r.URL); err != nil {
		return r, err
	}
	if r.ProcessID == 0 {
		r.ProcessID = os.Getpid()
	}
	var err error
	if r.SaveID, err = trimSaveID("SaveID", r.SaveID); err != nil {
		return r, &ConfigError{Field: "SaveID", Reason: err.(*ValidationError).Reason}
	}
	for _, c := range r.Capabilities {
		if !strings.HasPrefix(c, "assistant.") && !strings.HasPrefix(c, "speech.") {
			return r, &ConfigError{Field: "Capabilities", Reason: fmt.Sprintf("%q is not an assistant.* or speech.* feature (register atoms with HandleAtom)", c)}
		}
	}
	if r.HTTPClient == nil {
		r.HTTPClient = http.DefaultClient
	}
	hc := *r.HTTPClient
	hc.CheckRedirect = refuseRedirect
	r.HTTPClient = &hc
	switch {
	case r.ReadLimit == 0:
		r.ReadLimit = defaultReadLimit
	case r.ReadLimit > 0 && r.ReadLimit < wire.MaxMessageSize:
		return r, &ConfigError{Field: "ReadLimit", Reason: fmt.Sprintf("%d is below 1 MiB, the size of messages the Harness accepts and may send back", r.ReadLimit)}
	}
	if f, why := optdef.Apply(
		optdef.Positive("HandshakeTimeout", &r.HandshakeTimeout, defaultHandshakeTimeout),
		optdef.NegativeOff("ChatTimeout", &r.ChatTimeout, defaultChatTimeout),
		optdef.NegativeOff("CallTimeout", &r.CallTimeout, defaultCallTimeout),
		optdef.Positive("AtomTimeout", &r.AtomTimeout, defaultAtomTimeout),
		optdef.NegativeOff("PingInterval", &r.PingInterval, defaultPingInterval),
		optdef.Positive("PingTimeout", &r.PingTimeout, defaultPingTimeout),
		optdef.Positive("ReconnectMin", &r.ReconnectMin, defaultReconnectMin),
		optdef.Positive("ReconnectMax", &r.ReconnectMax, max(defaultReconnectMax, r.ReconnectMin)),
		optdef.Positive("StateInterval", &r.StateInterval, defaultStateInterval),
	); f != "" {
		return r, &ConfigError{Field: f, Reason: why}
	}
	if r.ReconnectMax < r.ReconnectMin {
		return r, &ConfigError{Field: "ReconnectMax", Reason: fmt.Sprintf("%v is below ReconnectMin (%v)", r.ReconnectMax, r.ReconnectMin)}
	}
	if f, why := optdef.Apply(
		optdef.Positive("MaxInFlight", &r.MaxInFlight, defaultMaxInFlight),
		optdef.Positive("MaxEvents", &r.MaxEvents, defaultMaxEvents),
	); f != "" {
		return r, &ConfigError{Field: f, Reason: why}
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r, nil
}

// refuseRedirect is the handshake's CheckRedirect: a redirect is an
// error, whatever it points to (issue #34).
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("handshake redirected to %s; the Harness never redirects, so none is followed", peertext.Quote(req.URL.Redacted(), peertext.LogBytes))
}

// checkURL accepts only a loopback ws:// URL with a port in 1024-65535.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &ConfigError{Field: "URL", Reason: err.Error()}
	}
	if u.Scheme != "ws" {
		return &ConfigError{Field: "URL", Reason: fmt.Sprintf("scheme must be ws, got %q", u.Scheme)}
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
	default:
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return &ConfigError{Field: "URL", Reason: fmt.Sprintf("host %q is not loopback", h)}
		}
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1024 || port > 65535 {
		return &ConfigError{Field: "URL", Reason: fmt.Sprintf("port %q must be 1024-65535", u.Port())}
	}
	return nil
}
