package xtytest

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// URL is the address to dial with the client returned by
// [Harness.HTTPClient]: the Harness's default address. No port is
// opened; the connection is an in-memory pipe.
const URL = "ws://127.0.0.1:32145"

// maxPayload is the gateway's limit on one incoming message (1 MiB); a
// bigger one gets close 1009 and takes the gateway process down
// (xiaotangyuan/PROTOCOL.md, "Size limits"). The gateway puts no limit
// on what it sends, and neither does the fake.
const maxPayload = 1 << 20

// maxReceived bounds the log of received messages; older ones are
// forgotten first.
const maxReceived = 4096

// Options configure a [Harness]. The zero value behaves as the real
// gateway does, faults included (xiaotangyuan/PROTOCOL.md): every
// message of a connection, gateway.ping and notifications included, waits
// for the one before it; params are read as the gateway reads them; a message over
// 1 MiB closes its connection with 1009 and then brings the whole Harness
// down, as it kills the gateway process. The agent is Echo.
type Options struct {
	// Agent produces every reply (chat.send, chat.retry,
	// assistant.compose, voice). If nil, Echo.
	Agent Agent

	// Coalesce is the minimum interval between emitted deltas of one
	// interaction (the gateway's streaming accumulator). If zero, 80 ms.
	Coalesce time.Duration

	// AtomTimeout bounds Turn.CallAtom. If zero, 15 s, the gateway's
	// limit; the error is "游戏原子能力超时：<atom>".
	AtomTimeout time.Duration

	// Transcript is the final speech transcript of a voice.stop. If
	// empty, voice.stop produces assistant.error "recording too short".
	Transcript string
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Agent == nil {
		r.Agent = Echo
	}
	if r.Coalesce == 0 {
		r.Coalesce = 80 * time.Millisecond
	}
	if r.AtomTimeout == 0 {
		r.AtomTimeout = 15 * time.Second
	}
	return r
}

// Message is one message the Harness received, for assertions.
type Message struct {
	Method       string          // "" for a response
	ID           json.RawMessage // nil for a notification
	Params       json.RawMessage // nil when absent
	Notification bool            // no id member: the Harness sends no answer
	Raw          []byte          // the whole frame as received
}

// Harness is a fake XiaoTangYuan gateway. Create it with [New], serve it
// with [Harness.Listen] or [Harness.HTTPClient], stop it with
// [Harness.Close]. All methods may be called concurrently.
type Harness struct {
	o    Options
	srv  *http.Server
	pipe *pipeListener
	wg   sync.WaitGroup // Serve goroutines and connection handlers

	mu       sync.Mutex // guards following
	conns    map[*hconn]struct{}
	received []Message
	changed  chan struct{} // closed and replaced on every received message and connection change
	closed   bool
	piping   bool
}

// New returns a Harness. It starts nothing.
func New(opts *Options) *Harness {
	h := &Harness{
		o:       opts.withDefaults(),
		conns:   make(map[*hconn]struct{}),
		changed: make(chan struct{}),
	}
	h.pipe = newPipeListener()
	h.srv = &http.Server{Handler: http.HandlerFunc(h.serveHTTP)}
	return h
}

// Listen serves on a loopback TCP address such as "127.0.0.1:0" and
// returns the ws:// URL to dial. Use it for tests of whole programs; in
// package tests prefer HTTPClient, which opens no port.
func (h *Harness) Listen(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", errors.New("xtytest: listen address must be loopback")
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	if err := h.serve(l); err != nil {
		l.Close()
		return "", err
	}
	return "ws://" + l.Addr().String(), nil
}

// HTTPClient returns an http.Client whose connections are in-memory pipes
// to this Harness; pass it as xiaotangyuan.Options.HTTPClient with URL.
// It works inside a testing/synctest bubble when the Harness was created
// there.
func (h *Harness) HTTPClient() *http.Client {
	h.mu.Lock()
	start := !h.piping && !h.closed
	h.piping = true
	h.mu.Unlock()
	if start {
		h.serve(h.pipe)
	}
	return &http.Client{Transport: &http.Transport{DialContext: h.pipe.dial, DisableKeepAlives: true}}
}

func (h *Harness) serve(l net.Listener) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errors.New("xtytest: harness closed")
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.srv.Serve(l)
	}()
	return nil
}

