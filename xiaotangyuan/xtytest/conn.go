package xtytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// queueSize bounds a connection's request queue. A client flooding past
// it is closed with 1008, which the real gateway never does (its queue is
// unbounded); no test client comes near it.
const queueSize = 256

// hconn is one adapter connection: a reader that answers pings and routes
// responses at once, and a worker that processes requests strictly in
// order, like the gateway's per-connection promise queue.
type hconn struct {
	h      *Harness
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan inbound
	wg     sync.WaitGroup // worker and voice turns

	mu        sync.Mutex // guards following
	hello     *helloParams
	session   string
	started   map[string]bool // interactions that sent text.start
	pending   map[string]chan inbound
	lastChat  *chatParams
	saveID    string
	closeOnce sync.Once
}

// inbound is one decoded message.
type inbound struct {
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	JSONRPC *string         `json:"jsonrpc"`
	hasID   bool
}

// decodeInbound parses one frame the way the gateway does: not JSON, or
// not an object, is an error (answered -32700); fields of the wrong type
// are left nil and judged by the caller.
func decodeInbound(b []byte) (inbound, error) {
	var m inbound
	if !json.Valid(b) {
		var x any
		err := json.Unmarshal(b, &x)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return m, err
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return m, errors.New("JSON-RPC payload must be an object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return m, err
	}
	m.ID, m.hasID = raw["id"]
	m.Params, m.Result = raw["params"], raw["result"]
	str := func(k string) *string {
		var s string
		if v, ok := raw[k]; ok && json.Unmarshal(v, &s) == nil {
			return &s
		}
		return nil
	}
	m.JSONRPC, m.Method = str("jsonrpc"), str("method")
	if v, ok := raw["error"]; ok {
		m.Error = &rpcError{}
		json.Unmarshal(v, m.Error)
	}
	return m, nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func newHconn(h *Harness, ws *websocket.Conn) *hconn {
	hc := &hconn{
		h:       h,
		ws:      ws,
		queue:   make(chan inbound, queueSize),
		started: make(map[string]bool),
		pending: make(map[string]chan inbound),
	}
	hc.ctx, hc.cancel = context.WithCancel(context.Background())
	return hc
}

// run sends gateway.ready, then reads until the connection ends, and
// joins the worker and turns.
//
// gateway.ready is written on its own goroutine while the reader already
// reads: over an unbuffered pipe, a client that sends its hello before
// reading anything would otherwise block the fake's ready and the fake its
// hello until a write timeout. No message is handled before ready is on
// the wire, so it still comes first, as on the real gateway.
func (hc *hconn) run() {
	defer hc.wg.Wait()
	defer hc.cancel()
	readySent := make(chan struct{})
	hc.wg.Add(2)
	go hc.work()
	go func() {
		defer hc.wg.Done()
		defer close(readySent)
		hc.notify("gateway.ready", map[string]any{
			"protocolVersion": "1.1",
			"capabilities":    []string{"assistant.text-stream", "speech.asr-stream", "speech.tts-stream", "speech.barge-in"},
		})
	}()
	for {
		_, b, err := hc.ws.Read(hc.ctx)
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				// The gateway closes with 1009 and then its whole process
				// dies (seen running it; see xiaotangyuan/PROTOCOL.md, "Size limits").
				hc.h.crash()
			}
			hc.ws.CloseNow()
			return
		}
		<-readySent
		hc.handle(b)
	}
}

func (hc *hconn) close(code websocket.StatusCode, reason string) {
	hc.closeOnce.Do(func() {
		hc.ws.Close(code, reason)
		hc.cancel()
	})
}

func (hc *hconn) helloDone() bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.hello != nil
}

// handle classifies one message with the gateway's rules: every malformed
// frame, and every response it is not waiting for, gets -32700 with id
// null.
func (hc *hconn) handle(b []byte) {
	m, err := decodeInbound(b)
	if err != nil {
		hc.fail(nil, -32700, err.Error())
		return
	}
	rec := Message{Raw: append([]byte(nil), b...), Params: m.Params, Notification: !m.hasID}
	if m.hasID {
		rec.ID = m.ID
		if m.ID == nil {
			rec.ID = json.RawMessage("null")
		}
	}
	if m.Method != nil {
		rec.Method = *m.Method
	}
	hc.h.record(rec)
	if m.Method == nil && m.hasID && (m.Result != nil || m.Error != nil) && hc.deliver(m) {
		return
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		hc.fail(nil, -32700, `jsonrpc must be "2.0"`)
	case m.Method == nil || *m.Method == "":
		hc.fail(nil, -32700, "method must be a non-empty string")
	case m.hasID && !validID(m.ID):
		hc.fail(nil, -32700, "id must be a string, number, or null")
	default:
		// Everything else waits its turn, gateway.ping and notifications
		// included: the gateway runs one message at a time per connection
		// (read in its source and seen running it; see
		// xiaotangyuan/PROTOCOL.md, "One request at a time").
		select {
		case hc.queue <- m:
		default:
			hc.close(websocket.StatusPolicyViolation, "request queue full")
		}
	}
}

