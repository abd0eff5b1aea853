package neurosan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

func TestClient_List(t *testing.T) {
	t.Parallel()
	hidden := neurosantest.Agent{Name: "secret", Hidden: true}
	s := startFake(t, &neurosantest.Options{Agents: append(neurosantest.DemoAgents(), hidden)})
	got, err := fakeClient(t, s, nil).List(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "agents", len(got), 2)
	testutil.Equal(t, "nested name", got[1].AgentName, "games/quest_designer")
	testutil.Equal(t, "tags", got[0].Tags, []string{"example"})
}

func TestClient_Function(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	c := fakeClient(t, s, nil)
	f, err := c.Function(context.Background(), "math_guy")
	testutil.Success(t, err)
	testutil.Equal(t, "description", f.Description, "Does arithmetic on sly_data x and y.")
	var schema struct{ Properties map[string]any }
	testutil.Success(t, json.Unmarshal(f.SlyDataSchema, &schema))
	testutil.Equal(t, "schema keys", len(schema.Properties), 2)
}

func TestClient_Connectivity(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	conn, err := fakeClient(t, s, nil).Connectivity(context.Background(), "games/quest_designer")
	testutil.Success(t, err)
	testutil.Equal(t, "nodes", len(conn.Nodes), 3)
	testutil.Equal(t, "tools", conn.Nodes[0].Tools, []string{"lore_keeper", "reward_balancer"})
	testutil.Equal(t, "display_as", conn.Nodes[2].DisplayAs, "coded_tool")
}

func TestClient_statusErrors(t *testing.T) {
	t.Parallel()
	agents := []neurosantest.Agent{{Name: "locked", Forbidden: true}, {Name: "open"}}
	s := startFake(t, &neurosantest.Options{Agents: agents})
	c := fakeClient(t, s, nil)
	ctx := context.Background()
	tests := []struct {
		name   string
		call   func() error
		target error
		code   int
		msg    string
	}{
		{"function unknown agent", func() error { _, err := c.Function(ctx, "nobody"); return err }, neurosan.ErrNotFound, 404, ""},
		{"connectivity forbidden", func() error { _, err := c.Connectivity(ctx, "locked"); return err }, neurosan.ErrForbidden, 403, ""}, // an empty body, as the server's
		{"chat unknown agent", func() error { _, err := c.StreamingChat(ctx, "a/b/c", &neurosan.ChatRequest{Text: "x"}); return err }, neurosan.ErrNotFound, 404, ""},
		{"chat forbidden", func() error { _, err := c.StreamingChat(ctx, "locked", &neurosan.ChatRequest{Text: "x"}); return err }, neurosan.ErrForbidden, 403, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			testutil.ErrorIs(t, err, tc.target)
			var se *neurosan.StatusError
			testutil.ErrorAs(t, err, &se)
			testutil.Equal(t, "status", se.StatusCode, tc.code)
			testutil.Equal(t, "message", se.Message, tc.msg)
		})
	}
}

// The 400 and other 5xx statuses come from a plain handler: the client never
// sends a body the fake would refuse.
func TestClient_otherStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   int
		body   string
		target error
		msg    string
	}{
		{400, `{"error":"Invalid JSON format"}`, neurosan.ErrBadRequest, "Invalid JSON format"},
		{500, `{"error":"Internal server error"}`, neurosan.ErrServer, "Internal server error"},
		{502, "<html>bad gateway</html>", neurosan.ErrServer, "<html>bad gateway</html>"},
		{504, " " + strings.Repeat("g", 600) + " ", neurosan.ErrServer, strings.Repeat("g", 512)}, // trimmed, cut to 512 bytes
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(ts.Close)
			_, err := newClient(t, ts.URL, nil).StreamingChat(context.Background(), "a", &neurosan.ChatRequest{Text: "x"})
			testutil.ErrorIs(t, err, tc.target)
			var se *neurosan.StatusError
			testutil.ErrorAs(t, err, &se)
			testutil.Equal(t, "message", se.Message, tc.msg)
			testutil.Equal(t, "attempts", se.Attempts, 1)
		})
	}
}

func TestClient_invalidAgent(t *testing.T) {
	t.Parallel()
	c := newClient(t, "http://127.0.0.1:1", nil)
	for _, name := range []string{"", "a//b", "../x", "a/./b", "a/"} {
		_, err := c.Function(context.Background(), name)
		testutil.ErrorIs(t, err, neurosan.ErrInvalidAgent)
	}
}

