package xtytest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/xiaotangyuan/xtytest"
)

// raw is a bare WebSocket adapter, to check the fake's exact answers.
type raw struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, h *xtytest.Server) *raw {
	t.Helper()
	ws, _, err := websocket.Dial(context.Background(), h.URL, &websocket.DialOptions{HTTPClient: h.Client()})
	testutil.Success(t, err)
	ws.SetReadLimit(4 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	r := &raw{t: t, ws: ws}
	testutil.Equal(t, "ready first", strings.Contains(r.read(), `"method":"gateway.ready"`), true)
	return r
}

func (r *raw) send(s string) {
	r.t.Helper()
	testutil.Success(r.t, r.ws.Write(context.Background(), websocket.MessageText, []byte(s)))
}

func (r *raw) read() string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, b, err := r.ws.Read(ctx)
	testutil.Success(r.t, err)
	return string(b)
}

// roundTrip sends s and returns the next message, normalised (keys sorted).
func (r *raw) roundTrip(s string) string {
	r.t.Helper()
	r.send(s)
	return norm(r.t, r.read())
}

func norm(t *testing.T, s string) string {
	t.Helper()
	var v any
	testutil.Success(t, json.Unmarshal([]byte(s), &v))
	b, _ := json.Marshal(v)
	return string(b)
}

const hello = `{"jsonrpc":"2.0","id":1,"method":"adapter.hello","params":{"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1","processId":42,"capabilities":["assistant.text-stream"]}}`

func TestServer_ErrorCodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		r := dialRaw(t, h)
		for _, tc := range []struct{ name, in, want string }{
			{"ping before hello", `{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}`, `{"id":1,"jsonrpc":"2.0","result":{"pong":true}}`},
			{"state before hello", `{"jsonrpc":"2.0","id":2,"method":"state.update","params":{"observation":{}}}`, `{"id":2,"jsonrpc":"2.0","result":{"accepted":true}}`},
			{"chat before hello", `{"jsonrpc":"2.0","id":3,"method":"chat.send","params":{"text":"x"}}`, `{"error":{"code":-32000,"message":"adapter.hello must be sent before chat.send"},"id":3,"jsonrpc":"2.0"}`},
			{"not json", `{oops`, `{"error":{"code":-32700,"message":"invalid character 'o' looking for beginning of object key string"},"id":null,"jsonrpc":"2.0"}`},
			{"batch", `[{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}]`, `{"error":{"code":-32700,"message":"JSON-RPC payload must be an object"},"id":null,"jsonrpc":"2.0"}`},
			{"wrong version", `{"jsonrpc":"1.0","id":4,"method":"gateway.ping"}`, `{"error":{"code":-32700,"message":"jsonrpc must be \"2.0\""},"id":null,"jsonrpc":"2.0"}`},
			{"empty method", `{"jsonrpc":"2.0","id":5,"method":""}`, `{"error":{"code":-32700,"message":"method must be a non-empty string"},"id":null,"jsonrpc":"2.0"}`},
			{"bad id type", `{"jsonrpc":"2.0","id":{},"method":"gateway.ping"}`, `{"error":{"code":-32700,"message":"id must be a string, number, or null"},"id":null,"jsonrpc":"2.0"}`},
			{"stray response", `{"jsonrpc":"2.0","id":"nobody","result":{}}`, `{"error":{"code":-32700,"message":"method must be a non-empty string"},"id":null,"jsonrpc":"2.0"}`},
			{"id null is a request", `{"jsonrpc":"2.0","id":null,"method":"gateway.ping"}`, `{"id":null,"jsonrpc":"2.0","result":{"pong":true}}`},
			{"bad hello", `{"jsonrpc":"2.0","id":6,"method":"adapter.hello","params":{"adapterId":" ","gameId":"g","version":"1","protocolVersion":"1.1"}}`, `{"error":{"code":-32000,"message":"adapterId must be a non-empty string"},"id":6,"jsonrpc":"2.0"}`},
			{"bad processId", `{"jsonrpc":"2.0","id":7,"method":"adapter.hello","params":{"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1","processId":1.5}}`, `{"error":{"code":-32000,"message":"processId must be a positive integer when provided"},"id":7,"jsonrpc":"2.0"}`},
			{"bad saveId", `{"jsonrpc":"2.0","id":8,"method":"adapter.hello","params":{"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1","saveId":"a/b"}}`, `{"error":{"code":-32000,"message":"saveId must contain 1-128 safe opaque identifier characters"},"id":8,"jsonrpc":"2.0"}`},
			{"failed hello can be retried", hello, `{"id":1,"jsonrpc":"2.0","result":{"accepted":true,"protocolVersion":"1.1"}}`},
			{"second hello", hello, `{"error":{"code":-32000,"message":"adapter.hello may only be sent once per connection"},"id":1,"jsonrpc":"2.0"}`},
			{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"chat.sing"}`, `{"error":{"code":-32000,"message":"unknown method: chat.sing"},"id":9,"jsonrpc":"2.0"}`},
			{"blank text", `{"jsonrpc":"2.0","id":10,"method":"chat.send","params":{"text":"  "}}`, `{"error":{"code":-32000,"message":"text must be a non-empty string"},"id":10,"jsonrpc":"2.0"}`},
			{"long role", `{"jsonrpc":"2.0","id":11,"method":"chat.send","params":{"text":"x","context":{"roleInstructions":"` + strings.Repeat("r", 2001) + `"}}}`, `{"error":{"code":-32000,"message":"roleInstructions must be at most 2000 characters"},"id":11,"jsonrpc":"2.0"}`},
			{"retry without chat", `{"jsonrpc":"2.0","id":12,"method":"chat.retry","params":{}}`, `{"error":{"code":-32000,"message":"当前游戏会话还没有可重试的玩家请求"},"id":12,"jsonrpc":"2.0"}`},
			{"state needs observation", `{"jsonrpc":"2.0","id":13,"method":"state.update","params":{"observation":[1]}}`, `{"error":{"code":-32000,"message":"params must be an object"},"id":13,"jsonrpc":"2.0"}`},
			{"compose streams nothing", `{"jsonrpc":"2.0","id":14,"method":"assistant.compose","params":{"text":"alert"}}`, `"reply":"You said: alert"`},
		} {
			got := r.roundTrip(tc.in)
			if !strings.HasPrefix(tc.want, `"`) {
				testutil.Equal(t, tc.name, got, tc.want)
			} else if !strings.Contains(got, tc.want) {
				t.Fatalf("%s: %s does not contain %s", tc.name, got, tc.want)
			}
		}
		// Notifications are processed but never answered, even on error.
		r.send(`{"jsonrpc":"2.0","method":"chat.sing"}`)
		r.send(`{"jsonrpc":"2.0","method":"gateway.ping"}`)
		r.send(`{"jsonrpc":"2.0","method":"state.update","params":{"observation":{"hp":1}}}`)
		testutil.Equal(t, "next answer is the ping", r.roundTrip(`{"jsonrpc":"2.0","id":15,"method":"gateway.ping"}`), `{"id":15,"jsonrpc":"2.0","result":{"pong":true}}`)
	})
}

