package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/internal/wsread"
)

// maxRecorded bounds how many game messages an Engine keeps for Received.
const maxRecorded = 10000

// Message is one game message as the engine received it.
type Message struct {
	Type      string
	MessageID string
	SessionID string // "" when absent
	Raw       []byte // the whole envelope
	// Err is why the engine refused it (invalid_payload), or nil.
	Err error
}

// Engine is a fake RPEngine browser page connected to a game server. All
// methods may be called concurrently.
type Engine struct {
	opts options
	url  string
	file *fileEngine // file mode (filemode.go); nil over WebSocket

	mu       sync.Mutex // guards following
	faults   Faults
	conn     *conn
	received []Message     // the last maxRecorded to 2*maxRecorded messages (see record)
	dropped  int           // messages dropped from the front of received
	changed  chan struct{} // closed when a message is received; nil when nobody waits
	closed   bool
}

// conn is one connection (one session) of the engine.
type conn struct {
	e         *Engine
	c         *websocket.Conn
	fm        *fileLink // file mode (filemode.go); nil over WebSocket
	sessionID string
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	sent      atomic.Int64
	jobs      chan *job
	done      chan struct{} // closed when the reader ended
	out       *outbox       // WebSocket only (writer.go)

	// queueMu orders every change of the queue with the messages that
	// report it (reply.accepted, capacity.update), as the engine's single
	// event loop does: without it a capacity.update computed before an
	// accept could be written after it, a stale count that made the game
	// send one request too many (100 concurrent replies once made 102
	// requests under load).
	// It is a channel used as a lock (lockQueue, unlockQueue): the Delay
	// fault sleeps with it held, and a goroutine waiting for a sync.Mutex
	// is not durably blocked inside a testing/synctest bubble, so the
	// bubble's clock never reached the end of the delay (issue #17).
	queueMu chan struct{}

	mu      sync.Mutex // guards following
	window  *wire.Window
	cards   map[cardKey]cachedCard
	active  map[string]*job // queued or running, by requestId
	depth   int
	closeSt websocket.StatusCode
}

// Dial connects a fake engine to the game server at url (for example
// Server.SocketURL(), or a [Listener]'s URL with Options.HTTPClient set to
// its Client), sends hello and waits, bounded by ctx, for welcome. The
// engine then acks, validates and answers game messages on its own
// goroutines until Close.
func Dial(ctx context.Context, url string, opts *Options) (_ *Engine, err error) {
	defer errd.Wrap(&err, "enginetest: dial")
	e := &Engine{opts: opts.withDefaults(), url: url}
	e.faults = e.opts.Faults
	if err := e.connect(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// DialRaw opens a WebSocket to url as Dial does (with opts.Origin, over
// opts.HTTPClient; the other options are unused), without any handshake:
// for tests of a server's acceptance checks and of bad hellos. The
// caller closes the connection. A request without an Origin, or with
// several, is written by hand on a connection from [Listener.Dial].
func DialRaw(ctx context.Context, url string, opts *Options) (*websocket.Conn, *http.Response, error) {
	o := opts.withDefaults()
	return dialRaw(ctx, url, o)
}

func dialRaw(ctx context.Context, url string, o options) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	h.Set("Origin", o.Origin)
	return websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, HTTPClient: o.HTTPClient})
}

func (e *Engine) connect(ctx context.Context) error {
	if e.file != nil {
		return e.connectFile(ctx)
	}
	c, _, err := dialRaw(ctx, e.url, e.opts)
	if err != nil {
		return err
	}
	c.SetReadLimit(wire.MaxMessageBytes)
	hello, _ := wire.Encode(wire.TypeHello, wire.NewID(), "", time.Now(), map[string]string{"clientVersion": e.opts.ClientVersion})
	if err := c.Write(ctx, websocket.MessageText, hello); err != nil {
		c.CloseNow()
		return err
	}
	sessionID, err := awaitWelcome(ctx, c)
	if err != nil {
		c.CloseNow()
		return err
	}
	cn := e.newConn(sessionID)
	cn.c = c
	// Reads and writes run without a context (readLoop, writeLoop): the
	// end of the connection's context closes the connection instead.
	context.AfterFunc(cn.ctx, func() { c.CloseNow() })
	cn.wg.Add(1)
	go cn.writeLoop()
	return e.startConn(cn, cn.readLoop, func() { c.CloseNow() })
}