// Agent names keep their slashes; other characters are escaped per segment.
func TestClient_agentPath(t *testing.T) {
	t.Parallel()
	var got string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		io.WriteString(w, `{"function":{}}`)
	}))
	t.Cleanup(ts.Close)
	_, err := newClient(t, ts.URL+"/base/", nil).Function(context.Background(), "reg/sub net/ağent?")
	testutil.Success(t, err)
	testutil.Equal(t, "path", got, "/base/api/v1/reg/sub%20net/a%C4%9Fent%3F/function")
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		err  bool
		warn bool
	}{
		{"http://localhost:8080", false, false},
		{"http://127.0.0.1:8080", false, false},
		{"http://[::1]:8080", false, false},
		{"http://game.localhost", false, false},
		{"https://agents.example.com", false, false},
		{"http://agents.example.com:8080", false, true},
		{"http://192.168.1.20:8080", false, true},
		{"ws://localhost:8080", true, false},
		{"localhost:8080", true, false},
		{"http://localhost:8080/?q=1", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			var logs testutil.Logs
			_, err := neurosan.New(tc.url, &neurosan.Options{Logger: logs.Logger()})
			if tc.err {
				testutil.Error(t, err)
				return
			}
			testutil.Success(t, err)
			testutil.Equal(t, "warned", len(logs.Records(slog.LevelWarn)) == 1, tc.warn)
		})
	}
}

// TestNew_options: zero is the default; negative disables TurnTimeout,
// IdleTimeout, ReadLimit and Retries and is a *ConfigError for the other
// numbers and durations; an HTTPClient with a Timeout is refused. (Until
// issue #21 a negative RetryBackoff meant the default.)
func TestNew_options(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		o     neurosan.Options
		field string
	}{
		{"defaults", neurosan.Options{}, ""},
		{"no turn timeout", neurosan.Options{TurnTimeout: -1}, ""},
		{"no idle timeout", neurosan.Options{IdleTimeout: -1}, ""},
		{"no read limit", neurosan.Options{ReadLimit: -1}, ""},
		{"no retries", neurosan.Options{Retries: -1}, ""},
		{"negative retry backoff", neurosan.Options{RetryBackoff: -time.Second}, "RetryBackoff"},
		{"negative handshake timeout", neurosan.Options{HandshakeTimeout: -1}, "HandshakeTimeout"},
		{"client timeout", neurosan.Options{HTTPClient: &http.Client{Timeout: time.Minute}}, "HTTPClient"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := neurosan.New("http://localhost:8080", &tc.o)
			if tc.field == "" {
				testutil.Success(t, err)
				c.Close()
				return
			}
			var ce *neurosan.ConfigError
			testutil.ErrorAs(t, err, &ce)
			testutil.Equal(t, "field", ce.Field, tc.field)
			testutil.Equal(t, "text", err.Error(), "neurosan: option "+tc.field+": "+ce.Reason)
		})
	}
}

