package rpengine_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/memnet"
	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// upgrade sends a WebSocket upgrade request by hand and returns the status.
func upgrade(t *testing.T, f *fixture, path, host string, origins ...string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), "GET", "http://127.0.0.1:"+strconv.Itoa(f.port)+path, nil)
	testutil.Success(t, err)
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	for _, o := range origins {
		req.Header.Add("Origin", o)
	}
	c := f.client()
	resp, err := c.Do(req)
	testutil.Success(t, err)
	resp.Body.Close()
	c.CloseIdleConnections()
	return resp.StatusCode
}

func TestServer_acceptChecks(t *testing.T) {
	t.Parallel()
	f := newServer(t, &rpengine.ServerOptions{ExtraOrigins: []string{"http://localhost:8080"}})
	dev := newServer(t, &rpengine.ServerOptions{DevelopmentMode: true})
	p := strconv.Itoa(f.port)
	const ok = rpengine.OriginProduction
	tests := []struct {
		name    string
		f       *fixture
		path    string
		host    string
		origins []string
		want    int
		log     string
	}{
		{"production", f, rpengine.SocketPath, "", []string{ok}, 101, ""},
		{"alias", f, rpengine.SocketPath, "", []string{rpengine.OriginAlias}, 101, ""},
		{"extra", f, rpengine.SocketPath, "", []string{"http://localhost:8080"}, 101, ""},
		{"localhost host", f, rpengine.SocketPath, "localhost:" + p, []string{ok}, 101, ""},
		{"dev origin in dev mode", dev, rpengine.SocketPath, "", []string{rpengine.OriginDevelopment}, 101, ""},
		{"dev origin refused", f, rpengine.SocketPath, "", []string{rpengine.OriginDevelopment}, 403, "is not allowed"},
		{"missing origin", f, rpengine.SocketPath, "", nil, 403, "no Origin header"},
		{"null origin", f, rpengine.SocketPath, "", []string{"null"}, 403, `origin \"null\"`},
		{"two origins", f, rpengine.SocketPath, "", []string{ok, ok}, 403, "several Origin"},
		{"look-alike suffix", f, rpengine.SocketPath, "", []string{ok + ".evil.example"}, 403, "evil.example"},
		{"http scheme", f, rpengine.SocketPath, "", []string{"http://rpengine.gemtavern.com"}, 403, "not allowed"},
		{"explicit port", f, rpengine.SocketPath, "", []string{ok + ":443"}, 403, "not allowed"},
		{"trailing slash", f, rpengine.SocketPath, "", []string{ok + "/"}, 403, "not allowed"},
		{"upper case", f, rpengine.SocketPath, "", []string{"https://RPENGINE.gemtavern.com"}, 403, "not allowed"},
		{"other port extra", f, rpengine.SocketPath, "", []string{"http://localhost:8081"}, 403, "not allowed"},
		{"garbage origin", f, rpengine.SocketPath, "", []string{"::not a url"}, 403, "not allowed"},
		{"root path", f, "/", "", []string{ok}, 404, "is not /rp-engine/socket"},
		{"trailing slash path", f, rpengine.SocketPath + "/", "", []string{ok}, 404, "is not"},
		{"escaped path", f, "/rp-engine%2Fsocket", "", []string{ok}, 404, "is not"},
		{"query string", f, rpengine.SocketPath + "?x=1", "", []string{ok}, 101, ""},
		{"foreign host", f, rpengine.SocketPath, "evil.example:" + p, []string{ok}, 403, "evil.example"},
		{"host without port", f, rpengine.SocketPath, "127.0.0.1", []string{ok}, 403, "host"},
		{"host other port", f, rpengine.SocketPath, "127.0.0.1:1", []string{ok}, 403, "host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := upgrade(t, tt.f, tt.path, tt.host, tt.origins...)
			testutil.Equal(t, "status", got, tt.want)
			if tt.log != "" {
				tt.f.log.waitFor(t, tt.log)
			}
		})
	}
}

