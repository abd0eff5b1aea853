package neuro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// ClientOptions configures a [Client]. The zero value (or nil) is usable.
type ClientOptions struct {
	// URL of the Neuro server. If empty, $NEURO_SDK_WS_URL is used, and
	// if that is unset, [DefaultURL]. The real server may be remote
	// (wss:// included): Neuro is the server, the game the client.
	URL string
	// Dial opens a connection. If nil, a WebSocket is dialled with
	// github.com/coder/websocket and a read limit of MaxMessageBytes.
	// Tests use neurotest.Server.Dial for an in-memory connection.
	Dial func(ctx context.Context, url string) (Conn, error)

	// Prefix is added to every action name on the wire (names are shared
	// by all integrations connected to the same character). It must itself
	// follow the naming rule, e.g. "tictactoe_". Empty means none.
	Prefix string

	// ActionDeadline bounds each action's Validate, well inside the
	// server's ~20 s result window. If zero or negative, 4 s is used
	// (under the 5 s at which conformance tools report a timeout). It is
	// not capped: past ~20 s the server gives up first and discards the
	// result (neurotest's Strict mode does the same).
	ActionDeadline time.Duration

	// ReconnectDelay is the first wait before reconnecting; it doubles on
	// each failed attempt up to ReconnectMaxDelay. If zero or negative,
	// 3 s (as the official SDKs) and 30 s are used.
	ReconnectDelay    time.Duration
	ReconnectMaxDelay time.Duration
	// DialTimeout bounds one connection attempt. If zero or negative,
	// 10 s is used.
	DialTimeout time.Duration

	// MaxMessageBytes limits one message in either direction. If zero or
	// negative, 4 MiB is used.
	MaxMessageBytes int64
	// MaxQueue bounds the outgoing messages waiting for the connection
	// (context, forces, shutdown/ready). When it is full those calls
	// return [ErrQueueFull]. Results and registrations are not counted
	// there; instead, when MaxQueue of them wait unsent and Neuro sends
	// another action or reregister_all (she keeps sending but does not
	// read), the connection is closed as a slow peer (its [Disconnected]
	// wraps ErrQueueFull) and re-established. If zero or negative, 256.
	MaxQueue int
	// MaxEvents bounds the events waiting for delivery. When it is full,
	// new actions are answered success:false ("the game is busy") and
	// other events are dropped and counted ([Client.Dropped]). If zero or
	// negative, 256.
	MaxEvents int
	// MaxInFlight bounds actions being validated at once; more are
	// answered success:false at once. If zero or negative, 16.
	MaxInFlight int

	// OnEvent receives every [Event] in order, on the client's event
	// goroutine, after [Action.Execute] for an invocation. It must not
	// block for long. Ignored when Poll is set.
	OnEvent func(Event)
	// Poll delivers events through [Client.Poll] instead of callbacks,
	// for game loops that must act on their main thread.
	Poll bool
	// OnError receives errors that have no caller to return to: malformed
	// incoming messages, the first failed dial of an outage. It is called
	// synchronously on an internal goroutine and must not block.
	OnError func(error)
	// Recorder, if not nil, receives every message in and out as JSON
	// Lines (see internal/jsonl). The client does not close it.
	Recorder io.Writer
}

func (o *ClientOptions) withDefaults() ClientOptions {
	var r ClientOptions
	if o != nil {
		r = *o
	}
	if r.URL == "" {
		r.URL = URLFromEnv()
	}
	if r.MaxMessageBytes <= 0 {
		r.MaxMessageBytes = 4 << 20
	}
	if r.Dial == nil {
		limit := r.MaxMessageBytes
		r.Dial = func(ctx context.Context, url string) (Conn, error) { return dialWebSocket(ctx, url, limit) }
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 { // a negative delay would reconnect in a tight loop
			*d = v
		}
	}
	def(&r.ActionDeadline, 4*time.Second)
	def(&r.ReconnectDelay, 3*time.Second)
	def(&r.ReconnectMaxDelay, 30*time.Second)
	def(&r.DialTimeout, 10*time.Second)
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	defInt(&r.MaxQueue, 256)
	defInt(&r.MaxEvents, 256)
	defInt(&r.MaxInFlight, 16)
	return r
}

