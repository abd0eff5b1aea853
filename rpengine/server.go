package rpengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// SessionInfo describes one engine session (one hello/welcome) and the
// engine's queue.
type SessionInfo struct {
	ID            string    // the sessionId sent in welcome
	ClientVersion string    // from the engine's hello
	Started       time.Time // when welcome was sent
	// QueueDepth, QueueLimit and Accepting are the engine's queue as its
	// latest capacity.update said, when the SessionInfo was taken:
	// requests queued or running (a capture included), how many it takes,
	// and whether it takes more now. Before the session's first update
	// QueueLimit is 0 and Accepting true, as requests are sent then.
	QueueDepth, QueueLimit int
	Accepting              bool
}

// Server is the game side of RPEngine: a loopback WebSocket server that the
// RPEngine browser page connects to, and the API the game uses to send
// characters and requests. All methods may be called concurrently.
//
// At most one engine session is live at a time: a newer connection that
// completes its hello supersedes the older one (closed with 3000), and
// every request pending on the older one ends with ErrConnectionLost.
type Server struct {
	opts    serverOptions
	rec     *jsonl.Queue
	repeats *repeatState // of opts.Logger's handler

	mu        sync.Mutex // guards following
	http      *http.Server
	port      int
	live      *session
	changed   chan struct{} // closed and replaced on session or capacity change
	conns     map[transport]struct{}
	handshake int // connections that have not yet sent hello
	closed    bool
	mbox      *mailbox  // set while Start serves a mailbox
	queue     []*ticket // requests waiting to be sent, in order (gate.go)
	tickets   uint64    // tickets ever queued (tests)

	wg sync.WaitGroup // connection goroutines and closers

	// Tests: called after the mailbox setup writes each slot, and when a
	// session has ended but is not yet detached. Set before Start.
	slotHook func(slot int)
	endHook  func()
}

// NewServer checks opts and returns a Server. It starts nothing: call
// Start (or Serve). An invalid option is a *ConfigError naming it.
func NewServer(opts *ServerOptions) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	rh := newRepeatHandler(o.Logger.Handler())
	o.Logger = slog.New(rh)
	return &Server{
		opts:    o,
		rec:     jsonl.NewQueue(o.Recorder, jsonl.MaxQueued),
		repeats: rh.st,
		changed: make(chan struct{}),
		conns:   make(map[transport]struct{}),
	}, nil
}

// Start binds the configured loopback address and serves on goroutines of
// its own until Shutdown or Close. It returns once bound, so URL and
// SocketURL are right as soon as it returns: with Addr "127.0.0.1:0" (the
// choice for tests) they name the port the system picked. A port in use
// is its error. With ServerOptions.Mailbox it sets up the folder instead
// and returns once it is ready for the engine, or with what stopped it:
// ErrMailboxLocked when another process serves the folder, a
// *fs.PathError for a file-system failure. What stops it later is logged
// and given to ServerOptions.OnStop. A server starts once: Start, or
// Serve, not both.
func (s *Server) Start() error {
	if s.opts.mailbox != nil {
		return s.startMailbox()
	}
	l, err := net.Listen("tcp", net.JoinHostPort(s.opts.host, strconv.Itoa(s.opts.port)))
	if err != nil {
		return fmt.Errorf("rpengine: start: %w", err)
	}
	hs, err := s.bind(l)
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := hs.Serve(newListener(l, s.opts.HandshakeTimeout)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.stopped("rpengine: stopped accepting engine connections", fmt.Errorf("rpengine: serve: %w", err))
		}
	}()
	return nil
}

// stopped reports that serving stopped by itself after Start: it logs msg
// with err and calls OnStop.
func (s *Server) stopped(msg string, err error) {
	s.opts.Logger.Error(msg, "reason", err.Error())
	if f := s.opts.OnStop; f != nil {
		f(err)
	}
}

// errAlreadyServing is the error of a second Start or Serve.
var errAlreadyServing = errors.New("rpengine: already serving: Start or Serve is called once")

// maxHeaderBytes bounds an upgrade request's header: a browser's is under
// 2 KiB plus its cookies for 127.0.0.1. net/http's default, 1 MiB, let
// every connection still sending its header hold that much (issue #9).
const maxHeaderBytes = 64 << 10