func TestNewServer_config(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts rpengine.ServerOptions
	}{
		// Issue #17: zero is the default, negative disables where that
		// makes sense and is invalid elsewhere.
		{"negative HandshakeTimeout", rpengine.ServerOptions{HandshakeTimeout: -1}},
		{"negative MaxHandshakes", rpengine.ServerOptions{MaxHandshakes: -1}},
		{"negative MaxPendingAudio", rpengine.ServerOptions{MaxPendingAudio: -time.Second}},
		{"negative DedupWindow", rpengine.ServerOptions{DedupWindow: -1}},
		{"negative Planner.MaxKeys", rpengine.ServerOptions{Planner: &card.PlannerOptions{MaxKeys: -1}}},
		{"negative Planner.MaxBytes", rpengine.ServerOptions{Planner: &card.PlannerOptions{MaxBytes: -1}}},
		{"any address", rpengine.ServerOptions{Addr: "0.0.0.0:38471"}},
		{"empty host", rpengine.ServerOptions{Addr: ":38471"}},
		{"lan", rpengine.ServerOptions{Addr: "192.168.1.2:38471"}},
		{"ipv6 any", rpengine.ServerOptions{Addr: "[::]:38471"}},
		{"no port", rpengine.ServerOptions{Addr: "127.0.0.1"}},
		{"bad port", rpengine.ServerOptions{Addr: "127.0.0.1:99999"}},
		{"origin with path", rpengine.ServerOptions{ExtraOrigins: []string{"https://a.example/x"}}},
		{"origin pattern", rpengine.ServerOptions{ExtraOrigins: []string{"https://*.example"}}},
		{"origin no scheme", rpengine.ServerOptions{ExtraOrigins: []string{"a.example"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := rpengine.NewServer(&tt.opts)
			var ce *rpengine.ConfigError
			testutil.ErrorAs(t, err, &ce)
			if field, _ := strings.CutPrefix(tt.name, "negative "); field != tt.name {
				testutil.Equal(t, "field", ce.Field, field)
			}
		})
	}
	// Issue #17: nothing is bound before Start, so no URL is promised
	// (it used to name the configured port, which Serve might never get).
	s, err := rpengine.NewServer(nil)
	testutil.Success(t, err)
	testutil.Equal(t, "URL before Start", s.URL(), "")
	testutil.Equal(t, "socket URL before Start", s.SocketURL(), "")
}

// Issue #17: Start returns once bound, so the URLs are right at once (the
// README's pattern raced: URL was "" until a goroutine ran Serve), and a
// port in use is an error from Start.
func TestServer_Start(t *testing.T) {
	t.Parallel()
	s, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:0", Logger: discardLogger()})
	testutil.Success(t, err)
	testutil.Success(t, s.Start())
	defer s.Close()
	u, err := url.Parse(s.SocketURL())
	testutil.Success(t, err)
	testutil.Equal(t, "URL names the bound port", s.URL(), "https://rpengine.gemtavern.com/#port="+u.Port())
	ctx := ctxT(t)
	eng, err := enginetest.Dial(ctx, s.SocketURL(), nil) // no wait, no retry
	testutil.Success(t, err)
	defer eng.Close()
	info, err := s.WaitSession(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "session", info.ID, eng.SessionID())
	errContains(t, s.Start(), "already serving")

	busy, err := rpengine.NewServer(&rpengine.ServerOptions{Addr: "127.0.0.1:" + u.Port(), Logger: discardLogger()})
	testutil.Success(t, err)
	err = busy.Start()
	errContains(t, err, "rpengine: start: listen tcp 127.0.0.1:"+u.Port())
	testutil.Success(t, busy.Close())

	testutil.Success(t, s.Close())
	testutil.ErrorIs(t, s.Start(), rpengine.ErrServerClosed)
}

// rawHello is a valid hello with messageId id.
func rawHello(id string) string {
	return `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","clientVersion":"x"}`
}