// Client is the game's connection to Neuro. It keeps the desired action
// set, (re)connects, sends startup and the whole set on every connect,
// answers actions, and manages forces.
//
// All methods may be called concurrently. Methods that send only queue the
// message (in order, never merged or reordered) and return at once; the
// queue is flushed whenever a connection is open.
type Client struct {
	game string
	o    ClientOptions
	rec  *jsonl.Recorder

	wg      sync.WaitGroup
	cancel  context.CancelFunc
	runCtx  context.Context
	wake    chan struct{} // writer: queue grew (cap 1)
	evWake  chan struct{} // dispatcher: events grew (cap 1)
	closeMu sync.Mutex    // serializes Start and Close

	mu        sync.Mutex // guards following
	started   bool
	closed    bool
	connected bool
	gen       uint64 // connection generation, bumped on every connect
	reg       *registry
	queue     []queued
	events    []pendingEvent
	dropped   int
	inflight  map[callKey]*call   // by connection and id
	answered  map[string]struct{} // ids answered on this connection
	ansRing   []string            // bounds answered
	ansNext   int
	force     *ForceHandle         // the outstanding force
	forceQ    []*ForceHandle       // forces waiting for the slot
	windows   []*ForceHandle       // open windows, in opening order
	gone      map[string]time.Time // wire names unregistered lately, and when
	shutdownW bool                 // latest shutdown/graceful wants_shutdown
	drained   chan struct{}        // closed and replaced when the queue empties
	notes     []recNote            // recorder notes to write once c.mu is released
}

type queued struct {
	cmd   string
	b     []byte
	force *ForceHandle // for actions/force
	full  bool         // an actions/register of the whole set
}

type pendingEvent struct {
	ev   Event
	exec func(*Invocation)
}

const answeredMemory = 1024

// NewClient returns a client for the game with the given display name,
// which is fixed for the client's life. It starts nothing: call
// [Client.Start].
func NewClient(game string, opts *ClientOptions) (*Client, error) {
	if game == "" {
		return nil, errors.New("neuro: new client: empty game name")
	}
	o := opts.withDefaults()
	if o.Prefix != "" {
		if err := CheckName(o.Prefix + "x"); err != nil {
			return nil, fmt.Errorf("neuro: new client: prefix: %w", err)
		}
	}
	c := &Client{
		game:     game,
		o:        o,
		rec:      jsonl.New(o.Recorder),
		wake:     make(chan struct{}, 1),
		evWake:   make(chan struct{}, 1),
		reg:      newRegistry(o.Prefix),
		inflight: map[callKey]*call{},
		answered: map[string]struct{}{},
		gone:     map[string]time.Time{},
		ansRing:  make([]string, answeredMemory),
		drained:  make(chan struct{}),
	}
	return c, nil
}

// Start begins connecting in the background, and delivering events. It
// returns an error if the client was started or closed already.
func (c *Client) Start() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.started {
		return errors.New("neuro: start: already started")
	}
	c.started = true
	c.runCtx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.connectLoop(c.runCtx)
	if !c.o.Poll {
		c.wg.Add(1)
		go c.dispatch(c.runCtx)
	}
	return nil
}

// Close disconnects and stops every goroutine the client started, waiting
// for them (including running validators, which see their ctx cancelled).
// Outstanding forces end as [ForceCancelled]. It is idempotent. It must
// not be called from the client's own callbacks (Validate, Execute,
// OnEvent, OnError), which it waits for.
func (c *Client) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cancel := c.cancel
	hs := append(append([]*ForceHandle{c.force}, c.forceQ...), c.windows...)
	c.force, c.forceQ = nil, nil
	for _, h := range hs {
		if h != nil {
			c.endForceLocked(h, ForceCancelled, false)
		}
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	c.wg.Wait()
	return nil
}

// Game returns the game name given to [NewClient].
func (c *Client) Game() string { return c.game }

// IsConnected reports whether a connection is open now.
func (c *Client) IsConnected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

// WantsShutdown returns the latest wants_shutdown of a
// [ShutdownGraceful] proposal (false if none came): at the next safe point,
// save, quit to the main menu and call [Client.ShutdownReady].
func (c *Client) WantsShutdown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shutdownW
}

// Dropped returns how many events were dropped because the event queue
// was full (see [ClientOptions.MaxEvents]).
func (c *Client) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Context tells Neuro what is happening. silent true adds it to her
// context without prompting a reply; false means she might respond. Write
// Markdown without top-level '#' headings, and do not send many small
// updates.
func (c *Client) Context(message string, silent bool) error {
	return c.send(cmdContext, contextData{Message: message, Silent: silent})
}

// ContextSilent is Context(message, true): note it, do not prompt her.
func (c *Client) ContextSilent(message string) error { return c.Context(message, true) }

// ContextLoud is Context(message, false): she might react to it.
func (c *Client) ContextLoud(message string) error { return c.Context(message, false) }

