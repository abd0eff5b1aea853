package ws

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/internal/wsread"
)

// Path is the only path the server accepts.
const Path = "/rp-engine/socket"

// Options are the server's options the WebSocket transport uses, with
// their defaults applied.
type Options struct {
	// Origins are the exact origins accepted, unless
	// InsecureSkipOriginCheck.
	Origins                 map[string]bool
	InsecureSkipOriginCheck bool
	// HandshakeTimeout bounds a connection from its accept to its hello;
	// WriteTimeout bounds one write (<= 0: none).
	HandshakeTimeout, WriteTimeout time.Duration
	Logger                         *slog.Logger
}

// maxHeaderBytes bounds an upgrade request's header: a browser's is under
// 2 KiB plus its cookies for 127.0.0.1. net/http's default, 1 MiB, let
// every connection still sending its header hold that much (issue #9).
const maxHeaderBytes = 64 << 10

// Server serves engine connections over WebSocket: it checks each
// upgrade request, upgrades it, reads the hello and attaches a session
// through the host, then reads the session's messages in order.
type Server struct {
	host transport.Host
	o    Options
	port func() int // the listener's port, for an in-memory connection
	wg   *sync.WaitGroup
	http *http.Server
}

// New returns a server for host; port returns the port it serves on, and
// wg counts the goroutines it starts beyond net/http's.
func New(host transport.Host, o Options, port func() int, wg *sync.WaitGroup) *Server {
	s := &Server{host: host, o: o, port: port, wg: wg}
	// Every connection gets one deadline, HandshakeTimeout after it is
	// accepted, over its whole upgrade (see acceptedConn); net/http's own
	// timeouts say the same, for what it reads before our handler runs.
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: o.HandshakeTimeout,
		ReadTimeout: o.HandshakeTimeout, IdleTimeout: o.HandshakeTimeout, MaxHeaderBytes: maxHeaderBytes,
		ConnContext: connContext}
	return s
}

// Serve accepts connections on l until Shutdown, and then returns
// http.ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	return s.http.Serve(newListener(l, s.o.HandshakeTimeout))
}

// Shutdown stops accepting connections and waits, bounded by ctx, for
// the upgrades in progress (an upgraded connection is the session's).
func (s *Server) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// ServeHTTP applies the acceptance checks, upgrades and runs one engine
// connection until it ends.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// A refused or failed request gets no keep-alive: a client must not
	// hold a socket (and a file descriptor of the game) open after it.
	// A successful upgrade replaces this header.
	rw.Header().Set("Connection", "close")
	port := localPort(r)
	if port < 0 { // an in-memory connection: the listener's port
		port = s.port()
	}
	if rej := s.o.check(r, port); rej != nil {
		s.o.Logger.Warn("rpengine: refused connection", "reason", rej.reason, "remote", r.RemoteAddr, "status", rej.status)
		refuse(rw, r, rej.status)
		return
	}
	hc := requestConn(r.Context())
	w := &wsConn{hc: hc, writeTimeout: s.o.WriteTimeout, wg: s.wg, log: s.o.Logger}
	if err := s.host.Register(w); err != nil {
		s.o.Logger.Warn("rpengine: refused connection", "reason", err.Error(), "remote", r.RemoteAddr, "status", http.StatusServiceUnavailable)
		refuse(rw, r, http.StatusServiceUnavailable)
		return
	}
	// Origin was checked above, exactly; coder's own check is looser.
	c, err := websocket.Accept(rw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.o.Logger.Warn("rpengine: upgrade failed", "reason", peertext.Clip(err.Error(), peertext.LineBytes), "remote", r.RemoteAddr)
		s.host.Unregister(w, true)
		dropConn(rw) // coder's refusal keeps the connection alive
		return
	}
	c.SetReadLimit(wire.MaxMessageBytes)
	if !w.setConn(c) {
		s.host.Unregister(w, true)
		return
	}
	s.run(w, r.RemoteAddr)
}

// refuse answers a refused request with status. When the request declares
// a body the connection is dropped at once: net/http would otherwise read
// the body (up to 256 KiB) that the client may never send.
func refuse(rw http.ResponseWriter, r *http.Request, status int) {
	http.Error(rw, http.StatusText(status), status)
	if declaredBody(r) != "" {
		dropConn(rw)
	}
}