// The protocolVersion is declarative: anything non-empty is accepted and
// the answer is always 1.1.
func TestServer_ProtocolVersionNotChecked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		r := dialRaw(t, h)
		got := r.roundTrip(strings.Replace(hello, `"protocolVersion":"1.1"`, `"protocolVersion":"9.9"`, 1))
		testutil.Equal(t, "answer", got, `{"id":1,"jsonrpc":"2.0","result":{"accepted":true,"protocolVersion":"1.1"}}`)
	})
}

// Adapters that do not declare assistant.text-stream get every delta
// twice; those that do never get assistant.delta (issue #20: the fake
// used to offer duplicates to them too, which the gateway never sends).
func TestServer_LegacyAdapter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		for _, tc := range []struct {
			hello string
			want  []string
		}{
			{strings.Replace(hello, `"assistant.text-stream"`, ``, 1), []string{
				"assistant.text.start", "assistant.text.delta", "assistant.delta",
				"assistant.text.delta", "assistant.delta", "assistant.text.done",
			}},
			{hello, []string{"assistant.text.start", "assistant.text.delta", "assistant.text.delta", "assistant.text.done"}},
		} {
			r := dialRaw(t, h)
			r.roundTrip(tc.hello)
			r.send(`{"jsonrpc":"2.0","id":2,"method":"chat.send","params":{"text":"hi"}}`)
			var methods []string
			for {
				m := r.read()
				var f struct {
					Method string
					ID     any
				}
				json.Unmarshal([]byte(m), &f)
				if f.ID != nil {
					break
				}
				methods = append(methods, f.Method)
			}
			testutil.Equal(t, "sequence", methods, tc.want)
		}
	})
}

