package neurosantest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/neurosan"
)

// chatRequest is the request as the real server reads it: only
// user_message.text, sly_data, chat_context and chat_filter.
type chatRequest struct {
	UserMessage *struct {
		Text string `json:"text"`
	} `json:"user_message"`
	SlyData     map[string]json.RawMessage `json:"sly_data"`
	ChatContext json.RawMessage            `json:"chat_context"`
	ChatFilter  *struct {
		Type json.RawMessage `json:"chat_filter_type"`
	} `json:"chat_filter"`
}

// history is the shape of the chat_context this fake produces.
type history struct {
	ChatHistories []struct {
		Origin   []neurosan.Origin      `json:"origin"`
		Messages []neurosan.ChatMessage `json:"messages"`
		Padding  string                 `json:"padding,omitempty"`
	} `json:"chat_histories"`
}

// filterOf returns whether the filter is MAXIMAL and whether the server
// echoes the request on every line (any chat_filter_type other than the
// exact string "MINIMAL", as the real handler does).
func filterOf(req *chatRequest) (maximal, echo bool, raw string) {
	if req.ChatFilter == nil || len(req.ChatFilter.Type) == 0 {
		return false, false, ""
	}
	raw = string(req.ChatFilter.Type)
	var s string
	if json.Unmarshal(req.ChatFilter.Type, &s) == nil {
		return strings.EqualFold(s, "MAXIMAL"), s != "MINIMAL", s
	}
	n, err := strconv.Atoi(raw)
	return err == nil && n == 2, true, raw
}

func (s *Server) streamingChat(w http.ResponseWriter, r *http.Request, a *Agent) {
	body, err := readBody(r.Body)
	var req chatRequest
	if err != nil || json.Unmarshal(body, &req) != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON format")
		return
	}
	maximal, echo, filter := filterOf(&req)
	rec := &TurnRecord{Agent: a.Name, Filter: filter, ChatContext: req.ChatContext, SlyData: req.SlyData, Header: r.Header.Clone()}
	if req.UserMessage != nil {
		rec.Text = req.UserMessage.Text
	}
	if !s.begin(rec) {
		writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests")
		return
	}
	defer s.end(rec)

	w.Header().Set("Content-Type", "application/json-lines")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	lw := &lineWriter{w: w, rc: rc, ctx: r.Context(), opts: &s.opts}
	if rec.Text == "" {
		lw.line([]byte("{}\n"))
		return
	}
	var echoed json.RawMessage
	if echo {
		echoed = body
	}
	t := &chat{s: s, a: a, lw: lw, rec: rec, maximal: maximal, echo: echoed}
	t.run(r.Context(), &req)
}

// begin records a new turn, or refuses it beyond ConcurrencyLimit.
func (s *Server) begin(rec *TurnRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.ConcurrencyLimit > 0 && s.active >= s.opts.ConcurrencyLimit {
		return false
	}
	s.active++
	s.turns = append(s.turns, rec)
	s.notifyLocked()
	return true
}

func (s *Server) end(rec *TurnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	rec.Done = true
	s.notifyLocked()
}

func (s *Server) cancelled(rec *TurnRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.Cancelled = true
}

// chat runs one turn: the script in its own goroutine, the writer here.
type chat struct {
	s       *Server
	a       *Agent
	lw      *lineWriter
	rec     *TurnRecord
	maximal bool
	echo    json.RawMessage
}

