package rpengine

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/internal/wsread"
)

// wsConn is the WebSocket transport.
type wsConn struct {
	c            *websocket.Conn // set once by setConn, before any send
	writeTimeout time.Duration
	wg           *sync.WaitGroup
	log          *slog.Logger
	timedOut     sync.Once // logs the first write timeout

	// The writer goroutine's (send's) write deadline: one timer, reset
	// for every write, that closes the connection when it fires.
	deadline *time.Timer
	expired  atomic.Bool // the deadline fired

	mu      sync.Mutex // guards following
	closing bool
}

// setConn installs the upgraded connection; false means close was
// already asked for (server shutting down) and the connection is closed.
func (w *wsConn) setConn(c *websocket.Conn) bool {
	w.mu.Lock()
	w.c = c
	closing := w.closing
	w.mu.Unlock()
	if closing {
		c.CloseNow()
	}
	return !closing
}

// send writes msg, bounded by WriteTimeout, not by a caller's context: a
// context cancelled mid-write would tear the connection down. The bound
// is a timer of the connection's own, reset for each write, that closes
// the connection as coder/websocket does when a write's context expires:
// a context per write cost five allocations a message (issue #24). Only
// the session's writer goroutine calls send.
func (w *wsConn) send(msg []byte) error {
	if w.writeTimeout > 0 { // negative: no bound (issue #17: -1ns closed every connection)
		if w.deadline == nil {
			w.deadline = time.AfterFunc(w.writeTimeout, w.writeExpired)
		} else {
			w.deadline.Reset(w.writeTimeout)
		}
	}
	err := w.c.Write(context.Background(), websocket.MessageText, msg)
	if w.deadline != nil {
		w.deadline.Stop()
	}
	if err != nil && w.expired.Load() {
		// Say why once (issue #9: an engine that stopped reading was
		// dropped without a word).
		w.timedOut.Do(func() {
			w.log.Warn("rpengine: closed connection", "reason", "write timed out after "+w.writeTimeout.String()+": the engine is not reading")
		})
	}
	return err
}

// writeExpired closes the connection whose write outlived WriteTimeout;
// the write then fails. It runs on the timer's goroutine.
func (w *wsConn) writeExpired() {
	w.expired.Store(true)
	_ = w.c.CloseNow()
}

func (w *wsConn) close(code int, reason string) {
	w.mu.Lock()
	c, was := w.c, w.closing
	w.closing = true
	w.mu.Unlock()
	if was || c == nil {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		// Close waits (up to 5 s) for the peer's close frame, so it runs
		// on its own goroutine and never holds up the caller.
		_ = c.Close(websocket.StatusCode(code), reason)
	}()
}

// isClosing reports whether the server decided to close the connection:
// its reader then drops whatever the peer still sends.
func (w *wsConn) isClosing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closing
}

func (*wsConn) mustAck() bool                { return false }
func (*wsConn) welcomeExtra() map[string]any { return nil }

