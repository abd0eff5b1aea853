// Package memnet is the in-memory network every fake server of the module
// (neurotest, xtytest, neurosantest) serves on: a net.Listener whose
// connections are net.Pipe pairs, and the *http.Client that dials it. No
// port is opened, and a server and client created inside a
// testing/synctest bubble run on the bubble's fake clock.
package memnet

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
)

// Listener hands out the server ends of in-memory connections. All
// methods may be called concurrently.
type Listener struct {
	addr    pipeAddr
	ch      chan net.Conn
	done    chan struct{}
	once    sync.Once
	refused atomic.Bool
}

// NewListener returns a listener whose Addr reports addr ("host:port").
func NewListener(addr string) *Listener {
	return &Listener{addr: pipeAddr(addr), ch: make(chan net.Conn), done: make(chan struct{})}
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
	srv, cli := net.Pipe()
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

// Client returns an http.Client whose every connection is dialled with
// Dial. Keep-alives are off, so that no idle connection outlives a test.
func (l *Listener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial, DisableKeepAlives: true}}
}

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }
