package xiaotangyuan

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultURL is the Harness's default address.
const DefaultURL = "ws://127.0.0.1:32145"

// defaultReadLimit is the default Options.ReadLimit (4 MiB), what the
// Stardew adapter accepts.
const defaultReadLimit = 4 << 20

// Options configure a [Client]. AdapterID, GameID and Version are
// required; every other zero field means the default stated on it.
type Options struct {
	// URL of the Harness. If empty, DefaultURL. Only ws:// to 127.0.0.1,
	// localhost or ::1 on a port 1024-65535 is accepted, as the Harness
	// itself only binds loopback.
	URL string

	AdapterID string // adapter.hello adapterId, for example "my-game-adapter"
	GameID    string // adapter.hello gameId; sessions are "game-<gameId>-<uuid>"
	Version   string // adapter.hello version: your adapter's version

	// ProcessID is sent in adapter.hello so that the Windows media host
	// only answers the foreground game. If zero, os.Getpid(). If negative,
	// none is sent and StartVoice/StopVoice return ErrNoProcessID.
	ProcessID int

	// SaveID is sent in adapter.hello when not empty; see SaveID and
	// ValidateSaveID. Change it with Client.SetSaveID.
	SaveID string

	// Capabilities are extra protocol features for adapter.hello, each
	// starting with "assistant." or "speech.". "assistant.text-stream" is
	// always sent; registered atoms are added automatically.
	Capabilities []string

	// HTTPClient performs the WebSocket handshake. If nil,
	// http.DefaultClient. Tests use the fake Harness's in-memory client.
	HTTPClient *http.Client

	// ReadLimit is the largest incoming message, in bytes. If zero,
	// 4 MiB, as the Stardew adapter reads. The Harness limits only what
	// it receives (MaxMessageSize, 1 MiB), not what it sends: a long
	// reply, or atom arguments filled in from earlier results, can be
	// bigger (PROTOCOL.md, "Size limits"). A positive value below
	// MaxMessageSize means MaxMessageSize. A bigger message closes the
	// connection with status 1009, and the calls pending on it fail.
	ReadLimit int64

	HelloTimeout time.Duration // the WebSocket handshake, then adapter.hello, each; if zero, 5 s
	ChatTimeout  time.Duration // chat.send, chat.retry, assistant.compose; if zero, 120 s
	CallTimeout  time.Duration // every other call; if zero, 10 s

	// AtomTimeout bounds each atom handler's context. If zero, 15 s, the
	// Harness's own limit; a result produced later is not sent.
	AtomTimeout time.Duration

	// MaxConcurrentAtoms bounds the atom handlers running at once. If
	// zero, 16. A request beyond it is answered at once with CodeAtomFailed
	// "adapter busy".
	MaxConcurrentAtoms int

	// PingInterval is the period of WebSocket ping frames (not
	// gateway.ping, which waits behind a running chat). If zero, 10 s;
	// negative disables pings. A ping unanswered within PingTimeout (if
	// zero, 5 s) drops the connection.
	PingInterval time.Duration
	PingTimeout  time.Duration

	// ReconnectMin and ReconnectMax bound the reconnect back-off, which
	// doubles after each failed attempt. If zero, 2 s (the DST adapter's
	// period) and 30 s.
	ReconnectMin time.Duration
	ReconnectMax time.Duration

	// State, when set, is called every StateInterval (if zero, 15 s) on
	// the heartbeat goroutine while connected, and its result is sent as a
	// state.update notification, as the DST adapter does. It must be safe
	// to call concurrently with the game and must not block. saveID may be
	// empty.
	State         func() (observation any, saveID string)
	StateInterval time.Duration

	// EventQueue is the capacity of the Events channel. If zero, 256. When
	// it is full, new events are dropped and counted (Client.Dropped);
	// every dropped event is noted in the recorder.
	EventQueue int

	// Recorder, when set, receives every message in and out as JSON lines
	// (internal/jsonl format). The client never closes it.
	Recorder io.Writer
}

// withDefaults validates o and returns a copy with every default applied.
func (o *Options) withDefaults() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	for _, f := range []struct{ name, v string }{{"adapterId", r.AdapterID}, {"gameId", r.GameID}, {"version", r.Version}} {
		if strings.TrimSpace(f.v) == "" {
			return r, &ValidationError{Field: f.name, Reason: "must not be empty"}
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
	if r.SaveID != "" {
		if err := ValidateSaveID(r.SaveID); err != nil {
			return r, err
		}
	}
	for _, c := range r.Capabilities {
		if !strings.HasPrefix(c, "assistant.") && !strings.HasPrefix(c, "speech.") {
			return r, &ValidationError{Field: "capabilities", Reason: fmt.Sprintf("%q is not an assistant.* or speech.* feature (register atoms with HandleAtom)", c)}
		}
	}
	if r.HTTPClient == nil {
		r.HTTPClient = http.DefaultClient
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&r.HelloTimeout, 5*time.Second)
	def(&r.ChatTimeout, 120*time.Second)
	def(&r.CallTimeout, 10*time.Second)
	def(&r.AtomTimeout, 15*time.Second)
	def(&r.PingInterval, 10*time.Second)
	def(&r.PingTimeout, 5*time.Second)
	def(&r.ReconnectMin, 2*time.Second)
	def(&r.ReconnectMax, 30*time.Second)
	def(&r.StateInterval, 15*time.Second)
	if r.ReconnectMax < r.ReconnectMin {
		r.ReconnectMax = r.ReconnectMin
	}
	switch {
	case r.ReadLimit <= 0:
		r.ReadLimit = defaultReadLimit
	case r.ReadLimit < MaxMessageSize:
		r.ReadLimit = MaxMessageSize
	}
	if r.MaxConcurrentAtoms <= 0 {
		r.MaxConcurrentAtoms = 16
	}
	if r.EventQueue <= 0 {
		r.EventQueue = 256
	}
	return r, nil
}

// checkURL accepts only a loopback ws:// URL with a port in 1024-65535.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &ValidationError{Field: "url", Reason: err.Error()}
	}
	if u.Scheme != "ws" {
		return &ValidationError{Field: "url", Reason: fmt.Sprintf("scheme must be ws, got %q", u.Scheme)}
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
	default:
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return &ValidationError{Field: "url", Reason: fmt.Sprintf("host %q is not loopback", h)}
		}
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1024 || port > 65535 {
		return &ValidationError{Field: "url", Reason: fmt.Sprintf("port %q must be 1024-65535", u.Port())}
	}
	return nil
}