// Over 1 MiB: the connection is closed with 1009, then the whole Harness
// goes down, as the real gateway process does.
func TestServer_Oversize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		big := dialRaw(t, h)
		other := dialRaw(t, h)
		big.send(`{"jsonrpc":"2.0","method":"state.update","params":{"observation":{"x":"` + strings.Repeat("x", 1<<20) + `"}}}`)
		_, _, err := big.ws.Read(context.Background())
		testutil.Equal(t, "close status", websocket.CloseStatus(err), websocket.StatusMessageTooBig)
		synctest.Wait()
		_, _, err = other.ws.Read(context.Background())
		testutil.Error(t, err)
		_, _, err = websocket.Dial(context.Background(), h.URL, &websocket.DialOptions{HTTPClient: h.Client()})
		testutil.Error(t, err)
	})
}

// The gateway sends whatever it has, however big: a 3 MiB reply goes out
// whole (no send limit). Issue #20.
func TestServer_NoSendLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		big := strings.Repeat("字", 1<<20) // 3 MiB of UTF-8
		h := xtytest.NewServer(&xtytest.Options{Agent: func(ctx context.Context, turn *xtytest.Turn) (string, error) { return big, nil }})
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(hello)
		r.send(`{"jsonrpc":"2.0","id":2,"method":"chat.send","params":{"text":"x"}}`)
		for {
			m := r.read()
			if strings.Contains(m, `"id":2`) {
				testutil.Equal(t, "whole reply", strings.Contains(m, big), true)
				return
			}
		}
	})
}

// Every message of a connection waits for the one before it:
// gateway.ping and voice.start wait for a running chat. Issue #20.
func TestServer_QueuedPing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := func(ctx context.Context, turn *xtytest.Turn) (string, error) {
			time.Sleep(500 * time.Millisecond)
			return "late", nil
		}
		h := xtytest.NewServer(&xtytest.Options{Agent: slow})
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(hello)
		r.send(`{"jsonrpc":"2.0","id":2,"method":"chat.send","params":{"text":"x"}}`)
		r.send(`{"jsonrpc":"2.0","id":3,"method":"gateway.ping"}`)
		r.send(`{"jsonrpc":"2.0","id":4,"method":"voice.start"}`)
		start := time.Now()
		var order []string
		var waited []time.Duration
		for len(order) < 3 {
			var f struct{ ID int }
			m := r.read()
			json.Unmarshal([]byte(m), &f)
			if f.ID != 0 {
				order = append(order, fmt.Sprint(f.ID))
				waited = append(waited, time.Since(start))
			}
		}
		testutil.Equal(t, "answer order", order, []string{"2", "3", "4"})
		testutil.Equal(t, "ping and voice.start waited for the chat", waited, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond})
	})
}

// Params are read as the gateway reads them: a member set to null is
// given and is not an object; optional strings of another type are
// ignored; saveIds are trimmed and a blank one is absent. Issue #20.
func TestServer_ParamsAsTheGateway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(hello)
		const notObject = `{"error":{"code":-32000,"message":"params must be an object"},"id":1,"jsonrpc":"2.0"}`
		accepted := `{"id":1,"jsonrpc":"2.0","result":{"accepted":true}}`
		for _, tc := range []struct{ name, method, params, want string }{
			{"playerName not a string", "chat.send", `{"text":"hi","context":{"playerName":5,"location":null,"date":[],"time":{},"nearbyNpc":true,"roleInstructions":1,"saveId":7}}`, `"reply":"You said: hi"`},
			{"context null", "chat.send", `{"text":"hi","context":null}`, notObject},
			{"context array", "chat.send", `{"text":"hi","context":[]}`, notObject},
			{"observation null", "chat.send", `{"text":"hi","context":{"observation":null}}`, notObject},
			{"chat params absent", "chat.send", ``, notObject},
			{"text not a string", "chat.send", `{"text":5}`, `{"error":{"code":-32000,"message":"text must be a non-empty string"},"id":1,"jsonrpc":"2.0"}`},
			{"context saveId padded", "chat.send", `{"text":"hi","context":{"saveId":" slot-1 "}}`, `"reply":"You said: hi"`},
			{"context saveId too long", "chat.send", `{"text":"hi","context":{"saveId":"` + strings.Repeat("s", 129) + `"}}`, `{"error":{"code":-32000,"message":"saveId must be at most 128 characters"},"id":1,"jsonrpc":"2.0"}`},
			{"context saveId charset", "chat.send", `{"text":"hi","context":{"saveId":"a/b"}}`, `{"error":{"code":-32000,"message":"saveId must contain only safe opaque identifier characters"},"id":1,"jsonrpc":"2.0"}`},
			{"retry params null", "chat.retry", `null`, notObject},
			{"retry context null", "chat.retry", `{"context":null}`, notObject},
			{"retry params object", "chat.retry", `{}`, `"reply":"You said: hi"`},
			{"state saveId empty", "state.update", `{"observation":{},"saveId":""}`, accepted},
			{"state saveId padded", "state.update", `{"observation":{},"saveId":" padded "}`, accepted},
			{"state saveId number", "state.update", `{"observation":{},"saveId":5}`, accepted},
			{"state saveId charset", "state.update", `{"observation":{},"saveId":"a b"}`, `{"error":{"code":-32000,"message":"saveId must contain only safe opaque identifier characters"},"id":1,"jsonrpc":"2.0"}`},
			{"state observation null", "state.update", `{"observation":null}`, notObject},
			{"state params null", "state.update", `null`, notObject},
		} {
			msg := `{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `"`
			if tc.params != "" {
				msg += `,"params":` + tc.params
			}
			got := r.roundTrip(msg + "}")
			for strings.Contains(got, `"method":"assistant.`) { // stream notifications before a reply
				got = norm(t, r.read())
			}
			if strings.HasPrefix(tc.want, `{`) {
				testutil.Equal(t, tc.name, got, tc.want)
			} else if !strings.Contains(got, tc.want) {
				t.Fatalf("%s: %s does not contain %s", tc.name, got, tc.want)
			}
		}
	})
}