// dropConn closes the client's connection after a response was written
// (coder/websocket's refusal sets Connection: Upgrade, so net/http would
// keep it open for more requests).
func dropConn(rw http.ResponseWriter) {
	h, ok := rw.(http.Hijacker)
	if !ok {
		return
	}
	c, brw, err := h.Hijack()
	if err != nil {
		return
	}
	_ = brw.Flush()
	_ = c.Close()
}

// run is the connection's reader: handshake, then every message in order.
func (s *Server) run(w *wsConn, remote string) {
	sess := s.handshake(w, remote)
	if sess == nil {
		w.c.CloseNow()
		s.host.Unregister(w, true)
		return
	}
	if w.hc != nil {
		w.hc.release()
	}
	defer s.host.Unregister(w, false)
	rb := wsread.Buffer{Min: minReadBuffer, MaxKept: maxKeptReadBuffer}
	for {
		typ, data, err := rb.Next(w.c)
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				s.o.Logger.Warn("rpengine: closed connection", "reason", "message over 8 MiB", "session", sess.ID())
			}
			// The read error stays reachable (errors.As finds a
			// websocket.CloseError; issue #17: errors.Join of its text
			// dropped it).
			sess.Lost(err)
			w.c.CloseNow()
			return
		}
		if w.isClosing() {
			continue // closing: the rest is not processed
		}
		if typ != websocket.MessageText {
			s.o.Logger.Warn("rpengine: closed connection", "reason", "binary frame", "session", sess.ID())
			w.Close(transport.CloseUnsupported, "binary frames are not accepted")
			continue
		}
		if !sess.Receive(session.Inbound{Msg: data, Text: true}) {
			s.o.Logger.Warn("rpengine: closed connection", "reason", "invalid UTF-8 in a text frame", "session", sess.ID())
			w.Close(transport.CloseInvalidData, "text frames must be valid UTF-8")
		}
	}
}

// The reader's buffer starts at 64 KiB (a 32 KiB chunk is 44 KB of text)
// and is kept between messages up to 1 MiB.
const (
	minReadBuffer     = 64 << 10
	maxKeptReadBuffer = 1 << 20
)

// handshake reads and checks the hello and attaches a session, by the
// handshake deadline that started when the connection was accepted (so a
// slow upgrade leaves less time for the hello, never more).
func (s *Server) handshake(w *wsConn, remote string) transport.Session {
	deadline := time.Now().Add(s.o.HandshakeTimeout)
	if w.hc != nil {
		deadline = w.hc.handshakeDeadline()
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	typ, data, err := w.c.Read(ctx)
	cancel()
	if err != nil {
		reason := "no hello: " + err.Error()
		if errors.Is(err, websocket.ErrMessageTooBig) {
			reason = "hello over 8 MiB" // coder already sent close 1009
		}
		s.o.Logger.Warn("rpengine: closed connection", "reason", peertext.Clip(reason, peertext.LineBytes), "remote", remote)
		return nil
	}
	s.host.Record(true, data)
	if typ != websocket.MessageText {
		s.o.Logger.Warn("rpengine: closed connection", "reason", "binary frame", "remote", remote)
		w.closeHandshake(transport.CloseUnsupported, "binary frames are not accepted")
		return nil
	}
	if !utf8.Valid(data) {
		s.o.Logger.Warn("rpengine: closed connection", "reason", "invalid UTF-8 in a text frame", "remote", remote)
		w.closeHandshake(transport.CloseInvalidData, "text frames must be valid UTF-8")
		return nil
	}
	id, version, err := session.ParseHello(data)
	if err != nil {
		s.o.Logger.Warn("rpengine: closed connection", "reason", "bad hello: "+peertext.Clip(err.Error(), peertext.LineBytes), "remote", remote)
		w.closeHandshake(transport.ClosePolicy, "first message must be a valid hello")
		return nil
	}
	sess, err := s.host.Attach(w, transport.Hello{MessageID: id, ClientVersion: version})
	if err != nil {
		w.closeHandshake(transport.CloseGoingAway, "game shutting down")
		return nil
	}
	return sess
}
