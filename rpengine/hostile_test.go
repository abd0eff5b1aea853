package rpengine_test

// Hostile clients against a running server (issue #9). Each case asserts
// the exact outcome: HTTP status or WebSocket close code, the log line
// saying why, and that the server stays healthy with the live engine
// session untouched (or, where the hostile client is itself the session,
// that a new engine can connect and get a reply). It runs in memory, the
// cases that wait for a deadline inside testing/synctest bubbles, and
// each case checks that the server closed every connection it gave up
// (countingListener), as the suite counted the process's descriptors when
// it ran over TCP.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/gamelink-go/gamelink/rpengine/enginetest"
)

// hostileCases counts the hostile cases run and passed, for the figures.
var hostileCases atomic.Int64

// rawRequest writes req on a new connection to f and returns the
// response status and whether the server then closed the connection.
func rawRequest(t *testing.T, f *fixture, req string) (int, bool) {
	t.Helper()
	c, err := f.dialConn(ctxT(t))
	testutil.Success(t, err)
	defer c.Close()
	testutil.Success(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	// Written while the response is read: a server that answers before
	// reading the whole request (431) stops reading, and an in-memory
	// connection has no buffer to take the rest.
	go c.Write([]byte(req))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	testutil.Success(t, err)
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = br.ReadByte() // the server must close the connection
	return resp.StatusCode, err != nil
}

// upgradeReq builds an upgrade request; hdr holds extra header lines.
func upgradeReq(target, host string, hdr ...string) string {
	var b strings.Builder
	b.WriteString("GET " + target + " HTTP/1.1\r\n")
	if host != "" {
		b.WriteString("Host: " + host + "\r\n")
	}
	b.WriteString("Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
	for _, h := range hdr {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// healthy checks that eng is still the live session and gets a reply.
func healthy(t *testing.T, f *fixture, eng *enginetest.Engine) {
	t.Helper()
	info, ok := f.srv.Session()
	if !ok || info.ID != eng.SessionID() {
		t.Fatalf("live session changed: %+v (engine %s)", info, eng.SessionID())
	}
	ctx := ctxT(t)
	r, err := f.srv.Reply(ctx, textReq(testCard(t), "still there?"))
	testutil.Success(t, err)
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "reply", res.Text, "I hear you. You said: still there?")
}

// newHealthy checks that a new engine can connect and get a reply (after a
// case whose hostile client was itself the session).
func newHealthy(t *testing.T, f *fixture) {
	t.Helper()
	eng := f.dial(t, nil)
	healthy(t, f, eng)
	eng.Close()
}

func TestHostile(t *testing.T) {
	t.Parallel()
	t.Run("group", func(t *testing.T) {
		t.Run("http", func(t *testing.T) { t.Parallel(); testHostileHTTP(t) })
		t.Run("preHello", func(t *testing.T) { t.Parallel(); testHostilePreHello(t) })
		t.Run("postHello", func(t *testing.T) { t.Parallel(); testHostilePostHello(t) })
		t.Run("flood", func(t *testing.T) { t.Parallel(); testHostileFlood(t) })
		t.Run("slowLoris", func(t *testing.T) { t.Parallel(); synctest.Test(t, testHostileSlowLoris) })
		t.Run("concurrentAttempts", func(t *testing.T) { t.Parallel(); testHostileConcurrent(t) })
		t.Run("sessions", func(t *testing.T) { t.Parallel(); testHostileSessions(t) })
	})
	t.Logf("hostile cases passed: %d", hostileCases.Load())
}

// testHostileHTTP: origin, path, Host and non-WebSocket requests, refused
// before any upgrade, each with its status, log line and Connection: close.
func testHostileHTTP(t *testing.T) {
	f := newServer(t, &rpengine.ServerOptions{ExtraOrigins: []string{"http://localhost:8080"}})
	dev := newServer(t, &rpengine.ServerOptions{DevelopmentMode: true})
	eng := f.dial(t, nil)
	devEng := dev.dial(t, nil)
	host := "127.0.0.1:" + strconv.Itoa(f.port)
	devHost := "127.0.0.1:" + strconv.Itoa(dev.port)
	const okO = "Origin: " + rpengine.OriginProduction
	type tc struct {
		name   string
		dev    bool // against the development-mode server
		req    func(host string) string
		status int
		log    string // "" for a refusal net/http makes before our handler
	}
	up := func(target string, hdr ...string) func(string) string {
		return func(host string) string { return upgradeReq(target, host, hdr...) }
	}
	sp := rpengine.SocketPath
	tests := []tc{
		// Origins.
		{"wrong origin", false, up(sp, "Origin: https://evil.example"), 403, `origin \"https://evil.example\" is not allowed`},
		{"missing origin", false, up(sp), 403, "no Origin header"},
		{"null origin", false, up(sp, "Origin: null"), 403, `origin \"null\" is not allowed`},
		{"empty origin", false, up(sp, "Origin: "), 403, `origin \"\" is not allowed`},
		{"look-alike suffix", false, up(sp, "Origin: https://rpengine.gemtavern.com.evil.example"), 403, `origin \"https://rpengine.gemtavern.com.evil.example\"`},
		{"look-alike prefix", false, up(sp, "Origin: https://evilrpengine.gemtavern.com"), 403, `origin \"https://evilrpengine.gemtavern.com\"`},
		{"look-alike subdomain", false, up(sp, "Origin: https://x.rpengine.gemtavern.com"), 403, `origin \"https://x.rpengine.gemtavern.com\"`},
		{"http not https", false, up(sp, "Origin: http://rpengine.gemtavern.com"), 403, `origin \"http://rpengine.gemtavern.com\"`},
		{"wss scheme", false, up(sp, "Origin: wss://rpengine.gemtavern.com"), 403, `origin \"wss://rpengine.gemtavern.com\"`},
		{"explicit 443", false, up(sp, "Origin: https://rpengine.gemtavern.com:443"), 403, `gemtavern.com:443\"`},
		{"other port", false, up(sp, "Origin: https://rpengine.gemtavern.com:8443"), 403, `gemtavern.com:8443\"`},
		{"trailing slash", false, up(sp, "Origin: https://rpengine.gemtavern.com/"), 403, `gemtavern.com/\"`},
		{"upper case", false, up(sp, "Origin: https://RPENGINE.gemtavern.com"), 403, `https://RPENGINE.gemtavern.com`},
		{"user info", false, up(sp, "Origin: https://a@rpengine.gemtavern.com"), 403, `https://a@rpengine`},
		{"two origins", false, up(sp, okO, okO), 403, "several Origin headers"},
		{"origin list", false, up(sp, "Origin: https://rpengine.gemtavern.com https://evil.example"), 403, `is not allowed`},
		{"dev origin, dev mode off", false, up(sp, "Origin: "+rpengine.OriginDevelopment), 403, `origin \"http://127.0.0.1:5173\" is not allowed`},
		{"dev host localhost", true, up(sp, "Origin: http://localhost:5173"), 403, `origin \"http://localhost:5173\"`},
		{"dev https", true, up(sp, "Origin: https://127.0.0.1:5173"), 403, `origin \"https://127.0.0.1:5173\"`},
		{"dev other port", true, up(sp, "Origin: http://127.0.0.1:5174"), 403, `origin \"http://127.0.0.1:5174\"`},
		{"extra origin other port", false, up(sp, "Origin: http://localhost:8081"), 403, `origin \"http://localhost:8081\"`},
		{"extra origin https", false, up(sp, "Origin: https://localhost:8080"), 403, `origin \"https://localhost:8080\"`},
		// Paths.
		{"root path", false, up("/", okO), 404, `path \"/\" is not /rp-engine/socket`},
		{"trailing slash path", false, up(sp+"/", okO), 404, `path \"/rp-engine/socket/\"`},
		{"escaped slash", false, up("/rp-engine%2Fsocket", okO), 404, `path \"/rp-engine/socket\" is not`},
		{"escaped letter", false, up("/rp-engine/s%6Fcket", okO), 404, `path \"/rp-engine/socket\" is not`},
		{"double slash", false, up("/"+sp, okO), 404, `path \"//rp-engine/socket\"`},
		{"dot segment", false, up("/rp-engine/./socket", okO), 404, `path \"/rp-engine/./socket\"`},
		{"dot-dot segment", false, up("/x/.."+sp, okO), 404, `path \"/x/../rp-engine/socket\"`},
		{"upper case path", false, up("/RP-ENGINE/SOCKET", okO), 404, `path \"/RP-ENGINE/SOCKET\"`},
		{"path prefix", false, up(sp+"x", okO), 404, `path \"/rp-engine/socketx\"`},
		{"absolute form, foreign host", false, up("http://evil.example"+sp, okO), 403, `host \"evil.example\"`},
		// Hosts (DNS rebinding).
		{"foreign host", false, func(string) string { return upgradeReq(sp, "evil.example:"+strconv.Itoa(f.port), okO) }, 403, `host \"evil.example:`},
		{"host without port", false, func(string) string { return upgradeReq(sp, "127.0.0.1", okO) }, 403, `host \"127.0.0.1\"`},
		{"host other port", false, func(string) string { return upgradeReq(sp, "127.0.0.1:1", okO) }, 403, `host \"127.0.0.1:1\"`},
		{"host other loopback", false, func(string) string { return upgradeReq(sp, "127.0.0.2:"+strconv.Itoa(f.port), okO) }, 403, `host \"127.0.0.2:`},
		{"host ipv6 loopback", false, func(string) string { return upgradeReq(sp, "[::1]:"+strconv.Itoa(f.port), okO) }, 403, `host \"[::1]:`},
		{"host localhost look-alike", false, func(string) string {
			return upgradeReq(sp, "localhost.evil.example:"+strconv.Itoa(f.port), okO)
		}, 403, `host \"localhost.evil.example:`},
		{"host upper case", false, func(string) string { return upgradeReq(sp, "LOCALHOST:"+strconv.Itoa(f.port), okO) }, 403, `host \"LOCALHOST:`},
		{"host missing", false, func(string) string { return upgradeReq(sp, "", okO) }, 400, ""},
		{"two hosts", false, func(h string) string { return upgradeReq(sp, h, okO, "Host: evil.example") }, 400, ""},
		// Not WebSocket.
		{"plain GET", false, func(h string) string {
			return "GET " + sp + " HTTP/1.1\r\nHost: " + h + "\r\n" + okO + "\r\n\r\n"
		}, 426, "upgrade failed"},
		{"POST upgrade", false, func(h string) string {
			return strings.Replace(upgradeReq(sp, h, okO, "Content-Length: 0"), "GET", "POST", 1)
		}, 405, "upgrade failed"},
		{"old WebSocket version", false, func(h string) string {
			return strings.Replace(upgradeReq(sp, h, okO), "Version: 13", "Version: 8", 1)
		}, 400, "upgrade failed"},
		{"HTTP/1.0", false, func(h string) string {
			return strings.Replace(upgradeReq(sp, h, okO), "HTTP/1.1", "HTTP/1.0", 1)
		}, 426, "upgrade failed"},
		{"no key", false, func(h string) string {
			return strings.Replace(upgradeReq(sp, h, okO), "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "", 1)
		}, 400, "upgrade failed"},
		{"garbage request", false, func(string) string { return "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n" }, 400, ""},
		{"header over 64 KiB", false, func(h string) string {
			return upgradeReq(sp, h, okO, "Cookie: a="+strings.Repeat("x", 80<<10))
		}, 431, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx, h := f, host
			if tt.dev {
				fx, h = dev, devHost
			}
			mark := len(fx.log.String())
			status, closed := rawRequest(t, fx, tt.req(h))
			testutil.Equal(t, "status", status, tt.status)
			testutil.Equal(t, "connection closed after refusal", closed, true)
			if tt.log != "" {
				fx.log.waitSince(t, mark, tt.log)
			}
			hostileCases.Add(1)
		})
	}
	// The accepted forms still work, so the refusals are not blanket.
	accepted := []struct {
		name string
		fx   *fixture
		req  string
	}{
		{"production", f, upgradeReq(sp, host, okO)},
		{"alias", f, upgradeReq(sp, host, "Origin: "+rpengine.OriginAlias)},
		{"extra", f, upgradeReq(sp, host, "Origin: http://localhost:8080")},
		{"localhost host", f, upgradeReq(sp, "localhost:"+strconv.Itoa(f.port), okO)},
		{"cookies of 32 KiB", f, upgradeReq(sp, host, okO, "Cookie: a="+strings.Repeat("x", 32<<10))},
		{"query string", f, upgradeReq(sp+"?port=1&x=%2F", host, okO)},
		{"dev origin in dev mode", dev, upgradeReq(sp, devHost, "Origin: "+rpengine.OriginDevelopment)},
	}
	for _, tt := range accepted {
		status, _ := rawRequest(t, tt.fx, tt.req)
		testutil.Equal(t, tt.name, status, http.StatusSwitchingProtocols)
	}
	healthy(t, f, eng)
	healthy(t, dev, devEng)
	waitConns(t, f, 1)
	waitConns(t, dev, 1)
}

// dialHostile opens a WebSocket with the production origin.
func dialHostile(t *testing.T, f *fixture) *websocket.Conn {
	t.Helper()
	c, _, err := f.dialRaw(ctxT(t), rpengine.OriginProduction)
	testutil.Success(t, err)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// deepJSON is an envelope with a value nested n arrays deep.
func deepJSON(n int) []byte {
	return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"deep","timestamp":"t","clientVersion":"x","x":` +
		strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
}

// sized is a JSON object of exactly n bytes.
func sized(n int) []byte {
	return []byte(`{"x":"` + strings.Repeat("a", n-8) + `"}`)
}

func binaryMsg(b []byte) func(ctx context.Context, c *websocket.Conn) error {
	return func(ctx context.Context, c *websocket.Conn) error { return c.Write(ctx, websocket.MessageBinary, b) }
}

func textMsg(b []byte) func(ctx context.Context, c *websocket.Conn) error {
	return func(ctx context.Context, c *websocket.Conn) error { return c.Write(ctx, websocket.MessageText, b) }
}

// testHostilePreHello: sockets that pass the origin check but never make
// a valid hello. The live session is never disturbed.
func testHostilePreHello(t *testing.T) {
	env := func(typ string) string {
		return strings.Replace(rawHello("pre-"+typ), `"type":"hello"`, `"type":"`+typ+`"`, 1)
	}
	tests := []struct {
		name string
		send func(ctx context.Context, c *websocket.Conn) error
		want websocket.StatusCode
		log  string
	}{
		{"hello never sent", func(context.Context, *websocket.Conn) error { return nil }, -1, "no hello: "},
		{"binary hello", binaryMsg([]byte(rawHello("b"))), websocket.StatusUnsupportedData, "binary frame"},
		{"invalid UTF-8", textMsg([]byte(strings.Replace(rawHello("u"), `"x"`, "\"\xff\xfe\"", 1))), websocket.StatusInvalidFramePayloadData, "invalid UTF-8"},
		{"invalid JSON", textMsg([]byte(`{"protocol":"gemtavern.rp_engine",`)), websocket.StatusPolicyViolation, "bad hello: not a JSON object"},
		{"JSON nested 100k deep", textMsg(deepJSON(100000)), websocket.StatusPolicyViolation, "exceeded max depth"},
		{"empty message", textMsg(nil), websocket.StatusPolicyViolation, "bad hello: not a JSON object"},
		{"JSON null", textMsg([]byte(`null`)), websocket.StatusPolicyViolation, "bad hello: not a JSON object"},
		{"message before hello", textMsg([]byte(env("capacity.update"))), websocket.StatusPolicyViolation, `first message is \"capacity.update\", not hello`},
		{"ack before hello", textMsg([]byte(env("ack"))), websocket.StatusPolicyViolation, `first message is \"ack\"`},
		{"wrong protocol", textMsg([]byte(strings.Replace(rawHello("p"), "gemtavern.rp_engine", "gemtavern.rp_engine2", 1))), websocket.StatusPolicyViolation, `unsupported protocol: \"gemtavern.rp_engine2\"`},
		{"version 2", textMsg([]byte(strings.Replace(rawHello("v"), `:3,`, `:2,`, 1))), websocket.StatusPolicyViolation, "unsupported protocol version: 2"},
		{"version 4", textMsg([]byte(strings.Replace(rawHello("v"), `:3,`, `:4,`, 1))), websocket.StatusPolicyViolation, "unsupported protocol version: 4"},
		{"version 3.0", textMsg([]byte(strings.Replace(rawHello("v"), `:3,`, `:3.0,`, 1))), websocket.StatusPolicyViolation, "unsupported protocol version: 3.0"},
		{"version string", textMsg([]byte(strings.Replace(rawHello("v"), `:3,`, `:"3",`, 1))), websocket.StatusPolicyViolation, `unsupported protocol version: \"3\"`},
		{"no messageId", textMsg([]byte(strings.Replace(rawHello("x"), `"messageId":"x",`, ``, 1))), websocket.StatusPolicyViolation, "missing required envelope field: messageId"},
		{"clientVersion number", textMsg([]byte(strings.Replace(rawHello("n"), `"clientVersion":"x"`, `"clientVersion":1`, 1))), websocket.StatusPolicyViolation, "bad hello: hello:"},
		{"exactly 8 MiB hello", textMsg(sized(8 << 20)), websocket.StatusPolicyViolation, "bad hello: unsupported protocol"},
		{"8 MiB + 1 hello", textMsg(sized(8<<20 + 1)), websocket.StatusMessageTooBig, "hello over 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				// In the bubble the deadline passes only while everything
				// waits: reading 8 MiB takes none of it.
				f := newServer(t, &rpengine.ServerOptions{HandshakeTimeout: 10 * time.Second})
				eng := f.dial(t, nil)
				mark := len(f.log.String())
				c := dialHostile(t, f)
				ctx := ctxT(t)
				start := time.Now()
				_ = tt.send(ctx, c) // may fail when the server closes first
				testutil.Equal(t, "close code", closeCode(t, c), tt.want)
				if d := time.Since(start); tt.want == -1 && d != 10*time.Second {
					t.Errorf("cut after %v, want the handshake deadline of 10s", d)
				}
				f.log.waitSince(t, mark, tt.log)
				info, _ := f.srv.Session()
				testutil.Equal(t, "live session untouched", info.ID, eng.SessionID())
				healthy(t, f, eng)
				quietConns(t, f, 1)
				hostileCases.Add(1)
			})
		})
	}
}

// testHostilePostHello: a client that completes hello (so it is the live
// session) and then misbehaves. Outcome: its close code or the dropped
// message with its log line; the server then serves a new engine.
func testHostilePostHello(t *testing.T) {
	env := func(id, sid, typ, rest string) []byte {
		s := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"` + typ + `","messageId":"` + id + `","timestamp":"t"`
		if sid != "" {
			s += `,"sessionId":"` + sid + `"`
		}
		return []byte(s + rest + `}`)
	}
	closes := []struct {
		name string
		send func(ctx context.Context, c *websocket.Conn) error
		want websocket.StatusCode
		log  string
	}{
		{"binary frame", binaryMsg([]byte("x")), websocket.StatusUnsupportedData, "binary frame"},
		{"invalid UTF-8", textMsg([]byte("{\"x\":\"\xc3\x28\"}")), websocket.StatusInvalidFramePayloadData, "invalid UTF-8"},
		{"second hello", textMsg([]byte(rawHello("h2"))), websocket.StatusPolicyViolation, "second hello"},
		{"8 MiB + 1", textMsg(sized(8<<20 + 1)), websocket.StatusMessageTooBig, "message over 8 MiB"},
	}
	for _, tt := range closes {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newServer(t, nil)
				c, _ := handshake(t, f)
				mark := len(f.log.String())
				_ = tt.send(ctxT(t), c)
				testutil.Equal(t, "close code", closeCode(t, c), tt.want)
				f.log.waitSince(t, mark, tt.log)
				newHealthy(t, f)
				quietConns(t, f, 0)
				hostileCases.Add(1)
			})
		})
	}
	// An engine that never reads: the game's writes time out, the
	// connection is closed with a log line, every pending request ends
	// with ErrConnectionLost, and a new engine is served.
	t.Run("engine never reads", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newServer(t, &rpengine.ServerOptions{WriteTimeout: 300 * time.Millisecond})
			c, _ := handshake(t, f)
			defer c.CloseNow()
			mark := len(f.log.String())
			big := testCard(t, `"description":"A fox."`, `"description":"`+strings.Repeat("x", 3<<20)+`"`)
			ctx := ctxT(t)
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// One character each: requests for one character wait for
					// the engine to accept the previous one (issue #15), and
					// these must all be written at once.
					req := textReq(big, "are you there?")
					req.CharacterID = fmt.Sprint("ari", i)
					r, err := f.srv.Reply(ctx, req)
					if err == nil {
						_, err = r.Wait(ctx)
					}
					if !errors.Is(err, rpengine.ErrConnectionLost) {
						t.Errorf("request ended with %v, want ErrConnectionLost", err)
					}
				}()
			}
			wg.Wait()
			f.log.waitSince(t, mark, "the engine is not reading")
			newHealthy(t, f)
			c.CloseNow()
			quietConns(t, f, 0)
			hostileCases.Add(1)
		})
	})
	// Dropped without closing: each is logged and never acked, and the
	// connection keeps working (a valid message after it is acked).
	f := newServer(t, nil)
	c, sid := handshake(t, f)
	acks := readAcks(t, c)
	drops := []struct {
		name string
		msg  []byte
		log  string
	}{
		{"invalid JSON", []byte(`{"protocol":`), "not a JSON object"},
		{"JSON nested 100k deep", []byte(`{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`), "exceeded max depth"},
		{"exactly 8 MiB", sized(8 << 20), "unsupported protocol"},
		{"wrong protocol", bytesReplace(env("m1", sid, "capacity.update", ""), "gemtavern.rp_engine", "rp_engine"), `unsupported protocol: \"rp_engine\"`},
		{"wrong version", bytesReplace(env("m2", sid, "capacity.update", ""), ":3,", ":2,"), "unsupported protocol version: 2"},
		{"no messageId", bytesReplace(env("m3", sid, "capacity.update", ""), `"messageId":"m3",`, ""), "missing required envelope field: messageId"},
		{"wrong sessionId", env("m4", "not-"+sid, "capacity.update", `,"queueDepth":1,"queueLimit":20,"acceptingRequests":false`), "another session"},
		{"malformed capacity", env("m5", sid, "capacity.update", `,"queueDepth":"many"`), "dropped malformed engine message"},
		{"malformed ack", env("m6", sid, "ack", `,"acknowledgedMessageId":7`), "dropped malformed engine message"},
		{"malformed error", env("m7", sid, "request.error", `,"code":{}`), "dropped malformed engine message"},
		{"unknown type", env("m8", sid, "future.kind", ``), "type=future.kind"},
		{"reply message for nobody", env("m9", sid, "reply.text.delta", `,"requestId":"nobody","sequence":0,"delta":"x"`), "engine message for no pending request"},
		{"synced for nobody", env("m10", sid, "character.synced", `,"sourceMessageId":"nobody","targetHash":"x"`), "character.synced for no pending sync"},
		{"error for nobody", env("m11", sid, "request.error", `,"requestId":"nobody","sourceMessageId":"nobody","code":"x","message":"y"`), "engine error for no pending request"},
	}
	for _, tt := range drops {
		t.Run(tt.name, func(t *testing.T) {
			mark := len(f.log.String())
			testutil.Success(t, c.Write(ctxT(t), websocket.MessageText, tt.msg))
			f.log.waitSince(t, mark, tt.log)
			hostileCases.Add(1)
		})
	}
	// Still the same live session, still answered.
	id := "after-drops"
	testutil.Success(t, c.Write(ctxT(t), websocket.MessageText, env(id, sid, "future.kind", "")))
	got := acks.wait(t, id)
	testutil.Equal(t, "not a duplicate", got, false)
	for _, m := range []string{"m1", "m2", "m3", "m4", "m5x"} {
		if acks.has(m) {
			t.Errorf("refused message %s was acked", m)
		}
	}
	cp, _ := f.srv.Capacity()
	testutil.Equal(t, "capacity untouched by refused messages", cp.Known, false)
	info, _ := f.srv.Session()
	testutil.Equal(t, "same session", info.ID, sid)
	waitConns(t, f, 1)
}

func bytesReplace(b []byte, old, new string) []byte {
	return []byte(strings.Replace(string(b), old, new, 1))
}

// ackReader collects the server's acks on a raw connection.
type ackReader struct {
	mu    sync.Mutex
	acks  map[string]bool // acknowledgedMessageId -> duplicate
	count int
	ch    chan struct{}
	done  chan struct{}
	code  websocket.StatusCode // close status once done
}

func readAcks(t *testing.T, c *websocket.Conn) *ackReader {
	a := &ackReader{acks: map[string]bool{}, ch: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				a.code = websocket.CloseStatus(err)
				return
			}
			var m struct {
				Type string `json:"type"`
				ID   string `json:"acknowledgedMessageId"`
				Dup  bool   `json:"duplicate"`
			}
			if json.Unmarshal(data, &m) != nil || m.Type != "ack" {
				continue
			}
			a.mu.Lock()
			a.acks[m.ID] = a.acks[m.ID] || m.Dup
			a.count++
			a.mu.Unlock()
			select {
			case a.ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { c.CloseNow(); <-a.done })
	return a
}

func (a *ackReader) has(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.acks[id]
	return ok
}

// wait waits for the ack of id and returns its duplicate flag.
func (a *ackReader) wait(t *testing.T, id string) bool {
	t.Helper()
	ctx := ctxT(t)
	for {
		a.mu.Lock()
		dup, ok := a.acks[id]
		a.mu.Unlock()
		if ok {
			return dup
		}
		select {
		case <-a.ch:
		case <-ctx.Done():
			t.Fatalf("no ack of %s", id)
		}
	}
}

// waitCount waits, bounded by ctx, until n acks came.
func (a *ackReader) waitCount(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	for {
		a.mu.Lock()
		got := a.count
		a.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-a.ch:
		case <-ctx.Done():
			t.Fatalf("got %d acks, want %d", got, n)
		}
	}
}

// testHostileFlood: 100k small messages as fast as the client can write,
// first all distinct, then all one messageId. Every one is acked exactly
// once (duplicates as duplicates), and the server stays healthy.
func testHostileFlood(t *testing.T) {
	lb := &logBuf{}
	// Over TCP: a socket's buffers let the client write ahead of the
	// server, where an in-memory pipe would make each message wait for
	// the server to read it (twice as slow).
	f := newTCPServer(t, &rpengine.ServerOptions{Logger: slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	c, sid := handshake(t, f)
	acks := readAcks(t, c)
	n := 100000
	if testutil.RaceEnabled || testing.Short() {
		// The race detector makes each round trip ~10x slower, and so
		// does emulation (-short in .ci/run's wine and qemu runs).
		n = 10000
	}
	t.Logf("flooding %d messages", n)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prefix := `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"future.kind","sessionId":"` + sid + `","timestamp":"t","messageId":"`
	buf := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		id := "f" + strconv.Itoa(i)
		if i >= n/2 {
			id = "same" // the second half floods one id
		}
		buf = append(append(append(buf[:0], prefix...), id...), `"}`...)
		testutil.Success(t, c.Write(ctx, websocket.MessageText, buf))
	}
	acks.waitCount(ctx, t, n) // as long as the writes may take
	acks.mu.Lock()
	distinct, dupSame := len(acks.acks), acks.acks["same"]
	acks.mu.Unlock()
	testutil.Equal(t, "acked ids", distinct, n/2+1)
	testutil.Equal(t, "repeats acked as duplicates", dupSame, true)
	if strings.Count(lb.String(), "level=WARN") != 0 {
		t.Errorf("valid flood logged warnings:\n%.2000s", lb.String())
	}
	info, _ := f.srv.Session()
	testutil.Equal(t, "same session", info.ID, sid)
	hostileCases.Add(1)
	c.CloseNow()
	newHealthy(t, f)
	waitConns(t, f, 0)
}

// testHostileSlowLoris: clients that open connections and dribble. Each
// is cut at HandshakeTimeout, and the live session is never disturbed.
// Run in a synctest bubble: the dribbling and the deadlines are in fake
// time.
func testHostileSlowLoris(t *testing.T) {
	const timeout = 400 * time.Millisecond
	f := newServer(t, &rpengine.ServerOptions{HandshakeTimeout: timeout, MaxHandshakes: 4})
	eng := f.dial(t, nil)
	addr := "127.0.0.1:" + strconv.Itoa(f.port)
	// HTTP headers one byte at a time: cut by the header timeout.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := f.dialConn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			req := upgradeReq(rpengine.SocketPath, addr, "Origin: "+rpengine.OriginProduction)
			start := time.Now()
			for j := 0; j < len(req); j++ {
				if _, err := c.Write([]byte{req[j]}); err != nil {
					break // cut
				}
				time.Sleep(50 * time.Millisecond)
				if time.Since(start) > 20*time.Second {
					errs <- errors.New("slow header never cut")
					return
				}
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, _ := bufio.NewReader(c).ReadString('\n')
			if strings.Contains(b, "101") {
				errs <- fmt.Errorf("slow header was upgraded: %q", b)
			}
		}()
	}
	// Upgraded sockets that never say hello: the first MaxHandshakes are
	// held until the timeout, the rest refused with 503 at once.
	var held []*websocket.Conn
	var refused int
	for i := 0; i < 8; i++ {
		c, resp, err := f.dialRaw(ctxT(t), rpengine.OriginProduction)
		if err != nil {
			testutil.Equal(t, "refusal status", resp.StatusCode, http.StatusServiceUnavailable)
			refused++
			continue
		}
		held = append(held, c)
	}
	if len(held) > 4 || refused < 4 {
		t.Errorf("%d held, %d refused; MaxHandshakes is 4", len(held), refused)
	}
	f.log.waitFor(t, "already waiting to say hello")
	healthy(t, f, eng) // the live session works meanwhile
	for _, c := range held {
		testutil.Equal(t, "held socket cut", closeCode(t, c), websocket.StatusCode(-1))
		c.CloseNow()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.log.waitFor(t, "no hello: ")
	// After the cut, new sockets get slots again.
	c, _, err := f.dialRaw(ctxT(t), rpengine.OriginProduction)
	testutil.Success(t, err)
	c.CloseNow()
	healthy(t, f, eng)
	quietConns(t, f, 1)
	hostileCases.Add(3)
}

// testHostileConcurrent: 1000 connection attempts at once, half with a
// bad origin. Bad ones get 403, good ones beyond MaxHandshakes get 503,
// none disturbs the live session, and every socket is released.
func testHostileConcurrent(t *testing.T) {
	// Slots must not free up by timeout while the attempts run.
	f := newServer(t, &rpengine.ServerOptions{HandshakeTimeout: time.Minute})
	eng := f.dial(t, nil)
	const n = 1000
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var conns []*websocket.Conn
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			origin := rpengine.OriginProduction
			if i%2 == 1 {
				origin = "https://evil.example"
			}
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, resp, err := f.dialRaw(ctx, origin)
			st := -1
			if resp != nil {
				st = resp.StatusCode
			}
			mu.Lock()
			statuses[st]++
			if err == nil {
				conns = append(conns, c)
			}
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	t.Logf("statuses of %d attempts: %v", n, statuses)
	testutil.Equal(t, "bad origins refused", statuses[403], n/2)
	testutil.Equal(t, "all answered", statuses[101]+statuses[503]+statuses[403], n)
	if statuses[101] > rpengine.DefaultMaxHandshakes {
		t.Errorf("%d upgraded, MaxHandshakes is %d", statuses[101], rpengine.DefaultMaxHandshakes)
	}
	for _, c := range conns {
		c.CloseNow()
	}
	healthy(t, f, eng)
	waitConns(t, f, 1)
	hostileCases.Add(1)
}

// testHostileSessions: wrong sessionId and messageId reuse across
// sessions (duplicate windows are per session).
func testHostileSessions(t *testing.T) {
	f := newServer(t, nil)
	c1, sid1 := handshake(t, f)
	a1 := readAcks(t, c1)
	env := func(id, sid string) []byte {
		return []byte(`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"future.kind","messageId":"` + id + `","sessionId":"` + sid + `","timestamp":"t"}`)
	}
	ctx := ctxT(t)
	testutil.Success(t, c1.Write(ctx, websocket.MessageText, env("reused", sid1)))
	testutil.Equal(t, "first use", a1.wait(t, "reused"), false)
	testutil.Success(t, c1.Write(ctx, websocket.MessageText, env("reused", sid1)))
	a1.waitCount(ctx, t, 2)
	testutil.Equal(t, "repeat in session 1", a1.wait(t, "reused"), true)

	c2, sid2 := handshake(t, f) // supersedes session 1
	testutil.Equal(t, "old closed with 3000", closeCodeAfter(a1), websocket.StatusCode(3000))
	a2 := readAcks(t, c2)
	// Session 1's id, sent with session 1's sessionId: dropped.
	mark := len(f.log.String())
	testutil.Success(t, c2.Write(ctx, websocket.MessageText, env("stale", sid1)))
	f.log.waitSince(t, mark, "another session")
	// Session 1's messageId in session 2: a new message there.
	testutil.Success(t, c2.Write(ctx, websocket.MessageText, env("reused", sid2)))
	testutil.Equal(t, "reuse across sessions is new", a2.wait(t, "reused"), false)
	testutil.Equal(t, "stale never acked", a2.has("stale"), false)
	hostileCases.Add(3)
	c2.CloseNow()
	newHealthy(t, f)
	waitConns(t, f, 0)
}

// closeCodeAfter waits for an ackReader's connection to end and returns
// its close status.
func closeCodeAfter(a *ackReader) websocket.StatusCode {
	select {
	case <-a.done:
		return a.code
	case <-time.After(10 * time.Second):
		return -2
	}
}
