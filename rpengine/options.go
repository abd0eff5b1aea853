package rpengine

import (
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/internal/ws"
)

// Default values of ServerOptions.
const (
	DefaultPort             = 38471
	DefaultHandshakeTimeout = 3 * time.Second
	DefaultAckTimeout       = 15 * time.Second
	DefaultIdleTimeout      = 2 * time.Minute
	DefaultWriteTimeout     = 10 * time.Second
	DefaultMaxPendingAudio  = 60 * time.Second
	DefaultDedupWindow      = 2000
	DefaultMaxHandshakes    = 4
)

// The browser origins accepted by default (docs/rpengine-protocol.md), and the
// development origin accepted only with ServerOptions.DevelopmentMode.
const (
	OriginProduction  = "https://rpengine.gemtavern.com"
	OriginAlias       = "https://rp-engine.gemtavern.com"
	OriginDevelopment = "http://127.0.0.1:5173"
)

// SocketPath is the only path the server accepts.
const SocketPath = ws.Path

// ServerOptions configures a Server. The zero value (or nil) is a
// production setup on 127.0.0.1:38471.
type ServerOptions struct {
	// Addr is the loopback address to listen on, "127.0.0.1:PORT" or
	// "localhost:PORT". If empty, "127.0.0.1:38471" is used. Port 0 picks
	// an ephemeral port (tests). Any other host is an error at NewServer.
	Addr string
	// ServerVersion is sent in welcome. If empty, "gamelink" is used.
	ServerVersion string
	// DevelopmentMode also accepts the origin http://127.0.0.1:5173 (a
	// local build of the RPEngine page).
	DevelopmentMode bool
	// ExtraOrigins are more exact origins, "scheme://host[:port]", each
	// checked at NewServer.
	ExtraOrigins []string
	// InsecureSkipOriginCheck accepts any Origin, including none. It
	// exists for tools, and lets every web page the player visits talk to
	// the game.
	InsecureSkipOriginCheck bool
	// HandshakeTimeout bounds how long a new connection may take, from
	// when it is accepted, to send its HTTP upgrade request and a valid
	// hello: one deadline over the whole handshake. If zero, 3 s is used.
	// Negative is invalid: a handshake is always bounded. When all 64
	// connection slots are taken (only under attack), a connection that
	// has sent nothing for a tenth of it, or one the server is closing,
	// gives way to a new one (docs/reliability.md).
	HandshakeTimeout time.Duration
	// MaxHandshakes caps sockets that have not yet sent hello; more are
	// refused with HTTP 503. If zero, 4 is used. Negative is invalid.
	MaxHandshakes int
	// WriteTimeout bounds one message write. If zero, 10 s is used. A
	// write that times out closes the connection. Negative disables it:
	// a write then waits as long as the engine takes to read (the
	// connection's reader never waits for writes either way). Either
	// way, at most 16 MiB of a session's messages (acks and answers,
	// and the game's requests) wait to be written: an engine further
	// behind is dropped as a slow consumer, closed with 1008, and its
	// pending requests end with ErrConnectionLost saying the engine is
	// not reading (docs/reliability.md).
	WriteTimeout time.Duration
	// AckTimeout is how long a request's message may go without an ack or
	// any answer before the request fails with ErrNoAnswer. If zero, 15 s
	// is used. Negative disables it.
	AckTimeout time.Duration
	// IdleTimeout is how long a reply may go without a sign of progress
	// before it fails with ErrNoAnswer (and is cancelled on the engine).
	// Until the engine starts producing it (sent, acked or queued), any
	// engine message counts, so a long queue that moves never times out;
	// once it is producing, only its own messages count. If zero, 2 min
	// is used. Negative disables it.
	IdleTimeout time.Duration
	// MaxPendingAudio is how much audio (at the reply's sample rate) one
	// reply may hold for a game that does not consume its events, and,
	// with an eighth more for bookkeeping, the bytes that much takes at
	// 44.1 kHz; beyond either the reply ends with ErrSlowConsumer (see
	// Reply). If zero, 60 s is used (about 6 MB). Negative is invalid:
	// memory per reply is always bounded.
	MaxPendingAudio time.Duration
	// DedupWindow is how many engine messageIds are remembered to drop
	// duplicates, and outbound messages to track. If zero, 2000 (as the
	// engine) is used. Negative is invalid.
	DedupWindow int
	// DisableAcks stops the game acking engine messages. Acks are on by
	// default, as the spec says both sides acknowledge.
	DisableAcks bool
	// FailFast makes requests fail at once instead of waiting (bounded by
	// their ctx) for an engine that is connected and accepting requests:
	// with ErrNotConnected when no session is live or the live one is
	// ending (its connection was lost), with ErrBusy when the engine says
	// its queue is full.
	FailFast bool
	// Planner configures the per-session card planner. Nil means
	// defaults; a negative bound in it is invalid.
	Planner *card.PlannerOptions
	// Logger receives rejections (warn), anomalies and debug lines. If
	// nil, slog.Default() is used. Values taken from the engine or from a
	// refused client are bounded and escaped in every line, and a line
	// that repeats (say, a flood of refused connections) is logged 50
	// times, then counted until it stops, when one line gives the count.
	Logger *slog.Logger
	// Recorder, if set, receives every message in and out as JSON Lines,
	// one object a message ({"t":..., "dir":"in" or "out", "msg":...}),
	// for bug reports. Lines with "dir":"game" are the game's own moments,
	// not messages: their "note" names each and their "msg" holds its
	// fields (docs/inspector.md, "The seam", lists them; rpengine/inspect
	// reads them): a request submitted, waiting and why, ended and with
	// what error, a session ended, the transport, and in mailbox mode each
	// segment the game received, with its samples (no message holds them).
	// A goroutine of the server's own writes them, so a
	// slow writer never holds up a connection; at most 32 MiB of lines
	// wait, and past that lines are dropped and a line counts them.
	// Shutdown writes what waits; a Write that makes no progress for 5 s
	// is given up on (the lines left are not written, and a warning says
	// how many). The server never closes it.
	Recorder io.Writer
	// OnSession, if set, is called when a session starts (ended false) and
	// when the live session ends without a newer one replacing it (ended
	// true; a superseded session is reported only by its successor's
	// start). It is called synchronously from the goroutine that starts or
	// ends the session, with no lock held, and must not block.
	OnSession func(info SessionInfo, ended bool)
	// OnStop, if set, is called once if the server stops serving by
	// itself after Start, with why: another process took the mailbox
	// folder over (ErrMailboxLocked), the folder cannot be set up again,
	// or the listener failed. It is not called after Shutdown or Close.
	// It is called on the goroutine that served, which has stopped, and
	// must not block (nor call Shutdown or Close, which wait for that
	// goroutine); the reason is logged too.
	OnStop func(err error)
	// Mailbox, if set, selects the file-mailbox transport
	// (docs/rpengine-protocol.md, "File transport") instead of WebSocket:
	// Start then sets up and serves the folder instead of listening.
	// Everything else is unchanged.
	Mailbox *MailboxOptions
}

