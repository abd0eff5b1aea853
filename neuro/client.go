package neuro

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/events"
	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// Client is the game's connection to Neuro. It keeps the desired action
// set, (re)connects, sends startup and the whole set on every connect,
// answers actions, and manages forces.
//
// All methods may be called concurrently. Methods that send only queue the
// message (in order, never merged or reordered, except that a force waits
// behind a pending result: see [Client.Force]) and return at once; the
// queue is flushed whenever a connection is open. Registration changes are
// not queued while disconnected: the next connect registers the whole set.
type Client struct {
	game   string
	o      Options
	rec    *jsonl.Queue
	dial   func(ctx context.Context, url string) (conn, error)
	events *events.Queue[pendingEvent]
	// regEnvelope is the size of an actions/register of no action.
	regEnvelope int
	// idSeed hashes the ids answered: an id may be megabytes, and the
	// last 1024 are remembered, so only their hashes are (issue #31).
	idSeed maphash.Seed

	wg   sync.WaitGroup
	life context.Context // cancelled by Close; parent of every connection and validator
	stop context.CancelFunc
	wake chan struct{} // writer: queue grew (cap 1)

	mu         sync.Mutex // guards following
	started    bool
	closed     bool
	connected  bool
	gen        uint64 // connection generation, bumped on every connect
	reg        *registry
	queue      []queued
	dropped    int
	winChanged chan struct{}       // closed and replaced when a window's conditions start being watched
	winChecked time.Time           // when the windows' conditions were last checked by Next
	inflight   map[callKey]*call   // by connection and id
	answered   map[uint64]struct{} // hashes of the ids answered on this connection
	ansRing    []uint64            // answered in order, to bound it
	ansLen     int                 // ids in ansRing
	ansNext    int
	force      *ForceHandle         // the outstanding force
	forceQ     []*ForceHandle       // forces waiting for the slot
	windows    []*ForceHandle       // open windows, in opening order
	gone       map[string]time.Time // wire names unregistered lately, and when
	shutdownW  bool                 // latest shutdown/graceful wants_shutdown
	drained    chan struct{}        // closed and replaced when the queue empties
	notes      []recNote            // recorder notes to write once c.mu is released
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

// New returns a client for the game with the given display name, which
// is fixed for the client's life. It starts nothing: declare actions,
// then call [Client.Connect]. An invalid option is a [*ConfigError].
func New(game string, opts *Options) (*Client, error) {
	if game == "" {
		return nil, errors.New("neuro: new: empty game name")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		game:       game,
		o:          o,
		rec:        jsonl.NewQueue(o.Recorder, jsonl.MaxQueued),
		events:     events.New[pendingEvent](o.MaxEvents),
		wake:       make(chan struct{}, 1),
		winChanged: make(chan struct{}),
		reg:        newRegistry(o.Prefix),
		inflight:   map[callKey]*call{},
		answered:   map[uint64]struct{}{},
		gone:       map[string]time.Time{},
		ansRing:    make([]uint64, answeredMemory),
		idSeed:     maphash.MakeSeed(),
		drained:    make(chan struct{}),
	}
	c.regEnvelope = len(c.mustEncode(cmdRegister, registerData{Actions: []wireAction{}}))
	c.life, c.stop = context.WithCancel(context.Background())
	c.dial = func(ctx context.Context, url string) (conn, error) {
		return dialWebSocket(ctx, url, o.HTTPClient, o.ReadLimit)
	}
	return c, nil
}

// Connect dials the Neuro server: one attempt, bounded by ctx and by
// Options.HandshakeTimeout, whose failure is a *[DialError]. On success
// the connection's first messages are startup and the whole action set,
// and the client keeps a connection in the background from then on,
// reconnecting with back-off until Close; ctx's later expiry changes
// nothing. On failure nothing keeps running, messages stay queued, and
// Connect may be called again (a game started before Neuro calls it every
// few seconds). After a success, a second Connect returns an error.
func (c *Client) Connect(ctx context.Context) (err error) {
	defer errd.Wrap(&err, "neuro: connect")
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return ErrClosed
	case c.started:
		c.mu.Unlock()
		return errConnected
	}
	c.started = true
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()
	cn, err := c.dialOnce(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.closed {
		cn.Close()
		err = ErrClosed
	}
	if err != nil {
		c.started = false // let the caller retry
		return err
	}
	c.wg.Add(1)
	c.rec.Start()
	go c.connectLoop(cn)
	return nil
}

// Close disconnects and stops every goroutine the client started, waiting
// for them (including running validators, which see their ctx cancelled).
// Outstanding forces end as [ForceCancelled]. Events still waiting can be
// received afterwards; then [Client.Next] returns [ErrClosed] and an
// Events loop ends. It is idempotent. It must not be called from the
// client's own callbacks (Validate, Execute, a window's conditions), nor
// from a goroutine they wait for.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		c.closeRecorder()
		return nil
	}
	c.closed = true
	hs := append(append([]*ForceHandle{c.force}, c.forceQ...), c.windows...)
	c.force, c.forceQ = nil, nil
	for _, h := range hs {
		if h != nil {
			c.endForceLocked(h, ForceCancelled, false)
		}
	}
	c.mu.Unlock()
	c.stop()
	c.wg.Wait()
	c.events.Close()
	c.closeRecorder()
	return nil
}

