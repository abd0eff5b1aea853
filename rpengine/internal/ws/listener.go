package ws

import (
	"context"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// MaxConns bounds the connections the server holds open at once. An
// engine uses one; every other connection is refused at once or cut at
// its handshake deadline, so the bound is reached only under attack, and
// then a new connection takes the slot of one that gives way (see
// listener), or waits (in the kernel's backlog) for a slot instead of
// costing the game a file descriptor (issue #16: 200 requests held
// descriptors 9 to 208).
const MaxConns = 64

// silentShare is the share of the handshake timeout (a tenth, 300 ms of
// the default 3 s) a connection may spend without sending anything before
// it gives way to a new one when every slot is taken. A browser sends its
// upgrade request as soon as it is connected; the margin is for a busy
// machine that has not yet run a connection's reader or its client (1000
// attempts at once under -race on two shared cores left clients silent
// for over 2 s).
const silentShare = 10

// listener is what Serve wraps around the caller's listener: it holds at
// most MaxConns connections open, as x/net/netutil's LimitListener does,
// and starts each connection's handshake deadline when it is accepted.
// When every slot is taken, a connection that gives way makes room for
// the next (issue #31: 500 silent connections held an engine back 12 s,
// and 64 superseded sockets that never answered the close stopped a
// storm of reconnections): first the oldest that has sent nothing since
// the server began to read it, once for timeout/silentShare, then the
// oldest the server is closing (its session is over; it only waits for
// the peer's close frame). A connection that has sent something and is
// not being closed never gives way: an engine's handshake is cut only by
// its own deadline.
type listener struct {
	net.Listener
	timeout time.Duration
	silent  time.Duration // how long a silent connection keeps its slot when another waits
	done    chan struct{}
	once    sync.Once

	mu      sync.Mutex      // guards following
	taken   int             // slots taken: conns and Accepts under way
	conns   []*acceptedConn // oldest first
	changed chan struct{}   // closed and replaced when a slot frees or a connection may give way
}

func newListener(l net.Listener, handshakeTimeout time.Duration) *listener {
	return &listener{Listener: l, timeout: handshakeTimeout, silent: handshakeTimeout / silentShare,
		done: make(chan struct{}), changed: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *listener) Accept() (net.Conn, error) {
	if err := l.slot(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.free(nil)
		return nil, err
	}
	ac := newAcceptedConn(c, time.Now().Add(l.timeout), l)
	l.mu.Lock()
	l.conns = append(l.conns, ac)
	l.mu.Unlock()
	return ac, nil
}

// slot takes a slot: a free one, or one a connection gives way, or the
// first that frees.
func (l *listener) slot() error {
	for {
		l.mu.Lock()
		if l.taken < MaxConns {
			l.taken++
			l.mu.Unlock()
			return nil
		}
		v, wait := l.giveWayLocked(time.Now())
		changed := l.changed
		l.mu.Unlock()
		if v != nil {
			v.Close() // frees its slot
			continue
		}
		var aged <-chan time.Time
		if wait > 0 { // a silent connection comes of age
			aged = time.After(wait)
		}
		select {
		case <-changed:
		case <-aged:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// giveWayLocked returns the connection that gives way to a new one, or
// nil and how long until a silent one may (0: none). l.mu is held.
func (l *listener) giveWayLocked(now time.Time) (*acceptedConn, time.Duration) {
	var closing *acceptedConn
	var wait time.Duration
	for _, c := range l.conns {
		silent, ok := c.silentFor(now)
		switch {
		case ok && silent >= l.silent:
			return c, 0
		case ok:
			if w := l.silent - silent; wait == 0 || w < wait {
				wait = w
			}
		case closing == nil && c.closing.Load():
			closing = c
		}
	}
	if closing != nil {
		return closing, 0
	}
	return nil, wait
}

// free returns c's slot (nil: an Accept's that failed).
func (l *listener) free(c *acceptedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c != nil {
		i := slices.Index(l.conns, c)
		if i < 0 {
			return
		}
		l.conns = slices.Delete(l.conns, i, i+1)
	}
	l.taken--
	l.notifyLocked()
}

func (l *listener) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
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
	l *listener // whose slot it holds (nil in tests)

	closed  sync.Once
	spoke   atomic.Bool  // a byte was read
	waiting atomic.Int64 // when the first read began (Unix ns), 0 before
	closing atomic.Bool  // the server is closing it: it gives way

	mu       sync.Mutex // guards following
	deadline time.Time  // the handshake deadline; zero once released
}

func newAcceptedConn(c net.Conn, deadline time.Time, l *listener) *acceptedConn {
	hc := &acceptedConn{Conn: c, l: l, deadline: deadline}
	_ = c.SetDeadline(deadline)
	return hc
}

// Read marks when the server began to read, and whether the peer has
// sent something.
// Once the peer has spoken it costs the connection's reader one atomic
// load a Read.
func (c *acceptedConn) Read(p []byte) (int, error) {
	if c.spoke.Load() {
		return c.Conn.Read(p)
	}
	if c.waiting.CompareAndSwap(0, time.Now().UnixNano()) {
		c.notify() // one that may go silent
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.spoke.Store(true)
	}
	return n, err
}

// silentFor returns how long the server has been reading the connection
// without a byte from the peer, and false once one came, or before the
// server read (a connection the server did not read yet has not been
// silent: a busy machine may not have run its reader).
func (c *acceptedConn) silentFor(now time.Time) (time.Duration, bool) {
	since := c.waiting.Load()
	if since == 0 || c.spoke.Load() {
		return 0, false
	}
	return now.Sub(time.Unix(0, since)), true
}

// giveWay says the server is closing the connection, which then gives way
// to a new one when every slot is taken (see listener). It may be called
// on nil (a connection Serve did not accept).
func (c *acceptedConn) giveWay() {
	if c != nil && !c.closing.Swap(true) {
		c.notify()
	}
}

// notify wakes an Accept that waits for a slot.
func (c *acceptedConn) notify() {
	if c.l != nil {
		c.l.mu.Lock()
		c.l.notifyLocked()
		c.l.mu.Unlock()
	}
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
	c.closed.Do(func() {
		if c.l != nil {
			c.l.free(c)
		}
	})
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