// Close drops every connection with 1001 "gateway shutting down", stops
// serving and waits for every goroutine of the Harness.
func (h *Harness) Close() error {
	h.mu.Lock()
	already := h.closed
	h.closed = true
	h.mu.Unlock()
	if !already {
		h.Drop()
		h.srv.Close()
		h.pipe.Close()
	}
	h.wg.Wait()
	return nil
}

// Drop closes every connection with 1001 "gateway shutting down", as a
// restarting gateway does, and waits for their goroutines. The Harness
// keeps accepting new connections.
func (h *Harness) Drop() {
	for _, hc := range h.snapshot(false) {
		hc.close(websocket.StatusGoingAway, "gateway shutting down")
	}
}

// Connections returns how many adapters are connected.
func (h *Harness) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// snapshot copies the connection set, only those past hello when
// helloOnly is set.
func (h *Harness) snapshot(helloOnly bool) []*hconn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*hconn, 0, len(h.conns))
	for hc := range h.conns {
		if !helloOnly || hc.helloDone() {
			out = append(out, hc)
		}
	}
	return out
}

// Received returns a copy of the messages received so far, oldest first
// (at most the last 4096).
func (h *Harness) Received() []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Message(nil), h.received...)
}

// WaitFor waits until a received message (past or future) satisfies
// match and returns the first such message, or ctx's error.
func (h *Harness) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	for {
		h.mu.Lock()
		for _, m := range h.received {
			if match(m) {
				h.mu.Unlock()
				return m, nil
			}
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Method returns a match function for WaitFor.
func Method(m string) func(Message) bool {
	return func(msg Message) bool { return msg.Method == m }
}

// Proactive sends a proactive reply to every adapter past hello:
// assistant.present {source:"proactive"} then assistant.text.done with a
// fresh interactionId, and no text.start (the gateway uses compose, so
// nothing streams).
func (h *Harness) Proactive(text string) {
	for _, hc := range h.snapshot(true) {
		id := newUUID()
		hc.notify("assistant.present", map[string]any{"text": text, "source": "proactive"})
		hc.notify("assistant.text.done", map[string]any{"interactionId": id, "text": text, "source": "proactive"})
	}
}

// BargeIn simulates the player starting push-to-talk on every adapter past
// hello: assistant.text.cancel {reason:"barge-in"} (sent even when nothing
// streams) then assistant.status {status:"recording"}. Interactions still
// streaming send text.start again on their next delta, as the gateway's
// accumulator does.
func (h *Harness) BargeIn() {
	for _, hc := range h.snapshot(true) {
		hc.bargeIn()
	}
}

// Status sends assistant.status to every adapter past hello; transcript
// is omitted when empty.
func (h *Harness) Status(status, transcript string) {
	p := map[string]any{"status": status}
	if transcript != "" {
		p["transcript"] = transcript
	}
	for _, hc := range h.snapshot(true) {
		hc.notify("assistant.status", p)
	}
}

// Error sends assistant.error {message} to every adapter past hello.
func (h *Harness) Error(message string) {
	for _, hc := range h.snapshot(true) {
		hc.notify("assistant.error", map[string]any{"message": message})
	}
}

// SendRaw writes b unchecked as one text frame to every adapter past
// hello, to test a client against malformed or stray messages.
func (h *Harness) SendRaw(b []byte) {
	for _, hc := range h.snapshot(true) {
		hc.sendRaw(b)
	}
}

func (h *Harness) record(m Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.received) >= maxReceived {
		h.received = append(h.received[:0], h.received[1:]...)
	}
	h.received = append(h.received, m)
	h.wakeLocked()
}

// wakeLocked wakes WaitFor callers; h.mu must be held.
func (h *Harness) wakeLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Harness) serveHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(maxPayload)
	hc := newHconn(h, ws)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		ws.CloseNow()
		return
	}
	h.conns[hc] = struct{}{}
	h.wg.Add(1) // under h.mu and before closed: Close's Wait sees it
	h.wakeLocked()
	h.mu.Unlock()
	defer h.wg.Done()
	hc.run()
	h.mu.Lock()
	delete(h.conns, hc)
	h.wakeLocked()
	h.mu.Unlock()
}

// crash reproduces the real gateway dying on an oversize frame.
func (h *Harness) crash() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	for _, hc := range h.snapshot(false) {
		hc.ws.CloseNow()
	}
	h.pipe.Close()
	// srv.Close cannot run here: we are inside a handler. The handler's
	// count in h.wg is held, so this Add is safe and Close joins it.
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.srv.Close()
	}()
}
