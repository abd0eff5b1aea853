package neurosantest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// raw is one HTTP exchange with the fake, bypassing the client, so the
// tests see the bytes on the wire.
type raw struct {
	status int
	ctype  string
	body   string
}

func do(t *testing.T, s *neurosantest.Server, method, path, body string) raw {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	testutil.Success(t, err)
	resp, err := s.Client().Do(req)
	testutil.Success(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testutil.Success(t, err)
	return raw{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

func start(t *testing.T, o neurosantest.Options) *neurosantest.Server {
	t.Helper()
	if o.Agents == nil {
		o.Agents = neurosantest.DemoAgents()
	}
	s := neurosantest.NewServer(&o)
	t.Cleanup(s.Close)
	return s
}

const mathBody = `{"user_message":{"text":"add"},"sly_data":{"x":1,"y":2}`

func TestServer_routes(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{Agents: append(neurosantest.DemoAgents(), neurosantest.Agent{Name: "locked", Forbidden: true})})
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string // substring of the body; "" means empty body
	}{
		{"list", "GET", "/api/v1/list", "", 200, `"agent_name": "games/quest_designer"`},
		{"function nested", "GET", "/api/v1/games/quest_designer/function", "", 200, `{"function": {"description": "Designs side quests`},
		{"connectivity", "GET", "/api/v1/math_guy/connectivity", "", 200, `"display_as": "coded_tool"`},
		{"unknown agent empty 404", "GET", "/api/v1/nobody/function", "", 404, ""},
		{"unknown nested agent", "POST", "/api/v1/games/nobody/streaming_chat", "{}", 404, ""},
		// Issue #25: the server's 403 has an empty body too.
		{"forbidden empty 403", "GET", "/api/v1/locked/function", "", 403, ""},
		{"bad json", "POST", "/api/v1/math_guy/streaming_chat", "{nope", 400, `{"error": "Invalid JSON format"}`},
		{"no text streams {}", "POST", "/api/v1/math_guy/streaming_chat", "{}", 200, "{}\n"},
		{"readyz", "GET", "/readyz", "", 200, `{"service": "neuro-san.Agent", "status": "ok", "versions": {"neuro-san": "unknown"}}`},
		{"livez", "GET", "/livez", "", 200, `"status": "ok"`},
		{"no route: Tornado's page", "GET", "/api/v1/math_guy/frobnicate", "", 404, "<html><title>404: Not Found</title><body>404: Not Found</body></html>"},
		{"wrong method: Tornado's page", "GET", "/api/v1/math_guy/streaming_chat", "", 405, "<html><title>405: Method Not Allowed</title>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, s, tc.method, tc.path, tc.body)
			testutil.Equal(t, "status", r.status, tc.status)
			if tc.want == "" {
				testutil.Equal(t, "body", r.body, "")
			} else if !strings.Contains(r.body, tc.want) {
				t.Fatalf("body %q lacks %q", r.body, tc.want)
			}
		})
	}
}

