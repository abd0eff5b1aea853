package neurotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/fakehost"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/neuro"
	"github.com/gamelink-go/gamelink/neuro/internal/wire"
)

// Mode selects how the fake behaves.
type Mode int

const (
	// Strict behaves as the API documents the real Neuro
	// (docs/neuro-protocol.md, "The server"): startup clears the game's
	// actions, the first definition of a name wins, one force at a time (a
	// new one replaces the old), a result timeout without retry, late
	// results dropped, context held while a result is pending, a startup
	// acknowledgement.
	Strict Mode = iota
	// Randy behaves like the official "Randy" mock: actions/reregister_all
	// on every connect, a global action list never cleared, a random
	// choice 500 ms after a force, the same action retried after
	// success:false, forces queued while a result is pending, no timeout.
	// Randy's races are not copied (docs/neuro-protocol.md, "Randy").
	Randy
)

// Options configures a [Server]. Nil means defaults. For every duration,
// zero means the default stated on it; negative disables the setting where
// the field says so, and is otherwise invalid: NewServer panics, as
// httptest does on a setup it cannot honour.
type Options struct {
	// Mode is the behaviour; the zero value is [Strict].
	Mode Mode
	// Delay before Neuro answers a force or retries one. If zero, 500 ms.
	Delay time.Duration
	// ResultTimeout (Strict) after which a pending action counts as failed
	// and later results are dropped. If zero, 20 s. Negative disables it.
	ResultTimeout time.Duration
	// Seed for random choices and fake data. Tests should log it.
	Seed uint64
	// Ack is the startup acknowledgement sent in Strict mode. If nil,
	// Neuro-sama's. NoAck sends none. An Ack whose DisplayName is empty
	// is sent without displayName, which the official SDKs answer by
	// naming the character by its id (docs/neuro-protocol.md, "The
	// server").
	Ack   *neuro.StartupAck
	NoAck bool
	// Unforced makes the fake act on its own every Unforced (a random
	// registered action with fake data), when no result is pending:
	// Neuro may use any registered action at any time. If zero, it never
	// does.
	Unforced time.Duration
	// Recorder receives every message in and out as JSON Lines: an
	// outgoing one once per connection, as it is written. A goroutine of
	// the server's own writes the lines (never with the server's lock
	// held), so a slow or blocked writer never holds up a connection: the
	// recording is asynchronous and bounded, as a client's (at most 32 MiB
	// of lines wait; past that lines are dropped and counted). Close
	// writes what waits, but gives up after 5 s without a Write
	// returning. Read it after Close, or wait for the line.
	Recorder io.Writer
	// Addr, if set, is a loopback "host:port" (port 0 picks a free one)
	// that Start also listens on, for a game or SDK in another process
	// or language; URL is then its ws:// address. If empty, the server
	// opens no port.
	Addr string
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Delay == 0 {
		r.Delay = 500 * time.Millisecond
	}
	if r.ResultTimeout == 0 {
		r.ResultTimeout = 20 * time.Second
	}
	if r.Delay < 0 || r.Unforced < 0 {
		panic("neurotest: negative Delay or Unforced")
	}
	if r.Ack == nil {
		r.Ack = &neuro.StartupAck{SessionID: "fake-session", CharacterID: "neuro", DisplayName: "Neuro-sama"}
	}
	return r
}

// Message is one game-to-Neuro message as the fake received it.
type Message struct {
	Command string
	Game    string
	Data    json.RawMessage // nil when absent
	At      time.Time       // when the fake received it (fake time in a synctest bubble)
}

// Result is one action/result the fake received.
type Result struct {
	ID      string
	Success bool
	Message string
	Late    bool // arrived after the timeout or for an unknown id; dropped
}

// Context is one context message, in the order Neuro took it in.
type Context struct {
	Message string
	Silent  bool
}

// memoryURL is the Server's URL when it serves only in memory: the
// address of a local Neuro server, reached only through [Server.Client].
const memoryURL = "ws://127.0.0.1:8000"

