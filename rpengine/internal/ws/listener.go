package ws

import (
	"context"
	"net"
	"sync"
	"time"
)

// MaxConns bounds the connections the server holds open at once. An
// engine uses one; every other connection is refused at once or cut at
// its handshake deadline, so the bound is reached only under attack, and
// then a new connection waits (in the kernel's backlog) for a slot
// instead of costing the game a file descriptor (issue #16: 200 requests
// held descriptors 9 to 208).
const MaxConns = 64

// listener is what Serve wraps around the caller's listener: it holds at
// most MaxConns connections open, as x/net/netutil's LimitListener does,
// and starts each connection's handshake deadline when it is accepted.
type listener struct {
	net.Listener
	timeout time.Duration
	slots   chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newListener(l net.Listener, handshakeTimeout time.Duration) *listener {
	return &listener{Listener: l, timeout: handshakeTimeout, slots: make(chan struct{}, MaxConns), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *listener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return newAcceptedConn(c, time.Now().Add(l.timeout), func() { <-l.slots }), nil
}

// Close closes the listener and ends an Accept waiting for a slot.
func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// acceptedConn is one accepted connection. Until release (after the engine's
// hello and the welcome), every deadline anyone sets on it is clamped to
// the handshake deadline fixed at accept: net/http's header read, the body
// net/http reads and discards while switching protocols (it has no
// deadline of its own), the hijack (which clears deadlines) and the hello
// read. So the whole upgrade, from the first byte to the hello, fits in
// one HandshakeTimeout, and a pending-handshake slot is always freed on
// time (issue #16: an upgrade that declared a body and never sent it was
// held forever).
type acceptedConn struct {
	net.Conn
	free func() // returns the listener's slot

	closed sync.Once

	mu       sync.Mutex // guards following
	deadline time.Time  // the handshake deadline; zero once released
}

func newAcceptedConn(c net.Conn, deadline time.Time, free func()) *acceptedConn {
	hc := &acceptedConn{Conn: c, free: free, deadline: deadline}
	_ = c.SetDeadline(deadline)
	return hc
}

// SetDeadline sets the read and write deadlines, no later than the
// handshake deadline until release.
func (c *acceptedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Conn.SetDeadline(c.clampLocked(t))
}

// SetReadDeadline is SetDeadline for reads.
func (c *acceptedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Conn.SetReadDeadline(c.clampLocked(t))
}

// SetWriteDeadline is SetDeadline for writes.
func (c *acceptedConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Conn.SetWriteDeadline(c.clampLocked(t))
}

// clampLocked returns t, or the handshake deadline when that comes first
// (a zero t means none). c.mu must be held.
func (c *acceptedConn) clampLocked(t time.Time) time.Time {
	if !c.deadline.IsZero() && (t.IsZero() || t.After(c.deadline)) {
		return c.deadline
	}
	return t
}

// handshakeDeadline returns the handshake deadline (zero after release).
func (c *acceptedConn) handshakeDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline
}

// release ends the handshake: the connection has no deadline from then on
// (each write is bounded by WriteTimeout, and an engine may stay silent).
func (c *acceptedConn) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = time.Time{}
	_ = c.Conn.SetDeadline(time.Time{})
}

// Close closes the connection and frees its slot.
func (c *acceptedConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(c.free)
	return err
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one whose request it did not read whole.
func (c *acceptedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connKey is the request context key of the *acceptedConn a request came on.
type connKey struct{}

// connContext is http.Server.ConnContext: it gives the handler the
// connection, for its handshake deadline.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// requestConn returns the connection r came on, or nil.
func requestConn(ctx context.Context) *acceptedConn {
	c, _ := ctx.Value(connKey{}).(*acceptedConn)
	return c
}