func validID(id json.RawMessage) bool {
	if id == nil {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// deliver hands a response to a waiting CallAtom.
func (hc *hconn) deliver(m inbound) bool {
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return false
	}
	hc.mu.Lock()
	ch := hc.pending[id]
	delete(hc.pending, id)
	hc.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- m
	return true
}

// work processes requests and notifications strictly in order.
func (hc *hconn) work() {
	defer hc.wg.Done()
	for {
		select {
		case <-hc.ctx.Done():
			return
		case m := <-hc.queue:
			res, err := hc.dispatch(*m.Method, m.Params)
			if m.hasID {
				hc.answer(m, res, err)
			}
			if *m.Method == "voice.stop" && err == nil {
				// After the answer, so the answer comes first on the wire;
				// concurrently, as the speech pipeline is not in the queue.
				hc.wg.Add(1)
				go func() {
					defer hc.wg.Done()
					hc.voiceTurn()
				}()
			}
		}
	}
}

// answer sends a result, or -32000 with err's text.
func (hc *hconn) answer(m inbound, result any, err error) {
	id := m.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	if err != nil {
		hc.fail(id, -32000, err.Error())
		return
	}
	hc.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (hc *hconn) fail(id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	hc.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{Code: code, Message: msg}})
}

func (hc *hconn) notify(method string, params any) {
	hc.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (hc *hconn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("xtytest: " + err.Error()) // a bug in the fake itself
	}
	hc.sendRaw(b)
}

func (hc *hconn) sendRaw(b []byte) {
	ctx, cancel := context.WithTimeout(hc.ctx, 10*time.Second)
	defer cancel()
	hc.ws.Write(ctx, websocket.MessageText, b)
}

// dispatch runs one method with the gateway's preconditions and errors.
func (hc *hconn) dispatch(method string, params json.RawMessage) (any, error) {
	switch method {
	case "adapter.hello":
		return hc.doHello(params)
	case "gateway.ping":
		return map[string]any{"pong": true}, nil
	case "state.update":
		return hc.doState(params)
	}
	if !hc.helloDone() {
		switch method {
		case "chat.send", "chat.retry", "assistant.compose":
			return nil, fmt.Errorf("adapter.hello must be sent before %s", method)
		}
	}
	switch method {
	case "chat.send":
		return hc.doChat(params, SourceChat)
	case "chat.retry":
		return hc.doChat(params, SourceRetry)
	case "assistant.compose":
		return hc.doChat(params, sourceCompose)
	case "voice.start", "voice.stop":
		return hc.doVoice(method)
	}
	return nil, fmt.Errorf("unknown method: %s", method)
}

func (hc *hconn) doHello(params json.RawMessage) (any, error) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.hello != nil { // checked first: a second hello is refused even when malformed
		return nil, errors.New("adapter.hello may only be sent once per connection")
	}
	p, err := parseHello(params)
	if err != nil {
		return nil, err
	}
	hc.hello = p
	hc.session = "game-" + p.GameID + "-" + newUUID()
	hc.saveID = p.SaveID // the gateway keeps the saveId as sent, untrimmed
	return map[string]any{"accepted": true, "protocolVersion": "1.1"}, nil
}

func (hc *hconn) doState(params json.RawMessage) (any, error) {
	save, err := parseState(params)
	if err != nil {
		return nil, err
	}
	if save != "" {
		hc.mu.Lock()
		hc.saveID = save
		hc.mu.Unlock()
	}
	return map[string]any{"accepted": true}, nil
}

func (hc *hconn) doVoice(method string) (any, error) {
	hc.mu.Lock()
	noPID := hc.hello == nil || hc.hello.ProcessID == nil
	hc.mu.Unlock()
	if noPID { // before the hello too: the gateway checks only for a processId
		return nil, fmt.Errorf("adapter.hello must provide processId before %s", method)
	}
	if method == "voice.start" {
		hc.bargeIn()
	}
	return map[string]any{"accepted": true}, nil
}

func (hc *hconn) bargeIn() {
	hc.mu.Lock()
	clear(hc.started)
	hc.mu.Unlock()
	hc.notify("assistant.text.cancel", map[string]any{"reason": "barge-in"})
	hc.notify("assistant.status", map[string]any{"status": "recording"})
}