// TestClient_ConnectAndClose: Connect is one readiness probe; Close
// cancels what is in flight, a stream included, and later calls fail with
// ErrClosed. Issue #21.
func TestClient_ConnectAndClose(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{{Name: "slow", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		<-ctx.Done()
		return neurosantest.Reply{}
	}}}})
	c := fakeClient(t, s, nil)
	testutil.Success(t, c.Connect(context.Background()))
	st, err := c.StreamingChat(context.Background(), "slow", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	testutil.Success(t, c.Close())
	testutil.Success(t, c.Close())
	_, err = st.Next(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrClosed)
	_, err = c.List(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrClosed)
	testutil.ErrorIs(t, c.Connect(context.Background()), neurosan.ErrClosed)

	down := neurosantest.NewUnstartedServer(nil)
	defer down.Close()
	c2 := fakeClient(t, down, nil)
	testutil.Error(t, c2.Connect(context.Background()))
	notReady := startFake(t, &neurosantest.Options{NotReady: true})
	err = fakeClient(t, notReady, nil).Connect(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
}

func TestStreamingChat_minimal(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	c := fakeClient(t, s, nil)
	st, err := c.StreamingChat(context.Background(), "games/quest_designer", &neurosan.ChatRequest{Text: "cats"})
	testutil.Success(t, err)
	defer st.Close()
	m, err := st.Next(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "type", m.Type, neurosan.TypeAgentFramework)
	testutil.Equal(t, "text", m.Text, `Quest 1: about "cats", find the cat by the old well.`)
	testutil.Equal(t, "structure", string(m.Structure), `{"quest": 1}`) // as the server wrote it
	testutil.Equal(t, "has context", len(m.ChatContext) > 0, true)
	_, err = st.Next(context.Background())
	testutil.ErrorIs(t, err, io.EOF)
	testutil.Equal(t, "no echo asked", s.Turns()[0].Filter, "")
}

func TestStreamingChat_maximal(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	c := fakeClient(t, s, nil)
	sly := map[string]json.RawMessage{"x": json.RawMessage(`6`), "y": json.RawMessage(`7`)}
	st, err := c.StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{Text: "multiply", SlyData: sly, Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	var types []neurosan.MessageType
	var progress float64
	for {
		m, err := st.Next(context.Background())
		if err == io.EOF {
			break
		}
		testutil.Success(t, err)
		types = append(types, m.Type)
		if p, ok := m.Progress(); ok {
			progress = p
			testutil.Equal(t, "progress origin", m.Origin, []neurosan.Origin{{Tool: "math_guy"}, {Tool: "calculator"}})
		}
	}
	testutil.Equal(t, "types", types, []neurosan.MessageType{neurosan.TypeAI, neurosan.TypeAgentProgress, neurosan.TypeAgentToolResult, neurosan.TypeAgentFramework})
	testutil.Equal(t, "progress", progress, 0.5)
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "6 * 7 = 42")
	testutil.Equal(t, "sly allow-list", ans.SlyData, map[string]json.RawMessage{"equals": json.RawMessage(`42`)})
	testutil.Equal(t, "filter sent", s.Turns()[0].Filter, "MAXIMAL")
}

// The fake's framing traps: two responses per line, and lines split into
// 7-byte writes, so objects arrive cut anywhere. (Heartbeats are tested with
// fake time in synctest_test.go.)
func TestStreamingChat_framingTraps(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), TwoPerLine: true, SplitWrites: 7})
	c := fakeClient(t, s, nil)
	sly := map[string]json.RawMessage{"x": json.RawMessage(`1`), "y": json.RawMessage(`2`)}
	st, err := c.StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{Text: "add", SlyData: sly, Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	n := 0
	for {
		_, err := st.Next(context.Background())
		if err == io.EOF {
			break
		}
		testutil.Success(t, err)
		n++
	}
	testutil.Equal(t, "messages", n, 4)
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "1 + 2 = 3")
}

// A chat_context line over 1 MiB, which a bufio.Scanner client fails on.
func TestStreamingChat_hugeLine(t *testing.T) {
	t.Parallel()
	agent := neurosantest.QuestDesigner()
	agent.ContextPadding = 1<<20 + 123
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}, TwoPerLine: true})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), agent.Name, &neurosan.ChatRequest{Text: "add", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "huge context", len(ans.ChatContext) > 1<<20, true)
}

func TestStreamingChat_streamErrors(t *testing.T) {
	t.Parallel()
	for _, f := range []neurosantest.Fault{neurosantest.FaultTimeout, neurosantest.FaultInternal} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			t.Parallel()
			agent := neurosantest.Agent{Name: "flaky", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
				tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "thinking"})
				return neurosantest.Reply{Fault: f}
			}}
			s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
			st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "flaky", &neurosan.ChatRequest{Text: "go", Filter: neurosan.FilterMaximal})
			testutil.Success(t, err)
			defer st.Close()
			m, err := st.Next(context.Background())
			testutil.Success(t, err)
			testutil.Equal(t, "partial", m.Text, "thinking")
			_, err = st.Answer(context.Background())
			var se *neurosan.StreamError
			testutil.ErrorAs(t, err, &se)
			testutil.Equal(t, "timeout", se.Timeout(), f == neurosantest.FaultTimeout)
			testutil.Equal(t, "one request, no retry", s.Requests(), 1)
		})
	}
}

func TestStreamingChat_noText(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Answer(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrNoAnswer)
}

func TestStreamingChat_messageTooBig(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "big", ContextPadding: 200 << 10}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	st, err := fakeClient(t, s, &neurosan.Options{ReadLimit: 100 << 10}).StreamingChat(context.Background(), "big", &neurosan.ChatRequest{Text: "x"})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Next(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrMessageTooBig)
}

func TestStreamingChat_retry503(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), Unavailable: 2})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{Text: "x"})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "requests", s.Requests(), 3)
}

func TestStreamingChat_retry503exhausted(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), ShuttingDown: true})
	_, err := fakeClient(t, s, &neurosan.Options{Retries: 2}).StreamingChat(context.Background(), "math_guy", &neurosan.ChatRequest{Text: "x"})
	testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
	var se *neurosan.StatusError
	testutil.ErrorAs(t, err, &se)
	testutil.Equal(t, "message", se.Message, "Server is shutting down")
	testutil.Equal(t, "attempts", se.Attempts, 3)
	testutil.Equal(t, "requests", s.Requests(), 3)

	_, err = fakeClient(t, s, &neurosan.Options{Retries: -1}).List(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
	testutil.Equal(t, "no retry", s.Requests(), 4)
}