// newConn returns the state of one engine session, for either transport.
func (e *Engine) newConn(sessionID string) *conn {
	cctx, cancel := context.WithCancel(context.Background())
	return &conn{e: e, sessionID: sessionID, ctx: cctx, cancel: cancel,
		jobs: make(chan *job, e.opts.QueueLimit), done: make(chan struct{}), out: newOutbox(), queueMu: make(chan struct{}, 1),
		cards: map[cardKey]cachedCard{}, active: map[string]*job{}, window: wire.NewWindow(2000)}
}

// startConn makes cn the engine's live session and starts its reader
// (read) and worker, or, when the engine is closed already, undoes cn
// with closeNow.
func (e *Engine) startConn(cn *conn, read, closeNow func()) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		cn.cancel()
		closeNow()
		return errors.New("engine closed")
	}
	e.conn = cn
	e.mu.Unlock()
	cn.wg.Add(2)
	go read()
	go cn.work()
	cn.sendCapacity()
	return nil
}

// awaitWelcome reads until welcome (an ack of hello may come first).
func awaitWelcome(ctx context.Context, c *websocket.Conn) (string, error) {
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return "", fmt.Errorf("waiting for welcome: %w", err)
		}
		h, err := wire.DecodeHeader(data)
		if err != nil {
			return "", fmt.Errorf("bad message before welcome: %w", err)
		}
		switch h.Type {
		case wire.TypeAck:
			continue
		case wire.TypeWelcome:
			var w struct {
				SessionID     string `json:"sessionId"`
				ServerVersion string `json:"serverVersion"`
			}
			if err := json.Unmarshal(data, &w); err != nil || w.SessionID == "" || w.ServerVersion == "" {
				return "", fmt.Errorf("bad welcome: %s", data)
			}
			// The engine acks welcome like any other message, without a
			// sessionId (it acks before it takes the new session). Left
			// unacked, welcome stayed the game's oldest pending message,
			// and a later invalid_payload was blamed on it (issue #15).
			ack, _ := wire.Encode(wire.TypeAck, wire.NewID(), "", time.Now(), wire.Ack{AcknowledgedMessageID: h.MessageID})
			if err := c.Write(ctx, websocket.MessageText, ack); err != nil {
				return "", err
			}
			return w.SessionID, nil
		default:
			return "", fmt.Errorf("%s before welcome", h.Type)
		}
	}
}

// SessionID returns the current session's id ("" when disconnected).
func (e *Engine) SessionID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn == nil {
		return ""
	}
	return e.conn.sessionID
}

// SetFaults replaces the fault knobs; they apply from the next message.
func (e *Engine) SetFaults(f Faults) {
	e.mu.Lock()
	e.faults = f
	e.mu.Unlock()
}

// Faults returns the current fault knobs.
func (e *Engine) Faults() Faults {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faults
}

// Reconnect drops the connection abruptly (as a browser reload does:
// pending work is lost and the card cache cleared) and connects again,
// which starts a new session.
func (e *Engine) Reconnect(ctx context.Context) error {
	e.Disconnect()
	return e.connect(ctx)
}

// Disconnect drops the connection abruptly and waits for the engine's
// goroutines of that connection to end.
func (e *Engine) Disconnect() {
	e.mu.Lock()
	cn := e.conn
	e.conn = nil
	e.mu.Unlock()
	if cn != nil {
		cn.stop()
	}
}

// Done returns a channel closed when the current connection has ended
// (nil when disconnected).
func (e *Engine) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn == nil {
		return nil
	}
	return e.conn.done
}

// CloseStatus returns the close code the server sent on the current (or
// last) connection once it ended, or -1.
func (e *Engine) CloseStatus() websocket.StatusCode {
	e.mu.Lock()
	cn := e.conn
	e.mu.Unlock()
	if cn == nil {
		return -1
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.closeSt
}

// Close disconnects and ends every goroutine of the engine.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.Disconnect()
	return nil
}

func (cn *conn) stop() {
	cn.cancel()
	cn.closeNow()
	cn.wg.Wait()
}

// Received returns a copy of the game messages received so far, across
// sessions, oldest first (at most the last 10000).
func (e *Engine) Received() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.received
	if len(r) > maxRecorded {
		r = r[len(r)-maxRecorded:]
	}
	return append([]Message(nil), r...)
}

// WaitFor waits, bounded by ctx, until a received game message (past or
// future) satisfies match, and returns it.
func (e *Engine) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	seen := 0 // messages ever received that were looked at
	for {
		e.mu.Lock()
		if e.changed == nil {
			e.changed = make(chan struct{})
		}
		msgs, ch := e.received[max(0, seen-e.dropped):], e.changed
		seen = e.dropped + len(e.received)
		e.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("enginetest: wait for message: %w", ctx.Err())
		}
	}
}

// WaitType waits for a received game message of type typ.
func (e *Engine) WaitType(ctx context.Context, typ string) (Message, error) {
	return e.WaitFor(ctx, func(m Message) bool { return m.Type == typ })
}

// record keeps m for Received and wakes WaitFor. Past 2*maxRecorded
// messages it drops all but the last maxRecorded at once, so that keeping
// one costs no copy of the others, and the channel WaitFor sleeps on is
// made only when somebody waits (issue #24: a copy of up to 10000
// messages and a new channel per ack received). Dropping at once also
// fixes a race: the old one-by-one shift overwrote the array that
// WaitFor was reading unlocked.
func (e *Engine) record(m Message) {
	e.mu.Lock()
	if len(e.received) >= 2*maxRecorded {
		// A new array: WaitFor reads slices of the old one unlocked.
		keep := e.received[len(e.received)-maxRecorded:]
		e.dropped += len(e.received) - len(keep)
		e.received = append(make([]Message, 0, 2*maxRecorded), keep...)
	}
	e.received = append(e.received, m)
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
	e.mu.Unlock()
}

// Send sends an engine message of type typ with the given fields (flat,
// beside the envelope) in the current session, and returns its messageId.
// It is the escape hatch for messages the engine would not send by itself.
func (e *Engine) Send(ctx context.Context, typ string, fields any) (string, error) {
	cn := e.current()
	if cn == nil {
		return "", errors.New("enginetest: not connected")
	}
	id := wire.NewID()
	b, err := wire.Encode(typ, id, cn.sessionID, time.Now(), fields)
	if err != nil {
		return "", err
	}
	return id, cn.send(ctx, b)
}

// SendRaw writes data as one text message, as it is.
func (e *Engine) SendRaw(ctx context.Context, data []byte) error {
	cn := e.current()
	if cn == nil {
		return errors.New("enginetest: not connected")
	}
	return cn.send(ctx, data)
}

// SetCapacity changes the CapacityFull fault and sends capacity.update.
func (e *Engine) SetCapacity(accepting bool) {
	e.mu.Lock()
	e.faults.CapacityFull = !accepting
	cn := e.conn
	e.mu.Unlock()
	if cn != nil {
		cn.sendCapacity()
	}
}

func (e *Engine) current() *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conn
}

func (cn *conn) faults() Faults {
	cn.e.mu.Lock()
	defer cn.e.mu.Unlock()
	return cn.e.faults
}

// write sends one message, with the Duplicate and DisconnectAfter faults.
func (cn *conn) write(ctx context.Context, b []byte) error {
	if err := cn.writeRaw(ctx, b); err != nil {
		return err
	}
	n := cn.sent.Add(1)
	f := cn.faults()
	if f.Duplicate {
		if h, err := wire.DecodeHeader(b); err == nil && h.Type != wire.TypeAck {
			_ = cn.writeRaw(ctx, b)
		}
	}
	if f.DisconnectAfter > 0 && n == int64(f.DisconnectAfter) {
		cn.e.opts.Logf("enginetest: disconnecting after %d messages", n)
		cn.closeNow()
	}
	return nil
}

// emit sends an engine message in the session. Over WebSocket it only
// queues it (writer.go), so the reader never blocks on a write.
func (cn *conn) emit(typ string, fields any) error {
	b, err := wire.Encode(typ, wire.NewID(), cn.sessionID, time.Now(), fields)
	if err != nil {
		return err
	}
	if cn.fm == nil {
		return cn.out.queue(cn.ctx, b, nil)
	}
	ctx, cancel := context.WithTimeout(cn.ctx, writeTimeout)
	defer cancel()
	return cn.write(ctx, b)
}

// send writes b, after every message queued before it, and waits, bounded
// by ctx, until it is written.
func (cn *conn) send(ctx context.Context, b []byte) error {
	if cn.fm != nil {
		return cn.write(ctx, b)
	}
	done := cn.out.done()
	if err := cn.out.queue(ctx, b, done); err != nil {
		cn.out.putDone(done)
		return err
	}
	select {
	case err := <-done:
		cn.out.putDone(done)
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-cn.ctx.Done():
		return errors.New("enginetest: connection ended")
	}
}

// sendCapacity sends capacity.update with the queue as it is now, in
// order with every other queue change (queueMu).
func (cn *conn) sendCapacity() {
	cn.lockQueue()
	defer cn.unlockQueue()
	cn.sendCapacityLocked()
}

// lockQueue takes queueMu; unlockQueue releases it.
func (cn *conn) lockQueue()   { cn.queueMu <- struct{}{} }
func (cn *conn) unlockQueue() { <-cn.queueMu }

// sendCapacityLocked is sendCapacity with queueMu held.
func (cn *conn) sendCapacityLocked() {
	f := cn.faults()
	cn.mu.Lock()
	depth := cn.depth
	cn.mu.Unlock()
	_ = cn.emit(wire.TypeCapacity, map[string]any{
		"queueDepth": depth, "queueLimit": cn.e.opts.QueueLimit,
		"acceptingRequests": !f.CapacityFull && depth < cn.e.opts.QueueLimit,
	})
}

// readLoop reads, acks and dispatches game messages. It reads each
// message into one reused buffer and keeps a copy of exactly its size
// (Message.Raw), where websocket.Conn.Read grows a new buffer from 512
// bytes for each; it reads with no context (a context costs an AfterFunc
// per message), the connection being closed when cn.ctx ends
// (connectWS) (issue #24).
func (cn *conn) readLoop() {
	defer cn.wg.Done()
	defer close(cn.done)
	defer cn.cancel()
	// One buffer, from 4 KiB, kept between messages up to 1 MiB.
	rb := wsread.Buffer{Min: 4 << 10, MaxKept: 1 << 20}
	for {
		typ, data, err := rb.Next(cn.c)
		if err != nil {
			cn.mu.Lock()
			cn.closeSt = websocket.CloseStatus(err)
			cn.mu.Unlock()
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		cn.receive(bytes.Clone(data))
	}
}

func (cn *conn) receive(data []byte) {
	m := Message{Raw: data}
	h, err := wire.DecodeHeader(data)
	if err == nil {
		m.Type, m.MessageID = h.Type, h.MessageID
		if h.SessionID != nil {
			m.SessionID = *h.SessionID
		}
		err = validate(h, data)
	}
	m.Err = err
	cn.e.record(m)
	if err != nil {
		cn.e.opts.Logf("enginetest: invalid_payload: %v", err)
		_ = cn.emit(wire.TypeRequestError, map[string]any{"code": "invalid_payload", "message": err.Error()})
		return
	}
	if h.Type == wire.TypeAck {
		return
	}
	cn.mu.Lock()
	dup := cn.window.Seen(h.MessageID)
	cn.mu.Unlock()
	if !cn.faults().DropAcks {
		_ = cn.emit(wire.TypeAck, wire.Ack{AcknowledgedMessageID: h.MessageID, Duplicate: dup})
	}
	if dup {
		return
	}
	cn.dispatch(h, data)
}
