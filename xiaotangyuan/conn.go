package xiaotangyuan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/xiaotangyuan/internal/wire"
)

// writeTimeout bounds one WebSocket write. coder/websocket closes the
// connection when a write's context expires, so writes use the
// connection's context with this timeout, never a caller's context: a
// caller giving up must not tear down the shared connection.
const writeTimeout = 10 * time.Second

// conn is one WebSocket connection and its goroutines: the reader, the
// pinger, the state heartbeat and the atom handlers, all joined by wait.
type conn struct {
	c        *Client
	ws       *websocket.Conn
	ctx      context.Context // cancelled when the connection ends
	cancel   context.CancelFunc
	atomSem  chan struct{} // bounded atom concurrency
	replies  chan []byte   // the reader's own answers, written by replyLoop
	room     chan struct{} // replyLoop's signal that an answer left replies
	queued   atomic.Int64  // bytes in replies and in replyLoop's hands
	wg       sync.WaitGroup
	done     chan struct{} // closed by shutdown
	switched atomic.Bool   // ended by SetSaveID: reconnect at once
	pingSent atomic.Int64  // UnixNano of the unanswered ping, 0 if none

	// streamMu orders the writes of chat.send and chat.retry with their
	// place in streaming, which must be the order the Harness runs them
	// in (abandon.go). It is held across that one write, as
	// coder/websocket holds its own write lock, and bounded by
	// writeTimeout.
	streamMu sync.Mutex

	// owners ties each interactionId of a chat's stream to its call;
	// owned by the reader goroutine, at most maxStreaming entries.
	owners map[string]*pendingCall

	mu        sync.Mutex // guards following
	pending   map[int64]*pendingCall
	streaming []*pendingCall // chat.send and chat.retry not yet answered, in wire order
	err       error          // why the connection ended; nil while open
}

type pendingCall struct {
	method string
	ch     chan callResult // buffered 1
	s      streamCall      // chat.send and chat.retry only
}

type callResult struct {
	f         wire.Frame
	cancelled bool // the reply's interaction was cancelled (barge-in)
	err       error
}

func newConn(c *Client, ws *websocket.Conn) *conn {
	cn := &conn{
		c:       c,
		ws:      ws,
		atomSem: make(chan struct{}, c.o.MaxInFlight),
		replies: make(chan []byte, replyQueue),
		room:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		pending: make(map[int64]*pendingCall),
		owners:  make(map[string]*pendingCall),
	}
	cn.ctx, cn.cancel = context.WithCancel(c.life)
	return cn
}

// replyQueue and replyBytes bound the answers the reader queues for
// replyLoop, in count and in bytes. When either is reached the reader
// waits for room, reading nothing meanwhile, so that a Harness sending
// requests faster than it reads the answers is throttled by TCP, as a
// writer is, and every request gets its answer (issue #34). The wait ends
// with the connection, which a write stuck for writeTimeout ends.
const (
	replyQueue = 64
	replyBytes = MaxMessageSize // every answer sent fits
)

func (cn *conn) startReader() {
	cn.wg.Add(2)
	go cn.readLoop()
	go cn.replyLoop()
}

// replyLoop writes the answers the reader produced itself (unknown
// method, bad params, busy). The reader never writes: with an unbuffered
// transport, a reader blocked on a write while the peer's reader is
// blocked writing to us would deadlock both.
func (cn *conn) replyLoop() {
	defer cn.wg.Done()
	for {
		select {
		case <-cn.ctx.Done():
			return
		case b := <-cn.replies:
			if err := cn.write(b, "response"); err != nil {
				cn.c.rec.RecordNote(jsonl.Out, "reply failed: "+err.Error(), nil)
			}
			cn.queued.Add(-int64(len(b)))
			select {
			case cn.room <- struct{}{}:
			default: // the reader is signalled already
			}
		}
	}
}

// startBackground starts the pinger and the state heartbeat, once the
// hello has been accepted, unless the connection has already ended.
//
// The check and the wg.Add happen under cn.mu: while cn.err is nil the
// reader has not exited, so the WaitGroup counter is above zero and the
// Add cannot race a concurrent wait (Close may shut down and join a
// connection that dial has just made current).
func (cn *conn) startBackground() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil {
		return
	}
	if cn.c.o.PingInterval > 0 {
		cn.everyLocked(cn.c.o.PingInterval, cn.ping)
	}
	if cn.c.o.State != nil {
		cn.everyLocked(cn.c.o.StateInterval, cn.sendState)
	}
}

// shutdown ends the connection once, recording why, failing pending calls
// with err and closing the socket with status (a close handshake when
// status is 1000, at once otherwise).
func (cn *conn) shutdown(err error, status websocket.StatusCode) {
	cn.mu.Lock()
	if cn.err != nil {
		cn.mu.Unlock()
		return
	}
	cn.err = err
	pend := cn.pending
	cn.pending = nil
	close(cn.done)
	handshake := status == websocket.StatusNormalClosure
	if handshake {
		// Added before cn.err is visible to the reader, which is thus
		// still counted: this Add never races a wait.
		cn.wg.Add(1)
	}
	cn.mu.Unlock()
	for _, p := range pend {
		p.ch <- callResult{err: err}
	}
	if handshake {
		// Close waits for the peer's close frame, read by the reader
		// goroutine; run it on its own goroutine, bounded by coder's 5 s.
		go func() {
			defer cn.wg.Done()
			cn.ws.Close(status, "")
			cn.cancel()
		}()
		return
	}
	cn.cancel()
	cn.ws.CloseNow()
}