// Server is an in-process fake Neuro server, in the shape of
// net/http/httptest.Server: [NewServer] returns it started,
// [NewUnstartedServer] lets a test start it later (a game launched before
// Neuro), [Server.Client] connects to it in memory (inside a
// testing/synctest bubble too), and [Server.Close] stops it. Set
// [Options].Addr for a loopback WebSocket. All methods may be called
// concurrently.
type Server struct {
	// URL is the address to dial: "ws://127.0.0.1:8000", reached only
	// through Client (no port is opened), or the ws:// address of
	// Options.Addr once started.
	URL string

	o    Options
	rec  *jsonl.Queue
	wg   sync.WaitGroup // Serve goroutines, handlers and connections
	host *fakehost.Host

	mu        sync.Mutex // guards following
	started   bool
	closed    bool
	down      bool
	epoch     int // bumped by Restart; connections of an older epoch are dead
	rng       *rand.Rand
	conns     []*sconn
	connects  int
	actions   []wire.Action // registration order; Strict keeps one per name
	force     []string      // names of the outstanding force (Strict), or nil
	forced    bool          // a force is outstanding or being answered
	forceSeq  int           // bumped for every force
	randyQ    []string      // Randy: names queued behind a pending result
	pending   *pending
	scheduled *time.Timer
	unforced  *time.Timer
	nextID    int
	nextData  *string
	held      []Context
	contexts  []Context
	received  []Message
	results   []Result
	checker   checker
	changed   chan struct{} // closed and replaced on every change
}

type pending struct {
	id, name string
	forced   bool
	forceSeq int
	timer    *time.Timer
}

type sconn struct {
	c     *wsConn
	out   chan []byte
	epoch int // the server's epoch when it connected
}

// NewServer returns a started fake server.
func NewServer(opts *Options) *Server {
	s := NewUnstartedServer(opts)
	s.Start()
	return s
}

// NewUnstartedServer returns a fake server that refuses connections until
// [Server.Start].
func NewUnstartedServer(opts *Options) *Server {
	o := opts.withDefaults()
	s := &Server{
		URL:     memoryURL,
		o:       o,
		rec:     jsonl.NewQueue(o.Recorder, jsonl.MaxQueued),
		rng:     newRand(o.Seed),
		changed: make(chan struct{}),
	}
	s.host = fakehost.New("neurotest", memoryURL, http.HandlerFunc(s.handleHTTP), &s.wg)
	return s
}

// Start begins serving: in memory, and on Options.Addr when set. It
// panics if the server was started or closed already, or cannot listen
// on Addr, as httptest does.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		panic("neurotest: Start of a server already started or closed")
	}
	s.started = true
	s.rec.Start()
	s.URL = s.host.Start(s.o.Addr)
	s.host.Pipe.Refuse(s.down)
}

// Client returns an http.Client whose connections are in-memory pipes to
// this server, whatever the URL; pass it as neuro.Options.HTTPClient. It
// works inside a testing/synctest bubble when the server was created
// there.
func (s *Server) Client() *http.Client { return s.host.Client() }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func (s *Server) handleHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down || s.closed
	s.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.CloseNow()
		return
	}
	s.wg.Add(1) // under s.mu and before closed: Close's Wait sees it
	s.mu.Unlock()
	defer s.wg.Done()
	c.SetReadLimit(8 << 20)
	done := make(chan struct{})
	s.serve(&wsConn{c: c, done: done})
	<-done // the handler must not return while the connection is served
}

type wsConn struct {
	c    *websocket.Conn
	done chan struct{}
	once sync.Once
}

func (w *wsConn) Read(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	return b, err
}
func (w *wsConn) Write(ctx context.Context, b []byte) error {
	return w.c.Write(ctx, websocket.MessageText, b)
}
func (w *wsConn) Close() error {
	w.once.Do(func() { close(w.done) })
	return w.c.CloseNow()
}