// Every saveId (hello, context, state.update) is trimmed as the
// gateway's JavaScript String.prototype.trim trims before it is checked
// against ^[a-zA-Z0-9._:-]{1,128}$ (docs/xiaotangyuan-protocol.md, "How
// params are read"): it removes U+FEFF, which strings.TrimSpace keeps,
// and keeps U+0085, which strings.TrimSpace removes. Issue #33.
func TestServer_SaveIDTrimmedAsTheGateway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		long := strings.Repeat("s", 128)
		for _, tc := range []struct {
			id string // JSON text
			ok bool
		}{
			{`" slot-1 "`, true},
			{`"slot\t"`, true},
			{`"` + long + ` "`, true},
			{`"\u3000slot\u2029"`, true},
			{`"slot\ufeff"`, true},
			{`"slot\u0085"`, false},
			{`"` + long + `s "`, false},
		} {
			hello := `{"jsonrpc":"2.0","id":1,"method":"adapter.hello","params":{"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1","saveId":` + tc.id + `}}`
			r := dialRaw(t, h)
			got := r.roundTrip(hello)
			testutil.Equal(t, "hello "+tc.id+" accepted", strings.Contains(got, `"accepted":true`), tc.ok)
			if !strings.Contains(got, `"accepted":true`) {
				r.roundTrip(strings.Replace(hello, `,"saveId":`+tc.id, "", 1))
			}
			got = r.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"chat.send","params":{"text":"hi","context":{"saveId":` + tc.id + `}}}`)
			for strings.Contains(got, `"method":"assistant.`) {
				got = norm(t, r.read())
			}
			testutil.Equal(t, "context "+tc.id+" accepted", strings.Contains(got, `"reply":"You said: hi"`), tc.ok)
			got = r.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"state.update","params":{"observation":{},"saveId":` + tc.id + `}}`)
			testutil.Equal(t, "state "+tc.id+" accepted", strings.Contains(got, `"accepted":true`), tc.ok)
		}
	})
}

// The hello's own rules: processId and capabilities set to null are
// given and refused; a saveId that is not a string, or blank, is ignored.
// Issue #20.
func TestServer_HelloParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		base := `"adapterId":"a","gameId":"g","version":"1","protocolVersion":"1.1"`
		for _, tc := range []struct{ name, extra, want string }{
			{"processId null", `,"processId":null`, `"message":"processId must be a positive integer when provided"`},
			{"processId string", `,"processId":"42"`, `"message":"processId must be a positive integer when provided"`},
			{"capabilities null", `,"capabilities":null`, `"message":"capabilities must be an array of strings when provided"`},
			{"capabilities of numbers", `,"capabilities":[1]`, `"message":"capabilities must be an array of strings when provided"`},
			{"adapterId number", `,"adapterId":5`, `"message":"adapterId must be a non-empty string"`},
			{"saveId number", `,"saveId":5`, `"accepted":true`},
			{"saveId blank", `,"saveId":"  "`, `"accepted":true`},
			{"saveId padded", `,"saveId":" slot-1 "`, `"accepted":true`},
			{"params null", `null`, `"message":"params must be an object"`},
		} {
			r := dialRaw(t, h)
			params := `{` + base + tc.extra + `}`
			if tc.extra == "null" {
				params = "null"
			}
			got := r.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"adapter.hello","params":` + params + `}`)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("%s: %s does not contain %s", tc.name, got, tc.want)
			}
		}
	})
}

