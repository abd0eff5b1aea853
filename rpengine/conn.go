package rpengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/internal/transport"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// conn is one engine session: the passive core (internal/session) and
// the goroutine that drives it, run. That goroutine alone touches the
// core: the transport's reader hands it each message (Receive) and waits
// until it is done with it, the game's calls hand it closures (call),
// and its one timer fires at the core's deadline. What comes out goes to
// the writer (acks, answers), to the replies' queues and to the game's
// Logger, with no lock held. Requests are planned and encoded on the
// game's goroutines (a card snapshot takes milliseconds), and written in
// the order the driver queues them, so the oldest pending message is the
// oldest written (invalid_payload attribution).
type conn struct {
	hub  hub
	t    transport.Transport
	w    *transport.Writer
	info SessionInfo
	log  *slog.Logger
	plan planner
	rec  *jsonl.Queue // the Recorder's, for the game's notes; nil without one
	// whole says the transport hands whole segments (file mode), each
	// recorded with its samples, which no message in the recording holds.
	whole bool

	core *session.Session // the driver's (attach's, before it starts)
	// driver goroutine only: where the core's outputs go
	replies map[string]*Reply
	syncs   map[uint64]chan syncResult

	in      chan session.Inbound
	inDone  chan bool
	cmds    chan func(now time.Time)
	quit    chan struct{} // closed by End
	endOnce sync.Once
	endErr  error         // set before quit is closed
	done    chan struct{} // closed once the driver and the writer have exited

	snap     atomic.Pointer[SessionInfo] // the session with the queue of the last capacity change
	nextSync atomic.Uint64
}

// hub is what a conn needs of its server (server.go).
type hub interface {
	wake()          // the live session or its capacity changed
	detach(c *conn) // c ended
	record(in bool, msg []byte)
	recorder() *jsonl.Queue
}

// syncResult is what a SyncCharacter call waits for (sync.go): the hash
// the engine accepted, or why not, or a resync to send.
type syncResult struct {
	hash   card.Digest
	err    error
	resync *RequestError
}

func newConn(h hub, o *serverOptions, t transport.Transport, hello transport.Hello, info SessionInfo) *conn {
	c := &conn{hub: h, t: t, info: info, log: o.Logger.With("session", info.ID),
		plan: planner{p: card.NewPlanner(o.Planner), learnt: map[card.Key]acceptance{}},
		rec:  h.recorder(), whole: hello.WholeSegments,
		replies: map[string]*Reply{}, syncs: map[uint64]chan syncResult{},
		in: make(chan session.Inbound), inDone: make(chan bool), cmds: make(chan func(time.Time)),
		quit: make(chan struct{}), done: make(chan struct{})}
	c.w = transport.NewWriter(t, o.WriteTimeout, c.slowEngine)
	c.core = session.New(session.Config{ID: info.ID, ServerVersion: o.ServerVersion, Acks: !o.DisableAcks || hello.MustAck,
		WelcomeExtra: hello.WelcomeExtra, WholeSegments: hello.WholeSegments, DedupWindow: o.DedupWindow,
		AckTimeout: o.AckTimeout, IdleTimeout: o.IdleTimeout}, time.Now(), hello.MessageID)
	c.publish()
	return c
}

// ID returns the sessionId.
func (c *conn) ID() string { return c.info.ID }

// Done is closed once the session ended and nothing more is written.
func (c *conn) Done() <-chan struct{} { return c.done }

// Ended reports whether the session ended.
func (c *conn) Ended() bool {
	select {
	case <-c.quit:
		return true
	default:
		return false
	}
}

// welcome writes the core's first outputs, the ack of the hello and the
// welcome, and waits for the welcome's write. It runs before the driver
// starts.
func (c *conn) welcome() error {
	now := time.Now()
	var written <-chan error
	for o, ok := c.core.Next(); ok; o, ok = c.core.Next() {
		if o.Kind == session.OutSend && o.Type == wire.TypeWelcome {
			b, err := wire.Encode(o.Type, o.ID, c.info.ID, now, o.Payload)
			if err != nil {
				return err
			}
			c.hub.record(false, b)
			written = c.w.Enqueue(b)
			continue
		}
		c.output(now, o)
	}
	return c.written(wire.TypeWelcome, <-written)
}

