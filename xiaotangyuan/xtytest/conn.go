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

	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// queueSize bounds a connection's request queue. A client flooding past
// it is closed with 1008, which the real gateway never does (its queue is
// unbounded); no test client comes near it.
const queueSize = 256

// hconn is one adapter connection: a reader that answers pings and routes
// responses at once, and a worker that processes requests strictly in
// order, like the gateway's per-connection promise queue.
type hconn struct {
	s      *Server
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

// inbound is one decoded message. It is not wire.Frame: the gateway reads
// a frame as a JavaScript value, more loosely than the client does (a
// member of the wrong type is absent rather than an error), and the fake
// must read as the gateway does.
type inbound struct {
	ID      json.RawMessage
	Method  *string
	Params  json.RawMessage
	Result  json.RawMessage
	Error   *wire.Error
	JSONRPC *string
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
		m.Error = &wire.Error{}
		json.Unmarshal(v, m.Error)
	}
	return m, nil
}

func newHconn(s *Server, ws *websocket.Conn) *hconn {
	hc := &hconn{
		s:       s,
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
		hc.notify(wire.NoteReady, wire.Ready{
			ProtocolVersion: wire.ProtocolVersion,
			Capabilities:    []string{wire.CapTextStream, "speech.asr-stream", "speech.tts-stream", "speech.barge-in"},
		})
	}()
	for {
		_, b, err := hc.ws.Read(hc.ctx)
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				// The gateway closes with 1009 and then its whole process
				// dies (seen running it; see docs/xiaotangyuan-protocol.md, "Size limits").
				hc.s.crash()
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
		hc.fail(nil, wire.CodeParse, err.Error())
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
	hc.s.record(rec)
	if m.Method == nil && m.hasID && (m.Result != nil || m.Error != nil) && hc.deliver(m) {
		return
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		hc.fail(nil, wire.CodeParse, `jsonrpc must be "2.0"`)
	case m.Method == nil || *m.Method == "":
		hc.fail(nil, wire.CodeParse, "method must be a non-empty string")
	case m.hasID && !wire.ValidID(m.ID):
		hc.fail(nil, wire.CodeParse, "id must be a string, number, or null")
	default:
		// Everything else waits its turn, gateway.ping and notifications
		// included: the gateway runs one message at a time per connection
		// (read in its source and seen running it; see
		// docs/xiaotangyuan-protocol.md, "One request at a time").
		select {
		case hc.queue <- m:
		default:
			hc.close(websocket.StatusPolicyViolation, "request queue full")
		}
	}
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
			if *m.Method == wire.MethodVoiceStop && err == nil {
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
	if err != nil {
		hc.fail(m.ID, wire.CodeServer, err.Error())
		return
	}
	hc.send(wire.EncodeResponse(m.ID, result, nil))
}

// fail answers with an error; an absent id is answered with id null.
func (hc *hconn) fail(id json.RawMessage, code int, msg string) {
	hc.send(wire.EncodeResponse(id, nil, &wire.Error{Code: code, Message: msg}))
}

func (hc *hconn) notify(method string, params any) {
	hc.send(wire.EncodeRequest(nil, method, params))
}

func (hc *hconn) send(b []byte, err error) {
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
	case wire.MethodHello:
		return hc.doHello(params)
	case wire.MethodPing:
		return wire.Pong{Pong: true}, nil
	case wire.MethodState:
		return hc.doState(params)
	}
	if !hc.helloDone() {
		switch method {
		case wire.MethodChat, wire.MethodRetry, wire.MethodCompose:
			return nil, fmt.Errorf("adapter.hello must be sent before %s", method)
		}
	}
	switch method {
	case wire.MethodChat:
		return hc.doChat(params, SourceChat)
	case wire.MethodRetry:
		return hc.doChat(params, SourceRetry)
	case wire.MethodCompose:
		return hc.doChat(params, sourceCompose)
	case wire.MethodVoiceStart, wire.MethodVoiceStop:
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
	return wire.HelloResult{Accepted: true, ProtocolVersion: wire.ProtocolVersion}, nil
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
	return wire.Accepted{Accepted: true}, nil
}

func (hc *hconn) doVoice(method string) (any, error) {
	hc.mu.Lock()
	noPID := hc.hello == nil || hc.hello.ProcessID == nil
	hc.mu.Unlock()
	if noPID { // before the hello too: the gateway checks only for a processId
		return nil, fmt.Errorf("adapter.hello must provide processId before %s", method)
	}
	if method == wire.MethodVoiceStart {
		hc.bargeIn()
	}
	return wire.Accepted{Accepted: true}, nil
}

func (hc *hconn) bargeIn() {
	hc.mu.Lock()
	clear(hc.started)
	hc.mu.Unlock()
	hc.notify(wire.NoteTextCancel, wire.TextCancel{Reason: "barge-in"})
	hc.notify(wire.NoteStatus, wire.Status{Status: "recording"})
}

// voiceTurn runs after voice.stop: thinking, thinking with the final
// transcript, then the reply as text.start, deltas, present, done; or
// assistant.error for a recording without speech.
func (hc *hconn) voiceTurn() {
	hc.notify(wire.NoteStatus, wire.Status{Status: "thinking"})
	tr := hc.s.o.Transcript
	if tr == "" {
		hc.notify(wire.NoteError, wire.ErrorNote{Message: "recording too short"})
		return
	}
	hc.notify(wire.NoteStatus, wire.Status{Status: "thinking", Transcript: tr})
	hc.mu.Lock()
	hc.lastChat = &chatParams{Text: tr} // a voice turn is what chat.retry repeats next
	hc.mu.Unlock()
	t := hc.newTurn(tr, SourceVoice, nil)
	reply, err := hc.s.o.Agent(hc.ctx, t)
	t.finish()
	if err != nil || reply == "" {
		hc.notify(wire.NoteError, wire.ErrorNote{Message: "model returned no text reply"})
		return
	}
	hc.notify(wire.NotePresent, wire.Present{Text: reply, Source: string(SourceVoice)})
	hc.notify(wire.NoteTextDone, wire.TextDone{InteractionID: t.InteractionID, Text: reply, Source: string(SourceVoice)})
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
	reply, err := hc.s.o.Agent(hc.ctx, t)
	t.finish()
	if err != nil {
		return nil, err
	}
	if reply == "" {
		return nil, errors.New("model returned no text reply")
	}
	if src != sourceCompose {
		hc.notify(wire.NoteTextDone, wire.TextDone{InteractionID: t.InteractionID, Text: reply, Source: string(src)})
	}
	if src == SourceRetry {
		hc.notify(wire.NotePresent, wire.Present{Text: reply, Source: string(SourceRetry)})
	}
	return wire.Reply{Reply: reply, SessionID: session, InteractionID: t.InteractionID}, nil
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
	a, err := json.Marshal(args)
	if err != nil {
		forget()
		return nil, fmt.Errorf("xtytest: atom arguments: %w", err)
	}
	rawID, _ := json.Marshal(id)
	hc.send(wire.EncodeRequest(rawID, wire.MethodAtom, wire.Atom{Atom: atom, Arguments: a}))
	t := time.NewTimer(hc.s.o.AtomTimeout)
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
		if c == wire.CapTextStream {
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
		hc.notify(wire.NoteTextStart, wire.TextStart{InteractionID: id, Source: string(src)})
	}
	p := wire.TextDelta{InteractionID: id, Delta: delta, Text: text, ElapsedMs: float64(elapsed) / float64(time.Millisecond), Source: string(src)}
	hc.notify(wire.NoteTextDelta, p)
	if hc.legacy() {
		hc.notify(wire.NoteLegacyDelta, p)
	}
}
