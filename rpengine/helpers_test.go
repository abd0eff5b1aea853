package rpengine_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

const cardJSON = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"A fox.","personality":"curious","scenario":"a forest","first_mes":"Hi!","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"test","character_version":"1","alternate_greetings":[],"tags":["fox"],"extensions":{}}}`

func cardJSONWith(mutate ...string) string {
	doc := cardJSON
	for i := 0; i+1 < len(mutate); i += 2 {
		doc = strings.Replace(doc, mutate[i], mutate[i+1], 1)
	}
	return doc
}

func testCard(t testing.TB, mutate ...string) *card.Card {
	t.Helper()
	c, err := card.Parse([]byte(cardJSONWith(mutate...)))
	testutil.Success(t, err)
	return c
}

// logBuf collects log lines for assertions.
type logBuf struct{ testutil.SyncBuffer }

// waitBound bounds the waits for an event that must come (a log line, a
// connection closed, a file): a guard against a hang, as ctxT is, not a
// timing assertion. A couple of seconds of real time was less than a
// goroutine can wait for the CPU when every package's tests run at once
// under -race on two shared cores. In a synctest bubble it is fake time.
const waitBound = 20 * time.Second

func (l *logBuf) waitFor(t testing.TB, sub string) {
	t.Helper()
	for deadline := time.Now().Add(waitBound); !strings.Contains(l.String(), sub); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("log has no %q:\n%s", sub, l.String())
		}
	}
}

// since returns what the log gained after mark.
func (l *logBuf) since(mark int) string {
	s := l.String()
	if mark > len(s) {
		return ""
	}
	return s[mark:]
}

// waitSince waits until the log written after mark contains sub.
func (l *logBuf) waitSince(t testing.TB, mark int, sub string) {
	t.Helper()
	for deadline := time.Now().Add(waitBound); !strings.Contains(l.since(mark), sub); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("log has no %q after the case:\n%s", sub, l.since(mark))
		}
	}
}

// fixture is a running server and the way to reach it.
type fixture struct {
	srv  *rpengine.Server
	url  string
	port int
	log  *logBuf
	// mem is the in-memory listener the server serves (nil over TCP).
	mem *enginetest.Listener
	// open counts the connections the server holds open.
	open *atomic.Int32
}

// newServer serves on an in-memory listener until the test ends. Called
// inside a testing/synctest bubble, the server and every engine dialled
// with f.dial run on the bubble's clock.
func newServer(t testing.TB, opts *rpengine.ServerOptions) *fixture {
	t.Helper()
	l := enginetest.NewListener()
	f := serve(t, opts, l)
	f.mem, f.url = l, l.URL
	return f
}

// countingListener counts the connections it accepted that are still
// open, as a descriptor count would.
type countingListener struct {
	net.Listener
	open atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countedConn{Conn: c, open: &l.open}, nil
}

type countedConn struct {
	net.Conn
	open *atomic.Int32
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// quietConns waits, in a synctest bubble, until every goroutine waits,
// and fails unless the server then holds want connections open.
func quietConns(t testing.TB, f *fixture, want int) {
	t.Helper()
	synctest.Wait()
	if n := f.open.Load(); n != int32(want) {
		t.Errorf("the server holds %d connections open, want %d", n, want)
	}
}

// waitConns fails unless the server comes to hold want connections open
// (the live engine's, and the ones the test keeps), within a bound: every
// connection a case opened and gave up was closed by the server.
func waitConns(t testing.TB, f *fixture, want int) {
	t.Helper()
	var n int32
	for deadline := time.Now().Add(waitBound); !time.Now().After(deadline); time.Sleep(10 * time.Millisecond) {
		if n = f.open.Load(); n == int32(want) {
			return
		}
	}
	t.Errorf("the server holds %d connections open, want %d", n, want)
}

// newTCPServer serves on an ephemeral loopback port until the test ends,
// for the tests of what only a real socket shows.
func newTCPServer(t testing.TB, opts *rpengine.ServerOptions) *fixture {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.Success(t, err)
	f := serve(t, opts, l)
	f.url = "ws://127.0.0.1:" + strconv.Itoa(f.port) + rpengine.SocketPath
	return f
}

func serve(t testing.TB, opts *rpengine.ServerOptions, l net.Listener) *fixture {
	t.Helper()
	if opts == nil {
		opts = &rpengine.ServerOptions{}
	}
	lb := &logBuf{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts.Addr = "127.0.0.1:0"
	srv, err := rpengine.NewServer(opts)
	testutil.Success(t, err)
	cl := &countingListener{Listener: l}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(cl) }()
	t.Cleanup(func() {
		testutil.Success(t, srv.Close())
		if err := <-done; !errors.Is(err, rpengine.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return &fixture{srv: srv, port: l.Addr().(*net.TCPAddr).Port, log: lb, open: &cl.open}
}

// engineOpts returns opts (nil for the defaults) with the fixture's
// HTTPClient.
func (f *fixture) engineOpts(opts *enginetest.Options) *enginetest.Options {
	var o enginetest.Options
	if opts != nil {
		o = *opts
	}
	if f.mem != nil {
		o.HTTPClient = f.mem.Client()
	}
	return &o
}

// dialRaw opens a WebSocket to the server with origin, without a hello.
func (f *fixture) dialRaw(ctx context.Context, origin string) (*websocket.Conn, *http.Response, error) {
	return enginetest.DialRaw(ctx, f.url, f.engineOpts(&enginetest.Options{Origin: origin}))
}

// dialConn opens a connection to the server, for raw bytes.
func (f *fixture) dialConn(ctx context.Context) (net.Conn, error) {
	if f.mem != nil {
		return f.mem.Dial(ctx, "tcp", "")
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(f.port))
}

// client returns an HTTP client that reaches the server.
func (f *fixture) client() *http.Client {
	if f.mem != nil {
		return f.mem.Client()
	}
	return http.DefaultClient
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects a fake engine and waits until the server sees its session.
func (f *fixture) dial(t testing.TB, opts *enginetest.Options) *enginetest.Engine {
	t.Helper()
	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, f.url, f.engineOpts(opts))
	testutil.Success(t, err)
	t.Cleanup(func() { eng.Close() })
	waitSession(t, ctx, f.srv, func(info rpengine.SessionInfo) bool { return info.ID == eng.SessionID() })
	return eng
}

// waitSession waits, bounded by ctx, until the server's live session
// satisfies ok, and returns it.
func waitSession(t testing.TB, ctx context.Context, srv *rpengine.Server, ok func(rpengine.SessionInfo) bool) rpengine.SessionInfo {
	t.Helper()
	for {
		info, err := srv.WaitSession(ctx)
		testutil.Success(t, err)
		if ok(info) {
			return info
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("waiting for a session: the live one is %s: %v", info.ID, ctx.Err())
		}
	}
}

func textReq(c *card.Card, text string) rpengine.ReplyRequest {
	return rpengine.ReplyRequest{IntegrationID: "game", CharacterID: "ari", Card: c, Text: text}
}

func audioReq(c *card.Card, text string) rpengine.ReplyRequest {
	r := textReq(c, text)
	r.Voice = "F1"
	return r
}

// collect consumes every event of r.
func collect(t testing.TB, r *rpengine.Reply) []rpengine.Event {
	t.Helper()
	ctx := ctxT(t)
	var evs []rpengine.Event
	for {
		ev, err := r.Next(ctx)
		if err != nil {
			testutil.Equal(t, "end of events", err.Error(), "EOF")
			return evs
		}
		evs = append(evs, ev)
	}
}