// serve starts the reader and writer of one connection.
func (s *Server) serve(c *wsConn) *sconn {
	sc := &sconn{c: c, out: make(chan []byte, 256)}
	s.mu.Lock()
	sc.epoch = s.epoch
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return sc
	}
	s.conns = append(s.conns, sc)
	s.connects++
	s.checker.connect(time.Now())
	if s.o.Mode == Randy {
		s.sendLocked(wire.CmdReregisterAll, nil)
	}
	if s.o.Unforced > 0 && s.unforced == nil {
		s.unforcedLocked()
	}
	s.changedLocked()
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		defer cancel()
		for {
			b, err := c.Read(ctx)
			if err != nil {
				break
			}
			s.receive(sc, b)
		}
		s.drop(sc)
	}()
	go func() {
		defer s.wg.Done()
		for {
			select {
			case b := <-sc.out:
				// Recorded here, not where it is queued: the recorder is
				// the test's io.Writer and must not run under s.mu.
				s.rec.Record(jsonl.Out, b)
				if c.Write(ctx, b) != nil {
					c.Close()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return sc
}

func (s *Server) drop(sc *sconn) {
	sc.c.Close()
	s.mu.Lock()
	s.conns = slices.DeleteFunc(s.conns, func(x *sconn) bool { return x == sc })
	s.changedLocked()
	s.mu.Unlock()
}

// Close disconnects every client and stops every goroutine and timer. It
// is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := slices.Clone(s.conns)
	s.stopTimersLocked()
	s.mu.Unlock()
	s.host.Pipe.Refuse(true)
	for _, sc := range conns {
		sc.c.Close()
	}
	s.host.Close()
	s.wg.Wait()
	_ = s.rec.Close() // what was recorded is written, unless the writer stalled
}

func (s *Server) stopTimersLocked() {
	if s.scheduled != nil {
		s.scheduled.Stop()
		s.scheduled = nil
	}
	if s.pending != nil && s.pending.timer != nil {
		s.pending.timer.Stop()
	}
	if s.unforced != nil {
		s.unforced.Stop()
		s.unforced = nil
	}
}

// unforcedLocked arms the timer of the next unforced action.
func (s *Server) unforcedLocked() {
	var t *time.Timer
	t = time.AfterFunc(s.o.Unforced, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.unforced != t {
			return // closed, or restarted since
		}
		if s.pending == nil && len(s.actions) > 0 && len(s.conns) > 0 {
			n := s.actions[s.rng.IntN(len(s.actions))].Name
			s.actLocked(n, s.dataForLocked(n), false)
		}
		s.unforcedLocked()
	})
	s.unforced = t
}

// Disconnect drops every open connection (the clients will reconnect).
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, sc := range conns {
		sc.c.Close()
	}
}

// Restart makes the server a freshly started one at the same address, as
// when the Neuro server (or Randy) is killed and started again: every open
// connection is dropped, and nothing is kept. Registered actions, the
// action id counter (the next action is "0" again), the pending action,
// forces, held context, Randy's queue, the random source (re-seeded from
// [Options.Seed]), a pending [Server.NextData], and everything the test
// observes ([Server.Received], [Server.Results], [Server.Contexts],
// [Server.Connects], [Server.Findings]) start afresh. Messages still in
// flight on the dropped connections are discarded: the old process is
// gone. [Options] and [Server.SetDown] stay as they were, and so does
// URL. Clients reconnect to the fresh server.
func (s *Server) Restart() {
	s.mu.Lock()
	conns := s.conns
	s.stopTimersLocked()
	s.epoch++
	s.conns = nil
	s.connects = 0
	s.rng = newRand(s.o.Seed)
	s.actions, s.force, s.forced, s.forceSeq, s.randyQ = nil, nil, false, 0, nil
	s.pending, s.nextID, s.nextData = nil, 0, nil
	s.held, s.contexts, s.received, s.results = nil, nil, nil, nil
	s.checker = checker{}
	s.changedLocked()
	s.mu.Unlock()
	for _, sc := range conns {
		sc.c.Close()
	}
}

// SetDown makes new connection attempts fail (true), as a server that
// is not running refuses them, or succeed again (false). Open connections
// stay open.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
	if s.started && !s.closed {
		s.host.Pipe.Refuse(down)
	}
}

func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond returns true, re-evaluating it after every change
// (message received, connection opened or closed), or until ctx ends.
// cond is called without the server's lock held and may call its methods.
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("neurotest: wait: %w", ctx.Err())
		}
	}
}

// sendLocked queues a message to every connection; a connection whose
// queue is full is closed (slow peer).
func (s *Server) sendLocked(cmd string, data any) {
	m := map[string]any{"command": cmd}
	if data != nil {
		m["data"] = data
	}
	b, _ := json.Marshal(m)
	s.sendRawLocked(b)
}

func (s *Server) sendRawLocked(b []byte) {
	s.checker.fromNeuro(time.Now(), b)
	for _, sc := range s.conns {
		select {
		case sc.out <- b:
		default:
			sc.c.Close()
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
