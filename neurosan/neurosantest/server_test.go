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
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	testutil.Success(t, err)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	testutil.Success(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testutil.Success(t, err)
	return raw{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

func start(t *testing.T, o neurosantest.Options) *neurosantest.Server {
	t.Helper()
	if o.LineDelay == 0 {
		o.LineDelay = -1
	}
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
		{"list", "GET", "/api/v1/list", "", 200, `"agent_name":"games/quest_designer"`},
		{"function nested", "GET", "/api/v1/games/quest_designer/function", "", 200, `"description":"Designs side quests`},
		{"connectivity", "GET", "/api/v1/math_guy/connectivity", "", 200, `"display_as":"coded_tool"`},
		{"unknown agent empty 404", "GET", "/api/v1/nobody/function", "", 404, ""},
		{"unknown nested agent", "POST", "/api/v1/games/nobody/streaming_chat", "{}", 404, ""},
		{"forbidden", "GET", "/api/v1/locked/function", "", 403, `"error":"Not authorized"`},
		{"bad json", "POST", "/api/v1/math_guy/streaming_chat", "{nope", 400, `{"error":"Invalid JSON format"}`},
		{"no text streams {}", "POST", "/api/v1/math_guy/streaming_chat", "{}", 200, "{}\n"},
		{"readyz", "GET", "/readyz", "", 200, "ok"},
		{"livez", "GET", "/livez", "", 200, "ok"},
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
				testutil.Equal(t, "echo", strings.Contains(l, `"request":{"user_message"`), tc.echo)
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
	testutil.Equal(t, "two objects on line 1", strings.Count(ls[0], `{"response":`), 2)
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
	if !strings.HasSuffix(r.body, "\n"+`{"error":"Request timeout"}`) {
		t.Fatalf("body %q does not end with the error object without newline", r.body)
	}
}

// A line split into 5-byte writes arrives as several reads, each one flushed.
func TestServer_splitWrites(t *testing.T) {
	t.Parallel()
	s := start(t, neurosantest.Options{SplitWrites: 5})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Post(s.URL+"/api/v1/math_guy/streaming_chat", "application/json", strings.NewReader(mathBody+"}"))
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
	s := neurosantest.New(&neurosantest.Options{Agents: neurosantest.DemoAgents(), LineDelay: -1, SplitWrites: 5})
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
	if !bytes.Contains(last.ChatContext, []byte(`"padding":"xxxxxxxxxx"`)) {
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
	testutil.Equal(t, "message", r.body, `{"error":"Too many concurrent requests"}`)
	testutil.Equal(t, "then 200", do(t, s, "GET", "/api/v1/list", "").status, 200)
	testutil.Equal(t, "requests", s.Requests(), 2)
}