// wait joins every goroutine of the connection.
func (cn *conn) wait() { cn.wg.Wait() }

func (cn *conn) cause() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err
}

func (cn *conn) switching() bool { return cn.switched.Load() }

// switchSave ends the connection so that the supervisor dials again at
// once, with a hello carrying the client's current saveId.
func (cn *conn) switchSave() {
	cn.switched.Store(true)
	cn.shutdown(&DisconnectError{Code: int(websocket.StatusNormalClosure), Reason: "save switched"}, websocket.StatusNormalClosure)
}

// write sends one encoded message after the size guard. A failed write
// ends the connection, as coder/websocket has closed it.
func (cn *conn) write(b []byte, method string) error {
	if err := checkSize(b); err != nil {
		cn.c.rec.RecordNote(jsonl.Out, "not sent: "+method+": "+errd.Text(err, prefix), nil)
		return err
	}
	cn.c.rec.Record(jsonl.Out, b)
	ctx, cancel := context.WithTimeout(cn.ctx, writeTimeout)
	defer cancel()
	if err := cn.ws.Write(ctx, websocket.MessageText, b); err != nil {
		cn.shutdown(&DisconnectError{Reason: "write " + method, Err: err}, websocket.StatusGoingAway)
		return cn.cause()
	}
	return nil
}

// call sends a request and waits for its response, for at most timeout.
// On success it decodes the result into out (when not nil).
func (cn *conn) call(ctx context.Context, method string, params, out any, timeout time.Duration) error {
	res, err := cn.roundTrip(ctx, method, params, timeout)
	if err != nil {
		return err
	}
	if res.f.Error != nil {
		return &RPCError{Method: method, Code: res.f.Error.Code, Message: res.f.Error.Message, Data: res.f.Error.Data}
	}
	if out != nil {
		if err := json.Unmarshal(res.f.Result, out); err != nil {
			return fmt.Errorf("decode result: %w", err)
		}
	}
	if r, ok := out.(*Reply); ok {
		r.Cancelled = res.cancelled
	}
	return nil
}

func (cn *conn) roundTrip(ctx context.Context, method string, params any, timeout time.Duration) (callResult, error) {
	id := cn.c.nextID.Add(1)
	b, err := wire.AppendRequest(nil, id, method, params)
	if err != nil {
		return callResult{}, err
	}
	if err := checkSize(b); err != nil {
		cn.c.rec.RecordNote(jsonl.Out, "not sent: "+method+": "+errd.Text(err, prefix), nil)
		return callResult{}, err
	}
	p := &pendingCall{method: method, ch: make(chan callResult, 1)}
	if err := cn.send(id, p, b); err != nil {
		return callResult{}, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w after %v", ErrTimeout, timeout))
		defer cancel()
	}
	return cn.await(ctx, id, p)
}

// send registers p as pending and writes its request b. The line of
// chat.send and chat.retry calls must be in wire order, so for those the
// two steps happen under streamMu.
func (cn *conn) send(id int64, p *pendingCall, b []byte) error {
	stream := isStreamMethod(p.method)
	if stream {
		cn.streamMu.Lock()
		defer cn.streamMu.Unlock()
	}
	if err := cn.register(id, p, stream); err != nil {
		return err
	}
	if err := cn.write(b, p.method); err != nil {
		cn.forget(id, p)
		return err
	}
	return nil
}

// register adds p to the pending calls (and the line of streaming calls).
func (cn *conn) register(id int64, p *pendingCall, stream bool) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil {
		return cn.err
	}
	if stream {
		if err := cn.enqueueLocked(p); err != nil {
			return err
		}
	}
	cn.pending[id] = p
	return nil
}

// await waits for p's result. When ctx ends first, a streaming call is
// abandoned (its result and later events are dropped); any other is
// forgotten (its late response is dropped as unknown).
func (cn *conn) await(ctx context.Context, id int64, p *pendingCall) (callResult, error) {
	select {
	case r := <-p.ch:
		return r, r.err
	case <-ctx.Done():
	}
	if !isStreamMethod(p.method) {
		cn.forget(id, p)
		return callResult{}, context.Cause(ctx)
	}
	if !cn.abandon(p) { // the result came at the same moment: take it
		r := <-p.ch
		return r, r.err
	}
	return callResult{}, context.Cause(ctx)
}

// forget drops a call nobody waits for any more.
func (cn *conn) forget(id int64, p *pendingCall) {
	cn.mu.Lock()
	delete(cn.pending, id)
	cn.dequeueLocked(p)
	cn.mu.Unlock()
}

