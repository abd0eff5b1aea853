package neurosan_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/neurosan"
	"github.com/gamelink-go/gamelink/neurosan/neurosantest"
)

// Each turn sends back, byte for byte, the chat_context of the previous
// answer, and the network remembers the conversation through it.
func TestConversation_Send_continues(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), "games/quest_designer", nil)
	ctx := context.Background()
	var prev json.RawMessage
	for i, text := range []string{"cats", "dogs", "owls"} {
		ans, err := cv.Send(ctx, text)
		testutil.Success(t, err)
		testutil.Equal(t, "quest number", strings.HasPrefix(ans.Text, "Quest "+string(rune('1'+i))+":"), true)
		testutil.Equal(t, "context sent verbatim", string(s.Turns()[i].ChatContext), string(prev))
		prev = cv.ChatContext()
		testutil.Equal(t, "stored context is the answer's", string(prev), string(ans.ChatContext))
	}
	testutil.Equal(t, "Answer", cv.Answer().Text, `Quest 3: about "owls", find the cat by the old well.`)
	cv.Reset()
	ans, err := cv.Send(ctx, "bats")
	testutil.Success(t, err)
	testutil.Equal(t, "new conversation", strings.HasPrefix(ans.Text, "Quest 1:"), true)
}

// Unknown fields inside chat_context (here the fake's padding) survive the
// round trip through the client.
func TestConversation_Send_contextOpaque(t *testing.T) {
	t.Parallel()
	agent := neurosantest.QuestDesigner()
	agent.ContextPadding = 100
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), agent.Name, nil)
	_, err := cv.Send(context.Background(), "a")
	testutil.Success(t, err)
	_, err = cv.Send(context.Background(), "b")
	testutil.Success(t, err)
	testutil.Equal(t, "padding sent back", strings.Contains(string(s.Turns()[1].ChatContext), strings.Repeat("x", 100)), true)
}

func TestConversation_Send_slyData(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), "math_guy", nil)
	testutil.Success(t, cv.SetSlyData("x", 6))
	testutil.Success(t, cv.SetSlyData("y", 7))
	ans, err := cv.Send(context.Background(), "multiply")
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "6 * 7 = 42")
	sly := cv.SlyData()
	testutil.Equal(t, "merged", sly, map[string]json.RawMessage{"x": json.RawMessage(`6`), "y": json.RawMessage(`7`), "equals": json.RawMessage(`42`)})
	testutil.Equal(t, "sent", string(s.Turns()[0].SlyData["x"]), "6")

	testutil.Success(t, cv.SetSlyData("x", 50))
	_, err = cv.Send(context.Background(), "subtract")
	testutil.Success(t, err)
	testutil.Equal(t, "overwritten", string(cv.SlyData()["equals"]), "43")
	testutil.Equal(t, "previous result sent along", string(s.Turns()[1].SlyData["equals"]), "42")
	testutil.Success(t, cv.SetSlyData("equals", nil))
	_, ok := cv.SlyData()["equals"]
	testutil.Equal(t, "deleted", ok, false)
}

func TestConversation_Send_budget(t *testing.T) {
	t.Parallel()
	agent := neurosantest.QuestDesigner()
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), agent.Name, &neurosan.ConversationOptions{MaxContextBytes: 400})
	ctx := context.Background()
	drops := 0
	for range 6 {
		ans, err := cv.Send(ctx, "a fairly long message to make the history grow quickly")
		testutil.Success(t, err)
		if len(ans.ChatContext) > 400 {
			drops++
			testutil.Equal(t, "dropped", len(cv.ChatContext()), 0)
		} else {
			testutil.Equal(t, "kept", len(cv.ChatContext()), len(ans.ChatContext))
		}
		testutil.Equal(t, "stored within budget", len(cv.ChatContext()) <= 400, true)
	}
	testutil.Equal(t, "drops counted", cv.ContextDrops(), drops)
	if drops == 0 {
		t.Fatal("the budget never applied; make the messages longer")
	}
}