// Serve accepts engine connections on a listener of the caller's own until
// Shutdown or Close, and then returns ErrServerClosed; it closes l. l is
// a loopback TCP listener, or an in-memory one (as tests use) whose
// address is 127.0.0.1:PORT or localhost:PORT; anything else is a
// *ConfigError. URL and SocketURL name l's port once Serve has begun. Most
// games call Start instead.
func (s *Server) Serve(l net.Listener) error {
	hs, err := s.bind(l)
	if err != nil {
		return err
	}
	err = hs.Serve(newListener(l, s.opts.HandshakeTimeout))
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// bind makes l the server's listener and returns the http.Server that
// serves it; l is closed on failure.
func (s *Server) bind(l net.Listener) (*http.Server, error) {
	port, ok := loopbackPort(l.Addr())
	switch {
	case !ok:
		l.Close()
		return nil, &ConfigError{"listener", l.Addr().String() + " is not a loopback address"}
	case s.opts.mailbox != nil:
		l.Close()
		return nil, &ConfigError{"Mailbox", "is set: the server serves the folder (Start), not a listener"}
	}
	// Every connection gets one deadline, HandshakeTimeout after it is
	// accepted, over its whole upgrade (see acceptedConn); net/http's own
	// timeouts say the same, for what it reads before our handler runs.
	hs := &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: s.opts.HandshakeTimeout,
		ReadTimeout: s.opts.HandshakeTimeout, IdleTimeout: s.opts.HandshakeTimeout, MaxHeaderBytes: maxHeaderBytes,
		ConnContext: connContext}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		l.Close()
		return nil, ErrServerClosed
	case s.http != nil || s.mbox != nil:
		l.Close()
		return nil, errAlreadyServing
	}
	s.http, s.port = hs, port
	s.rec.Start()
	return hs, nil
}

// loopbackPort returns the port of a loopback address: a TCP address on
// a loopback IP, or another network's (an in-memory listener's)
// "127.0.0.1:PORT" or "localhost:PORT".
func loopbackPort(a net.Addr) (int, bool) {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port, t.IP.IsLoopback()
	}
	if a.Network() == "tcp" || a.Network() == "tcp4" || a.Network() == "tcp6" {
		return 0, false
	}
	host, port, err := net.SplitHostPort(a.String())
	if err != nil || (host != "127.0.0.1" && host != "localhost") {
		return 0, false
	}
	n, err := strconv.Atoi(port)
	return n, err == nil && n > 0 && n <= 65535
}

// URL returns the address a player opens to connect RPEngine to this game
// (https://rpengine.gemtavern.com/#port=N), once Start has returned (or
// Serve has begun); before that, and in mailbox mode, where the player
// opens https://rpengine.gemtavern.com/ and selects the folder, it is "".
func (s *Server) URL() string {
	port := s.servingPort()
	if port == 0 {
		return ""
	}
	return OriginProduction + "/#port=" + strconv.Itoa(port)
}

// SocketURL returns ws://127.0.0.1:PORT/rp-engine/socket, the address an
// engine (or enginetest.Dial) connects to, once Start has returned; ""
// before and in mailbox mode.
func (s *Server) SocketURL() string {
	port := s.servingPort()
	if port == 0 {
		return ""
	}
	return "ws://127.0.0.1:" + strconv.Itoa(port) + SocketPath
}

// servingPort is the bound port, or 0 before Start or Serve.
func (s *Server) servingPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// Shutdown stops accepting connections, closes the live session (pending
// requests end with ErrServerClosed) and waits, bounded by ctx, for every
// goroutine the server started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	hs := s.http
	conns := make([]transport, 0, len(s.conns))
	for t := range s.conns {
		conns = append(conns, t)
	}
	live := s.live
	s.notifyLocked()
	s.mu.Unlock()
	var err error
	if hs != nil {
		err = hs.Shutdown(ctx)
	}
	if live != nil {
		live.end(ErrServerClosed)
	}
	for _, t := range conns {
		t.close(closeGoingAway, "game shutting down")
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	defer s.repeats.close() // log the counts of repeating lines
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("rpengine: shutdown: %w", ctx.Err())
	}
	// What the connections recorded is written; a writer stuck for
	// jsonl.CloseStall is given up on, and said so.
	if rerr := s.rec.Close(); rerr != nil {
		s.opts.Logger.Warn("rpengine: recording incomplete", "err", rerr.Error())
	}
	return err
}

// Close is Shutdown without a deadline.
func (s *Server) Close() error {
	return s.Shutdown(context.Background())
}

// Session returns the live session and the engine's queue, if an engine
// is connected. It is cheap enough to call every frame.
func (s *Server) Session() (SessionInfo, bool) {
	sess := s.current()
	if sess == nil {
		return SessionInfo{}, false
	}
	return sess.snapshot(), true
}

