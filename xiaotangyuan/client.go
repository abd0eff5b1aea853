package xiaotangyuan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/backoff"
	"github.com/gamelink-go/gamelink/internal/events"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// ProtocolVersion is the protocol version this package speaks and sends
// in adapter.hello.
const ProtocolVersion = wire.ProtocolVersion

// Client is an adapter connection to a XiaoTangYuan Harness that
// reconnects by itself. Create it with [New], register atoms with
// [Client.HandleAtom], then call [Client.Connect]; receive events with
// [Client.Events], [Client.Next] or [Client.Poll]; [Client.Close] stops
// it. All methods may be called concurrently.
type Client struct {
	o      Options
	rec    *jsonl.Queue
	events *events.Queue[Event]
	nextID atomic.Int64
	drops  atomic.Int64

	life context.Context // cancelled by Close; parent of every connection
	stop context.CancelFunc
	wg   sync.WaitGroup // Connect in progress and the supervisor

	// asm is owned by the reader goroutine of the current connection;
	// connections never overlap, and the supervisor joins one before the
	// next starts.
	asm Assembler

	mu      sync.Mutex // guards following
	atoms   map[string]AtomFunc
	started bool
	closed  bool
	cur     *conn
	changed chan struct{} // closed and replaced whenever cur changes
	saveID  string
}

// New validates opts and returns a Client. It starts nothing: call
// [Client.Connect]. An invalid option is a [*ConfigError].
func New(opts *Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		o:       o,
		rec:     jsonl.NewQueue(o.Recorder, jsonl.MaxQueued),
		events:  events.New[Event](o.MaxEvents),
		atoms:   make(map[string]AtomFunc),
		changed: make(chan struct{}),
		saveID:  o.SaveID,
	}
	c.life, c.stop = context.WithCancel(context.Background())
	return c, nil
}

// Next returns the next assembled Harness event, waiting for it until ctx
// ends. After [Client.Close] it returns the events still waiting, then
// [ErrClosed]. Receive promptly: when [Options.MaxEvents] wait, new ones
// are dropped (see [Client.Dropped]). The RPC result of Chat always
// carries the final reply, so a dropped event never loses a chat reply.
// Events of a chat whose caller gave up never appear after its
// EventCancel with Reason ReasonAbandoned (see [Client.Chat]).
func (c *Client) Next(ctx context.Context) (Event, error) {
	ev, err := c.events.Next(ctx)
	if err != nil && !errors.Is(err, ErrClosed) {
		err = fmt.Errorf("%snext event: %w", prefix, err)
	}
	return ev, err
}

// Events returns the events in order, as [Client.Next] does, for a range
// loop that ends when the client is closed. Stopping the loop early is
// fine.
func (c *Client) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, err := c.events.Next(context.Background())
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Poll appends the events waiting now to dst, without waiting, and
// returns it: for game loops that look once per frame.
func (c *Client) Poll(dst []Event) []Event { return c.events.Poll(dst) }

// Dropped returns how many events were dropped because
// [Options.MaxEvents] were waiting.
func (c *Client) Dropped() int { return int(c.drops.Load()) }

// Connect dials the Harness and completes the handshake (adapter.hello as
// a request, once per connection): one attempt, bounded by ctx and by
// Options.HandshakeTimeout. On success the client keeps the connection
// alive in the background, reconnecting with back-off until Close, and
// ctx's later expiry changes nothing. On failure nothing keeps running,
// and Connect may be called again (a game waiting for a Harness that is
// not running yet calls it every few seconds). After a success, a second
// Connect returns an error.
func (c *Client) Connect(ctx context.Context) (err error) {
	defer wrap(&err, "connect")
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.started {
		c.mu.Unlock()
		return errConnected
	}
	c.started = true
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()

	cn, err := c.dial(ctx)
	if err != nil {
		c.mu.Lock()
		c.started = false // let the caller retry
		c.mu.Unlock()
		return err
	}
	c.wg.Add(1)
	c.rec.Start()
	go c.supervise(cn)
	return nil
}

