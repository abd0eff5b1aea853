package neurotest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/neuro"
)

// Mode selects how the fake behaves.
type Mode int

const (
	// Strict behaves as the API documents the real Neuro: startup clears
	// the game's actions, the first definition of a name wins, one force at
	// a time (a new one replaces the old), a result timeout without retry,
	// late results dropped, context held while a result is pending, a
	// startup acknowledgement.
	Strict Mode = iota
	// Randy behaves like the official "Randy" mock: actions/reregister_all
	// on every connect, a global action list never cleared, a random
	// choice 500 ms after a force, the same action retried after
	// success:false, forces queued while a result is pending, no timeout.
	// Randy's races (§1.6 of the spec notes) are not copied.
	Randy
)

// Options configures a [Server]. Nil means defaults.
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
	// Neuro-sama's. NoAck sends none.
	Ack   *neuro.StartupAck
	NoAck bool
	// Unforced, if positive, makes the fake act on its own every Unforced
	// (a random registered action with fake data), when no result is
	// pending: Neuro may use any registered action at any time.
	Unforced time.Duration
	// Recorder receives every message in and out as JSON Lines: an
	// outgoing one once per connection, as it is written. It is never
	// called with the server's lock held.
	Recorder io.Writer
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

type action struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// Server is an in-process fake Neuro server. Use [Server.Dial] as
// [neuro.ClientOptions.Dial] for an in-memory connection (works inside a
// testing/synctest bubble), or [Server.Listen] for a loopback WebSocket.
// All methods may be called concurrently.
type Server struct {
	o   Options
	rec *jsonl.Recorder
	wg  sync.WaitGroup

	mu        sync.Mutex // guards following
	closed    bool
	down      bool
	epoch     int // bumped by Restart; connections of an older epoch are dead
	rng       *rand.Rand
	conns     []*sconn
	connects  int
	actions   []action // registration order; Strict keeps one per name
	force     []string // names of the outstanding force (Strict), or nil
	forced    bool     // a force is outstanding or being answered
	forceSeq  int      // bumped for every force
	randyQ    []string // Randy: names queued behind a pending result
	pending   *pending
	scheduled *time.Timer
	unforced  *time.Timer
	nextID    int
	nextData  *string
	held      []Context
	contexts  []Context
	received  []Message
	results   []Result
	checker   neuro.Checker
	changed   chan struct{} // closed and replaced on every change
	http      *httptest.Server
}

type pending struct {
	id, name string
	forced   bool
	forceSeq int
	timer    *time.Timer
}

type sconn struct {
	c     neuro.Conn
	out   chan []byte
	epoch int // the server's epoch when it connected
}

// NewServer returns a fake server. It starts no goroutines until a client
// connects or [Server.Listen] is called.
func NewServer(opts *Options) *Server {
	o := opts.withDefaults()
	return &Server{
		o:       o,
		rec:     jsonl.New(o.Recorder),
		rng:     newRand(o.Seed),
		changed: make(chan struct{}),
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// Dial connects in memory. It matches [neuro.ClientOptions.Dial]; url is
// ignored.
func (s *Server) Dial(ctx context.Context, url string) (neuro.Conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("neurotest: server closed")
	}
	if s.down {
		s.mu.Unlock()
		return nil, ErrDown
	}
	s.mu.Unlock()
	client, server := newPipe(64)
	s.serve(server)
	return client, nil
}

// Listen starts a loopback WebSocket server and returns its ws:// URL.
func (s *Server) Listen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http == nil {
		s.http = httptest.NewServer(http.HandlerFunc(s.handleHTTP))
	}
	return "ws" + s.http.URL[len("http"):]
}

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
func (s *Server) serve(c neuro.Conn) *sconn {
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
	s.checker.Connect(time.Now())
	if s.o.Mode == Randy {
		s.sendLocked("actions/reregister_all", nil)
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

// Close disconnects every client and stops every goroutine and timer.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := slices.Clone(s.conns)
	s.stopTimersLocked()
	h := s.http
	s.mu.Unlock()
	for _, sc := range conns {
		sc.c.Close()
	}
	if h != nil {
		h.CloseClientConnections()
		h.Close()
	}
	s.wg.Wait()
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
// gone. [Options] and [Server.SetDown] stay as they were; [Server.Listen]'s
// URL stays the same. Clients reconnect to the fresh server.
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
	s.checker = neuro.Checker{}
	s.changedLocked()
	s.mu.Unlock()
	for _, sc := range conns {
		sc.c.Close()
	}
}

// SetDown makes new connection attempts fail (true) or succeed (false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
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
	s.checker.FromNeuro(time.Now(), b)
	for _, sc := range s.conns {
		select {
		case sc.out <- b:
		default:
			sc.c.Close()
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