func TestConversation_Send_errorKeepsState(t *testing.T) {
	t.Parallel()
	var fail atomic.Bool // read on the fake's goroutine
	agent := neurosantest.QuestDesigner()
	inner := agent.Script
	agent.Script = func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		if fail.Load() {
			return neurosantest.Reply{Fault: neurosantest.FaultInternal}
		}
		return inner(ctx, tn)
	}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), agent.Name, nil)
	_, err := cv.Send(context.Background(), "one")
	testutil.Success(t, err)
	before := string(cv.ChatContext())
	fail.Store(true)
	_, err = cv.Send(context.Background(), "two")
	var se *neurosan.StreamError
	testutil.ErrorAs(t, err, &se)
	testutil.Equal(t, "context unchanged", string(cv.ChatContext()), before)
	fail.Store(false)
	ans, err := cv.Send(context.Background(), "two")
	testutil.Success(t, err)
	testutil.Equal(t, "retry continues", strings.HasPrefix(ans.Text, "Quest 2:"), true)
}

func TestConversation_Send_busy(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	release := make(chan struct{})
	agent := neurosantest.Agent{Name: "slow", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		close(entered)
		<-release
		return neurosantest.Reply{Text: "ok"}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), "slow", nil)
	done := make(chan error, 1)
	go func() { _, err := cv.Send(context.Background(), "1"); done <- err }()
	<-entered
	_, err := cv.Send(context.Background(), "2")
	testutil.ErrorIs(t, err, neurosan.ErrBusy)
	close(release)
	testutil.Success(t, <-done)
}

// TestConversation_Stream: a turn's messages are received as a stream's
// events, and the conversation keeps the answer when the stream ends; a
// second turn is refused until then. (Until issue #21 the messages came
// through an OnMessage callback.)
func TestConversation_Stream(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), "games/quest_designer", &neurosan.ConversationOptions{Filter: neurosan.FilterMaximal})
	st, err := cv.Stream(context.Background(), "x")
	testutil.Success(t, err)
	defer st.Close()
	_, err = cv.Send(context.Background(), "y")
	testutil.ErrorIs(t, err, neurosan.ErrBusy)
	var seen []string
	for m := range st.Events() {
		tool := "(no origin)" // the server's final answer has none
		if len(m.Origin) > 0 {
			tool = m.Origin[len(m.Origin)-1].Tool
		}
		seen = append(seen, string(m.Type)+" "+tool)
	}
	testutil.Success(t, st.Err())
	testutil.Equal(t, "seen", seen, []string{"AGENT lore_keeper", "AGENT_FRAMEWORK (no origin)"})
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "kept", cv.Answer(), ans)
	testutil.Equal(t, "context kept", string(cv.ChatContext()), string(ans.ChatContext))
	_, err = cv.Send(context.Background(), "y")
	testutil.Success(t, err)

	// A stream closed before its end changes nothing, and frees the turn.
	before := cv.ChatContext()
	st2, err := cv.Stream(context.Background(), "z")
	testutil.Success(t, err)
	st2.Close()
	testutil.Equal(t, "unchanged", string(cv.ChatContext()), string(before))
	_, err = cv.Send(context.Background(), "again")
	testutil.Success(t, err)
}

func TestConversation_saveRestore(t *testing.T) {
	t.Parallel()
	s := startFake(t, &neurosantest.Options{Agents: neurosantest.DemoAgents()})
	c := fakeClient(t, s, nil)
	cv := neurosan.NewConversation(c, "games/quest_designer", nil)
	testutil.Success(t, cv.SetSlyData("town", "harbour"))
	_, err := cv.Send(context.Background(), "cats")
	testutil.Success(t, err)
	slot, err := json.Marshal(cv)
	testutil.Success(t, err)

	loaded := neurosan.NewConversation(c, "games/quest_designer", nil)
	testutil.Success(t, json.Unmarshal(slot, loaded))
	testutil.Equal(t, "context", string(loaded.ChatContext()), string(cv.ChatContext()))
	testutil.Equal(t, "sly", loaded.SlyData(), cv.SlyData())
	ans, err := loaded.Send(context.Background(), "dogs")
	testutil.Success(t, err)
	testutil.Equal(t, "continued after load", strings.HasPrefix(ans.Text, "Quest 2:"), true)

	other := neurosan.NewConversation(c, "math_guy", nil)
	testutil.Error(t, json.Unmarshal(slot, other))
	testutil.Error(t, json.Unmarshal([]byte(`{"v":9,"agent":"math_guy"}`), other))
	testutil.Success(t, json.Unmarshal([]byte(`{"v":1,"agent":"math_guy"}`), other))
	testutil.Equal(t, "empty slot", len(other.ChatContext()), 0)
}