// closeRecorder writes what waits for Options.Recorder and stops the
// goroutine writing it, or gives up on a stalled writer (see
// Options.Recorder).
func (c *Client) closeRecorder() {
	if err := c.rec.Close(); err != nil {
		c.o.Logger.Warn("neuro: recording incomplete", "err", err)
	}
}

// Game returns the game name given to [New].
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
// was full (see [Options.MaxEvents]).
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
	if c.o.tooBig(len(b)) {
		return nil, fmt.Errorf("%w: %s is %d bytes, limit %d", ErrMessageTooBig, cmd, len(b), c.o.ReadLimit)
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

// emitLocked queues an event for delivery; when the queue is full it is
// dropped and counted. c.mu must be held.
func (c *Client) emitLocked(ev Event, exec func(*Invocation)) {
	if !c.events.Push(pendingEvent{ev: ev, exec: exec}) && !c.closed {
		c.dropped++
	}
}

func (c *Client) emit(ev Event) {
	c.mu.Lock()
	c.emitLocked(ev, nil)
	c.mu.Unlock()
}

// Next returns the next event, waiting for it until ctx ends. For an
// [*Invocation] it first calls the action's Execute, if any, on the
// caller's goroutine. While it waits, it checks the conditions of open
// windows ([Window.ForceWhen], [Window.EndWhen]) about 30 times a second,
// also on the caller's goroutine. After [Client.Close] it returns the
// events still waiting, then [ErrClosed]. Receive from one goroutine: a
// game loop calls [Client.Poll] each frame instead, another program ranges
// over [Client.Events]. Events not received in time fill the queue (see
// [Options.MaxEvents]).
func (c *Client) Next(ctx context.Context) (Event, error) {
	for {
		c.checkWindowsIfDue()
		ch := c.events.Changed()
		c.mu.Lock()
		win, watching := c.winChanged, c.watchingLocked()
		c.mu.Unlock()
		pe, ok, closed := c.events.TryNext()
		switch {
		case ok:
			return c.deliver(pe), nil
		case closed:
			return nil, ErrClosed
		}
		var due <-chan time.Time
		var t *time.Timer
		if watching {
			t = time.NewTimer(conditionInterval)
			due = t.C
		}
		select {
		case <-ch:
		case <-win:
		case <-due:
		case <-ctx.Done():
			return nil, fmt.Errorf("neuro: next event: %w", ctx.Err())
		}
		if t != nil {
			t.Stop()
		}
	}
}

// Events returns the events in order, as [Client.Next] does, for a range
// loop that ends when the client is closed. Stopping the loop early is
// fine.
func (c *Client) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, err := c.Next(context.Background())
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Poll appends the events waiting now to dst, without waiting, and
// returns it: for game loops that must act on their main thread, once per
// frame. It first checks the conditions of open windows
// ([Window.ForceWhen], [Window.EndWhen]), and calls each [*Invocation]'s
// Execute, if any, before appending it, all on the caller's goroutine.
func (c *Client) Poll(dst []Event) []Event {
	c.checkWindows() // the game's frame: its windows' conditions
	for {
		pe, ok, _ := c.events.TryNext()
		if !ok {
			return dst
		}
		dst = append(dst, c.deliver(pe))
	}
}

// deliver runs an invocation's Execute and returns the event.
func (c *Client) deliver(pe pendingEvent) Event {
	if inv, ok := pe.ev.(*Invocation); ok && pe.exec != nil {
		pe.exec(inv)
	}
	return pe.ev
}

// checkWindowsIfDue checks the windows' conditions when some are watched
// and the last check by Next is conditionInterval old, so that a busy
// stream of events cannot starve them.
func (c *Client) checkWindowsIfDue() {
	c.mu.Lock()
	due := c.watchingLocked() && time.Since(c.winChecked) >= conditionInterval
	if due {
		c.winChecked = time.Now()
	}
	c.mu.Unlock()
	if due {
		c.checkWindows()
	}
}