// serveHTTP applies the acceptance checks, upgrades and runs one engine
// connection until it ends.
func (s *Server) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	// A refused or failed request gets no keep-alive: a client must not
	// hold a socket (and a file descriptor of the game) open after it.
	// A successful upgrade replaces this header.
	rw.Header().Set("Connection", "close")
	port := localPort(r)
	if port < 0 { // an in-memory connection: the listener's port
		port = s.servingPort()
	}
	if rej := s.opts.check(r, port); rej != nil {
		s.opts.Logger.Warn("rpengine: refused connection", "reason", rej.reason, "remote", r.RemoteAddr, "status", rej.status)
		refuse(rw, r, rej.status)
		return
	}
	hc := requestConn(r.Context())
	w := &wsConn{writeTimeout: s.opts.WriteTimeout, wg: &s.wg, log: s.opts.Logger}
	if err := s.register(w); err != nil {
		s.opts.Logger.Warn("rpengine: refused connection", "reason", err.Error(), "remote", r.RemoteAddr, "status", http.StatusServiceUnavailable)
		refuse(rw, r, http.StatusServiceUnavailable)
		return
	}
	// Origin was checked above, exactly; coder's own check is looser.
	c, err := websocket.Accept(rw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		s.opts.Logger.Warn("rpengine: upgrade failed", "reason", peertext.Clip(err.Error(), peertext.LineBytes), "remote", r.RemoteAddr)
		s.unregister(w, true)
		dropConn(rw) // coder's refusal keeps the connection alive
		return
	}
	c.SetReadLimit(wire.MaxMessageBytes)
	if !w.setConn(c) {
		s.unregister(w, true)
		return
	}
	s.run(w, hc, r.RemoteAddr)
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
// hc is the connection it came on (nil if Serve did not accept it).
func (s *Server) run(w *wsConn, hc *acceptedConn, remote string) {
	sess := s.handshakeWS(w, hc, remote)
	if sess == nil {
		w.c.CloseNow()
		s.unregister(w, true)
		return
	}
	if hc != nil {
		hc.release()
	}
	defer s.unregister(w, false)
	rb := wsread.Buffer{Min: minReadBuffer, MaxKept: maxKeptReadBuffer}
	for {
		typ, data, err := rb.Next(w.c)
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				s.opts.Logger.Warn("rpengine: closed connection", "reason", "message over 8 MiB", "session", sess.info.ID)
			}
			// The read error stays reachable (errors.As finds a
			// websocket.CloseError; issue #17: errors.Join of its text
			// dropped it).
			sess.end(errd.Chain(ErrConnectionLost, err))
			w.c.CloseNow()
			return
		}
		if w.isClosing() {
			continue // closing: the rest is not processed
		}
		if typ != websocket.MessageText {
			s.opts.Logger.Warn("rpengine: closed connection", "reason", "binary frame", "session", sess.info.ID)
			w.close(closeUnsupported, "binary frames are not accepted")
			continue
		}
		if !sess.receiveText(data) {
			s.opts.Logger.Warn("rpengine: closed connection", "reason", "invalid UTF-8 in a text frame", "session", sess.info.ID)
			w.close(closeInvalidData, "text frames must be valid UTF-8")
		}
	}
}

// The reader's buffer starts at 64 KiB (a 32 KiB chunk is 44 KB of text)
// and is kept between messages up to 1 MiB.
const (
	minReadBuffer     = 64 << 10
	maxKeptReadBuffer = 1 << 20
)

// handshakeWS reads and checks the hello and attaches a session, by the
// handshake deadline that started when the connection was accepted (so a
// slow upgrade leaves less time for the hello, never more).
func (s *Server) handshakeWS(w *wsConn, hc *acceptedConn, remote string) *session {
	deadline := time.Now().Add(s.opts.HandshakeTimeout)
	if hc != nil {
		deadline = hc.handshakeDeadline()
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	typ, data, err := w.c.Read(ctx)
	cancel()
	if err != nil {
		reason := "no hello: " + err.Error()
		if errors.Is(err, websocket.ErrMessageTooBig) {
			reason = "hello over 8 MiB" // coder already sent close 1009
		}
		s.opts.Logger.Warn("rpengine: closed connection", "reason", peertext.Clip(reason, peertext.LineBytes), "remote", remote)
		return nil
	}
	s.rec.Record(jsonl.In, data)
	if typ != websocket.MessageText {
		s.opts.Logger.Warn("rpengine: closed connection", "reason", "binary frame", "remote", remote)
		_ = w.c.Close(closeUnsupported, "binary frames are not accepted")
		return nil
	}
	if !utf8.Valid(data) {
		s.opts.Logger.Warn("rpengine: closed connection", "reason", "invalid UTF-8 in a text frame", "remote", remote)
		_ = w.c.Close(closeInvalidData, "text frames must be valid UTF-8")
		return nil
	}
	version, err := parseHello(data)
	if err != nil {
		s.opts.Logger.Warn("rpengine: closed connection", "reason", "bad hello: "+peertext.Clip(err.Error(), peertext.LineBytes), "remote", remote)
		_ = w.c.Close(closePolicy, "first message must be a valid hello")
		return nil
	}
	h, _ := wire.DecodeHeader(data)
	sess, err := s.attach(w, h.MessageID, version)
	if err != nil {
		_ = w.c.Close(closeGoingAway, "game shutting down")
		return nil
	}
	return sess
}