type serverOptions struct {
	ServerOptions
	host    string
	port    int
	origins map[string]bool
	mailbox *MailboxOptions // checked copy of Mailbox
}

func (o *ServerOptions) withDefaults() (serverOptions, error) {
	var so serverOptions
	if o != nil {
		so.ServerOptions = *o
	}
	d := &so.ServerOptions
	if d.Addr == "" {
		d.Addr = "127.0.0.1:" + strconv.Itoa(DefaultPort)
	}
	host, port, err := net.SplitHostPort(d.Addr)
	if err != nil {
		return so, &ConfigError{"Addr", err.Error()}
	}
	if host != "127.0.0.1" && host != "localhost" {
		return so, &ConfigError{"Addr", "host " + strconv.Quote(host) + " is not 127.0.0.1 or localhost: the server listens on loopback only"}
	}
	so.host = "127.0.0.1"
	if so.port, err = strconv.Atoi(port); err != nil || so.port < 0 || so.port > 65535 {
		return so, &ConfigError{"Addr", "bad port " + strconv.Quote(port)}
	}
	so.origins = map[string]bool{OriginProduction: true, OriginAlias: true}
	if d.DevelopmentMode {
		so.origins[OriginDevelopment] = true
	}
	for _, origin := range d.ExtraOrigins {
		if !validOrigin(origin) {
			return so, &ConfigError{"ExtraOrigins", strconv.Quote(origin) + " is not an exact scheme://host[:port] origin"}
		}
		so.origins[origin] = true
	}
	if d.ServerVersion == "" {
		d.ServerVersion = "gamelink"
	}
	for _, f := range []struct {
		name string
		p    *time.Duration
		def  time.Duration
		off  bool // negative disables it
	}{
		{"HandshakeTimeout", &d.HandshakeTimeout, DefaultHandshakeTimeout, false},
		{"WriteTimeout", &d.WriteTimeout, DefaultWriteTimeout, true},
		{"AckTimeout", &d.AckTimeout, DefaultAckTimeout, true},
		{"IdleTimeout", &d.IdleTimeout, DefaultIdleTimeout, true},
		{"MaxPendingAudio", &d.MaxPendingAudio, DefaultMaxPendingAudio, false},
	} {
		switch {
		case *f.p == 0:
			*f.p = f.def
		case *f.p < 0 && !f.off:
			return so, &ConfigError{f.name, f.p.String() + " is negative"}
		}
	}
	for _, f := range []struct {
		name string
		p    *int
		def  int
	}{
		{"MaxHandshakes", &d.MaxHandshakes, DefaultMaxHandshakes},
		{"DedupWindow", &d.DedupWindow, DefaultDedupWindow},
	} {
		switch {
		case *f.p == 0:
			*f.p = f.def
		case *f.p < 0:
			return so, &ConfigError{f.name, strconv.Itoa(*f.p) + " is negative"}
		}
	}
	if p := d.Planner; p != nil && (p.MaxKeys < 0 || p.MaxBytes < 0) {
		field := "Planner.MaxKeys"
		if p.MaxKeys >= 0 {
			field = "Planner.MaxBytes"
		}
		return so, &ConfigError{field, "is negative"}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Mailbox != nil {
		m, err := d.Mailbox.withDefaults()
		if err != nil {
			return so, err
		}
		so.mailbox = &m
	}
	return so, nil
}

// setDur puts def in a zero *p (MailboxOptions).
func setDur(p *time.Duration, def time.Duration) {
	if *p == 0 {
		*p = def
	}
}

// validOrigin reports whether s is exactly scheme://host[:port] with a
// lowercase http or https scheme and nothing else (no path, user, query).
func validOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return false
	}
	if s != u.Scheme+"://"+u.Host || u.Hostname() == "" {
		return false
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if net.ParseIP(u.Hostname()) != nil {
		return true
	}
	// Browsers send origins lowercase, so only lowercase names can match.
	for _, c := range u.Hostname() {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Default values of MailboxOptions.
const (
	DefaultMailboxActivePoll = 50 * time.Millisecond
	DefaultMailboxIdlePoll   = 250 * time.Millisecond
	DefaultMailboxActiveFor  = 2 * time.Second
	DefaultMailboxLockStale  = 15 * time.Second
	DefaultMailboxSlotCount  = mailbox.SlotCount
)

// MailboxLockName is the lock file the server keeps in the mailbox folder
// while it serves it; see [ErrMailboxLocked].
const MailboxLockName = mailbox.LockName

// MailboxOptions selects the file-mailbox transport
// (docs/rpengine-protocol.md, "File transport") instead of WebSocket
// (ServerOptions.Mailbox): for games that cannot open a local socket. The
// player selects Dir in the RPEngine page.
type MailboxOptions struct {
	// Dir is the mailbox folder. Required. Its parent must exist; the
	// folder itself is created when missing (built beside it as
	// .<name>.tmp-<random>, then renamed into place, so that the engine
	// never finds it without its manifest), private to the user (0700;
	// on Windows with the ACL it inherits, which in the user's profile
	// is private), and so are its sub-folders and files (0600). It must
	// not be a symlink, and it and its sub-folders must be the user's own
	// with no other user allowed to write into them: see
	// InsecureSkipOwnerCheck and [ErrMailboxNotPrivate].
	Dir string
	// IntegrationID goes into manifest.json. Required.
	IntegrationID string
	// DisplayName goes into manifest.json. If empty, IntegrationID.
	DisplayName string
	// SlotCount is the number of audio slots. If zero, 2048 (as the
	// engine's page expects).
	SlotCount int
	// ActivePoll and IdlePoll are the polling intervals while messages
	// flow and while idle. If zero, 50 ms and 250 ms (as the engine polls).
	ActivePoll, IdlePoll time.Duration
	// ActiveFor is how long polling stays at ActivePoll after a message
	// in either direction. If zero, 2 s.
	ActiveFor time.Duration
	// LockStale is how old the lock file's heartbeat may be before
	// another process may take the folder over (a crashed game), when
	// the holder's liveness cannot be known (it ran on another machine).
	// The holder refreshes it every LockStale/4. A holder on this machine
	// keeps its lock while its process runs and loses it at once when it
	// is gone, whatever the file's times say. If zero, 15 s. It must be
	// at least 4 IdlePoll (the heartbeat is sent at polls).
	LockStale time.Duration
	// InsecureSkipOwnerCheck serves a mailbox folder, or sub-folder, that
	// another user owns or that other users can write into (as ssh's
	// StrictModes no). Such a user can read the conversation, or swap in
	// their own engine-to-integration folder and talk to the game as the
	// engine. Only for a folder deliberately shared between accounts.
	InsecureSkipOwnerCheck bool
}

func (o *MailboxOptions) withDefaults() (MailboxOptions, error) {
	d := *o
	if d.Dir == "" {
		return d, &ConfigError{"Mailbox.Dir", "is empty"}
	}
	abs, err := filepath.Abs(d.Dir)
	if err != nil {
		return d, &ConfigError{"Mailbox.Dir", err.Error()}
	}
	d.Dir = abs
	if d.IntegrationID == "" {
		return d, &ConfigError{"Mailbox.IntegrationID", "is empty (manifest.json needs it)"}
	}
	if d.DisplayName == "" {
		d.DisplayName = d.IntegrationID
	}
	if d.SlotCount == 0 {
		d.SlotCount = DefaultMailboxSlotCount
	}
	if d.SlotCount < 1 || d.SlotCount > 10000 {
		return d, &ConfigError{"Mailbox.SlotCount", strconv.Itoa(d.SlotCount) + " is not within 1..10000 (slot names have four digits)"}
	}
	setDur(&d.ActivePoll, DefaultMailboxActivePoll)
	setDur(&d.IdlePoll, DefaultMailboxIdlePoll)
	setDur(&d.ActiveFor, DefaultMailboxActiveFor)
	setDur(&d.LockStale, DefaultMailboxLockStale)
	if d.ActivePoll < 0 || d.IdlePoll < 0 || d.LockStale < 0 || d.ActiveFor < 0 {
		return d, &ConfigError{"Mailbox", "durations must not be negative"}
	}
	if d.LockStale < 4*d.IdlePoll {
		// The heartbeat is sent at polls: with polls further apart the
		// lock would go stale while its holder is alive.
		return d, &ConfigError{"Mailbox.LockStale", d.LockStale.String() + " is under 4 IdlePoll (" + d.IdlePoll.String() + ")"}
	}
	return d, nil
}

// ErrMailboxLocked is the cause of the error Start returns when
// another process serves the same mailbox folder (alive on this machine,
// or, on another, with a lock heartbeat fresher than
// MailboxOptions.LockStale), or took it over.
var ErrMailboxLocked = mailbox.ErrLocked

// ErrMailboxNotPrivate is the cause of the *fs.PathError (Op "setup")
// returned when the mailbox folder or one of its sub-folders is owned by
// another user or other users can write into it, unless
// MailboxOptions.InsecureSkipOwnerCheck is set. It is checked at every
// setup, including when the folder is created again.
var ErrMailboxNotPrivate = mailbox.ErrNotPrivate