// run is the driver: one goroutine per session, until End.
func (c *conn) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.arm(timer)
		if c.Ended() { // first: nothing is taken after the end
			c.stop()
			return
		}
		select {
		case in := <-c.in:
			now := time.Now()
			c.hub.record(true, in.Msg)
			ok := c.core.Receive(now, in)
			c.flush(now)
			c.inDone <- ok
		case f := <-c.cmds:
			now := time.Now()
			f(now)
			c.flush(now)
		case <-timer.C:
			now := time.Now()
			c.core.Tick(now)
			c.flush(now)
		case <-c.quit:
			c.stop()
			return
		}
	}
}

// endFlush bounds how long an ended session's writer may go on writing
// what was queued before the end: the acks and answers of the messages
// the session processed.
const endFlush = time.Second

// stop takes the session down once End was called: every request ends,
// what was queued is written (within endFlush: issue #31, a game that
// stopped right after a reply left the engine's files unacknowledged),
// the writer stops, the server forgets the session.
func (c *conn) stop() {
	c.core.End(c.endErr)
	c.flush(time.Now())
	select {
	case <-c.w.Drained():
	case <-time.After(endFlush):
	}
	c.w.Stop(c.endErr)
	c.hub.detach(c)
	<-c.w.Done()
	close(c.done)
}

// arm sets the timer to the core's next deadline.
func (c *conn) arm(timer *time.Timer) {
	timer.Stop()
	select {
	case <-timer.C:
	default:
	}
	if d, ok := c.core.Deadline(); ok {
		timer.Reset(time.Until(d))
	}
}

// flush takes every output of the core and does what it says.
func (c *conn) flush(now time.Time) {
	for o, ok := c.core.Next(); ok; o, ok = c.core.Next() {
		c.output(now, o)
	}
}

// output does what one output of the core says; it is a switch over the
// kinds, hence its length.
func (c *conn) output(now time.Time, o session.Output) {
	switch o.Kind {
	case session.OutSend:
		sid := c.info.ID
		if o.NoSession {
			sid = ""
		}
		b, err := wire.Encode(o.Type, o.ID, sid, now, o.Payload)
		if err != nil {
			c.log.Warn("rpengine: cannot encode a message", "type", o.Type, "reason", err.Error())
			return
		}
		c.hub.record(false, b)
		c.w.Post(b)
	case session.OutAck:
		sid := c.info.ID
		if o.NoSession {
			sid = ""
		}
		// The writer gives the buffer back once written: the reader acks
		// every engine message without allocating (issue #24).
		b := wire.AppendAck(c.w.Buffer(), o.AckID, o.Dup, sid, now)
		c.hub.record(false, b)
		c.w.PostReusable(b)
	case session.OutEvent:
		c.deliver(now, o.RequestID, o.Event)
	case session.OutDecision:
		if r := c.replies[o.RequestID]; r != nil {
			r.decide(o.Decision, o.Failure)
		}
	case session.OutCard:
		c.plan.learn(o.Key, o.Card, o.Hash)
	case session.OutSync:
		c.syncDone(o)
	case session.OutCapacity:
		c.publish()
		c.hub.wake()
	case session.OutLog:
		c.log.Log(context.Background(), o.Level, o.Msg, o.Args...)
	case session.OutClose:
		c.t.Close(o.Code, o.Reason)
	}
}

// deliver queues a reply's event; a consumer too slow for it ends the
// reply, which is cancelled on the engine.
func (c *conn) deliver(now time.Time, id string, ev session.Event) {
	r := c.replies[id]
	if r == nil {
		return
	}
	if ev.Kind == session.EventSegment && c.whole {
		c.recordSegment(id, ev.Segment)
	}
	slow := r.push(ev)
	switch {
	case ev.Kind == session.EventEnd:
		c.forget(r)
	case slow:
		c.forget(r)
		c.core.Abort(now, id, wire.TypeRequestCancel)
	}
}