// chat_context goes back byte for byte, whitespace, escapes and unknown
// fields included, as a Python server (json.dumps with ", " separators)
// writes it.
func TestConversation_Send_contextVerbatim(t *testing.T) {
	t.Parallel()
	const ctx = `{"chat_histories": [{"origin": [{"tool": "front", "instantiation_index": 1}], "messages": [{"type": "AI", "text": "caf\u00e9 <b> & 1.0e2"}], "future": {"n": 12345678901234567890}}]}`
	var mu sync.Mutex
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ChatContext json.RawMessage `json:"chat_context"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		mu.Lock()
		got = append(got, string(req.ChatContext))
		mu.Unlock()
		io.WriteString(w, `{"response": {"type": "AGENT_FRAMEWORK", "text": "ok", "chat_context": `+ctx+`}}`+"\n")
	}))
	t.Cleanup(ts.Close)
	cv := neurosan.NewConversation(newClient(t, ts.URL, nil), "front", nil)
	for range 2 {
		_, err := cv.Send(context.Background(), "hi")
		testutil.Success(t, err)
	}
	slot, err := json.Marshal(cv)
	testutil.Success(t, err)
	restored := neurosan.NewConversation(newClient(t, ts.URL, nil), "front", nil)
	testutil.Success(t, restored.UnmarshalJSON(mustMarshalJSON(t, cv)))
	_, err = restored.Send(context.Background(), "hi")
	testutil.Success(t, err)
	mu.Lock()
	defer mu.Unlock()
	testutil.Equal(t, "sent", got, []string{"", ctx, ctx})
	testutil.Equal(t, "slot is valid JSON", json.Valid(slot), true)
}

func mustMarshalJSON(t *testing.T, cv *neurosan.Conversation) []byte {
	t.Helper()
	b, err := cv.MarshalJSON()
	testutil.Success(t, err)
	return b
}

// Python writes non-finite floats as NaN, Infinity and -Infinity (numpy
// values in sly_data, model output parsed into structure). The client reads
// them, keeps them as written in the raw fields, sends sly_data back as it
// came (as the Python client does), saves them, and decodes them with
// neurosan.Unmarshal to math.NaN() and math.Inf. Issue #25.
func TestConversation_Send_nonFinite(t *testing.T) {
	t.Parallel()
	stats := neurosantest.Agent{Name: "stats", AllowSlyData: []string{"mean"}, Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAgentProgress, Structure: json.RawMessage(`{"progress":NaN}`)})
		return neurosantest.Reply{
			Text:      "no data",
			Structure: json.RawMessage(`{"mean":NaN,"range":[-Infinity,Infinity]}`),
			SlyData:   map[string]json.RawMessage{"mean": json.RawMessage(`NaN`)},
		}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{stats}})
	var progress []float64
	cv := neurosan.NewConversation(fakeClient(t, s, nil), "stats", &neurosan.ConversationOptions{Filter: neurosan.FilterMaximal})
	turn, err := cv.Stream(context.Background(), "mean of nothing")
	testutil.Success(t, err)
	defer turn.Close()
	for m := range turn.Events() {
		if p, ok := m.Progress(); ok {
			progress = append(progress, p)
		}
	}
	ans, err := turn.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "structure as written", string(ans.Structure), `{"mean": NaN, "range": [-Infinity, Infinity]}`)
	var st struct {
		Mean  float64
		Range []float64
	}
	testutil.Success(t, neurosan.Unmarshal(ans.Structure, &st))
	testutil.Equal(t, "NaN", math.IsNaN(st.Mean), true)
	testutil.Equal(t, "range", st.Range, []float64{math.Inf(-1), math.Inf(1)})
	testutil.Equal(t, "progress NaN", len(progress) == 1 && math.IsNaN(progress[0]), true)
	testutil.Equal(t, "sly_data kept", string(cv.SlyData()["mean"]), "NaN")

	slot, err := json.Marshal(cv)
	testutil.Success(t, err)
	again := neurosan.NewConversation(fakeClient(t, s, nil), "stats", nil)
	testutil.Success(t, json.Unmarshal(slot, again))
	_, err = again.Send(context.Background(), "and now?")
	testutil.Success(t, err)
	testutil.Equal(t, "sent back as written", string(s.Turns()[1].SlyData["mean"]), "NaN")
	testutil.Equal(t, "context sent back", string(s.Turns()[1].ChatContext), string(cv.ChatContext()))
}

// The server can write {"error": "Request timeout"} (or "Internal server
// error") after its final message, because it waits for clean-up inside
// its request timeout; the connection can also drop then. The answer and
// its chat_context are kept, as the Python client keeps them, and the
// error is reported apart. Issue #25.
func TestConversation_Send_keepsAnswer(t *testing.T) {
	t.Parallel()
	for _, after := range []neurosantest.Fault{neurosantest.FaultTimeout, neurosantest.FaultInternal, neurosantest.FaultCut} {
		t.Run(after.String(), func(t *testing.T) {
			t.Parallel()
			agent := neurosantest.QuestDesigner()
			quest := agent.Script
			agent.Script = func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
				r := quest(ctx, tn)
				r.After = after
				return r
			}
			s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
			var logs testutil.Logs
			c := fakeClient(t, s, &neurosan.Options{Logger: logs.Logger()})
			cv := neurosan.NewConversation(c, agent.Name, nil)
			ans, err := cv.Send(context.Background(), "cats")
			testutil.Success(t, err)
			testutil.Equal(t, "answer", strings.HasPrefix(ans.Text, "Quest 1:"), true)
			testutil.Equal(t, "context kept", string(cv.ChatContext()), string(ans.ChatContext))
			ans, err = cv.Send(context.Background(), "dogs")
			testutil.Success(t, err)
			testutil.Equal(t, "continued", strings.HasPrefix(ans.Text, "Quest 2:"), true)
			warnings := logs.Records(slog.LevelWarn)
			testutil.Equal(t, "reported twice", len(warnings), 2)
			want := map[neurosantest.Fault]string{neurosantest.FaultTimeout: "Request timeout", neurosantest.FaultInternal: "Internal server error", neurosantest.FaultCut: "connection cut"}[after]
			logged, _ := testutil.Attr(warnings[0], "err").(error)
			testutil.ErrorIs(t, logged, neurosan.ErrAfterAnswer)
			if !strings.Contains(logged.Error(), want) {
				t.Errorf("logged %q, want the error after the answer (%s)", logged, want)
			}
		})
	}
}

// The stream reports what followed the answer: Answer keeps the answer,
// Next and Err return the error, which matches ErrAfterAnswer and the
// error itself. Issue #25.
func TestStream_Answer_afterAnswer(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "late", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		return neurosantest.Reply{Text: "done", After: neurosantest.FaultTimeout}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "late", &neurosan.ChatRequest{Text: "x"})
	testutil.Success(t, err)
	defer st.Close()
	testutil.Success(t, st.Err())
	ans, err := st.Answer(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "done")
	err = st.Err()
	testutil.ErrorIs(t, err, neurosan.ErrAfterAnswer)
	var se *neurosan.StreamError
	testutil.ErrorAs(t, err, &se)
	testutil.Equal(t, "timeout", se.Timeout(), true)
	_, err = st.Next(context.Background())
	testutil.ErrorIs(t, err, neurosan.ErrAfterAnswer)
	testutil.Equal(t, "message", strings.Contains(err.Error(), "streaming_chat: after the answer: stream error"), true)
}

// An error after an intermediate AGENT_FRAMEWORK message (no chat_context)
// is still a failure: that message is not the answer.
func TestStream_Answer_afterIntermediate(t *testing.T) {
	t.Parallel()
	agent := neurosantest.Agent{Name: "busy", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAgentFramework, Text: "Patience, please."})
		return neurosantest.Reply{Fault: neurosantest.FaultTimeout}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	st, err := fakeClient(t, s, nil).StreamingChat(context.Background(), "busy", &neurosan.ChatRequest{Text: "x", Filter: neurosan.FilterMaximal})
	testutil.Success(t, err)
	defer st.Close()
	_, err = st.Answer(context.Background())
	var se *neurosan.StreamError
	testutil.ErrorAs(t, err, &se)
	if errors.Is(err, neurosan.ErrAfterAnswer) {
		t.Fatalf("an intermediate message taken for the answer: %v", err)
	}
}

// "Event acknowledged" and a network's set-up error come with an empty
// chat_context ({}): the answer is returned, and the conversation keeps
// its history. Issue #25.
func TestConversation_Send_emptyContext(t *testing.T) {
	t.Parallel()
	var ack atomic.Bool
	agent := neurosantest.QuestDesigner()
	quest := agent.Script
	agent.Script = func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		if ack.Load() {
			return neurosantest.Reply{Text: "Event acknowledged", EmptyContext: true}
		}
		return quest(ctx, tn)
	}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	cv := neurosan.NewConversation(fakeClient(t, s, nil), agent.Name, nil)
	_, err := cv.Send(context.Background(), "one")
	testutil.Success(t, err)
	before := string(cv.ChatContext())
	ack.Store(true)
	ans, err := cv.Send(context.Background(), "ping")
	testutil.Success(t, err)
	testutil.Equal(t, "answer", ans.Text, "Event acknowledged")
	testutil.Equal(t, "its context", string(ans.ChatContext), "{}")
	testutil.Equal(t, "history kept", string(cv.ChatContext()), before)
	ack.Store(false)
	ans, err = cv.Send(context.Background(), "two")
	testutil.Success(t, err)
	testutil.Equal(t, "continued", strings.HasPrefix(ans.Text, "Quest 2:"), true)
}

// A sub-network's AGENT_FRAMEWORK message (origin path of length 3), even
// with a chat_context, is never the network's answer: NeuroSan takes the
// answer from the front-man only (docs/neurosan-protocol.md). The
// replayed case: that message, then {"error": "Request timeout"}, which
// must fail the turn with both filters (MINIMAL passes every
// AGENT_FRAMEWORK message with a chat_context, whatever its origin).
// Issue #33 item 3.
func TestStream_Answer_subNetworkIsNotTheAnswer(t *testing.T) {
	t.Parallel()
	sub := []neurosan.Origin{{Tool: "quest_designer", InstantiationIndex: 1}, {Tool: "lore_keeper", InstantiationIndex: 1}, {Tool: "lore_front", InstantiationIndex: 1}}
	agent := neurosantest.Agent{Name: "relay", Script: func(ctx context.Context, tn *neurosantest.Turn) neurosantest.Reply {
		tn.Emit(ctx, neurosan.ChatMessage{Type: neurosan.TypeAgentFramework, Origin: sub, Text: "the lore keeper's answer",
			ChatContext: json.RawMessage(`{"chat_histories": []}`)})
		return neurosantest.Reply{Fault: neurosantest.FaultTimeout}
	}}
	s := startFake(t, &neurosantest.Options{Agents: []neurosantest.Agent{agent}})
	c := fakeClient(t, s, nil)
	for _, f := range []neurosan.ChatFilter{neurosan.FilterMinimal, neurosan.FilterMaximal} {
		st, err := c.StreamingChat(context.Background(), "relay", &neurosan.ChatRequest{Text: "x", Filter: f})
		testutil.Success(t, err)
		m, err := st.Next(context.Background())
		testutil.Success(t, err)
		testutil.Equal(t, "relayed message's origin", len(m.Origin), 3) // written by both filters, as the server does
		ans, err := st.Answer(context.Background())
		st.Close()
		var se *neurosan.StreamError
		testutil.ErrorAs(t, err, &se)
		testutil.Equal(t, "timeout", se.Timeout(), true)
		if ans != nil || errors.Is(err, neurosan.ErrAfterAnswer) {
			t.Fatalf("filter %v: the sub-network's message taken for the answer: %v, %v", f, ans, err)
		}
	}
	cv := neurosan.NewConversation(c, "relay", nil)
	ans, err := cv.Send(context.Background(), "x")
	if err == nil || ans != nil || cv.ChatContext() != nil {
		t.Fatalf("Send = %v, %v (context %s); want the timeout and no answer", ans, err, cv.ChatContext())
	}
}
