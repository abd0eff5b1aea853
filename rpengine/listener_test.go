package rpengine

// Issue #16: the handshake deadline and the connection bound, over
// in-memory pipes inside testing/synctest, so that every duration below is
// exact and nothing depends on the machine's load.

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/memnet"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/internal/ws"
)

// pipeListener is the in-memory listener the module's fakes serve on
// (internal/memnet), counting how many connections are open at once.
type pipeListener struct {
	*memnet.Listener
	open atomic.Int32
	peak atomic.Int32
}

var pipeAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 38471}

func newPipeListener() *pipeListener {
	return &pipeListener{Listener: memnet.NewListener(pipeAddr.String())}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return &pipeConn{Conn: c, l: l}, nil
}

type pipeConn struct {
	net.Conn
	l    *pipeListener
	once sync.Once
}

func (c *pipeConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// pipeServer is a Server serving a pipeListener inside a synctest bubble.
type pipeServer struct {
	t    *testing.T
	srv  *Server
	l    *pipeListener
	log  *testutil.SyncBuffer
	done chan error // Serve's result
}

// startPipeServer starts a server; call it inside the bubble, and close
// the server before the bubble's function returns.
func startPipeServer(t *testing.T, opts ServerOptions) *pipeServer {
	t.Helper()
	var buf testutil.SyncBuffer
	opts.Addr = pipeAddr.String()
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	srv, err := NewServer(&opts)
	testutil.Success(t, err)
	l := newPipeListener()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return &pipeServer{t: t, srv: srv, l: l, log: &buf, done: done}
}

func (ps *pipeServer) close() {
	testutil.Success(ps.t, ps.srv.Close())
	testutil.ErrorIs(ps.t, <-ps.done, ErrServerClosed)
}

// rawResult is what a raw client saw: the response status (0: none) and
// how long after it connected the server closed the connection.
type rawResult struct {
	status int
	closed time.Duration
}

// raw connects, runs send, reads a response if one comes and then waits
// for the server to close the connection.
func (ps *pipeServer) raw(send func(c net.Conn)) rawResult {
	c, err := ps.l.Dial(context.Background(), "", "")
	testutil.Success(ps.t, err)
	defer c.Close()
	start := time.Now()
	// A bound of the client's own, so that a server that never answers
	// fails the test instead of deadlocking the bubble.
	_ = c.SetReadDeadline(start.Add(time.Minute))
	go send(c)
	var res rawResult
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		res.status = resp.StatusCode
		if resp.StatusCode != http.StatusSwitchingProtocols {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
	}
	_, _ = io.Copy(io.Discard, br)
	res.closed = time.Since(start)
	return res
}

// writeSlowly writes s one byte every step.
func writeSlowly(c net.Conn, s string, step time.Duration) {
	for i := 0; i < len(s); i++ {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return
		}
		time.Sleep(step)
	}
}

func writeAll(s string) func(c net.Conn) {
	return func(c net.Conn) { _, _ = c.Write([]byte(s)) }
}

