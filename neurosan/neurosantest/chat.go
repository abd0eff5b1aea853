package neurosantest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gamelink-go/gamelink/neurosan"

	"github.com/gamelink-go/gamelink/neurosan/internal/wire"
)

// chatRequest is the request as the real server reads it: only
// user_message.text, sly_data, chat_context and chat_filter.chat_filter_type,
// each value as the client wrote it.
type chatRequest struct {
	text    string
	hasText bool // a user_message.text string was sent (it may be empty)
	sly     map[string]json.RawMessage
	context json.RawMessage
	filter  json.RawMessage // chat_filter_type, nil if absent
}

func parseChatRequest(body []byte) (*chatRequest, error) {
	ms, err := pyObject(body)
	if err != nil {
		return nil, err
	}
	req := &chatRequest{context: member(ms, wire.ChatContext)}
	if string(req.context) == "null" {
		req.context = nil
	}
	if um, err := pyObject(member(ms, wire.UserMessage)); err == nil {
		req.hasText = json.Unmarshal(member(um, "text"), &req.text) == nil
	}
	if sly, err := pyObject(member(ms, wire.SlyData)); err == nil {
		req.sly = map[string]json.RawMessage{}
		for _, m := range sly {
			req.sly[m.key] = m.val
		}
	}
	if f, err := pyObject(member(ms, wire.ChatFilter)); err == nil {
		req.filter = member(f, wire.ChatFilterType)
	}
	return req, nil
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
func filterOf(raw json.RawMessage) (maximal, echo bool, text string) {
	if len(raw) == 0 {
		return false, false, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.EqualFold(s, "MAXIMAL"), s != "MINIMAL", s
	}
	n, err := strconv.Atoi(string(raw))
	return err == nil && n == 2, true, string(raw)
}

// streamingChat serves one turn. As the real handler, it takes a
// concurrency slot first (503 beyond the limit), then parses the body (400
// for bad JSON), flushes the 200 headers and streams one json.dumps line
// per response.
func (s *Server) streamingChat(w http.ResponseWriter, r *http.Request, a *Agent) {
	if !s.acquire() {
		writeError(w, http.StatusServiceUnavailable, "Too many concurrent requests")
		return
	}
	var rec *TurnRecord
	defer func() { s.release(rec) }()
	body, err := readBody(r.Body)
	var req *chatRequest
	if err == nil {
		req, err = parseChatRequest(body)
	}
	if errors.Is(err, errNotObject) {
		writePage(w, http.StatusInternalServerError) // the server fails on it before the stream
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON format")
		return
	}
	maximal, echo, filter := filterOf(req.filter)
	rec = &TurnRecord{Agent: a.Name, Text: req.text, Filter: filter, ChatContext: req.context, SlyData: req.sly, Header: r.Header.Clone()}
	s.record(rec)

	w.Header().Set("Content-Type", "application/json-lines")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	lw := &lineWriter{w: w, rc: rc, client: r.Context(), server: s.ctx, opts: &s.opts}
	if !req.hasText {
		// No user_message.text: the server streams one empty object.
		if lw.line([]byte("{}\n")) != nil {
			s.cancelled(rec)
		}
		return
	}
	c := &chat{s: s, a: a, lw: lw, rec: rec, maximal: maximal}
	if echo {
		c.echo = pyJSON(body)
	}
	c.run(req)
}

// chat runs one turn: the script in its own goroutine, the writer here.
type chat struct {
	s       *Server
	a       *Agent
	lw      *lineWriter
	rec     *TurnRecord
	maximal bool
	echo    []byte // the request as the server re-encodes it, or nil

	heartbeat *time.Timer // nil without Options.Heartbeat
}

func (c *chat) run(req *chatRequest) {
	hist, padding, err := c.parseHistory(req.context)
	if err != nil {
		c.fail("Internal server error")
		return
	}
	// The script's context ends with the server, or when the fake notices
	// at a write that the client left: never just because it left.
	ctx, cancel := context.WithCancel(c.s.ctx)
	defer cancel()
	steps := make(chan neurosan.ChatMessage)
	done := make(chan Reply, 1)
	turn := &Turn{Agent: c.a.Name, Text: req.text, History: hist, SlyData: req.sly, steps: steps, front: c.a.frontMan()}
	script := c.a.Script
	if script == nil {
		script = echoScript
	}
	go func() { done <- script(ctx, turn) }()

	var beat <-chan time.Time
	if d := c.s.opts.Heartbeat; d > 0 {
		c.heartbeat = time.NewTimer(d)
		defer c.heartbeat.Stop()
		beat = c.heartbeat.C
	}
	for {
		var err error
		select {
		case m := <-steps:
			// MINIMAL passes only AGENT_FRAMEWORK messages with a
			// chat_context, and checks no origin: a sub-network's relayed
			// answer passes too (docs/neurosan-protocol.md).
			if c.maximal || m.Type == neurosan.TypeAgentFramework && m.ChatContext != nil {
				err = c.respond(&m)
			}
		case <-beat:
			err = c.beat()
		case <-c.s.ctx.Done():
			err = c.s.ctx.Err()
		case reply := <-done:
			if c.s.ctx.Err() != nil {
				c.lw.cut() // the server is closing: the stream does not end cleanly
				c.s.cancelled(c.rec)
			} else if errors.Is(c.finish(turn, reply, padding), errClientGone) {
				c.s.cancelled(c.rec)
			}
			return
		}
		if err != nil {
			// The client left, the server closed, or a script's value
			// failed the turn: stop the script and join it.
			cancel()
			<-done
			if c.s.ctx.Err() != nil {
				c.lw.cut()
			}
			if !errors.Is(err, errScriptValue) {
				c.s.cancelled(c.rec)
			}
			return
		}
	}
}

// beat writes a heartbeat frame when nothing was written for a whole
// interval, as the server's heartbeat task does: it wakes every interval
// and writes only if the last write is within half a second of being an
// interval old.
func (c *chat) beat() error {
	d := c.s.opts.Heartbeat
	if wait := d - time.Since(c.lw.last); wait > 500*time.Millisecond {
		c.heartbeat.Reset(wait)
		return nil
	}
	c.heartbeat.Reset(d)
	if err := c.lw.write(append(pyJSON([]byte(`{"response":{"type":"AGENT_PROGRESS","text":""}}`)), '\n')); err != nil {
		return err
	}
	c.lw.last = time.Now()
	return nil
}

func (c *chat) finish(t *Turn, reply Reply, padding string) error {
	switch reply.Fault {
	case FaultTimeout:
		return c.fail("Request timeout")
	case FaultInternal:
		return c.fail("Internal server error")
	case FaultCut:
		err := c.lw.flushPending()
		c.lw.cut()
		return err
	}
	msg := neurosan.ChatMessage{Type: neurosan.TypeAgentFramework, Text: reply.Text}
	if reply.EmptyContext {
		msg.ChatContext = json.RawMessage("{}")
	} else {
		msg.ChatContext = c.context(t, reply.Text, padding)
		msg.Structure = reply.Structure
		msg.SlyData = c.allowed(reply.SlyData)
	}
	if err := c.respond(&msg); err != nil {
		return err // errScriptValue: the error object is written
	}
	if err := c.lw.flushPending(); err != nil {
		return err
	}
	switch reply.After {
	case FaultTimeout:
		return c.lw.write(errorObject("Request timeout"))
	case FaultInternal:
		return c.lw.write(errorObject("Internal server error"))
	case FaultCut:
		c.lw.cut()
	}
	return nil
}

// fail ends the stream with an error object after the last full line,
// without a newline, as the real handler does (its status 503 or 500
// comes too late to be sent).
func (c *chat) fail(msg string) error {
	if err := c.lw.flushPending(); err != nil {
		return err
	}
	return c.lw.write(errorObject(msg))
}

func errorObject(msg string) []byte {
	var o wire.Object
	o.Value(wire.Error, msg)
	return tornadoJSON(done(&o))
}

// errScriptValue ends a turn whose script returned a value that is not
// JSON: the stream then ends with {"error": "Internal server error"}, as
// an exception in the server would end it.
var errScriptValue = errors.New("neurosantest: a script's value is not JSON")

// respond writes one ChatResponse: {"response": message}, plus the request
// echo when asked for.
func (c *chat) respond(m *neurosan.ChatMessage) error {
	msg, err := messageJSON(m)
	if err != nil {
		if err := c.fail("Internal server error"); err != nil {
			return err
		}
		return errScriptValue
	}
	var o wire.Object
	o.Raw("response", msg)
	o.Raw("request", c.echo)
	return c.lw.response(pyJSON(done(&o)))
}

// messageJSON writes a message with the members in the order the server's
// converter adds them: type, origin (absent on the final answer), text
// (always, "" included), chat_context, tool_result_origin, structure,
// sly_data, content_blocks; then any other field.
func messageJSON(m *neurosan.ChatMessage) ([]byte, error) {
	var o wire.Object
	o.Value("type", string(m.Type))
	if len(m.Origin) > 0 {
		o.Value("origin", m.Origin)
	}
	o.Value("text", m.Text)
	o.Raw(wire.ChatContext, m.ChatContext)
	if len(m.ToolResultOrigin) > 0 {
		o.Value("tool_result_origin", m.ToolResultOrigin)
	}
	o.Raw("structure", m.Structure)
	if m.SlyData != nil {
		o.Members(wire.SlyData, m.SlyData)
	}
	o.Raw("content_blocks", m.ContentBlocks)
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o.Raw(k, m.Extra[k])
	}
	b := done(&o)
	return b, validPy(b)
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
	if len(raw) == 0 {
		return nil, "", nil
	}
	b, err := goJSON(raw)
	if err != nil {
		return nil, "", err
	}
	var h history
	if err := json.Unmarshal(b, &h); err != nil {
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
	var list [][]byte
	for _, m := range msgs {
		var o wire.Object
		o.Value("type", string(m.Type))
		o.Value("text", m.Text)
		list = append(list, done(&o))
	}
	var ch wire.Object
	ch.Value("origin", []neurosan.Origin{{Tool: t.front, InstantiationIndex: 1}})
	ch.List("messages", list)
	if c.a.ContextPadding > 0 {
		padding = strings.Repeat("x", c.a.ContextPadding)
	}
	if padding != "" {
		ch.Value("padding", padding)
	}
	var o wire.Object
	o.List("chat_histories", [][]byte{done(&ch)})
	return done(&o)
}

func echoScript(ctx context.Context, t *Turn) Reply {
	return Reply{Text: "You said: " + t.Text}
}