// Flush waits until every message queued so far has been written to a
// connection, or ctx ends (the messages stay queued). Use it before Close
// to let a last context leave.
func (c *Client) Flush(ctx context.Context) error {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.closed {
			c.mu.Unlock()
			return nil
		}
		ch := c.drained
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("neuro: flush: %w", ctx.Err())
		}
	}
}

// ShutdownReady sends shutdown/ready (a proposal): the game has saved
// after [ShutdownGraceful] or [ShutdownImmediate].
func (c *Client) ShutdownReady() error { return c.send(cmdShutdownReady, nil) }

// send encodes and queues a bounded message.
func (c *Client) send(cmd string, data any) error {
	b, err := c.encode(cmd, data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return c.pushLocked(queued{cmd: cmd, b: b}, true)
}

func (c *Client) encode(cmd string, data any) ([]byte, error) {
	b, err := encodeOut(c.game, cmd, data)
	if err != nil {
		return nil, fmt.Errorf("neuro: encode %s: %w", cmd, err)
	}
	if int64(len(b)) > c.o.MaxMessageBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrMessageTooBig, cmd, len(b), c.o.MaxMessageBytes)
	}
	return b, nil
}

// pushLocked appends to the outgoing queue; bounded messages fail with
// ErrQueueFull. c.mu must be held.
func (c *Client) pushLocked(q queued, bounded bool) error {
	if n := c.boundedLocked(); bounded && n >= c.o.MaxQueue {
		return fmt.Errorf("%w: %d messages waiting", ErrQueueFull, n)
	}
	if i := slices.IndexFunc(c.queue, func(x queued) bool { return x.cmd == cmdForce }); q.cmd == cmdResult && i >= 0 {
		// A force waits for pending results (the writer holds it), so a
		// result goes ahead of an unsent force; nothing else is reordered.
		c.queue = slices.Insert(c.queue, i, q)
	} else {
		c.queue = append(c.queue, q)
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// boundedLocked counts the queued messages bounded by MaxQueue: all but
// results and registrations. c.mu must be held.
func (c *Client) boundedLocked() int {
	n := 0
	for _, x := range c.queue {
		if x.cmd != cmdResult && x.cmd != cmdRegister && x.cmd != cmdUnregister {
			n++
		}
	}
	return n
}

// emitLocked queues an event for delivery. c.mu must be held.
func (c *Client) emitLocked(ev Event, exec func(*Invocation)) {
	if len(c.events) >= c.o.MaxEvents {
		c.dropped++
		return
	}
	c.events = append(c.events, pendingEvent{ev: ev, exec: exec})
	select {
	case c.evWake <- struct{}{}:
	default:
	}
}

func (c *Client) emit(ev Event) {
	c.mu.Lock()
	c.emitLocked(ev, nil)
	c.mu.Unlock()
}

// Poll appends the events waiting for delivery to dst and returns it. Use
// it with [ClientOptions.Poll], once per frame; an [*Invocation] in the
// result means "execute this now". It first checks the conditions of open
// windows ([Window.ForceWhen], [Window.EndWhen]) on the caller's
// goroutine. Without Poll it returns dst unchanged.
func (c *Client) Poll(dst []Event) []Event {
	if !c.o.Poll {
		return dst
	}
	c.checkWindows() // the game's frame: its windows' conditions
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pe := range c.events {
		dst = append(dst, pe.ev)
	}
	clear(c.events)
	c.events = c.events[:0]
	return dst
}

// dispatch delivers events in callback mode, and checks the windows'
// conditions while any are watched. No lock is held while the game's
// callbacks run.
func (c *Client) dispatch(ctx context.Context) {
	defer c.wg.Done()
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		c.mu.Lock()
		watching := c.watchingLocked()
		c.mu.Unlock()
		var due <-chan time.Time
		switch {
		case watching && tick == nil:
			tick = time.NewTicker(conditionInterval)
		case !watching && tick != nil:
			tick.Stop()
			tick = nil
		}
		if tick != nil {
			due = tick.C
		}
		select {
		case <-due: // also between events, so that a busy stream cannot starve them
			c.checkWindows()
			continue
		default:
		}
		c.mu.Lock()
		if len(c.events) == 0 {
			c.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-c.evWake:
			case <-due:
				c.checkWindows()
			}
			continue
		}
		pe := c.events[0]
		c.events[0] = pendingEvent{}
		c.events = c.events[1:]
		c.mu.Unlock()
		if inv, ok := pe.ev.(*Invocation); ok && pe.exec != nil {
			pe.exec(inv)
		}
		if c.o.OnEvent != nil {
			c.o.OnEvent(pe.ev)
		}
	}
}

func (c *Client) reportError(err error) {
	if c.o.OnError != nil {
		c.o.OnError(err)
	}
}