// closeCode reads from c until it fails and returns the close status.
func closeCode(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx := ctxT(t)
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// Each case runs in a synctest bubble, where the handshake deadline is
// exact and a silent client is cut in no real time.
func TestServer_badHello(t *testing.T) {
	t.Parallel()
	const timeout = 3 * time.Second
	tests := []struct {
		name   string
		send   func(ctx context.Context, c *websocket.Conn) error
		want   websocket.StatusCode
		reason string
	}{
		{"invalid json", text(`{"protocol":`), 1008, "bad hello"},
		{"not an object", text(`[]`), 1008, "bad hello"},
		{"wrong protocol", text(strings.Replace(rawHello("a"), "gemtavern.rp_engine", "other", 1)), 1008, "unsupported protocol"},
		{"wrong version", text(strings.Replace(rawHello("b"), `:3,`, `:2,`, 1)), 1008, "unsupported protocol version"},
		{"no clientVersion", text(strings.Replace(rawHello("c"), `,"clientVersion":"x"`, ``, 1)), 1008, "without clientVersion"},
		{"ack first", text(strings.Replace(rawHello("d"), `"hello"`, `"ack"`, 1)), 1008, `first message is \"ack\"`},
		{"binary", func(ctx context.Context, c *websocket.Conn) error {
			return c.Write(ctx, websocket.MessageBinary, []byte(rawHello("e")))
		}, 1003, "binary frame"},
		{"silence", func(context.Context, *websocket.Conn) error { return nil }, -1, "no hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newServer(t, &rpengine.ServerOptions{HandshakeTimeout: timeout})
				ctx := ctxT(t)
				c, _, err := f.dialRaw(ctx, rpengine.OriginProduction)
				testutil.Success(t, err)
				defer c.CloseNow()
				start := time.Now()
				testutil.Success(t, tt.send(ctx, c))
				testutil.Equal(t, "close code", closeCode(t, c), tt.want)
				if tt.want == -1 {
					testutil.Equal(t, "cut after", time.Since(start), timeout)
				}
				f.log.waitFor(t, tt.reason)
				_, live := f.srv.Session()
				testutil.Equal(t, "no session", live, false)
				quietConns(t, f, 0)
			})
		})
	}
}

func text(s string) func(ctx context.Context, c *websocket.Conn) error {
	return func(ctx context.Context, c *websocket.Conn) error {
		return c.Write(ctx, websocket.MessageText, []byte(s))
	}
}

// handshake dials, sends hello and returns the connection after welcome.
func handshake(t *testing.T, f *fixture) (*websocket.Conn, string) {
	t.Helper()
	ctx := ctxT(t)
	c, _, err := f.dialRaw(ctx, rpengine.OriginProduction)
	testutil.Success(t, err)
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(-1)
	testutil.Success(t, c.Write(ctx, websocket.MessageText, []byte(rawHello("h1"))))
	for {
		_, data, err := c.Read(ctx)
		testutil.Success(t, err)
		if strings.Contains(string(data), `"type":"welcome"`) {
			i := strings.Index(string(data), `"sessionId":"`) + len(`"sessionId":"`)
			return c, string(data[i : i+36])
		}
	}
}

func TestServer_afterHello(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		send   func(ctx context.Context, c *websocket.Conn) error
		want   websocket.StatusCode
		reason string
	}{
		{"second hello", text(rawHello("h2")), 1008, "second hello"},
		{"binary", func(ctx context.Context, c *websocket.Conn) error {
			return c.Write(ctx, websocket.MessageBinary, []byte("x"))
		}, 1003, "binary frame"},
		{"over 8 MiB", func(ctx context.Context, c *websocket.Conn) error {
			return c.Write(ctx, websocket.MessageText, []byte(`{"x":"`+strings.Repeat("a", 8<<20)+`"}`))
		}, 1009, "message over 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newServer(t, nil)
			c, _ := handshake(t, f)
			ctx := ctxT(t)
			_ = tt.send(ctx, c)
			testutil.Equal(t, "close code", closeCode(t, c), tt.want)
			f.log.waitFor(t, tt.reason)
		})
	}
}

func TestServer_exactly8MiB(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	c, _ := handshake(t, f)
	ctx := ctxT(t)
	// A message of exactly 8 MiB is read (and dropped as not an envelope)
	// without closing the connection.
	msg := []byte(`{"x":"` + strings.Repeat("a", 8<<20-8) + `"}`)
	testutil.Equal(t, "size", len(msg), 8<<20)
	testutil.Success(t, c.Write(ctx, websocket.MessageText, msg))
	f.log.waitFor(t, "dropped engine message")
	_, live := f.srv.Session()
	testutil.Equal(t, "still live", live, true)
}