// Voice without a processId is refused with the gateway's text.
func TestServer_VoiceNeedsProcessID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(strings.Replace(hello, `"processId":42,`, ``, 1))
		testutil.Equal(t, "refused", r.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"voice.start"}`),
			`{"error":{"code":-32000,"message":"adapter.hello must provide processId before voice.start"},"id":2,"jsonrpc":"2.0"}`)
	})
}

// Recording without speech ends in assistant.error.
func TestServer_VoiceTooShort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(hello)
		r.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"voice.stop"}`)
		testutil.Equal(t, "thinking", norm(t, r.read()), `{"jsonrpc":"2.0","method":"assistant.status","params":{"status":"thinking"}}`)
		testutil.Equal(t, "error", norm(t, r.read()), `{"jsonrpc":"2.0","method":"assistant.error","params":{"message":"recording too short"}}`)
	})
}

// Options.Addr serves on a loopback port too: the one test with a real
// socket. A non-loopback address is refused.
func TestServer_Addr(t *testing.T) {
	func() {
		defer func() { testutil.Equal(t, "0.0.0.0 refused", recover() != nil, true) }()
		xtytest.NewServer(&xtytest.Options{Addr: "0.0.0.0:0"})
	}()
	h := xtytest.NewServer(&xtytest.Options{Addr: "127.0.0.1:0"})
	defer h.Close()
	testutil.Equal(t, "real address", strings.HasPrefix(h.URL, "ws://127.0.0.1:") && h.URL != "ws://127.0.0.1:0", true)
	ws, _, err := websocket.Dial(context.Background(), h.URL, nil)
	testutil.Success(t, err)
	defer ws.CloseNow()
	_, b, err := ws.Read(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "ready", strings.Contains(string(b), "gateway.ready"), true)
}

// A connection's request queue is bounded: while the worker is busy, a
// client that queues more than 256 requests is closed with 1008 rather
// than growing the fake's memory.
func TestServer_QueueOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := func(ctx context.Context, _ *xtytest.Turn) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}
		h := xtytest.NewServer(&xtytest.Options{Agent: block})
		defer h.Close()
		r := dialRaw(t, h)
		r.roundTrip(hello)
		r.send(`{"jsonrpc":"2.0","id":2,"method":"chat.send","params":{"text":"x"}}`)
		synctest.Wait() // the worker runs the chat
		for range 256 {
			r.send(`{"jsonrpc":"2.0","method":"state.update","params":{"observation":{}}}`)
		}
		synctest.Wait()
		testutil.Equal(t, "256 queued, still connected", h.Connections(), 1)
		r.send(`{"jsonrpc":"2.0","method":"state.update","params":{"observation":{}}}`)
		_, _, err := r.ws.Read(context.Background())
		testutil.Equal(t, "close status", websocket.CloseStatus(err), websocket.StatusPolicyViolation)
	})
}

// A sequential client that sends its hello before reading anything (as
// the Stardew adapter does) is served at once over the unbuffered pipe,
// and gateway.ready still comes first.
func TestServer_HelloBeforeReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewServer(nil)
		defer h.Close()
		ws, _, err := websocket.Dial(context.Background(), h.URL, &websocket.DialOptions{HTTPClient: h.Client()})
		testutil.Success(t, err)
		defer ws.CloseNow()
		start := time.Now()
		r := &raw{t: t, ws: ws}
		r.send(hello)
		testutil.Equal(t, "ready first", strings.Contains(r.read(), `"method":"gateway.ready"`), true)
		testutil.Equal(t, "then the hello result", norm(t, r.read()), `{"id":1,"jsonrpc":"2.0","result":{"accepted":true,"protocolVersion":"1.1"}}`)
		testutil.Equal(t, "no write timeout waited", time.Since(start), time.Duration(0))
	})
}

// The server has httptest's lifecycle: an unstarted server refuses
// connections, as a Harness not running yet does; Start serves; Start
// again panics; Close is idempotent and refuses again. Issue #21.
func TestServer_Lifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := xtytest.NewUnstartedServer(nil)
		defer h.Close()
		dial := func() error {
			ws, _, err := websocket.Dial(context.Background(), h.URL, &websocket.DialOptions{HTTPClient: h.Client()})
			if err == nil {
				ws.CloseNow()
			}
			return err
		}
		testutil.Error(t, dial())
		h.Start()
		testutil.Success(t, dial())
		func() {
			defer func() { testutil.Equal(t, "second Start panics", recover() != nil, true) }()
			h.Start()
		}()
		h.Close()
		h.Close()
		testutil.Error(t, dial())
	})
}