// Close closes the connection with status 1000 (waiting at most 5 s for
// the Harness's close frame, which a hung Harness never sends), fails
// pending calls with a *DisconnectError wrapping ErrClosed, cancels
// running atom handlers' contexts, and waits for every goroutine of the
// client (including atom handlers that ignore their context). Events
// still waiting can be received afterwards; then Next returns ErrClosed
// and an Events loop ends. Close is idempotent and always returns nil.
// Because it waits for them, it must not be called from an [AtomFunc] or
// from Options.State: that would wait for itself.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		c.closeRecorder()
		return nil
	}
	c.closed = true
	cn := c.cur
	c.mu.Unlock()
	if cn != nil {
		// Close handshake first, while the reader still reads; cancelling
		// life before it would cut the handshake short.
		cn.shutdown(&DisconnectError{Reason: "client closed", Err: ErrClosed}, websocket.StatusNormalClosure)
		cn.wait()
	}
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
		c.o.Logger.Warn("xiaotangyuan: recording incomplete", "err", err)
	}
}

// SetSaveID switches the save slot, or clears it when id is "" or blank
// (the player left for the title screen; the Stardew adapter does the
// same): it trims and validates id (see [ValidateSaveID]), stores it for
// every later hello and, when connected
// and id differs from the current one, reconnects so that the new
// adapter.hello carries it, or carries none (the hello is once per
// connection, so this is the only way to change the hello saveId; a
// per-chat ChatContext.SaveID is the other). The same id again changes
// nothing. The new connection is dialled at once, without back-off;
// calls pending on the old one fail with a [*DisconnectError] whose
// Reason is "save switched", and the Harness starts a fresh chat session
// on the new one. It returns once the new connection is ready or ctx
// expires; on expiry the switch still happens in the background.
func (c *Client) SetSaveID(ctx context.Context, id string) (err error) {
	defer wrap(&err, "set save id")
	if id, err = trimSaveID("saveId", id); err != nil {
		return err
	}
	c.mu.Lock()
	same := c.saveID == id
	c.saveID = id
	cn := c.cur
	c.mu.Unlock()
	if cn == nil || same {
		return nil
	}
	cn.switchSave()
	return c.waitConn(ctx, cn)
}

// waitConn waits until a connection other than old is current.
func (c *Client) waitConn(ctx context.Context, old *conn) error {
	for {
		c.mu.Lock()
		cur, ch, closed := c.cur, c.changed, c.closed
		c.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if cur != nil && cur != old {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// current returns the live connection or an error wrapping ErrDisconnected
// (and ErrClosed after Close).
func (c *Client) current() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &DisconnectError{Reason: "client closed", Err: ErrClosed}
	}
	if c.cur == nil {
		return nil, &DisconnectError{Reason: "not connected"}
	}
	return c.cur, nil
}

// setCurrentLocked installs cn (nil when disconnected) and wakes waiters.
// c.mu must be held.
func (c *Client) setCurrentLocked(cn *conn) {
	c.cur = cn
	close(c.changed)
	c.changed = make(chan struct{})
}

// supervise owns the connection after Connect: it waits for it to end,
// joins its goroutines, and reconnects with back-off until Close. The
// first failed attempt of an outage is logged as a warning, later ones at
// debug level, so that a Harness that stays down does not flood the log.
func (c *Client) supervise(cn *conn) {
	defer c.wg.Done()
	b := backoff.Backoff{Min: c.o.ReconnectMin, Max: c.o.ReconnectMax}
	for {
		select {
		case <-cn.done:
		case <-c.life.Done():
		}
		cn.shutdown(&DisconnectError{Reason: "client closed", Err: ErrClosed}, websocket.StatusNormalClosure)
		cn.wait()
		c.mu.Lock()
		if c.cur == cn {
			c.setCurrentLocked(nil)
		}
		c.mu.Unlock()
		c.asm.Reset()
		c.emit(Event{Kind: EventDisconnected, Err: cn.cause()})
		immediate := cn.switching()
		b.Reset()
		for failures := 0; ; failures++ {
			if !immediate && backoff.Wait(c.life, b.Next()) != nil {
				return
			}
			immediate = false
			next, err := c.dial(c.life)
			if err == nil {
				cn = next
				break
			}
			if c.life.Err() != nil {
				return
			}
			level := slogWarnOnce(failures)
			c.o.Logger.Log(c.life, level, "xiaotangyuan: reconnect failed; retrying with back-off", "url", c.o.URL, "err", err)
		}
	}
}

// dial opens one connection and performs the hello. On success the
// connection is current and its goroutines run.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	ws, err := c.dialWS(ctx)
	if err != nil {
		return nil, &DisconnectError{Reason: "dial " + c.o.URL, Err: err}
	}
	ws.SetReadLimit(c.o.ReadLimit)
	cn := newConn(c, ws)
	cn.startReader()
	var res wire.HelloResult
	hello := c.hello()
	err = cn.call(ctx, wire.MethodHello, hello, &res, c.o.HandshakeTimeout)
	if err == nil && !res.Accepted {
		err = &RPCError{Method: wire.MethodHello, Message: "hello not accepted"}
	}
	wrap(&err, wire.MethodHello)
	c.mu.Lock()
	if err == nil && c.closed {
		err = ErrClosed
	}
	if err != nil {
		c.mu.Unlock()
		// A Harness that answered gets a close handshake; one that did not
		// (timeout, ctx expiry) would hold Connect up to 5 s more waiting
		// for a close frame that never comes.
		status := websocket.StatusGoingAway
		var re *RPCError
		if errors.As(err, &re) || errors.Is(err, ErrClosed) {
			status = websocket.StatusNormalClosure
		}
		cn.shutdown(&DisconnectError{Reason: "handshake failed", Err: err}, status)
		cn.wait()
		c.asm.Reset()
		return nil, err
	}
	c.setCurrentLocked(cn)
	// SetSaveID during the handshake found no connection to switch.
	stale := hello.SaveID != c.saveID
	c.mu.Unlock()
	cn.startBackground()
	c.emit(Event{Kind: EventConnected, ProtocolVersion: res.ProtocolVersion})
	if stale {
		cn.switchSave()
	}
	return cn, nil
}