// The fake writes the bytes the server writes: Python's json.dumps with
// ", " and ": " separators and \uXXXX escapes, the members in the order
// the server builds them, no origin on the final answer, Tornado's
// json_encode for the bodies of errors and GET routes. The expected bytes
// are written out by hand from the server's rules. Issue #25.
func TestServer_bytes(t *testing.T) {
	t.Parallel()
	odd := neurosantest.Agent{Name: "odd", AllowSlyData: []string{"mean"}, Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		return neurosantest.Reply{
			Text:      "caf\u00e9 \u2615 \U0001F600 </b> \"q\"\n",
			Structure: json.RawMessage(`{"score":NaN,"range":[-Infinity,Infinity],"ratio":1.0e2,"big":1e16}`),
			SlyData:   map[string]json.RawMessage{"mean": json.RawMessage(`NaN`)},
		}
	}}
	s := start(t, neurosantest.Options{Agents: append(neurosantest.DemoAgents(), odd, neurosantest.Agent{Name: "locked", Forbidden: true}), ConcurrencyLimit: 5})
	tests := []struct {
		name, method, path, body string
		status                   int
		ctype, want              string
	}{
		{"MINIMAL answer", "POST", "/api/v1/math_guy/streaming_chat", mathBody + "}", 200, "application/json-lines",
			`{"response": {"type": "AGENT_FRAMEWORK", "text": "1 + 2 = 3", "chat_context": {"chat_histories": [{"origin": [{"tool": "math_guy", "instantiation_index": 1}], "messages": [{"type": "HUMAN", "text": "add"}, {"type": "AI", "text": "1 + 2 = 3"}]}]}, "sly_data": {"equals": 3}}}` + "\n"},
		{"escapes and NaN", "POST", "/api/v1/odd/streaming_chat", `{"user_message":{"text":"hi"}}`, 200, "application/json-lines",
			`{"response": {"type": "AGENT_FRAMEWORK", "text": "caf\u00e9 \u2615 \ud83d\ude00 </b> \"q\"\n", "chat_context": {"chat_histories": [{"origin": [{"tool": "odd", "instantiation_index": 1}], "messages": [{"type": "HUMAN", "text": "hi"}, {"type": "AI", "text": "caf\u00e9 \u2615 \ud83d\ude00 </b> \"q\"\n"}]}]}, "structure": {"score": NaN, "range": [-Infinity, Infinity], "ratio": 100.0, "big": 1e+16}, "sly_data": {"mean": NaN}}}` + "\n"},
		{"MAXIMAL step with the request echo re-encoded", "POST", "/api/v1/games/quest_designer/streaming_chat", `{"user_message":{"text":"\u00e9t\u00e9"},"chat_filter":{"chat_filter_type":"MAXIMAL"},"sly_data":{"n":1.50}}`, 200, "application/json-lines",
			`{"response": {"type": "AGENT", "origin": [{"tool": "quest_designer", "instantiation_index": 0}, {"tool": "lore_keeper", "instantiation_index": 0}], "text": "The town has an old well and a missing cat."}, "request": {"user_message": {"text": "\u00e9t\u00e9"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}, "sly_data": {"n": 1.5}}}` + "\n"},
		{"400", "POST", "/api/v1/math_guy/streaming_chat", "{nope", 400, "application/json; charset=UTF-8", `{"error": "Invalid JSON format"}`},
		{"403", "POST", "/api/v1/locked/streaming_chat", "{}", 403, "text/html; charset=UTF-8", ""},
		{"404", "GET", "/api/v1/nobody/connectivity", "", 404, "text/html; charset=UTF-8", ""},
		{"list", "GET", "/api/v1/list", "", 200, "application/json; charset=UTF-8",
			`{"agents": [{"agent_name": "math_guy", "description": "Does arithmetic on sly_data x and y.", "tags": ["example"]}, {"agent_name": "games/quest_designer", "description": "Designs side quests for the current town.", "tags": ["games"]}, {"agent_name": "odd"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, s, tc.method, tc.path, tc.body)
			testutil.Equal(t, "status", r.status, tc.status)
			testutil.Equal(t, "content type", r.ctype, tc.ctype)
			if tc.method == "POST" && tc.status == 200 {
				r.body, _, _ = strings.Cut(r.body, "\n")
				r.body += "\n" // the first line
			}
			testutil.Equal(t, "body", r.body, tc.want)
		})
	}
}

// A 503 body is Tornado's json_encode of {"error": …}. Issue #25.
func TestServer_unavailableBytes(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{ShuttingDown: true})
	r := do(t, s, "GET", "/api/v1/list", "")
	testutil.Equal(t, "status", r.status, 503)
	testutil.Equal(t, "body", r.body, `{"error": "Server is shutting down"}`)
	testutil.Equal(t, "health still answers", do(t, s, "GET", "/livez", "").status, 200)
}

// The heartbeat frame is the server's, byte for byte. Issue #25.
func TestServer_heartbeatBytes(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := neurosantest.Agent{Name: "slow", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		<-release
		return neurosantest.Reply{Text: "done"}
	}}
	s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{slow}, Heartbeat: time.Millisecond})
	resp, err := s.Client().Post(s.URL+"/api/v1/slow/streaming_chat", "application/json", strings.NewReader(`{"user_message":{"text":"x"}}`))
	testutil.Success(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	close(release)
	testutil.Success(t, err)
	testutil.Equal(t, "frame", line, `{"response": {"type": "AGENT_PROGRESS", "text": ""}}`+"\n")
}

func lines(body string) []string { return strings.SplitAfter(body, "\n") }

func TestServer_minimal(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{})
	r := do(t, s, "POST", "/api/v1/math_guy/streaming_chat", mathBody+`}`)
	testutil.Equal(t, "content type", r.ctype, "application/json-lines")
	ls := lines(r.body)
	testutil.Equal(t, "one line and nothing after", len(ls) == 2 && ls[1] == "", true)
	var resp struct {
		Response neurosan.ChatMessage
		Request  json.RawMessage
	}
	testutil.Success(t, json.Unmarshal([]byte(ls[0]), &resp))
	testutil.Equal(t, "type", resp.Response.Type, neurosan.TypeAgentFramework)
	testutil.Equal(t, "no echo", len(resp.Request), 0)
	testutil.Equal(t, "allow-listed sly only", resp.Response.SlyData, map[string]json.RawMessage{"equals": json.RawMessage("3")})
	var ctx struct {
		ChatHistories []struct {
			Origin   []neurosan.Origin
			Messages []neurosan.ChatMessage
		} `json:"chat_histories"`
	}
	testutil.Success(t, json.Unmarshal(resp.Response.ChatContext, &ctx))
	testutil.Equal(t, "front-man origin", ctx.ChatHistories[0].Origin, []neurosan.Origin{{Tool: "math_guy", InstantiationIndex: 1}})
	testutil.Equal(t, "history", len(ctx.ChatHistories[0].Messages), 2)
}

// The echo rule: any chat_filter_type other than the exact string "MINIMAL"
// echoes the request on every line; only MAXIMAL (any case) or 2 streams
// the intermediate messages.
func TestServer_filters(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{})
	tests := []struct {
		filter     string
		lines      int
		echo       bool
		recordedAs string
	}{
		{`"MINIMAL"`, 1, false, "MINIMAL"},
		{`"minimal"`, 1, true, "minimal"},
		{`1`, 1, true, "1"},
		{`"UNKNOWN"`, 1, true, "UNKNOWN"},
		{`"MAXIMAL"`, 4, true, "MAXIMAL"},
		{`"maximal"`, 4, true, "maximal"},
		{`2`, 4, true, "2"},
	}
	for _, tc := range tests {
		t.Run(tc.filter, func(t *testing.T) {
			t.Parallel()
			r := do(t, s, "POST", "/api/v1/math_guy/streaming_chat", mathBody+`,"chat_filter":{"chat_filter_type":`+tc.filter+`}}`)
			ls := lines(strings.TrimSuffix(r.body, "\n"))
			testutil.Equal(t, "lines", len(ls), tc.lines)
			for _, l := range ls {
				testutil.Equal(t, "echo", strings.Contains(l, `"request": {"user_message"`), tc.echo)
			}
		})
	}
}

func TestServer_twoPerLine(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{TwoPerLine: true})
	r := do(t, s, "POST", "/api/v1/math_guy/streaming_chat", mathBody+`,"chat_filter":{"chat_filter_type":"MAXIMAL"}}`)
	ls := lines(strings.TrimSuffix(r.body, "\n"))
	testutil.Equal(t, "4 responses on 2 lines", len(ls), 2)
	testutil.Equal(t, "two objects on line 1", strings.Count(ls[0], `{"response": `), 2)
}

func TestServer_faultWithoutNewline(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "f", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "part"})
		return neurosantest.Reply{Fault: neurosantest.FaultTimeout}
	}}
	s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	r := do(t, s, "POST", "/api/v1/f/streaming_chat", `{"user_message":{"text":"x"},"chat_filter":{"chat_filter_type":"MAXIMAL"}}`)
	testutil.Equal(t, "status stays 200", r.status, 200)
	if !strings.HasSuffix(r.body, "\n"+`{"error": "Request timeout"}`) {
		t.Fatalf("body %q does not end with the error object without newline", r.body)
	}
}

// A line split into 5-byte writes arrives as several reads, each one flushed.
func TestServer_splitWrites(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{SplitWrites: 5})
	resp, err := s.Client().Post(s.URL+"/api/v1/math_guy/streaming_chat", "application/json", strings.NewReader(mathBody+"}"))
	testutil.Success(t, err)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	testutil.Success(t, err)
	testutil.Equal(t, "whole line reassembled", json.Valid([]byte(line)), true)
	testutil.Equal(t, "chunked", resp.TransferEncoding, []string{"chunked"})
}

// flushRecorder records each Write and Flush a handler makes.
type flushRecorder struct {
	header http.Header
	writes []string // flushed writes; a "|" entry marks a flush
	body   strings.Builder
}

func (r *flushRecorder) Header() http.Header { return r.header }
func (r *flushRecorder) WriteHeader(int)     {}
func (r *flushRecorder) Write(b []byte) (int, error) {
	r.writes = append(r.writes, string(b))
	r.body.Write(b)
	return len(b), nil
}
func (r *flushRecorder) Flush() { r.writes = append(r.writes, "|") }

// Every line is written in pieces of at most SplitWrites bytes, each
// flushed on its own, so that a client reads objects cut anywhere.
func TestServer_splitWritesPieces(t *testing.T) {
	t.Parallel()
	s := neurosantest.NewUnstartedServer(&neurosantest.Options{Agents: neurosantest.DemoAgents(), SplitWrites: 5})
	w := &flushRecorder{header: http.Header{}}
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/v1/math_guy/streaming_chat", strings.NewReader(mathBody+"}")))
	testutil.Equal(t, "a whole answer line", strings.HasSuffix(w.body.String(), "}\n") && w.body.Len() > 50, true)
	for i, piece := range w.writes {
		if piece == "|" {
			continue
		}
		if len(piece) > 5 || i+1 == len(w.writes) || w.writes[i+1] != "|" {
			t.Fatalf("write %d is %q, want at most 5 bytes followed by a flush", i, piece)
		}
	}
}

func TestServer_history(t *testing.T) {
	t.Parallel()
	agent := neurosantest.QuestDesigner()
	agent.MaxMessageHistory = 3
	agent.ContextPadding = 10
	s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	body := `{"user_message":{"text":"one"}}`
	var last neurosan.ChatMessage
	for range 3 {
		r := do(t, s, "POST", "/api/v1/games/quest_designer/streaming_chat", body)
		var resp struct{ Response neurosan.ChatMessage }
		testutil.Success(t, json.Unmarshal([]byte(r.body), &resp))
		last = resp.Response
		body = `{"user_message":{"text":"again"},"chat_context":` + string(last.ChatContext) + `}`
	}
	// The script counts HUMAN messages in the history it is sent back: the
	// third turn sees only [AI, HUMAN, AI] after trimming to 3, so it
	// believes this is quest 2.
	testutil.Equal(t, "trimmed history seen by the script", strings.HasPrefix(last.Text, "Quest 2"), true)
	var ctx struct {
		ChatHistories []struct{ Messages []neurosan.ChatMessage } `json:"chat_histories"`
	}
	testutil.Success(t, json.Unmarshal(last.ChatContext, &ctx))
	msgs := ctx.ChatHistories[0].Messages
	testutil.Equal(t, "trimmed to 3", len(msgs), 3)
	testutil.Equal(t, "newest last", msgs[2].Type, neurosan.TypeAI)
	if !bytes.Contains(last.ChatContext, []byte(`"padding": "xxxxxxxxxx"`)) {
		t.Fatal("padding missing")
	}
}

func TestServer_hugeLine(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "big", ContextPadding: 1<<20 + 1}
	s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	r := do(t, s, "POST", "/api/v1/big/streaming_chat", `{"user_message":{"text":"x"}}`)
	testutil.Equal(t, "one line over 1 MiB", len(r.body) > 1<<20 && strings.Count(r.body, "\n") == 1, true)
	testutil.Equal(t, "valid", json.Valid([]byte(r.body)), true)
}

func TestServer_unavailable(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{Unavailable: 1})
	r := do(t, s, "GET", "/api/v1/list", "")
	testutil.Equal(t, "first is 503", r.status, 503)
	testutil.Equal(t, "message", r.body, `{"error": "Too many concurrent requests"}`)
	testutil.Equal(t, "then 200", do(t, s, "GET", "/api/v1/list", "").status, 200)
	testutil.Equal(t, "requests", s.Requests(), 2)
}

// What follows a complete answer: the server's request timeout or an
// exception during its clean-up appends an error object, or the
// connection is cut. Issue #25.
func TestServer_afterAnswer(t *testing.T) {
	t.Parallel()
	for _, f := range []neurosantest.Fault{neurosantest.FaultTimeout, neurosantest.FaultInternal, neurosantest.FaultCut} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			agent := neurosantest.Agent{Name: "a", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
				return neurosantest.Reply{Text: "ok", After: f}
			}}
			s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{agent}})
			resp, err := s.Client().Post(s.URL+"/api/v1/a/streaming_chat", "application/json", strings.NewReader(`{"user_message":{"text":"x"}}`))
			testutil.Success(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			answer, rest, _ := strings.Cut(string(body), "\n")
			testutil.Equal(t, "answer first", strings.HasPrefix(answer, `{"response": {"type": "AGENT_FRAMEWORK", "text": "ok", "chat_context": `), true)
			switch f {
			case neurosantest.FaultTimeout:
				testutil.Success(t, err)
				testutil.Equal(t, "then", rest, `{"error": "Request timeout"}`)
			case neurosantest.FaultInternal:
				testutil.Success(t, err)
				testutil.Equal(t, "then", rest, `{"error": "Internal server error"}`)
			case neurosantest.FaultCut:
				testutil.ErrorIs(t, err, io.ErrUnexpectedEOF)
				testutil.Equal(t, "then", rest, "")
			}
		})
	}
}

// Since April 2026 the server gives "Event acknowledged" and the error
// text of a network that could not start an empty chat_context. Issue #25.
func TestServer_emptyContext(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "events", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		return neurosantest.Reply{Text: "Event acknowledged", EmptyContext: true, SlyData: map[string]json.RawMessage{"k": json.RawMessage("1")}}
	}}
	s := start(t, neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	r := do(t, s, "POST", "/api/v1/events/streaming_chat", `{"user_message":{"text":"x"}}`)
	testutil.Equal(t, "body", r.body, `{"response": {"type": "AGENT_FRAMEWORK", "text": "Event acknowledged", "chat_context": {}}}`+"\n")
}

func TestServer_health(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{NotReady: true, Unavailable: 10})
	for _, p := range []string{"/", "/healthz", "/readyz"} {
		r := do(t, s, "GET", p, "")
		testutil.Equal(t, p+" status", r.status, 503)
		testutil.Equal(t, p+" body", r.body, `{"error": "Service Unavailable"}`)
	}
	r := do(t, s, "GET", "/livez", "")
	testutil.Equal(t, "live", r.status, 200)
	testutil.Equal(t, "probes are not API requests", do(t, s, "GET", "/api/v1/list", "").status, 503)
	testutil.Equal(t, "POST", do(t, s, "POST", "/livez", "").status, 405)
}

// The direct tool call: {args, sly_data} in, {tool_output, sly_data,
// tool_error} out, with the server's checks and messages. Issue #25.
func TestServer_tool(t *testing.T) {
	t.Parallel()
	local := neurosantest.Agent{Name: "local"}
	client := neurosantest.Agent{Name: "ui", Tools: map[string]neurosantest.Tool{"picker": {ClientSide: true}}}
	s := start(t, neurosantest.Options{Agents: append(neurosantest.DemoAgents(), local, client)})
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"call", "/api/v1/math_guy/tool/calculator", `{"args":{"operation":"multiply"},"sly_data":{"x":6,"y":7,"secret":"s"}}`, 200,
			`{"tool_output": 42, "sly_data": {"equals": 42}, "tool_error": false}`},
		{"float", "/api/v1/math_guy/tool/calculator", `{"args":{"operation":"divide"},"sly_data":{"x":1,"y":0}}`, 200,
			`{"tool_output": Infinity, "sly_data": {"equals": Infinity}, "tool_error": false}`},
		{"tool error", "/api/v1/math_guy/tool/calculator", `{"args":{}}`, 200,
			`{"tool_output": "Error: I need numbers x and y in sly_data.", "sly_data": {}, "tool_error": true}`},
		{"empty body", "/api/v1/math_guy/tool/calculator", ``, 200,
			`{"tool_output": "Error: I need numbers x and y in sly_data.", "sly_data": {}, "tool_error": true}`},
		{"nested name", "/api/v1/games/quest_designer/tool/x", `{}`, 400, `{"error": "Invalid agent or tool name."}`},
		{"bad tool name", "/api/v1/math_guy/tool/a.b", `{}`, 400, `{"error": "Invalid agent or tool name."}`},
		{"not distributable", "/api/v1/local/tool/calculator", `{}`, 404, `{"error": "Agent network is not distributable on this server."}`},
		{"unknown network", "/api/v1/nobody/tool/calculator", `{}`, 404, `{"error": "Agent network is not distributable on this server."}`},
		{"unknown tool", "/api/v1/math_guy/tool/abacus", `{}`, 404, `{"error": "Tool not found in agent network."}`},
		{"client side", "/api/v1/ui/tool/picker", `{}`, 400, `{"error": "Tool is client-side; it cannot be invoked via /tool/."}`},
		{"args not a dict", "/api/v1/math_guy/tool/calculator", `{"args":[1]}`, 400,
			`{"error": "Request body must be {&quot;args&quot;: {...}, &quot;sly_data&quot;: {...}}."}`},
		{"not JSON", "/api/v1/math_guy/tool/calculator", `{nope`, 400, `{"error": "Invalid JSON: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, s, "POST", tc.path, tc.body)
			testutil.Equal(t, "status", r.status, tc.status)
			if !strings.HasPrefix(r.body, tc.want) {
				t.Fatalf("body %s, want %s", r.body, tc.want)
			}
			if tc.status == 200 {
				testutil.Equal(t, "content type", r.ctype, "application/json")
			}
		})
	}
}

// The server has httptest's lifecycle: an unstarted server refuses
// connections (but serves as an http.Handler); Start serves in memory;
// Start again panics; Close is idempotent and refuses again; Options.Addr
// also listens on a loopback port, and a non-loopback address is refused.
// Issue #21.
func TestServer_lifecycle(t *testing.T) {
	t.Parallel()
	s := neurosantest.NewUnstartedServer(nil)
	defer s.Close()
	get := func(c *http.Client, url string) error {
		resp, err := c.Get(url + "/livez")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	testutil.Error(t, get(s.Client(), s.URL))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/livez", nil))
	testutil.Equal(t, "handler", w.Code, http.StatusOK)
	s.Start()
	testutil.Success(t, get(s.Client(), s.URL))
	func() {
		defer func() { testutil.Equal(t, "second Start panics", recover() != nil, true) }()
		s.Start()
	}()
	s.Close()
	s.Close()
	testutil.Error(t, get(s.Client(), s.URL))

	func() {
		defer func() { testutil.Equal(t, "0.0.0.0 refused", recover() != nil, true) }()
		neurosantest.NewServer(&neurosantest.Options{Addr: "0.0.0.0:0"})
	}()
	l := neurosantest.NewServer(&neurosantest.Options{Addr: "127.0.0.1:0"})
	defer l.Close()
	testutil.Equal(t, "real address", strings.HasPrefix(l.URL, "http://127.0.0.1:") && l.URL != "http://127.0.0.1:0", true)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	testutil.Success(t, get(&http.Client{Transport: tr}, l.URL))
}