func TestServer_droppedInbound(t *testing.T) {
	t.Parallel()
	f := newServer(t, nil)
	c, sid := handshake(t, f)
	readAcks(t, c)
	ctx := ctxT(t)
	send := func(s string) { testutil.Success(t, c.Write(ctx, websocket.MessageText, []byte(s))) }
	send(`not json`)
	f.log.waitFor(t, "not a JSON object")
	send(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"capacity.update","messageId":"m1","sessionId":"other","timestamp":"t","queueDepth":0,"queueLimit":20,"acceptingRequests":false}`)
	f.log.waitFor(t, "another session")
	cp, _ := f.srv.Capacity()
	testutil.Equal(t, "capacity unchanged", cp.Known, false)
	send(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"future.thing","messageId":"m2","sessionId":"` + sid + `","timestamp":"t"}`)
	f.log.waitFor(t, "future.thing")
	// A message without sessionId is accepted.
	send(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"capacity.update","messageId":"m3","timestamp":"t","queueDepth":3,"queueLimit":20,"acceptingRequests":true}`)
	for {
		if cp, _ := f.srv.Capacity(); cp.Known {
			testutil.Equal(t, "depth", cp.QueueDepth, 3)
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, live := f.srv.Session()
	testutil.Equal(t, "still live", live, true)
	_ = errors.New
}

// errContains fails unless err's text contains sub.
func errContains(t *testing.T, err error, sub string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		t.Fatalf("error %v, want one containing %q", err, sub)
	}
}

// Issue #17: Serve takes an in-memory listener (as enginetest's in-memory
// mode and a game's own tests use), and a session starts over it inside
// testing/synctest: no port, no real time.
func TestServer_Serve_inMemory(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger()})
		testutil.Success(t, err)
		l := memnet.NewListener("127.0.0.1:38471")
		done := make(chan error, 1)
		go func() { done <- s.Serve(l) }()
		synctest.Wait()
		testutil.Equal(t, "socket URL", s.SocketURL(), "ws://127.0.0.1:38471/rp-engine/socket")
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, s.SocketURL(), &websocket.DialOptions{HTTPClient: l.Client(),
			HTTPHeader: http.Header{"Origin": {rpengine.OriginProduction}}})
		testutil.Success(t, err)
		defer c.CloseNow()
		testutil.Success(t, c.Write(ctx, websocket.MessageText, []byte(rawHello("h1"))))
		for { // the ack of hello, then welcome: a pipe has no buffer
			_, data, err := c.Read(ctx)
			testutil.Success(t, err)
			if strings.Contains(string(data), `"type":"welcome"`) {
				break
			}
		}
		info, err := s.WaitSession(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "client version", info.ClientVersion, "x")
		testutil.Success(t, s.Close())
		testutil.ErrorIs(t, <-done, rpengine.ErrServerClosed)

		other, err := rpengine.NewServer(&rpengine.ServerOptions{Logger: discardLogger()})
		testutil.Success(t, err)
		var ce *rpengine.ConfigError
		testutil.ErrorAs(t, other.Serve(memnet.NewListener("10.0.0.1:38471")), &ce)
	})
}

// Issue #17: a negative WriteTimeout disables the bound, as negative
// AckTimeout and IdleTimeout do; it used to close every connection at
// once ("write timed out after -1ns").
func TestServer_negativeTimeoutsDisable(t *testing.T) {
	t.Parallel()
	f := newServer(t, &rpengine.ServerOptions{WriteTimeout: -1, AckTimeout: -1, IdleTimeout: -1})
	f.dial(t, nil)
	ctx := ctxT(t)
	r, err := f.srv.Reply(ctx, textReq(testCard(t), "hello"))
	testutil.Success(t, err)
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, "I hear you. You said: hello")
	if strings.Contains(f.log.String(), "write timed out") {
		t.Errorf("a write timed out:\n%s", f.log.String())
	}
}
