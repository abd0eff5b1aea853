// Package memnet is the in-memory network every fake of the module
// serves on (neurotest, xtytest, neurosantest, and enginetest's Listener
// for a game server): a net.Listener whose connections are net.Pipe
// pairs, and the *http.Client that dials it. No port is opened, and a
// server and client created inside a testing/synctest bubble run on the
// bubble's fake clock.
//
// Connections look like loopback TCP when the listener's address is an
// IP and a port: the listener's Addr and every connection's local and
// remote addresses are *net.TCPAddr values, as a server that checks it
// listens on loopback, or that the Host of a request names its port,
// expects.
package memnet

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
)

// Listener hands out the server ends of in-memory connections. All
// methods may be called concurrently.
type Listener struct {
	addr    net.Addr
	ch      chan net.Conn
	done    chan struct{}
	once    sync.Once
	refused atomic.Bool
	port    atomic.Uint32 // the client end's port, as an ephemeral one
}

// NewListener returns a listener whose Addr reports addr ("host:port"):
// a *net.TCPAddr when host is an IP address.
func NewListener(addr string) *Listener {
	l := &Listener{addr: pipeAddr(addr), ch: make(chan net.Conn), done: make(chan struct{})}
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		l.addr = net.TCPAddrFromAddrPort(ap)
	}
	l.port.Store(49151) // the first client port is 49152, IANA's first ephemeral one
	return l
}

// Accept waits for the next connection, or returns net.ErrClosed once the
// listener is closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and makes Dial fail. It is idempotent.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Refuse makes Dial fail at once (true), as dialling a port nobody
// listens on does, or connect again (false). A new listener connects.
func (l *Listener) Refuse(refuse bool) { l.refused.Store(refuse) }

// Addr returns the address given to NewListener.
func (l *Listener) Addr() net.Addr { return l.addr }

// Dial connects to the listener, whatever network and address say; it
// has the signature of http.Transport.DialContext. It waits for Accept,
// and fails with an error wrapping net.ErrClosed once the listener is
// closed, and with syscall.ECONNREFUSED while it refuses.
func (l *Listener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	if l.refused.Load() {
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: l.addr, Err: syscall.ECONNREFUSED}
	}
	srv, cli := l.pipe()
	select {
	case l.ch <- srv:
		return cli, nil
	case <-l.done:
	case <-ctx.Done():
		srv.Close()
		cli.Close()
		return nil, ctx.Err()
	}
	srv.Close()
	cli.Close()
	return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: l.addr, Err: net.ErrClosed}
}

// pipe returns the server and client ends of a new connection, with TCP
// addresses when the listener has one: the client's is the listener's IP
// with the next ephemeral port.
func (l *Listener) pipe() (srv, cli net.Conn) {
	srv, cli = net.Pipe()
	t, ok := l.addr.(*net.TCPAddr)
	if !ok {
		return srv, cli
	}
	port := 49152 + (l.port.Add(1)-49152)%16384 // 49152-65535, then again
	peer := &net.TCPAddr{IP: t.IP, Port: int(port), Zone: t.Zone}
	return &conn{srv, t, peer}, &conn{cli, peer, t}
}

// Client returns an http.Client whose every connection is dialled with
// Dial. Keep-alives are off, so that no idle connection outlives a test.
func (l *Listener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial, DisableKeepAlives: true}}
}

// conn is one end of a pipe with TCP addresses.
type conn struct {
	net.Conn
	local, remote net.Addr
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }
