package xiaotangyuan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/jsonl"
)

// ProtocolVersion is the protocol version this package speaks and sends
// in adapter.hello.
const ProtocolVersion = "1.1"

// Client is an adapter connection to a XiaoTangYuan Harness that
// reconnects by itself. Create it with [New], register atoms with
// [Client.HandleAtom], then call [Client.Connect]; [Client.Close] stops
// it. All methods may be called concurrently.
type Client struct {
	o      Options
	rec    *jsonl.Recorder
	events chan Event
	nextID atomic.Int64
	drops  atomic.Uint64

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

// New validates opts and returns a Client. It starts nothing.
func New(opts *Options) (_ *Client, err error) {
	defer wrap(&err, "new")
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		o:       o,
		rec:     jsonl.New(o.Recorder),
		events:  make(chan Event, o.EventQueue),
		atoms:   make(map[string]AtomFunc),
		changed: make(chan struct{}),
		saveID:  o.SaveID,
	}
	c.life, c.stop = context.WithCancel(context.Background())
	return c, nil
}

// Events returns the channel of assembled Harness events. It is closed
// when Close returns. Read it promptly: when it is full, events are
// dropped (see Options.EventQueue). The RPC result of Chat always carries
// the final reply, so a dropped event never loses a chat reply. Events of
// a chat whose caller gave up never appear after its EventCancel with
// Reason ReasonAbandoned (see [Client.Chat]).
func (c *Client) Events() <-chan Event { return c.events }

// Dropped returns how many events were dropped because Events was full.
func (c *Client) Dropped() uint64 { return c.drops.Load() }

// Connect dials the Harness and completes the handshake (adapter.hello as
// a request, once per connection), then keeps the connection alive in the
// background, reconnecting with back-off until Close. ctx bounds only this
// first attempt; its expiry does not affect the connection once made.
// Connect may be called once.
func (c *Client) Connect(ctx context.Context) (err error) {
	defer wrap(&err, "connect")
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return net.ErrClosed
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
	go c.supervise(cn)
	return nil
}

// Close closes the connection with status 1000 (waiting at most 5 s for
// the Harness's close frame, which a hung Harness never sends), fails
// pending calls with a *DisconnectError wrapping net.ErrClosed, cancels
// running atom handlers' contexts, waits for every goroutine of the
// client (including atom handlers that ignore their context), and closes
// Events. It is
// idempotent and always returns nil. Because it waits for them, it must
// not be called from an [AtomFunc] or from Options.State: that would
// wait for itself.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return nil
	}
	c.closed = true
	cn := c.cur
	c.mu.Unlock()
	if cn != nil {
		// Close handshake first, while the reader still reads; cancelling
		// life before it would cut the handshake short.
		cn.shutdown(&DisconnectError{Reason: "client closed", Err: net.ErrClosed}, websocket.StatusNormalClosure)
		cn.wait()
	}
	c.stop()
	c.wg.Wait()
	close(c.events)
	return nil
}

// SetSaveID switches the save slot, or clears it when id is "" (the
// player left for the title screen; the Stardew adapter does the same):
// it validates id, stores it for every later hello and, when connected
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
	if id != "" {
		if err := ValidateSaveID(id); err != nil {
			return err
		}
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
			return net.ErrClosed
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
// (or net.ErrClosed after Close).
func (c *Client) current() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &DisconnectError{Reason: "client closed", Err: net.ErrClosed}
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
// joins its goroutines, and reconnects with back-off until Close.
func (c *Client) supervise(cn *conn) {
	defer c.wg.Done()
	backoff := c.o.ReconnectMin
	for {
		select {
		case <-cn.done:
		case <-c.life.Done():
		}
		cn.shutdown(&DisconnectError{Reason: "client closed", Err: net.ErrClosed}, websocket.StatusNormalClosure)
		cn.wait()
		c.mu.Lock()
		if c.cur == cn {
			c.setCurrentLocked(nil)
		}
		c.mu.Unlock()
		c.asm.Reset()
		c.emit(Event{Kind: EventDisconnected, Err: cn.cause()})
		immediate := cn.switching()
		for {
			if !immediate && !c.sleep(backoff) {
				return
			}
			immediate = false
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed {
				return
			}
			next, err := c.dial(c.life)
			if err == nil {
				cn, backoff = next, c.o.ReconnectMin
				break
			}
			if c.life.Err() != nil {
				return
			}
			c.emit(Event{Kind: EventError, Err: err})
			backoff = min(2*backoff, c.o.ReconnectMax)
		}
	}
}

// sleep waits d, or returns false when the client closes first.
func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.life.Done():
		return false
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
	var res struct {
		Accepted        bool   `json:"accepted"`
		ProtocolVersion string `json:"protocolVersion"`
	}
	hello := c.hello()
	err = cn.call(ctx, "adapter.hello", hello, &res, c.o.HelloTimeout)
	if err == nil && !res.Accepted {
		err = &RPCError{Method: "adapter.hello", Message: "hello not accepted"}
	}
	wrap(&err, "adapter.hello")
	c.mu.Lock()
	if err == nil && c.closed {
		err = net.ErrClosed
	}
	if err != nil {
		c.mu.Unlock()
		// A Harness that answered gets a close handshake; one that did not
		// (timeout, ctx expiry) would hold Connect up to 5 s more waiting
		// for a close frame that never comes.
		status := websocket.StatusGoingAway
		var re *RPCError
		if errors.As(err, &re) || errors.Is(err, net.ErrClosed) {
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

// dialWS performs the WebSocket handshake, bounded by HelloTimeout and
// cut short by Close: a Harness whose event loop hangs still accepts TCP
// connections but never answers the upgrade, which would otherwise hold
// Connect, the reconnect loop and Close forever.
func (c *Client) dialWS(ctx context.Context) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.HelloTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()
	ws, _, err := websocket.Dial(ctx, c.o.URL, &websocket.DialOptions{HTTPClient: c.o.HTTPClient})
	return ws, err
}

type helloParams struct {
	AdapterID       string   `json:"adapterId"`
	GameID          string   `json:"gameId"`
	Version         string   `json:"version"`
	ProtocolVersion string   `json:"protocolVersion"`
	ProcessID       int      `json:"processId,omitempty"`
	SaveID          string   `json:"saveId,omitempty"`
	Capabilities    []string `json:"capabilities"`
}

// hello builds the adapter.hello params: assistant.text-stream always
// (so the Harness never sends legacy assistant.delta), the extra
// features, then every registered atom in name order.
func (c *Client) hello() helloParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	caps := []string{"assistant.text-stream"}
	for _, f := range c.o.Capabilities {
		if f != "assistant.text-stream" {
			caps = append(caps, f)
		}
	}
	names := make([]string, 0, len(c.atoms))
	for n := range c.atoms {
		names = append(names, n)
	}
	sort.Strings(names)
	p := helloParams{
		AdapterID: c.o.AdapterID, GameID: c.o.GameID, Version: c.o.Version,
		ProtocolVersion: ProtocolVersion, SaveID: c.saveID,
		Capabilities: append(caps, names...),
	}
	if c.o.ProcessID > 0 {
		p.ProcessID = c.o.ProcessID
	}
	return p
}

// emit hands ev to Events without blocking; when the queue is full the
// event is dropped, counted and noted in the recorder. Only the client's
// own goroutines, which Close joins before closing Events, may call it.
func (c *Client) emit(ev Event) {
	if !c.tryEmit(ev) {
		c.dropped(ev)
	}
}

// tryEmit queues ev on Events if there is room and reports whether it did.
func (c *Client) tryEmit(ev Event) bool {
	select {
	case c.events <- ev:
		return true
	default:
		return false
	}
}

// dropped counts and notes an event that found Events full.
func (c *Client) dropped(ev Event) {
	c.drops.Add(1)
	c.rec.RecordNote(jsonl.In, fmt.Sprintf("dropped: event queue full (%s)", ev.Kind), nil)
}

// emitOutside is emit for goroutines Close does not join (a caller giving
// up on a chat): it never sends once Close has begun, since Close then
// closes Events.
func (c *Client) emitOutside(ev Event) {
	c.mu.Lock()
	queued := c.closed || c.tryEmit(ev)
	c.mu.Unlock()
	if !queued {
		c.dropped(ev)
	}
}
