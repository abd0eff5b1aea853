package ws

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// wsConn is one engine connection: the transport.Transport of its
// session.
type wsConn struct {
	c            *websocket.Conn // set once by setConn, before any send
	hc           *acceptedConn   // the connection it came on (nil if Serve did not accept it)
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

// Send writes msg, bounded by WriteTimeout, not by a caller's context: a
// context cancelled mid-write would tear the connection down. The bound
// is a timer of the connection's own, reset for each write, that closes
// the connection as coder/websocket does when a write's context expires:
// a context per write cost five allocations a message (issue #24). Only
// the session's writer goroutine calls Send.
func (w *wsConn) Send(msg []byte) error {
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

// Close closes the connection with code and reason, on a goroutine of
// its own: it does not wait for the peer, and the connection gives way to
// a new one while it waits for the peer's close frame.
func (w *wsConn) Close(code int, reason string) {
	w.mu.Lock()
	c, was := w.c, w.closing
	w.closing = true
	w.mu.Unlock()
	if was || c == nil {
		return
	}
	w.hc.giveWay()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		// Close waits (up to 5 s) for the peer's close frame, so it runs
		// on its own goroutine and never holds up the caller.
		_ = c.Close(websocket.StatusCode(code), reason)
	}()
}

// closeHandshake closes the connection with code and reason during the
// handshake, waiting for the peer's close frame until the handshake
// deadline; the connection gives way to a new one meanwhile.
func (w *wsConn) closeHandshake(code int, reason string) {
	w.hc.giveWay()
	_ = w.c.Close(websocket.StatusCode(code), reason)
}

// isClosing reports whether the server decided to close the connection:
// its reader then drops whatever the peer still sends.
func (w *wsConn) isClosing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closing
}