// WaitSession waits, bounded by ctx, until an engine session is live.
func (s *Server) WaitSession(ctx context.Context) (SessionInfo, error) {
	for {
		s.mu.Lock()
		live, closed, ch := s.live, s.closed, s.changed
		s.mu.Unlock()
		switch {
		case closed:
			return SessionInfo{}, ErrServerClosed
		case live != nil:
			return live.snapshot(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return SessionInfo{}, fmt.Errorf("rpengine: wait for session: %w", ctx.Err())
		}
	}
}

// messageStatus reports what the engine did with an outbound message of
// the live session (by messageId); settled states are remembered for the
// last DedupWindow messages. Tests read it (export_test.go).
func (s *Server) messageStatus(messageID string) messageState {
	sess := s.current()
	if sess == nil {
		return messageUnknown
	}
	return sess.status(messageID)
}

func (s *Server) current() *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// acquire returns the live session, waiting (bounded by ctx) for one
// unless FailFast. It is for character.sync, which the engine takes
// whatever its queue holds; requests go through the capacity gate
// (Server.admit).
func (s *Server) acquire(ctx context.Context) (*session, error) {
	for {
		s.mu.Lock()
		live, closed, ch := s.live, s.closed, s.changed
		s.mu.Unlock()
		switch {
		case closed:
			return nil, ErrServerClosed
		case live != nil:
			return live, nil
		case s.opts.FailFast:
			return nil, ErrNotConnected
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("rpengine: waiting for an engine connection: %w", ctx.Err())
		}
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) notify() {
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()
}

// register tracks a new connection that has not yet said hello. It fails
// when the server is closed or too many handshakes are pending.
func (s *Server) register(t transport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if s.handshake >= s.opts.MaxHandshakes {
		return fmt.Errorf("%d connections are already waiting to say hello", s.handshake)
	}
	s.handshake++
	s.conns[t] = struct{}{}
	s.wg.Add(1)
	return nil
}

// unregister forgets a connection; helloDone says whether it had been
// counted as a handshake still.
func (s *Server) unregister(t transport, inHandshake bool) {
	s.mu.Lock()
	delete(s.conns, t)
	if inHandshake {
		s.handshake--
	}
	s.mu.Unlock()
	s.wg.Done()
}

type hello struct {
	ClientVersion *string `json:"clientVersion"`
}

// parseHello checks that data is a valid hello and returns its
// clientVersion.
func parseHello(data []byte) (string, error) {
	h, err := wire.DecodeHeader(data)
	if err != nil {
		return "", err
	}
	if h.Type != wire.TypeHello {
		return "", fmt.Errorf("first message is %s, not hello", peertext.Quote(h.Type, peertext.LogBytes))
	}
	var m hello
	if err := json.Unmarshal(data, &m); err != nil {
		// encoding/json quotes a mistyped number whole.
		return "", fmt.Errorf("hello: %s", peertext.Clip(err.Error(), peertext.LogBytes))
	}
	if m.ClientVersion == nil {
		return "", errors.New("hello without clientVersion")
	}
	return *m.ClientVersion, nil
}

// attach starts a session on t after a valid hello (helloID is its
// messageId): it acks the hello, sends welcome, and only then makes the
// session live, superseding the older one, so that no request can reach
// the engine before welcome. It returns the session that t's reader feeds.
func (s *Server) attach(t transport, helloID, clientVersion string) (*session, error) {
	sess := newSession(s, t, SessionInfo{ID: wire.NewID(), ClientVersion: clientVersion, Started: time.Now()})
	s.wg.Add(1) // t's connection holds the count up: Shutdown cannot be past Wait
	go func() {
		defer s.wg.Done()
		sess.w.run()
	}()
	sess.window.Seen(helloID)
	if err := sess.welcome(helloID); err != nil {
		sess.mu.Lock()
		sess.ended = err
		sess.mu.Unlock()
		sess.w.stop(err)
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sess.end(ErrServerClosed)
		return nil, ErrServerClosed
	}
	s.handshake--
	old := s.live
	s.live = sess
	s.notifyLocked()
	s.mu.Unlock()
	if old != nil {
		old.t.close(closeSuperseded, "superseded by a newer engine connection")
		old.end(fmt.Errorf("%w: superseded by a newer engine connection", ErrConnectionLost))
	}
	if f := s.opts.OnSession; f != nil {
		f(sess.info, false)
	}
	return sess, nil
}

// detach is called by a session that ended.
func (s *Server) detach(sess *session) {
	s.mu.Lock()
	was := s.live == sess
	if was {
		s.live = nil
		s.notifyLocked()
	}
	s.mu.Unlock()
	if f := s.opts.OnSession; was && f != nil {
		f(sess.info, true)
	}
}