func (c *chat) run(ctx context.Context, req *chatRequest) {
	hist, padding, err := c.parseHistory(req.ChatContext)
	if err != nil {
		c.fail(`{"error":"Internal server error"}`)
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	steps := make(chan neurosan.ChatMessage)
	done := make(chan Reply, 1)
	turn := &Turn{Agent: c.a.Name, Text: c.rec.Text, History: hist, SlyData: req.SlyData, steps: steps, front: c.a.frontMan()}
	script := c.a.Script
	if script == nil {
		script = echoScript
	}
	go func() { done <- script(ctx, turn) }()

	var hb <-chan time.Time
	var ticker *time.Ticker
	if c.s.opts.Heartbeat > 0 {
		ticker = time.NewTicker(c.s.opts.Heartbeat)
		defer ticker.Stop()
		hb = ticker.C
	}
	for {
		select {
		case m := <-steps:
			if ticker != nil {
				ticker.Reset(c.s.opts.Heartbeat)
			}
			// MINIMAL passes only AGENT_FRAMEWORK messages with a chat_context.
			pass := c.maximal || m.Type == neurosan.TypeAgentFramework && len(m.ChatContext) > 0
			if pass && c.respond(&m) != nil {
				c.abandon(cancel, done)
				return
			}
		case <-hb:
			if c.lw.line([]byte(`{"response":{"type":"AGENT_PROGRESS","text":""}}`+"\n")) != nil {
				c.abandon(cancel, done)
				return
			}
		case <-ctx.Done():
			c.abandon(cancel, done)
			return
		case reply := <-done:
			// A script that returned because the client left (both cases
			// ready at once) is a cancelled turn too.
			if ctx.Err() != nil || c.finish(ctx, turn, reply, padding) != nil {
				c.s.cancelled(c.rec)
			}
			return
		}
	}
}

// abandon records a turn the client left, cancels the script and joins it.
func (c *chat) abandon(cancel context.CancelFunc, done <-chan Reply) {
	cancel()
	<-done
	c.s.cancelled(c.rec)
}

func (c *chat) finish(ctx context.Context, t *Turn, reply Reply, padding string) error {
	switch reply.Fault {
	case FaultTimeout:
		return c.fail(`{"error":"Request timeout"}`)
	case FaultInternal:
		return c.fail(`{"error":"Internal server error"}`)
	}
	msg := neurosan.ChatMessage{
		Type: neurosan.TypeAgentFramework, Text: reply.Text, Structure: reply.Structure,
		Origin: []neurosan.Origin{{Tool: t.front}},
	}
	msg.ChatContext = c.context(t, reply.Text, padding)
	msg.SlyData = c.allowed(reply.SlyData)
	if err := c.respond(&msg); err != nil {
		return err
	}
	return c.lw.flushPending()
}

// fail ends the stream with an error object after the last full line,
// without a newline, as the real handler does.
func (c *chat) fail(obj string) error {
	if err := c.lw.flushPending(); err != nil {
		return err
	}
	return c.lw.write([]byte(obj))
}

// respond writes one ChatResponse, with the request echo when asked for.
func (c *chat) respond(m *neurosan.ChatMessage) error {
	msg, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	b := append([]byte(`{"response":`), msg...)
	if c.echo != nil {
		var compact bytes.Buffer
		json.Compact(&compact, c.echo)
		b = append(append(b, `,"request":`...), compact.Bytes()...)
	}
	return c.lw.response(append(b, '}'))
}

func (c *chat) allowed(sly map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range sly {
		if slices.Contains(c.a.AllowSlyData, k) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil // absent if empty, like the real server
	}
	return out
}

func (c *chat) parseHistory(raw json.RawMessage) ([]neurosan.ChatMessage, string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", nil
	}
	var h history
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, "", err
	}
	front := c.a.frontMan()
	for _, ch := range h.ChatHistories {
		if len(ch.Origin) > 0 && ch.Origin[0].Tool == front {
			return ch.Messages, ch.Padding, nil
		}
	}
	return nil, "", nil
}

// context builds the answer's chat_context: the front-man's history plus
// this turn, trimmed to MaxMessageHistory.
func (c *chat) context(t *Turn, answer, padding string) json.RawMessage {
	msgs := append(slices.Clone(t.History),
		neurosan.ChatMessage{Type: neurosan.TypeHuman, Text: t.Text},
		neurosan.ChatMessage{Type: neurosan.TypeAI, Text: answer})
	if n := c.a.MaxMessageHistory; n > 0 && len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	var h history
	h.ChatHistories = make([]struct {
		Origin   []neurosan.Origin      `json:"origin"`
		Messages []neurosan.ChatMessage `json:"messages"`
		Padding  string                 `json:"padding,omitempty"`
	}, 1)
	h.ChatHistories[0].Origin = []neurosan.Origin{{Tool: t.front, InstantiationIndex: 1}}
	h.ChatHistories[0].Messages = msgs
	if c.a.ContextPadding > 0 {
		h.ChatHistories[0].Padding = strings.Repeat("x", c.a.ContextPadding)
	} else {
		h.ChatHistories[0].Padding = padding
	}
	b, _ := json.Marshal(h)
	return b
}

func echoScript(ctx context.Context, t *Turn) Reply {
	return Reply{Text: "You said: " + t.Text}
}