// forget drops r from the session's replies; the driver calls it once
// per reply, so that is where the Recorder hears of its end (reply.ended,
// with the error it ended with).
func (c *conn) forget(r *Reply) {
	delete(c.replies, r.id)
	if c.rec == nil {
		return
	}
	r.mu.Lock()
	ended, err := r.ended, r.err
	r.mu.Unlock()
	if ended {
		note(c.rec, "reply.ended", endedNote{r.id, endedText(err)})
	}
}

// recordSegment gives the Recorder a whole segment the game received
// (reply.segment), with its samples: in file mode no message carries
// them (a WebSocket recording has them in its chunks), and the slot they
// came in is the engine's again once answered. Its line is about 2.7
// bytes a sample (the Recorder's bound drops a longer one than 32 MiB:
// over 4 minutes of speech).
func (c *conn) recordSegment(id string, s stream.Segment) {
	if c.rec == nil {
		return
	}
	if b, err := json.Marshal(segmentNote{id, s.Index, s.SampleRate}); err == nil {
		_ = c.rec.RecordSamples(jsonl.Game, "reply.segment", b, s.Samples)
	}
}

// syncDone passes a sync's outcome, or its resync, to the waiting call.
func (c *conn) syncDone(o session.Output) {
	ch := c.syncs[o.SyncID]
	if ch == nil {
		return
	}
	res := syncResult{hash: o.Hash, err: failure(o.Failure)}
	if o.Decision == session.Resync {
		res = syncResult{resync: failure(o.Failure).(*RequestError)}
	} else {
		delete(c.syncs, o.SyncID)
	}
	select {
	case ch <- res:
	default: // one resync per attempt is enough
	}
}

// slowEngine drops an engine that stopped reading while the game's
// messages piled up to a bound of the writer's (transport.Writer), as a
// slow consumer: the connection is closed with 1008 and the session ends
// with ErrConnectionLost saying why. The writer calls it once, on the
// driver (or Attach's goroutine, for welcome).
func (c *conn) slowEngine(cause error) {
	c.log.Warn("rpengine: closed connection", "reason", cause.Error())
	c.t.Close(transport.ClosePolicy, "the engine is not reading")
	c.End(errd.Chain(ErrConnectionLost, cause))
}

// publish stores the session's info with the engine's queue as of now.
func (c *conn) publish() {
	info := c.info
	info.Accepting = true // as the gate takes it before the first update
	if cp := c.core.Capacity(); cp.Known {
		info.QueueDepth, info.QueueLimit, info.Accepting = cp.QueueDepth, cp.QueueLimit, cp.AcceptingRequests
	}
	c.snap.Store(&info)
}

// snapshot returns the session's info with the engine's queue.
func (c *conn) snapshot() SessionInfo { return *c.snap.Load() }

// Receive hands the driver one engine message and waits until it is
// done with it (transport.Session).
func (c *conn) Receive(in session.Inbound) bool {
	if c.Ended() {
		return true // the rest is not processed
	}
	select {
	case c.in <- in:
		return <-c.inDone
	case <-c.quit:
		return true // ended: the rest is not processed
	}
}

// Lost ends the session because its connection is gone.
func (c *conn) Lost(cause error) { c.End(errd.Chain(ErrConnectionLost, cause)) }

// End ends the session: every pending request fails with err. It is
// idempotent and does not wait.
func (c *conn) End(err error) {
	c.endOnce.Do(func() {
		c.endErr = err
		close(c.quit)
	})
}

// call runs f on the driver and returns once it ran, or the session's
// end when it ended first.
func (c *conn) call(f func(now time.Time)) error {
	ran := make(chan struct{})
	select {
	case c.cmds <- func(now time.Time) { f(now); close(ran) }:
		<-ran
		return nil
	case <-c.quit:
		return c.endErr
	}
}