// notify sends a notification (no id, no answer).
func (cn *conn) notify(method string, params any) error {
	b, err := wire.AppendRequest(nil, 0, method, params)
	if err != nil {
		return err
	}
	return cn.write(b, method)
}

// readLoop reads until the connection ends and dispatches every message.
// It owns the client's Assembler while it runs.
func (cn *conn) readLoop() {
	defer cn.wg.Done()
	for {
		_, b, err := cn.ws.Read(cn.ctx)
		if err != nil {
			cn.shutdown(cn.readError(err), websocket.StatusGoingAway)
			return
		}
		// The message is recorded before anything it causes (an atom's
		// answer, the next request of a caller it unblocks, an event), so
		// the log reads in causal order (issue #20).
		note, then := cn.handle(b)
		cn.c.rec.RecordNote(jsonl.In, note, b)
		if then != nil {
			then()
		}
	}
}

// readError describes why a read failed. coder/websocket closes the
// connection itself when a ping's context expires, so the reader usually
// sees that first: an overdue ping names the real cause.
func (cn *conn) readError(err error) error {
	if sent := cn.pingSent.Load(); sent != 0 && time.Since(time.Unix(0, sent)) >= cn.c.o.PingTimeout {
		return &DisconnectError{Reason: "ping unanswered", Err: err}
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &DisconnectError{Code: int(ce.Code), Reason: ce.Reason, Err: err}
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return &DisconnectError{Code: int(websocket.StatusMessageTooBig), Reason: "incoming message over the read limit", Err: err}
	}
	return &DisconnectError{Reason: "read", Err: err}
}

// handle decodes one incoming message and returns a recorder note (""
// when it is handled normally) and what to do once it is recorded (nil
// for nothing): answer it, hand it to its caller, or emit its event.
func (cn *conn) handle(b []byte) (note string, then func()) {
	f, kind, err := parseFrame(b)
	if err != nil {
		return "dropped: " + peertext.Clip(err.Error(), peertext.LineBytes), nil
	}
	switch kind {
	case kindResponse:
		return cn.resolve(f)
	case kindRequest:
		return cn.serve(f)
	}
	ev, err := decodeNotification(&cn.c.asm, f.Method, f.Params)
	if err != nil {
		if errors.Is(err, errDropped) {
			return err.Error(), nil
		}
		return "dropped: " + peertext.Clip(err.Error(), peertext.LineBytes), nil
	}
	return "", func() { cn.emitOwned(ev) }
}

// resolve finds the call a response answers; the returned func hands the
// result over. Responses with unknown ids (late, or the Harness's id:null
// errors) are dropped, never answered.
func (cn *conn) resolve(f wire.Frame) (string, func()) {
	id, ok := clientID(f.ID)
	if !ok {
		return "dropped: response with unknown id", nil
	}
	cn.mu.Lock()
	p := cn.pending[id]
	delete(cn.pending, id)
	cn.mu.Unlock()
	if p == nil {
		return "dropped: response with unknown id", nil
	}
	r := callResult{f: f}
	if f.Result != nil && isReplyMethod(p.method) {
		var rep wire.Reply
		if json.Unmarshal(f.Result, &rep) == nil {
			r.cancelled = cn.c.asm.Cancelled(rep.InteractionID)
		}
	}
	if !isStreamMethod(p.method) {
		return "", func() { p.ch <- r }
	}
	return "", func() {
		if note := cn.settle(p, r); note != "" {
			cn.c.rec.RecordNote(jsonl.In, note, nil)
		}
	}
}

func isReplyMethod(m string) bool {
	return m == wire.MethodChat || m == wire.MethodRetry || m == wire.MethodCompose
}

// everyLocked runs tick every d on its own goroutine (counted in cn.wg)
// until the connection ends or tick returns false. cn.mu must be held and
// the connection open (see startBackground).
func (cn *conn) everyLocked(d time.Duration, tick func() bool) {
	cn.wg.Add(1)
	go func() {
		defer cn.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-cn.ctx.Done():
				return
			case <-t.C:
			}
			if !tick() {
				return
			}
		}
	}()
}

// ping sends one WebSocket ping; a missing pong ends the connection.
func (cn *conn) ping() bool {
	ctx, cancel := context.WithTimeout(cn.ctx, cn.c.o.PingTimeout)
	defer cancel()
	cn.pingSent.Store(time.Now().UnixNano())
	if err := cn.ws.Ping(ctx); err != nil {
		if cn.ctx.Err() == nil {
			cn.shutdown(&DisconnectError{Reason: "ping unanswered", Err: err}, websocket.StatusGoingAway)
		}
		return false
	}
	cn.pingSent.Store(0)
	return true
}

// sendState sends one state.update heartbeat as a notification; a failure
// is logged as a warning and the heartbeat goes on.
func (cn *conn) sendState() bool {
	obs, save := cn.c.o.State()
	p, err := stateParams(obs, save)
	if err == nil {
		err = cn.notify(wire.MethodState, p)
	}
	if err != nil && cn.ctx.Err() == nil {
		wrap(&err, "state heartbeat")
		cn.c.o.Logger.Warn("xiaotangyuan: state heartbeat not sent", "err", err)
	}
	return true
}
