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

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/mailbox"
	"github.com/gamelink-go/gamelink/rpengine/internal/repeat"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/internal/ws"
)

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
	repeats *repeat.Handler // opts.Logger's

	mu        sync.Mutex // guards following
	http      *ws.Server
	port      int
	live      *conn
	changed   chan struct{} // closed and replaced on session or capacity change
	conns     map[transport.Transport]struct{}
	handshake int // connections that have not yet sent hello
	closed    bool
	mbox      *mailbox.Server // set while Start serves a mailbox
	queue     []*ticket       // requests waiting to be sent, in order (send.go)
	tickets   uint64          // tickets ever queued (tests)

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
	rh := repeat.NewHandler(o.Logger.Handler())
	o.Logger = slog.New(rh)
	rec := jsonl.NewQueue(o.Recorder, jsonl.MaxQueued)
	// An engine message the envelope scanner read whole is valid JSON: its
	// line needs no pass of encoding/json (issue #36).
	rec.SetValid(func(msg []byte) bool { env, _ := wire.DecodeEnvelope(msg); return env.Checked })
	return &Server{
		opts:    o,
		rec:     rec,
		repeats: rh,
		changed: make(chan struct{}),
		conns:   make(map[transport.Transport]struct{}),
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
		if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
	err = hs.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// bind makes l the server's listener and returns the WebSocket server
// that serves it; l is closed on failure.
func (s *Server) bind(l net.Listener) (*ws.Server, error) {
	port, ok := loopbackPort(l.Addr())
	switch {
	case !ok:
		l.Close()
		return nil, &ConfigError{"listener", l.Addr().String() + " is not a loopback address"}
	case s.opts.mailbox != nil:
		l.Close()
		return nil, &ConfigError{"Mailbox", "is set: the server serves the folder (Start), not a listener"}
	}
	hs := ws.New(s, ws.Options{Origins: s.opts.origins, InsecureSkipOriginCheck: s.opts.InsecureSkipOriginCheck,
		HandshakeTimeout: s.opts.HandshakeTimeout, WriteTimeout: s.opts.WriteTimeout, Logger: s.opts.Logger}, s.servingPort, &s.wg)
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
	note(s.rec, "transport", transportNote{Transport: "websocket"})
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
// requests end with ErrServerClosed, after what the session processed is
// acknowledged, for at most a second) and waits, bounded by ctx, for
// every goroutine the server started.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	hs := s.http
	conns := make([]transport.Transport, 0, len(s.conns))
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
		live.End(ErrServerClosed)
	}
	for _, t := range conns {
		t.Close(transport.CloseGoingAway, "game shutting down")
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	defer s.repeats.Close() // log the counts of repeating lines
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
func (s *Server) messageStatus(messageID string) session.State {
	c := s.current()
	if c == nil {
		return session.Unknown
	}
	return c.status(messageID)
}

func (s *Server) current() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// acquire returns the live session, waiting (bounded by ctx) for one
// unless FailFast. It is for character.sync, which the engine takes
// whatever its queue holds; requests go through the capacity gate
// (Server.admit).
func (s *Server) acquire(ctx context.Context) (*conn, error) {
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

// ticket is one request's place in the Server's line (send.go).
type ticket struct {
	r   *Reply
	key card.Key
}

// Register tracks a new connection that has not yet said hello
// (transport.Host). It fails when the server is closed or too many
// handshakes are pending.
func (s *Server) Register(t transport.Transport) error {
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

// Unregister forgets a connection; inHandshake says whether it had been
// counted as a handshake still.
func (s *Server) Unregister(t transport.Transport, inHandshake bool) {
	s.mu.Lock()
	delete(s.conns, t)
	if inHandshake {
		s.handshake--
	}
	s.mu.Unlock()
	s.wg.Done()
}

// Record gives the Recorder an engine message no session received.
func (s *Server) Record(in bool, msg []byte) { s.record(in, msg) }

// record gives the Recorder a message in or out; the game encoded every
// message out, so its line takes it as it is.
func (s *Server) record(in bool, msg []byte) {
	if in {
		s.rec.Record(jsonl.In, msg)
	} else {
		s.rec.RecordChecked(jsonl.Out, "", msg)
	}
}

// recorder returns the Recorder's queue, nil without one.
func (s *Server) recorder() *jsonl.Queue { return s.rec }

// note records one of the game's own moments for the Recorder, a line
// with "dir":"game" and v's fields (docs/inspector.md, "The seam");
// nothing without a Recorder.
func note[T any](q *jsonl.Queue, name string, v T) {
	if q == nil {
		return
	}
	if b, err := json.Marshal(v); err == nil {
		_ = q.RecordChecked(jsonl.Game, name, b)
	}
}

// The fields of the notes (docs/inspector.md, "The seam").
type (
	submittedNote struct {
		RequestID     string `json:"requestId"`
		Kind          string `json:"kind"` // reply or capture
		IntegrationID string `json:"integrationId"`
		CharacterID   string `json:"characterId"`
	}
	waitingNote struct {
		RequestID  string `json:"requestId"`
		Reason     string `json:"reason"` // engine, queue, character or capacity
		QueueDepth int    `json:"queueDepth"`
		QueueLimit int    `json:"queueLimit"`
		InFlight   int    `json:"inFlight"`
	}
	endedNote struct {
		RequestID string `json:"requestId"`
		Error     string `json:"error"` // "" when it succeeded
	}
	sessionNote struct {
		SessionID string `json:"sessionId"`
	}
	transportNote struct {
		Transport string `json:"transport"` // websocket or mailbox
		Dir       string `json:"dir,omitempty"`
	}
	segmentNote struct { // RecordSamples adds "data"
		RequestID       string `json:"requestId"`
		SegmentSequence int    `json:"segmentSequence"`
		SampleRate      int    `json:"sampleRate"`
	}
)

// endedText is a reply.ended note's error.
func endedText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// wake wakes whoever waits for the live session or its capacity.
func (s *Server) wake() { s.notify() }

// Attach starts a session on t after a valid hello (transport.Host): it
// acks the hello, sends welcome, and only then makes the session live,
// superseding the older one, so that no request can reach the engine
// before welcome. It returns the session that t's reader feeds.
func (s *Server) Attach(t transport.Transport, h transport.Hello) (transport.Session, error) {
	c := newConn(s, &s.opts, t, h, SessionInfo{ID: wire.NewID(), ClientVersion: h.ClientVersion, Started: time.Now()})
	s.wg.Add(2) // t's connection holds the count up: Shutdown cannot be past Wait
	go func() {
		defer s.wg.Done()
		c.w.Run()
	}()
	err := c.welcome()
	go func() {
		defer s.wg.Done()
		c.run()
	}()
	if err != nil {
		c.End(err)
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.End(ErrServerClosed)
		return nil, ErrServerClosed
	}
	s.handshake--
	old := s.live
	s.live = c
	s.notifyLocked()
	s.mu.Unlock()
	if old != nil {
		old.t.Close(transport.CloseSuperseded, "superseded by a newer engine connection")
		old.End(fmt.Errorf("%w: superseded by a newer engine connection", ErrConnectionLost))
	}
	if f := s.opts.OnSession; f != nil {
		f(c.info, false)
	}
	return c, nil
}

// detach is called by a session that ended.
func (s *Server) detach(c *conn) {
	if h := s.endHook; h != nil {
		h()
	}
	s.mu.Lock()
	was := s.live == c
	if was {
		s.live = nil
		s.notifyLocked()
	}
	s.mu.Unlock()
	note(s.rec, "session.ended", sessionNote{c.info.ID})
	if f := s.opts.OnSession; was && f != nil {
		f(c.info, true)
	}
}

// startMailbox is Start in mailbox mode: it sets up the folder, returning
// its errors (ErrMailboxLocked among them), and then serves it on a
// goroutine of its own until Shutdown.
func (s *Server) startMailbox() error {
	o := s.opts.mailbox
	m := mailbox.New(s, mailbox.Options{Dir: o.Dir, IntegrationID: o.IntegrationID, DisplayName: o.DisplayName,
		SlotCount: o.SlotCount, ActivePoll: o.ActivePoll, IdlePoll: o.IdlePoll, ActiveFor: o.ActiveFor, LockStale: o.LockStale,
		InsecureSkipOwnerCheck: o.InsecureSkipOwnerCheck, Logger: s.opts.Logger, SlotHook: s.slotHook})
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrServerClosed
	case s.mbox != nil || s.http != nil:
		s.mu.Unlock()
		return errAlreadyServing
	}
	s.mbox = m
	s.mu.Unlock()
	if err := m.Setup(); err != nil {
		m.Close()
		s.mu.Lock()
		s.mbox = nil
		s.mu.Unlock()
		errd.Wrap(&err, "rpengine: start")
		return err
	}
	s.mu.Lock()
	if s.closed { // Shutdown came during the setup
		s.mu.Unlock()
		m.Shutdown(ErrServerClosed)
		return ErrServerClosed
	}
	s.wg.Add(1)
	s.mu.Unlock()
	s.rec.Start()
	note(s.rec, "transport", transportNote{"mailbox", o.Dir}) // absolute (withDefaults)
	go func() {
		defer s.wg.Done()
		err := m.Run(s.state)
		m.Shutdown(ErrServerClosed)
		if err != nil {
			s.stopped("rpengine: stopped serving the mailbox", err)
		}
	}()
	return nil
}

// state reports whether the server is closed, and a channel closed at
// its next change.
func (s *Server) state() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed, s.changed
}