// written turns the result of a write of a message of type typ into the
// caller's error.
func (c *conn) written(typ string, err error) error {
	var we *transport.WriteError
	if errors.As(err, &we) {
		return fmt.Errorf("%w: write %s: %w", ErrConnectionLost, typ, we.Err)
	}
	return err
}

// encode encodes an outbound message of the game's own, with a new
// messageId, and refuses one over the 8 MiB limit.
func (c *conn) encode(typ string, payload any) (id string, b []byte, err error) {
	id = wire.NewID()
	b, err = wire.Encode(typ, id, c.info.ID, time.Now(), payload)
	if err != nil {
		return "", nil, fmt.Errorf("rpengine: encode %s: %w", typ, err)
	}
	if len(b) > wire.MaxMessageBytes {
		return "", nil, &FieldError{Field: requestName[typ], Reason: fmt.Sprintf("%s is %d bytes, over the 8 MiB limit", typ, len(b))}
	}
	return id, b, nil
}

// requestName names what a game sends in a message of a type, for a
// *FieldError about the message as a whole.
var requestName = map[string]string{wire.TypeReplyRequest: "ReplyRequest", wire.TypeCaptureStart: "CaptureRequest", wire.TypeCharacterSync: "Card"}

// enqueue queues message b of the game's own (id, of type typ) once track
// accepted it on the driver, and waits for its write.
func (c *conn) enqueue(typ string, b []byte, track func(now time.Time) error) error {
	var done <-chan error
	var terr error
	err := c.call(func(now time.Time) {
		if terr = track(now); terr == nil {
			c.hub.record(false, b)
			done = c.w.Enqueue(b)
		}
	})
	switch {
	case err != nil:
		return err
	case errors.Is(terr, session.ErrEnded):
		return c.endErr
	case terr != nil:
		return terr
	}
	return c.written(typ, <-done)
}

// admit asks the gate to count and hold request r for the character key.
func (c *conn) admit(r *Reply, key card.Key, retry bool) (session.Admission, error) {
	var a session.Admission
	var aerr error
	if err := c.call(func(time.Time) { a, aerr = c.core.Admit(r.id, key, retry) }); err != nil {
		return session.AdmitEnded, nil
	}
	if errors.Is(aerr, session.ErrDuplicateRequest) {
		return 0, &FieldError{Field: "RequestID", Reason: fmt.Sprintf("%q is already active", r.id)}
	}
	return a, aerr
}

// send sends an attempt of request r, admitted before: p with transfer t
// for c's card crd, as a message of type typ.
func (c *conn) send(r *Reply, typ string, p *requestPayload, crd *card.Card, t card.Transfer) error {
	q := *p
	q.Card = t
	id, b, err := c.encode(typ, &q)
	if err != nil {
		return err
	}
	return c.enqueue(typ, b, func(now time.Time) error {
		if err := c.core.Send(now, session.Request{RequestID: r.id, Card: crd, Capture: r.capture}, id, typ); err != nil {
			return err
		}
		c.replies[r.id] = r
		r.mu.Lock()
		r.ctl, r.msgID, r.sent = c, id, t
		r.mu.Unlock()
		return nil
	})
}

// abort ends r for the game with err (unless nil: it ended already) and
// drops it from the session; cancel, when not empty, is the message that
// cancels it on the engine.
func (c *conn) abort(r *Reply, err error, cancel string) {
	if err != nil {
		r.finish(err)
	}
	_ = c.call(func(now time.Time) {
		if c.replies[r.id] == r {
			c.forget(r)
		}
		c.core.Abort(now, r.id, cancel)
	})
}