func upgradeRequest(extra ...string) string {
	var b strings.Builder
	b.WriteString("GET " + SocketPath + " HTTP/1.1\r\nHost: " + pipeAddr.String() + "\r\nOrigin: " + OriginProduction + "\r\n")
	b.WriteString("Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// engine connects a well-behaved engine: upgrade, hello, welcome. It
// returns the connection, or the dial error (a 503 while the handshake
// slots are taken).
func (ps *pipeServer) engine(ctx context.Context) (*websocket.Conn, error) {
	c, _, err := websocket.Dial(ctx, "ws://"+pipeAddr.String()+SocketPath, &websocket.DialOptions{
		HTTPClient: ps.l.Client(), HTTPHeader: http.Header{"Origin": {OriginProduction}}})
	if err != nil {
		return nil, err
	}
	hello := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"h","timestamp":"t","clientVersion":"pipe"}`
	if err := c.Write(ctx, websocket.MessageText, []byte(hello)); err != nil {
		c.CloseNow()
		return nil, err
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(data), `"type":"welcome"`) {
			return c, nil
		}
	}
}

// Issue #16: one deadline over the whole upgrade, from the first byte to
// the hello. Each case is a client that never completes the handshake; it
// must be answered at once when its request is refused, and cut no later
// than HandshakeTimeout after it connected otherwise. Before the fix a
// request declaring a body was never answered nor cut, and the hello timer
// started only after the upgrade (a slow header then left a socket open
// for up to twice the timeout).
func TestServer_handshakeDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 3 * time.Second
	tests := []struct {
		name   string
		send   func(c net.Conn)
		status int           // 0: no response
		closed time.Duration // when the server closes the connection
	}{
		{"nothing sent", func(net.Conn) {}, 0, timeout},
		{"header never ends", writeAll("GET " + SocketPath + " HTTP/1.1\r\nHost: x"), 0, timeout},
		{"header dribbled, then no hello", func(c net.Conn) { writeSlowly(c, upgradeRequest(), timeout/2/250) }, 101, timeout},
		{"header dribbled, then half a hello frame", func(c net.Conn) {
			writeSlowly(c, upgradeRequest(), timeout/2/250)
			_, _ = c.Write([]byte{0x81, 0xfe, 0x01}) // masked text frame, length never finished
		}, 101, timeout},
		{"upgrade, no hello", writeAll(upgradeRequest()), 101, timeout},
		{"upgrade declaring Content-Length: 1", writeAll(upgradeRequest("Content-Length: 1")), 400, 0},
		{"upgrade declaring a chunked body", writeAll(upgradeRequest("Transfer-Encoding: chunked")), 400, 0},
		{"upgrade declaring a chunked body, first chunk sent", writeAll(upgradeRequest("Transfer-Encoding: chunked") + "5\r\nab"), 400, 0},
		{"upgrade with Expect: 100-continue", writeAll(upgradeRequest("Content-Length: 10", "Expect: 100-continue")), 400, 0},
		{"plain GET declaring a chunked body", writeAll("GET " + SocketPath + " HTTP/1.1\r\nHost: " + pipeAddr.String() +
			"\r\nOrigin: " + OriginProduction + "\r\nTransfer-Encoding: chunked\r\n\r\n"), 400, 0},
		{"POST elsewhere, body never sent", writeAll("POST /x HTTP/1.1\r\nHost: " + pipeAddr.String() + "\r\nContent-Length: 100\r\n\r\nabc"), 404, 0},
		{"wrong origin, chunked body never sent", writeAll(strings.Replace(upgradeRequest("Transfer-Encoding: chunked"),
			OriginProduction, "https://evil.example", 1)), 403, 0},
		{"plain GET, no body", writeAll("GET " + SocketPath + " HTTP/1.1\r\nHost: " + pipeAddr.String() +
			"\r\nOrigin: " + OriginProduction + "\r\n\r\n"), 426, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ps := startPipeServer(t, ServerOptions{HandshakeTimeout: timeout})
				defer ps.close()
				// Take every handshake slot but one with clients alike.
				for i := 0; i < DefaultMaxHandshakes-1; i++ {
					go ps.raw(tt.send)
				}
				got := ps.raw(tt.send)
				testutil.Equal(t, "status", got.status, tt.status)
				testutil.Equal(t, "closed after", got.closed, tt.closed)
				// Every slot is free again: a normal engine connects at once.
				synctest.Wait()
				start := time.Now()
				c, err := ps.engine(context.Background())
				testutil.Success(t, err)
				testutil.Equal(t, "engine waited", time.Since(start), time.Duration(0))
				c.CloseNow()
			})
		})
	}
}

// Issue #16: the deadline ends with the handshake. A session idle far
// longer than HandshakeTimeout keeps its connection.
func TestServer_sessionOutlivesHandshakeDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ps := startPipeServer(t, ServerOptions{HandshakeTimeout: 3 * time.Second, AckTimeout: -1, IdleTimeout: -1})
		defer ps.close()
		ctx := context.Background()
		c, err := ps.engine(ctx)
		testutil.Success(t, err)
		defer c.CloseNow()
		time.Sleep(time.Hour)
		info, ok := ps.srv.Session()
		testutil.Equal(t, "still live", ok, true)
		testutil.Equal(t, "client version", info.ClientVersion, "pipe")
		// The connection still carries messages both ways: the game acks.
		msg := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"future.kind","messageId":"late","timestamp":"t"}`
		testutil.Success(t, c.Write(ctx, websocket.MessageText, []byte(msg)))
		for {
			_, data, err := c.Read(ctx)
			testutil.Success(t, err)
			if strings.Contains(string(data), `"acknowledgedMessageId":"late"`) {
				break
			}
		}
	})
}

// Issue #16: 200 plain GETs that declare a chunked body and never send it
// (and 200 connections that send nothing) held 200 file descriptors with
// no deadline. Each GET is refused at once; the silent connections are cut
// at the handshake deadline; and at no time are more than ws.MaxConns
// connections open, while a normal engine still gets through.
func TestServer_connectionBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const timeout = 3 * time.Second
		ps := startPipeServer(t, ServerOptions{HandshakeTimeout: timeout})
		defer ps.close()
		get := writeAll("GET " + SocketPath + " HTTP/1.1\r\nHost: " + pipeAddr.String() +
			"\r\nOrigin: " + OriginProduction + "\r\nTransfer-Encoding: chunked\r\n\r\n")
		var wg sync.WaitGroup
		results := make([]rawResult, 400)
		for i := range results {
			send := get
			if i%2 == 1 {
				send = func(net.Conn) {}
			}
			wg.Go(func() { results[i] = ps.raw(send) })
		}
		synctest.Wait()
		testutil.Equal(t, "open connections", int(ps.l.open.Load()), ws.MaxConns)
		// A normal engine waits its turn behind the 136 silent connections
		// still queued: the slots turn over every HandshakeTimeout, so it
		// is in by the fourth.
		start := time.Now()
		c, err := ps.engine(context.Background())
		testutil.Success(t, err)
		if d := time.Since(start); d > 4*timeout {
			t.Errorf("the engine waited %v for a slot", d)
		}
		c.CloseNow()
		wg.Wait()
		for i, r := range results {
			want := rawResult{status: 400}
			if i%2 == 1 {
				want = rawResult{closed: timeout}
			}
			if r.status != want.status || r.closed > want.closed {
				t.Fatalf("connection %d: %+v, want %+v", i, r, want)
			}
		}
		testutil.Equal(t, "peak open connections", int(ps.l.peak.Load()), ws.MaxConns)
		testutil.Equal(t, "open at the end", int(ps.l.open.Load()), 0)
	})
}
