package xtytest

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/fakehost"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// memoryURL is the Server's URL when it serves only in memory: the
// Harness's default address, reached only through [Server.Client].
const memoryURL = "ws://127.0.0.1:32145"

// maxPayload is the gateway's limit on one incoming message (1 MiB); a
// bigger one gets close 1009 and takes the gateway process down
// (docs/xiaotangyuan-protocol.md, "Size limits"). The gateway puts no
// limit on what it sends, and neither does the fake.
const maxPayload = wire.MaxMessageSize

// maxReceived bounds the log of received messages; older ones are
// forgotten first.
const maxReceived = 4096

// Options configure a [Server]. The zero value behaves as the real
// gateway does, faults included (docs/xiaotangyuan-protocol.md): every
// message of a connection, gateway.ping and notifications included, waits
// for the one before it; params are read as the gateway reads them; a
// message over 1 MiB closes its connection with 1009 and then brings the
// whole Harness down, as it kills the gateway process. The agent is Echo.
// For every duration, zero means the default stated on it; negative is
// invalid and makes NewServer panic, as httptest does on a bad setup.
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

	// Addr, if set, is a loopback "host:port" (port 0 picks a free one)
	// that Start also listens on, for programs that cannot use
	// [Server.Client]; URL is then its ws:// address. If empty, the
	// server opens no port.
	Addr string
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
	if r.Coalesce < 0 || r.AtomTimeout < 0 {
		panic("xtytest: negative Coalesce or AtomTimeout")
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

// Server is a fake XiaoTangYuan gateway, in the shape of
// net/http/httptest.Server: [NewServer] returns it started,
// [NewUnstartedServer] lets a test start it later (a game launched before
// its companion), [Server.Client] connects to it in memory, and
// [Server.Close] stops it. All methods may be called concurrently.
type Server struct {
	// URL is the address to dial: the Harness's default address,
	// "ws://127.0.0.1:32145", reached only through Client (no port is
	// opened), or the ws:// address of Options.Addr once started.
	URL string

	o    Options
	host *fakehost.Host
	wg   sync.WaitGroup // Serve goroutines and connection handlers

	mu       sync.Mutex // guards following
	conns    map[*hconn]struct{}
	received []Message
	changed  chan struct{} // closed and replaced on every received message and connection change
	started  bool
	closed   bool
}

// NewServer returns a started Server.
func NewServer(opts *Options) *Server {
	s := NewUnstartedServer(opts)
	s.Start()
	return s
}

// NewUnstartedServer returns a Server that refuses connections until
// [Server.Start].
func NewUnstartedServer(opts *Options) *Server {
	o := opts.withDefaults()
	s := &Server{
		URL:     memoryURL,
		o:       o,
		conns:   make(map[*hconn]struct{}),
		changed: make(chan struct{}),
	}
	s.host = fakehost.New("xtytest", memoryURL, http.HandlerFunc(s.serveHTTP), &s.wg)
	return s
}

// Start begins serving: in memory, and on Options.Addr when set. It
// panics if the server was started or closed already, or cannot listen
// on Addr, as httptest does.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		panic("xtytest: Start of a server already started or closed")
	}
	s.started = true
	s.URL = s.host.Start(s.o.Addr)
	s.host.Pipe.Refuse(false)
}

// Client returns an http.Client whose connections are in-memory pipes to
// this server, whatever the URL; pass it as
// xiaotangyuan.Options.HTTPClient. It works inside a testing/synctest
// bubble when the server was created there.
func (s *Server) Client() *http.Client { return s.host.Client() }

// Close drops every connection with 1001 "gateway shutting down", stops
// serving and waits for every goroutine of the server. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if !already {
		s.host.Pipe.Refuse(true)
		s.Disconnect()
		s.host.Close()
	}
	s.wg.Wait()
}

// Disconnect closes every connection with 1001 "gateway shutting down",
// as a restarting gateway does, and waits for their goroutines. The
// server keeps accepting new connections.
func (s *Server) Disconnect() {
	for _, hc := range s.snapshot(false) {
		hc.close(websocket.StatusGoingAway, "gateway shutting down")
	}
}

// Connections returns how many adapters are connected.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// snapshot copies the connection set, only those past hello when
// helloOnly is set.
func (s *Server) snapshot(helloOnly bool) []*hconn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*hconn, 0, len(s.conns))
	for hc := range s.conns {
		if !helloOnly || hc.helloDone() {
			out = append(out, hc)
		}
	}
	return out
}

// Received returns a copy of the messages received so far, oldest first
// (at most the last 4096).
func (s *Server) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.received...)
}

// WaitFor waits until a received message (past or future) satisfies
// match and returns the first such message, or ctx's error.
func (s *Server) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	for {
		s.mu.Lock()
		for _, m := range s.received {
			if match(m) {
				s.mu.Unlock()
				return m, nil
			}
		}
		ch := s.changed
		s.mu.Unlock()
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
func (s *Server) Proactive(text string) {
	for _, hc := range s.snapshot(true) {
		id := newUUID()
		hc.notify(wire.NotePresent, wire.Present{Text: text, Source: "proactive"})
		hc.notify(wire.NoteTextDone, wire.TextDone{InteractionID: id, Text: text, Source: "proactive"})
	}
}

// BargeIn simulates the player starting push-to-talk on every adapter past
// hello: assistant.text.cancel {reason:"barge-in"} (sent even when nothing
// streams) then assistant.status {status:"recording"}. Interactions still
// streaming send text.start again on their next delta, as the gateway's
// accumulator does.
func (s *Server) BargeIn() {
	for _, hc := range s.snapshot(true) {
		hc.bargeIn()
	}
}

// Status sends assistant.status to every adapter past hello; transcript
// is omitted when empty.
func (s *Server) Status(status, transcript string) {
	for _, hc := range s.snapshot(true) {
		hc.notify(wire.NoteStatus, wire.Status{Status: status, Transcript: transcript})
	}
}

// Error sends assistant.error {message} to every adapter past hello.
func (s *Server) Error(message string) {
	for _, hc := range s.snapshot(true) {
		hc.notify(wire.NoteError, wire.ErrorNote{Message: message})
	}
}

// SendRaw writes b unchecked as one text frame to every adapter past
// hello, to test a client against malformed or stray messages.
func (s *Server) SendRaw(b []byte) {
	for _, hc := range s.snapshot(true) {
		hc.sendRaw(b)
	}
}

func (s *Server) record(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.received) >= maxReceived {
		s.received = append(s.received[:0], s.received[1:]...)
	}
	s.received = append(s.received, m)
	s.wakeLocked()
}

// wakeLocked wakes WaitFor callers; s.mu must be held.
func (s *Server) wakeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(maxPayload)
	hc := newHconn(s, ws)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.CloseNow()
		return
	}
	s.conns[hc] = struct{}{}
	s.wg.Add(1) // under s.mu and before closed: Close's Wait sees it
	s.wakeLocked()
	s.mu.Unlock()
	defer s.wg.Done()
	hc.run()
	s.mu.Lock()
	delete(s.conns, hc)
	s.wakeLocked()
	s.mu.Unlock()
}

// crash reproduces the real gateway dying on an oversize frame.
func (s *Server) crash() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	for _, hc := range s.snapshot(false) {
		hc.ws.CloseNow()
	}
	s.host.Pipe.Close()
	// host.Server.Close cannot run here: we are inside a handler. The
	// handler's count in s.wg is held, so this Add is safe and Close
	// joins it.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.host.Server.Close()
	}()
}