// dialWS performs the WebSocket handshake, bounded by HandshakeTimeout
// and cut short by Close: a Harness whose event loop hangs still accepts
// TCP connections but never answers the upgrade, which would otherwise
// hold Connect, the reconnect loop and Close forever.
func (c *Client) dialWS(ctx context.Context) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.HandshakeTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()
	ws, _, err := websocket.Dial(ctx, c.o.URL, &websocket.DialOptions{HTTPClient: c.o.HTTPClient})
	return ws, err
}

// hello builds the adapter.hello params: assistant.text-stream always
// (so the Harness never sends legacy assistant.delta), the extra
// features, then every registered atom in name order.
func (c *Client) hello() wire.Hello {
	c.mu.Lock()
	defer c.mu.Unlock()
	caps := []string{wire.CapTextStream}
	for _, f := range c.o.Capabilities {
		if f != wire.CapTextStream {
			caps = append(caps, f)
		}
	}
	names := make([]string, 0, len(c.atoms))
	for n := range c.atoms {
		names = append(names, n)
	}
	sort.Strings(names)
	p := wire.Hello{
		AdapterID: c.o.AdapterID, GameID: c.o.GameID, Version: c.o.Version,
		ProtocolVersion: ProtocolVersion, SaveID: c.saveID,
		Capabilities: append(caps, names...),
	}
	if c.o.ProcessID > 0 {
		p.ProcessID = c.o.ProcessID
	}
	return p
}

// emit queues ev without blocking; when [Options.MaxEvents] wait, the
// event is dropped, counted and noted in the recorder. An event emitted
// after Close is ignored.
func (c *Client) emit(ev Event) {
	if !c.tryEmit(ev) {
		c.dropped(ev)
	}
}

// tryEmit queues ev if there is room and reports whether it did; an event
// after Close counts as queued.
func (c *Client) tryEmit(ev Event) bool {
	return c.events.Push(ev) || !c.events.Full()
}

// dropped counts and notes an event that found the queue full.
func (c *Client) dropped(ev Event) {
	c.drops.Add(1)
	c.rec.RecordNote(jsonl.In, fmt.Sprintf("dropped: event queue full (%s)", ev.Kind), nil)
}

// slogWarnOnce is the log level of the n-th failed attempt (from 0) of an
// outage: a warning for the first, debug for the rest.
func slogWarnOnce(n int) slog.Level {
	if n == 0 {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