// control sends r's cancellation (or its stop) and waits for the write.
func (c *conn) control(_ context.Context, r *Reply, stop bool) (string, error) {
	typ := wire.TypeRequestCancel
	if stop {
		typ = wire.TypeCaptureStop
	}
	var done <-chan error
	err := c.call(func(now time.Time) {
		t, ok := c.core.ControlType(r.id, stop)
		if !ok {
			return
		}
		typ = t
		id, b, err := c.encode(typ, idPayload{RequestID: r.id})
		if err != nil || c.core.Track(now, id, typ, "") != nil {
			return
		}
		c.hub.record(false, b)
		done = c.w.Enqueue(b)
	})
	if err != nil || done == nil {
		return typ, err
	}
	return typ, c.written(typ, <-done)
}

// sync sends an attempt of the character sync id: c's card crd under key
// with transfer t; results receives its outcome.
func (c *conn) sync(id uint64, key card.Key, crd *card.Card, t card.Transfer, results chan syncResult) error {
	msgID, b, err := c.encode(wire.TypeCharacterSync, syncPayload{IntegrationID: key.IntegrationID, CharacterID: key.CharacterID, Card: t})
	if err != nil {
		return err
	}
	return c.enqueue(wire.TypeCharacterSync, b, func(now time.Time) error {
		if err := c.core.Sync(now, id, key, crd, msgID); err != nil {
			return err
		}
		c.syncs[id] = results
		return nil
	})
}

// forgetSync drops the sync id, whose call gave up.
func (c *conn) forgetSync(id uint64) {
	_ = c.call(func(time.Time) {
		delete(c.syncs, id)
		c.core.ForgetSync(id)
	})
}

// status reports what the engine did with outbound message id.
func (c *conn) status(id string) session.State {
	var st session.State
	_ = c.call(func(time.Time) { st = c.core.Status(id) })
	return st
}

// capacity returns the engine's last capacity.update.
func (c *conn) capacity() session.Capacity {
	var cp session.Capacity
	_ = c.call(func(time.Time) { cp = c.core.Capacity() })
	return cp
}

// planner is the session's card planner. A plan can take milliseconds,
// so it is made on the requests' goroutines, under a lock of its own that
// the driver never takes: what the engine accepted waits in learnt, under
// another, until the next plan (issue #17).
type planner struct {
	mu sync.Mutex // guards p
	p  *card.Planner

	lmu    sync.Mutex // guards learnt
	learnt map[card.Key]acceptance
}

// acceptance is a card the engine accepted, with the hash it reported.
type acceptance struct {
	card *card.Card
	hash card.Digest
}

// maxResyncs bounds card_resync_required retries of one request; the
// planner already never offers the same failing transfer twice.
const maxResyncs = 2

// learn records that the engine holds c under k with hash h; the next
// plan learns it.
func (p *planner) learn(k card.Key, c *card.Card, h card.Digest) {
	p.lmu.Lock()
	p.learnt[k] = acceptance{c, h}
	p.lmu.Unlock()
}

// learnLocked tells the planner what the engine accepted since the last
// plan; p.mu is held.
func (p *planner) learnLocked() {
	p.lmu.Lock()
	learnt := p.learnt
	if len(learnt) == 0 {
		p.lmu.Unlock()
		return
	}
	p.learnt = map[card.Key]acceptance{}
	p.lmu.Unlock()
	for k, a := range learnt {
		p.p.Accepted(k, a.card, a.hash)
	}
}

// transfer returns the transfer for card c under key k.
func (p *planner) transfer(k card.Key, c *card.Card) (card.Transfer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked()
	return p.p.Plan(k, c)
}

// resync returns the transfer to retry with after the engine's
// card_resync_required (rerr), the retries'th time for this request: past
// maxResyncs it is ErrResyncLoop, and a planner error carries rerr.
func (p *planner) resync(k card.Key, c *card.Card, sent card.Transfer, retries int, rerr *RequestError) (card.Transfer, error) {
	if retries >= maxResyncs {
		return card.Transfer{}, errd.Chain(fmt.Errorf("%w after %d retries", ErrResyncLoop, retries), rerr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked()
	t, err := p.p.Resync(k, c, sent)
	if err != nil {
		return card.Transfer{}, fmt.Errorf("%w (engine: %w)", err, rerr)
	}
	return t, nil
}