// voiceTurn runs after voice.stop: thinking, thinking with the final
// transcript, then the reply as text.start, deltas, present, done; or
// assistant.error for a recording without speech.
func (hc *hconn) voiceTurn() {
	hc.notify("assistant.status", map[string]any{"status": "thinking"})
	tr := hc.h.o.Transcript
	if tr == "" {
		hc.notify("assistant.error", map[string]any{"message": "recording too short"})
		return
	}
	hc.notify("assistant.status", map[string]any{"status": "thinking", "transcript": tr})
	hc.mu.Lock()
	hc.lastChat = &chatParams{Text: tr} // a voice turn is what chat.retry repeats next
	hc.mu.Unlock()
	t := hc.newTurn(tr, SourceVoice, nil)
	reply, err := hc.h.o.Agent(hc.ctx, t)
	t.finish()
	if err != nil || reply == "" {
		hc.notify("assistant.error", map[string]any{"message": "model returned no text reply"})
		return
	}
	hc.notify("assistant.present", map[string]any{"text": reply, "source": "voice"})
	hc.notify("assistant.text.done", map[string]any{"interactionId": t.InteractionID, "text": reply, "source": "voice"})
}

// doChat runs chat.send, chat.retry and assistant.compose.
func (hc *hconn) doChat(params json.RawMessage, src Source) (any, error) {
	p, err := parseChat(params, src == SourceRetry)
	if err != nil {
		return nil, err
	}
	hc.mu.Lock()
	switch src {
	case SourceRetry:
		if hc.lastChat == nil {
			hc.mu.Unlock()
			return nil, errors.New("当前游戏会话还没有可重试的玩家请求") // "nothing to retry yet"
		}
		p.Text = hc.lastChat.Text
		if p.Context == nil { // retry without a context reuses the previous one
			p.Context = hc.lastChat.Context
		}
	case SourceChat:
		hc.lastChat = p
	}
	if p.Context != nil && p.Context.SaveID != "" {
		hc.saveID = p.Context.SaveID
	}
	session := hc.session
	hc.mu.Unlock()

	t := hc.newTurn(p.Text, src, p.Context)
	reply, err := hc.h.o.Agent(hc.ctx, t)
	t.finish()
	if err != nil {
		return nil, err
	}
	if reply == "" {
		return nil, errors.New("model returned no text reply")
	}
	if src != sourceCompose {
		hc.notify("assistant.text.done", map[string]any{"interactionId": t.InteractionID, "text": reply, "source": string(src)})
	}
	if src == SourceRetry {
		hc.notify("assistant.present", map[string]any{"text": reply, "source": "retry"})
	}
	return map[string]any{"reply": reply, "sessionId": session, "interactionId": t.InteractionID}, nil
}

// callAtom sends game.atom.execute and waits for the adapter's answer.
func (hc *hconn) callAtom(ctx context.Context, atom string, args any) (json.RawMessage, error) {
	if !hc.declared(atom) {
		return nil, fmt.Errorf("游戏未声明原子能力：%s", atom)
	}
	id := newUUID()
	ch := make(chan inbound, 1)
	hc.mu.Lock()
	hc.pending[id] = ch
	hc.mu.Unlock()
	forget := func() {
		hc.mu.Lock()
		delete(hc.pending, id)
		hc.mu.Unlock()
	}
	if args == nil {
		args = map[string]any{}
	}
	hc.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "game.atom.execute", "params": map[string]any{"atom": atom, "arguments": args}})
	t := time.NewTimer(hc.h.o.AtomTimeout)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, errors.New(m.Error.Message)
		}
		return m.Result, nil
	case <-t.C:
		forget()
		return nil, fmt.Errorf("游戏原子能力超时：%s", atom)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-hc.ctx.Done():
		forget()
		return nil, hc.ctx.Err()
	}
}

// declared reports whether the hello listed atom as a capability.
func (hc *hconn) declared(atom string) bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.hello == nil {
		return false
	}
	for _, c := range hc.hello.Capabilities {
		if c == atom && !strings.HasPrefix(c, "assistant.") && !strings.HasPrefix(c, "speech.") {
			return true
		}
	}
	return false
}

// legacy reports whether deltas go out twice (assistant.delta too): only
// to an adapter whose hello did not declare assistant.text-stream.
func (hc *hconn) legacy() bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	for _, c := range hc.hello.Capabilities {
		if c == "assistant.text-stream" {
			return false
		}
	}
	return true
}

// emitDelta sends text.start first when this interaction has not started
// (or was cancelled since), then the delta.
func (hc *hconn) emitDelta(id string, src Source, delta, text string, elapsed time.Duration) {
	hc.mu.Lock()
	first := !hc.started[id]
	hc.started[id] = true
	hc.mu.Unlock()
	if first {
		hc.notify("assistant.text.start", map[string]any{"interactionId": id, "source": string(src)})
	}
	p := map[string]any{"interactionId": id, "delta": delta, "text": text, "elapsedMs": float64(elapsed) / float64(time.Millisecond), "source": string(src)}
	hc.notify("assistant.text.delta", p)
	if hc.legacy() {
		hc.notify("assistant.delta", p)
	}
}