func TestStreamingChat_concurrencyLimit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	agent := neurosantest.Agent{Name: "slow", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return neurosantest.Reply{Text: "done"}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}, ConcurrencyLimit: 1})
	c := fakeClient(t, s, &neurosan.Options{Retries: -1})
	first, err := c.StreamingChat(context.Background(), "slow", &neurosan.ChatRequest{Text: "1"})
	testutil.Success(t, err)
	defer first.Close()
	_, err = c.StreamingChat(context.Background(), "slow", &neurosan.ChatRequest{Text: "2"})
	testutil.ErrorIs(t, err, neurosan.ErrUnavailable)
	close(release)
	_, err = first.Answer(context.Background())
	testutil.Success(t, err)
}

// startLongTurn starts a turn whose script emits one message and then runs
// until the client leaves, and returns once that message was read. The
// client's 30 s IdleTimeout is a watchdog: a test that expects the stream
// to be cut checks that it was not this timeout that ended it.
func startLongTurn(t *testing.T) (*neurosantest.Server, *neurosan.Stream) {
	t.Helper()
	agent := neurosantest.Agent{Name: "long", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "working"})
		<-ctx.Done()
		return neurosantest.Reply{}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	c := fakeClient(t, s, &neurosan.Options{IdleTimeout: 30 * time.Second})
	st, err := c.StreamingChat(context.Background(), "long", &neurosan.ChatRequest{Text: "go", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	m, err := st.Next(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "first message", m.Text, "working")
	return s, st
}

func TestClient_headersAndRecorder(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents(), Unavailable: 1})
	var log bytes.Buffer
	h := http.Header{}
	h.Set("user_id", "player-1")
	c := fakeClient(t, s, &neurosan.Options{Header: h, Recorder: &log})
	st, err := c.StreamingChat(context.Background(), "games/quest_designer", &neurosan.ChatRequest{Text: "hello"})
	testutil.Success(t, err)
	_, err = st.Answer(context.Background())
	testutil.Success(t, err)
	st.Close()
	testutil.Equal(t, "header", s.Turns()[0].Header.Get("user_id"), "player-1")
	c.Close() // the recording is asynchronous: Close writes what waits

	type line struct {
		Dir, Note string
		Msg       json.RawMessage
	}
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var v line
		testutil.Success(t, json.Unmarshal([]byte(l), &v))
		lines = append(lines, v)
	}
	testutil.Equal(t, "line count", len(lines), 4) // out, 503 in, out, answer in
	testutil.Equal(t, "first out", lines[0].Dir, "out")
	testutil.Equal(t, "503 noted", strings.HasPrefix(lines[1].Note, "503"), true)
	testutil.Equal(t, "request body", string(lines[2].Msg), `{"user_message":{"type":"HUMAN","text":"hello"}}`)
	testutil.Equal(t, "answer in", lines[3].Dir, "in")
	testutil.Equal(t, "answer recorded", bytes.Contains(lines[3].Msg, []byte(`"AGENT_FRAMEWORK"`)), true)
}

func TestStreamingChat_echoRule(t *testing.T) {
	t.Parallel()
	// The fake echoes the request for any filter other than the exact
	// string "MINIMAL", like the real server; the client decodes around it.
	// Lowercase "minimal" still filters: only the answer arrives.
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	var log bytes.Buffer
	c := fakeClient(t, s, &neurosan.Options{Recorder: &log})
	st, err := c.StreamingChat(context.Background(), "games/quest_designer", &neurosan.ChatRequest{Text: "x", Filter: "minimal"})
	testutil.Success(t, err)
	defer st.Close()
	var types []neurosan.MessageType
	for m := range st.Events() {
		types = append(types, m.Type)
	}
	testutil.Success(t, st.Err())
	testutil.Equal(t, "only the answer", types, []neurosan.MessageType{neurosan.TypeAgentFramework})
	testutil.Equal(t, "filter sent", s.Turns()[0].Filter, "minimal")
	c.Close() // the recording is asynchronous: Close writes what waits
	testutil.Equal(t, "request echoed in the stream", strings.Contains(log.String(), `"dir":"in","msg":{"request":{"user_message"`), true)
}

