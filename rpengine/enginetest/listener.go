package enginetest

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/gamelink-go/gamelink/internal/memnet"
)

// memoryPort is the port a Listener reports: the game server's default
// (rpengine.DefaultPort), which the RPEngine page dials when no port is
// given.
const memoryPort = 38471

// socketPath is where the engine opens its WebSocket on the game's port
// (rpengine.SocketPath; docs/rpengine-protocol.md).
const socketPath = "/rp-engine/socket"

// Listener is an in-memory net.Listener for a game server under test, as
// httptest is to HTTP servers and coder/websocket's test pipe to its
// connections: hand it to rpengine.Server.Serve, and connect engines to
// it with [Dial] and Options.HTTPClient set to [Listener.Client]:
//
//	l := enginetest.NewListener()
//	go server.Serve(l)
//	eng, err := enginetest.Dial(ctx, l.URL, &enginetest.Options{HTTPClient: l.Client()})
//
// No port is opened. Its address is loopback TCP, 127.0.0.1:38471, so a
// server that accepts only loopback listeners serves it and checks the
// Host of each upgrade against that port as it would over TCP. A server
// and an engine created inside a testing/synctest bubble run on the
// bubble's fake clock: a handshake timeout or a silent engine takes no
// real time. All methods may be called concurrently.
type Listener struct {
	// URL is the socket URL of a game server serving the listener,
	// ws://127.0.0.1:38471/rp-engine/socket (what its SocketURL reports
	// once serving). It is reached only through Client and Dial.
	URL string

	l *memnet.Listener
}

// NewListener returns an in-memory listener; close it with Close, which
// the server's Serve does when it returns.
func NewListener() *Listener {
	addr := "127.0.0.1:" + strconv.Itoa(memoryPort)
	return &Listener{URL: "ws://" + addr + socketPath, l: memnet.NewListener(addr)}
}

// Accept waits for the next connection, or returns net.ErrClosed once the
// listener is closed.
func (l *Listener) Accept() (net.Conn, error) { return l.l.Accept() }

// Close stops Accept and makes Dial fail with net.ErrClosed. Connections
// already accepted stay open. It is idempotent.
func (l *Listener) Close() error { return l.l.Close() }

// Addr returns 127.0.0.1:38471, a *net.TCPAddr.
func (l *Listener) Addr() net.Addr { return l.l.Addr() }

// Dial opens an in-memory connection to the listener, whatever network
// and addr say, and waits, bounded by ctx, until it is accepted. It has
// the signature of http.Transport.DialContext; a test that writes raw
// bytes to the game server (a hand-made upgrade request) uses it.
func (l *Listener) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return l.l.Dial(ctx, network, addr)
}

// Client returns an http.Client whose connections are opened with Dial,
// whatever the URL's host: pass it as Options.HTTPClient. Keep-alives are
// off, so no idle connection outlives a test.
func (l *Listener) Client() *http.Client { return l.l.Client() }