// A connection lost after the 200 is an error, never a retry: the agents
// may already have acted.
func TestStreamingChat_connectionLostNotRetried(t *testing.T) {
	t.Parallel()
	s, st := startLongTurn(t)
	defer st.Close()
	s.Close() // cuts the connection mid-stream
	_, err := st.Next(context.Background())
	testutil.Error(t, err)
	if errors.Is(err, io.EOF) {
		t.Fatalf("a cut stream must not look like a clean end: %v", err)
	}
	if errors.Is(err, neurosan.ErrIdleTimeout) {
		t.Fatalf("the fake's Close did not cut the stream: %v", err)
	}
	testutil.Equal(t, "one request", s.Requests(), 1)
	testutil.Equal(t, "server saw the cancel", s.Turns()[0].Cancelled, true)
}

// TestStream_Events: a range loop receives the messages, then Answer
// takes the answer and Err tells how the stream ended. (Until issue #21
// the loop was Messages, which yielded the error as a last pair.)
func TestStream_Events(t *testing.T) {
	t.Parallel()
	failing := neurosantest.Agent{Name: "failing", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "a"})
		return neurosantest.Reply{Fault: neurosantest.FaultInternal}
	}}
	s := startFake(t, &neurosantest.Options{Agents: append(neurosantest.DemoAgents(), failing)})
	c := fakeClient(t, s, nil)
	st, err := c.StreamingChat(context.Background(), "games/quest_designer", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	var types []neurosan.MessageType
	for m := range st.Events() {
		types = append(types, m.Type)
	}
	testutil.Success(t, st.Err())
	testutil.Equal(t, "types", types, []neurosan.MessageType{neurosan.TypeAgent, neurosan.TypeAgentFramework})
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "answer after range", ans.Type, neurosan.TypeAgentFramework)

	// An error ends the loop after the messages; Err returns it.
	st2, err := c.StreamingChat(context.Background(), "failing", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st2.Close()
	var got []string
	for m := range st2.Events() {
		got = append(got, m.Text)
	}
	testutil.Equal(t, "sequence", got, []string{"a"})
	var se *neurosan.StreamError
	testutil.ErrorAs(t, st2.Err(), &se)
	_, err = st2.Answer(context.Background())
	testutil.ErrorAs(t, err, &se)
}

func TestStreamingChat_nilRequest(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "math_guy", nil)
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Answer(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrNoAnswer)
	testutil.Equal(t, "sent without text", s.Turns()[0].Text, "")
}

func TestClient_List_tooBig(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"agents":[{"agent_name":"`+strings.Repeat("a", 2000)+`"}]}`)
	}))
	t.Cleanup(ts.Close)
	_, err := newClient(t, ts.URL, &neurosan.Options{ReadLimit: 1000}).List(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrMessageTooBig)
	got, err := newClient(t, ts.URL, &neurosan.Options{ReadLimit: -1}).List(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "no limit", len(got[0].AgentName), 2000)
}

// The answer is the last AGENT_FRAMEWORK message, not the last message: a
// message of another type after it does not replace it.
func TestStream_Answer_lastFramework(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"response":{"type":"AGENT_FRAMEWORK","text":"first"}}`+"\n"+
			`{"response":{"type":"AGENT_FRAMEWORK","text":"answer"}}`+"\n"+
			`{"response":{"type":"AGENT","text":"late note"}}`+"\n")
	}))
	t.Cleanup(ts.Close)
	st, err := newClient(t, ts.URL, nil).StreamingChat(context.Background(), "a", &neurosan.ChatRequest{Text: "x"})
	testutil.Success(t, err)
	defer st.Close()
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "answer")
}

// The server writes a message type it cannot name as the enum's name,
// UNKNOWN_MESSAGE_TYPE. Issue #25.
func TestStreamingChat_unknownType(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "odd", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: "UNKNOWN_MESSAGE_TYPE", Text: "?"})
		return neurosantest.Reply{Text: "ok"}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "odd", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	m, err := st.Next(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "type", m.Type, neurosan.TypeUnknown)
}

// A connection dropped in the middle of the stream is reported as cut, not
// as a bad stream. Issue #25.
func TestStreamingChat_cut(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "crash", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAI, Text: "working"})
		return neurosantest.Reply{Fault: neurosantest.FaultCut}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "crash", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Next(context.Background())
	testutil.Success(t, err)
	_, err = st.Answer(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrConnectionCut)
	testutil.ErrorIs(t, err, io.ErrUnexpectedEOF)
	if !strings.Contains(err.Error(), "connection cut") || strings.Contains(err.Error(), "bad stream") {
		t.Errorf("message %q should say the connection was cut", err)
	}
}
