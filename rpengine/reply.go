package rpengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

func newID() string { return wire.NewID() }

// EventKind says which field of an Event is set.
type EventKind int

// Event kinds.
const (
	EventText     EventKind = iota + 1 // Text: the whole display text so far
	EventSegment                       // Segment: the next complete sentence of speech, in order
	EventAudioEnd                      // the speech is complete: no EventSegment follows (call audio.Speaker.End)
	EventCapture                       // Capture: where a voice capture stands
	EventAnomaly                       // Anomaly: the engine's stream broke a rule (logged, tolerated)
	EventEnd                           // Err: the reply ended; nil on success
)

// Event is one thing the game consumes from a Reply, in order. Exactly
// the field its Kind names is set. Playing a reply's speech takes two
// lines of the event loop:
//
//	case rpengine.EventSegment:
//		err = speaker.Enqueue(reply.RequestID(), ev.Segment)
//	case rpengine.EventAudioEnd:
//		err = speaker.End(reply.RequestID())
type Event struct {
	Kind    EventKind
	Text    string         // EventText
	Segment stream.Segment // EventSegment: mono samples at Segment.SampleRate (44.1 kHz); the game's to keep
	Capture CaptureStatus  // EventCapture
	Anomaly stream.Anomaly // EventAnomaly
	Err     error          // EventEnd
}

// CaptureStatus is where a voice capture stands (EventCapture): the
// engine's latest level, state and transcript, as reported so far.
type CaptureStatus struct {
	// State is "listening", "speech_started" or "speech_ended" (others
	// are passed on as the engine sends them); "" before the first.
	State string
	// Message is the engine's note on the state, if any.
	Message string
	// AutoEnd says whether the engine ends the capture by itself when
	// the player stops speaking.
	AutoEnd bool
	// Elapsed is the capture time at the latest level or state.
	Elapsed time.Duration
	// Peak and RMS are the latest microphone level, linear (0 to 1).
	Peak, RMS float64
	// Transcript is what the player said, once the engine has it (with
	// CaptureRequest.Transcript), and Language its language.
	Transcript, Language string
}

// Result is the outcome of a successful reply.
type Result struct {
	RequestID string
	// Text is the complete display text.
	Text string
	// Extracted maps each Rule's ID to what it captured (nil without
	// ReplyRequest.Rules).
	Extracted map[string][]string
	// TokenCount is the reply's length in the model's tokens, when the
	// engine said.
	TokenCount int
	// CardHash is the card hash the engine resolved (reply.accepted).
	CardHash card.Digest
}

// maxQueuedEvents bounds the events other than audio segments that a
// Reply holds for a consumer (text and levels coalesce, so these are
// anomalies, capture states and transcripts).
const maxQueuedEvents = 1024

// Reply is a request in flight and its stream of events.
//
// Slow-consumer policy: the connection's reader never waits for the game.
// Text updates coalesce (only the latest whole text is kept), capture
// levels coalesce (never a change of state), and audio segments queue up to
// ServerOptions.MaxPendingAudio; when a game leaves more than that
// unconsumed, the reply ends with ErrSlowConsumer and is cancelled on the
// engine. Memory per reply is therefore bounded.
//
// All methods may be called from any goroutine; the events are meant for
// one consumer, but concurrent ones each get different events and all
// see the end. Every reply ends: on completion, error, cancellation, lost
// connection, server close, or timeout.
type Reply struct {
	sess     *session
	id       string
	key      card.Key
	card     *card.Card
	capture  bool
	payload  *requestPayload
	maxAudio time.Duration
	got      atomic.Bool
	done     chan struct{}
	notify   chan struct{}
	// Capacity gate (gate.go): decided is closed at reply.accepted;
	// refused carries a capacity_exceeded, resync a card_resync_required,
	// to the Reply call that waits for the engine's decision. gate and gateGen are guarded by sess.mu.
	decided chan struct{}
	refused chan *RequestError
	resync  chan *RequestError
	gate    gateState
	gateGen uint64

	mu        sync.Mutex // guards following
	asm       *stream.Assembler
	sent      card.Transfer
	msgID     string
	resyncs   int
	hash      card.Digest
	queue     []Event
	head      int
	audio     time.Duration // queued, unconsumed segment audio
	delivered bool          // the End event was consumed
	ended     bool
	err       error
	final     *stream.Final
	text      string
	status    CaptureStatus // a capture's latest
	speech    bool          // an EventSegment was queued
	audioEnd  bool          // EventAudioEnd was queued
	idle      *time.Timer
	active    bool          // the engine started producing (capture or reply)
	spoke     bool          // a capture's speech ended: the reply phase began
	source    string        // sourceMessageId of the engine's request.error
	files     segmentTotals // whole segments received (file mode), for reply.audio.completed
	starting  bool          // the Reply or Capture call still waits for the engine's decision
	accepted  bool          // reply.accepted arrived
	anomalies []string      // details of anomalies queued, to log once unlocked
}

// Reply sends a reply.request and returns its handle once the engine
// has accepted it (reply.accepted), or once the request ended before that
// (the handle's Wait then says why). Invalid requests fail with a
// *FieldError before anything is sent; fields the engine accepts but that
// are probably mistakes are logged as warnings (see the package doc,
// "Outbound validation").
//
// Requests are sent in the order of the calls, only while the engine has
// room for them, counting the requests already sent that its last
// capacity.update does not show yet, and one at a time per character
// until the engine accepted the previous one; Reply waits its turn,
// bounded by ctx, for an engine that is connected and has room. A
// capacity_exceeded refusal is retried after the engine's next
// capacity.update. With FailFast, Reply fails at once with
// ErrNotConnected, or with ErrBusy when the engine has no room or
// refused the request. If ctx expires after the request was sent, it is
// cancelled on the engine. ctx bounds only this call: use Cancel to stop
// the reply.
func (s *Server) Reply(ctx context.Context, req ReplyRequest) (_ *Reply, err error) {
	defer errd.Wrap(&err, "rpengine: reply")
	p, warns, err := req.payload()
	if err != nil {
		return nil, err
	}
	warns.log(s.opts.Logger, p.RequestID)
	return s.start(ctx, wire.TypeReplyRequest, p, req.Card, false)
}

// Capture starts a voice capture through the RPEngine page's microphone
// (voice.capture.start). The returned Reply carries capture level, state
// and transcript events, then the reply to what the player said. Stop
// ends the recording; Cancel discards it. Capture waits and returns as
// Reply does.
func (s *Server) Capture(ctx context.Context, req CaptureRequest) (_ *Reply, err error) {
	defer errd.Wrap(&err, "rpengine: voice capture")
	p, warns, err := req.payload()
	if err != nil {
		return nil, err
	}
	warns.log(s.opts.Logger, p.RequestID)
	return s.start(ctx, wire.TypeCaptureStart, p, req.Card, true)
}

// start sends a request through the capacity gate (gate.go) and waits for
// the engine's decision, retrying capacity_exceeded refusals.
func (s *Server) start(ctx context.Context, typ string, p *requestPayload, c *card.Card, capture bool) (*Reply, error) {
	r := &Reply{
		id: p.RequestID, card: c, capture: capture, payload: p,
		key:      card.Key{IntegrationID: p.IntegrationID, CharacterID: p.CharacterID},
		maxAudio: s.opts.MaxPendingAudio,
		done:     make(chan struct{}),
		notify:   make(chan struct{}, 1),
		decided:  make(chan struct{}),
		refused:  make(chan *RequestError, 1),
		resync:   make(chan *RequestError, 1),
		asm:      newAssembler(),
		starting: true,
	}
	defer func() {
		r.mu.Lock()
		r.starting = false
		r.mu.Unlock()
	}()
	t := &ticket{r: r, key: r.key}
	for retry := false; ; retry = true {
		sess, err := s.admit(ctx, t, retry)
		switch {
		case err != nil && r.sess != nil:
			r.fail(err) // refused earlier: nothing to cancel on the engine
			return nil, err
		case err != nil:
			return nil, err
		case sess == nil:
			return r, nil // ended while waiting for a retry
		}
		if err := r.send(sess, typ); err != nil {
			return nil, err
		}
		rerr, err := r.await(ctx)
		for errors.Is(err, errResync) {
			if err := r.resend(typ, rerr); err != nil {
				r.fail(err)
				return r, nil // its Wait says why
			}
			rerr, err = r.await(ctx)
		}
		switch {
		case errors.Is(err, errRefused) && s.opts.FailFast:
			err = errd.Chain(ErrBusy, rerr)
			r.fail(err)
			return nil, err
		case errors.Is(err, errRefused):
			s.opts.Logger.Debug("rpengine: engine refused a request for capacity; retrying after its next capacity.update", "requestId", r.id)
			continue
		case err != nil:
			r.abandon(typ, err)
			return nil, err
		}
		return r, nil
	}
}

// send sends one attempt of the request on sess, which admitted it:
// planned afresh, as a refused attempt never reached the card cache. The
// first attempt registers the reply and arms its idle timer.
func (r *Reply) send(sess *session, typ string) error {
	first := r.sess == nil
	if first {
		r.sess = sess
	}
	t, err := sess.plan(r.key, r.card)
	if err == nil && first {
		err = sess.addReply(r)
	}
	if err == nil {
		err = r.attempt(typ, t)
	}
	if err != nil {
		sess.removeReply(r)
		if !first {
			r.fail(err)
		}
		return err
	}
	// From now on nothing waits forever: a reply that the engine neither
	// answers nor shows any sign of life for IdleTimeout fails (issue #9:
	// an engine that accepted a reply and lost it left it pending).
	r.touchWaiting()
	return nil
}

// abandon ends a request whose Reply call gave up (err) before the
// engine decided, and cancels it on the engine, which may still take it.
func (r *Reply) abandon(typ string, err error) {
	r.fail(err)
	cancel := wire.TypeRequestCancel
	if typ == wire.TypeCaptureStart {
		cancel = wire.TypeCaptureCancel
	}
	r.sess.post(cancel, idPayload{RequestID: r.id})
}

// resend sends the request again after the engine's card_resync_required
// (rerr), with the planner's snapshot, keeping requestId and eventId. It
// runs on the Reply call's goroutine, which waits for the engine's
// decision, so that the reader never plans (issue #17).
func (r *Reply) resend(typ string, rerr *RequestError) error {
	r.mu.Lock()
	sent, n := r.sent, r.resyncs
	r.resyncs++
	r.mu.Unlock()
	t, err := r.sess.resync(r.key, r.card, sent, n, rerr)
	if err != nil {
		return err
	}
	return r.attempt(typ, t)
}

// attempt sends the request with transfer t.
func (r *Reply) attempt(typ string, t card.Transfer) error {
	r.mu.Lock()
	r.sent = t
	p := *r.payload
	r.mu.Unlock()
	p.Card = t
	id, err := r.sess.send(typ, &p, r)
	r.mu.Lock()
	r.msgID = id
	r.mu.Unlock()
	return err
}

// RequestID returns the request's id.
func (r *Reply) RequestID() string { return r.id }

// messageID returns the messageId of the request's latest attempt (a
// resync retry sends a new one); see Server.messageStatus.
func (r *Reply) messageID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msgID
}

// Done is closed when the reply has ended (its result is known).
func (r *Reply) Done() <-chan struct{} { return r.done }

// Next returns the next event, waiting for it bounded by ctx. After the
// EventEnd event it returns io.EOF. Concurrent callers each get
// different events, and each returns io.EOF once the EventEnd was taken.
func (r *Reply) Next(ctx context.Context) (Event, error) {
	for {
		r.mu.Lock()
		if r.head < len(r.queue) {
			ev := r.queue[r.head]
			r.queue[r.head] = Event{}
			r.head++
			more := r.head < len(r.queue)
			if !more {
				r.queue, r.head = r.queue[:0], 0
			}
			if ev.Kind == EventSegment {
				r.audio -= ev.Segment.Duration
			}
			if ev.Kind == EventEnd {
				r.delivered = true
			}
			r.mu.Unlock()
			if more {
				r.wake() // another consumer may be waiting for the rest
			}
			return ev, nil
		}
		delivered := r.delivered
		r.mu.Unlock()
		if delivered {
			return Event{}, io.EOF
		}
		// done is closed once the End is queued: a consumer that missed
		// the last wake-up still finds it (issue #17).
		select {
		case <-r.notify:
		case <-r.done:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Events returns the reply's events in order, ending with EventEnd. It is
// Next in a range loop; stopping the loop early is fine.
func (r *Reply) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, err := r.Next(context.Background())
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Wait waits, bounded by ctx, for the reply to end, and returns its result
// or the error that ended it (*RequestError, ErrCancelled,
// ErrConnectionLost, ErrNoAnswer, ErrSlowConsumer, ...). Wait does not
// consume events.
func (r *Reply) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	res := &Result{RequestID: r.id, Text: r.text, CardHash: r.hash}
	if f := r.final; f != nil {
		res.Extracted, res.TokenCount = f.Extracted, f.TokenCount
	}
	return res, nil
}

// Cancel asks the engine to cancel the reply (request.cancel, or
// voice.capture.cancel while a capture is still listening). The reply
// then ends with an error matching ErrCancelled, or normally if it
// finished first.
func (r *Reply) Cancel(ctx context.Context) error {
	typ := wire.TypeRequestCancel
	r.mu.Lock()
	if r.capture && !r.replying() {
		typ = wire.TypeCaptureCancel
	}
	r.mu.Unlock()
	return r.control(ctx, typ)
}

// Stop ends a voice capture's recording now (voice.capture.stop); the
// reply to what was said follows.
func (r *Reply) Stop(ctx context.Context) error {
	if !r.capture {
		return fmt.Errorf("rpengine: stop: request %s is not a voice capture", r.id)
	}
	return r.control(ctx, wire.TypeCaptureStop)
}

func (r *Reply) control(ctx context.Context, typ string) (err error) {
	defer errd.Wrap(&err, "rpengine: "+typ)
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-r.done:
		return nil
	default:
	}
	_, err = r.sess.send(typ, idPayload{RequestID: r.id}, nil)
	return err
}

// replying reports whether a capture has moved on to the reply; r.mu held.
func (r *Reply) replying() bool { return r.spoke }

func (r *Reply) answered() bool { return r.got.Load() }

// fail ends the reply with err (idempotent).
func (r *Reply) fail(err error) {
	r.mu.Lock()
	r.finishLocked(err)
	r.mu.Unlock()
	r.wake()
	r.sess.removeReply(r)
}

func (r *Reply) wake() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *Reply) finishLocked(err error) {
	if r.ended {
		return
	}
	r.ended, r.err = true, err
	if r.idle != nil {
		r.idle.Stop()
	}
	if r.speech && !r.audioEnd {
		// The speech ends with the reply, complete or not: a speaker
		// plays what it got and finishes (issue #17).
		r.audioEnd = true
		r.queue = append(r.queue, Event{Kind: EventAudioEnd})
	}
	r.queue = append(r.queue, Event{Kind: EventEnd, Err: err})
	close(r.done)
}

// handle processes one engine message of this reply; reader goroutine.
// data is the message, which the reader reuses once handle returns.
func (r *Reply) handle(typ string, data []byte) {
	switch typ {
	case wire.TypeCaptureLevel, wire.TypeCaptureState, wire.TypeCaptureTranscript:
		if !r.capture {
			r.unexpected(typ + " for a request that is not a voice capture; dropped")
			return
		}
		r.got.Store(true)
		ev := wire.NewEvent(typ)
		if r.decode(typ, data, ev) {
			r.pushCapture(ev)
		}
		return
	case wire.TypeReplyAccepted:
		r.got.Store(true)
		var a wire.Accepted
		if !r.decode(typ, data, &a) {
			return
		}
		if h, err := card.ParseDigest(a.ResolvedCardHash); err == nil {
			r.sess.cardAccepted(r.key, r.card, h)
			r.mu.Lock()
			r.hash = h
			r.mu.Unlock()
		} else {
			r.sess.log.Warn("rpengine: reply.accepted with a bad resolvedCardHash", "requestId", r.id, "resolvedCardHash", peertext.Clip(a.ResolvedCardHash, peertext.LogBytes))
		}
		r.decide()
	case wire.TypeAudioCompleted:
		r.got.Store(true)
		if wholeSegments(r.sess.t) {
			var ac wire.AudioCompleted
			if r.decode(typ, data, &ac) {
				r.assemble(typ, r.segmentsCompleted(&ac))
			}
			return
		}
	case wire.TypeTextDelta, wire.TypeTextCompleted, wire.TypeAudioStart, wire.TypeAudioChunk,
		wire.TypeReplyCompleted, wire.TypeReplyCancelled:
		r.got.Store(true)
	default:
		r.got.Store(true)
		if h, ok := r.sess.t.(replyHandler); ok && h.handleReply(r, typ, data) {
			return
		}
		r.sess.log.Debug("rpengine: ignored engine message", "type", peertext.Clip(typ, peertext.LogBytes), "requestId", r.id)
		return
	}
	r.assemble(typ, data)
}

// decode unmarshals a message of type typ into v, or logs why it cannot.
func (r *Reply) decode(typ string, data []byte, v any) bool {
	if err := json.Unmarshal(data, v); err != nil {
		r.sess.log.Warn("rpengine: dropped malformed engine message", "type", typ, "requestId", r.id, "reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return false
	}
	return true
}

// unexpected reports an engine message that has no place in this request
// as an anomaly; it changes nothing else (issue #16: capture events for a
// plain reply were taken as the capture's). Reader goroutine.
func (r *Reply) unexpected(detail string) {
	an := stream.Anomaly{Kind: stream.AnomalyUnexpectedEvent, Detail: detail}
	r.sess.log.Debug("rpengine: reply stream anomaly", "requestId", r.id, "detail", an.Detail)
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.enqueueLocked(Event{Kind: EventAnomaly, Anomaly: an})
	slow := r.ended // the game left 1024 events unconsumed
	r.mu.Unlock()
	r.wake()
	if slow {
		r.sess.removeReply(r)
		r.sess.post(wire.TypeRequestCancel, idPayload{RequestID: r.id})
	}
}

// handleError processes a request.error for this reply, data; reader
// goroutine. A capacity_exceeded or card_resync_required before
// reply.accepted goes back to the Reply call, which retries.
func (r *Reply) handleError(f *wire.Failed, data []byte) {
	r.got.Store(true)
	rerr := &RequestError{Code: f.Code, Message: f.Message, Retryable: f.Retryable, RequestID: r.id, SourceMessageID: f.SourceMessageID}
	switch {
	case f.Code == "capacity_exceeded" && r.refuse(rerr):
		return
	case f.Code == "card_resync_required" && r.retry(rerr):
		return
	}
	r.mu.Lock()
	r.source = f.SourceMessageID
	r.mu.Unlock()
	r.assemble(wire.TypeRequestError, data)
}

// pushSegment queues a whole audio segment that a transport assembled
// itself (file mode), under the same slow-consumer rules as
// assembled segments. Reader goroutine.
func (r *Reply) pushSegment(seg stream.Segment) {
	r.got.Store(true)
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.spoke = true
	r.touchLocked(true)
	r.files.add(seg)
	r.enqueueLocked(Event{Kind: EventSegment, Segment: seg})
	r.settle()
}

// settle ends a step that r.mu is held for: it releases the lock, wakes
// the consumers, and, when the step ended the reply, removes it from the
// session (and cancels it on the engine for a slow consumer).
func (r *Reply) settle() {
	slow := r.ended && errors.Is(r.err, ErrSlowConsumer)
	ended := r.ended
	anomalies := r.anomalies
	r.anomalies = nil
	r.mu.Unlock()
	r.logAnomalies(anomalies)
	r.wake()
	if ended {
		r.sess.removeReply(r)
	}
	if slow {
		r.sess.post(wire.TypeRequestCancel, idPayload{RequestID: r.id})
	}
}

// logAnomalies logs the details of the anomalies a step queued, with no
// lock held: the Logger is the game's code (issue #30).
func (r *Reply) logAnomalies(details []string) {
	for _, d := range details {
		r.sess.log.Debug("rpengine: reply stream anomaly", "requestId", r.id, "detail", peertext.Clip(d, peertext.LogBytes))
	}
}

// pushCapture takes a voice capture's level, state or transcript.
func (r *Reply) pushCapture(ev wire.Event) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.touchLocked(true)
	st := &r.status
	switch e := ev.(type) {
	case *wire.CaptureLevel:
		st.Elapsed, st.Peak, st.RMS = seconds(e.Seconds), e.Peak, e.RMS
	case *wire.CaptureState:
		r.spoke = r.spoke || e.State == "speech_ended"
		st.State, st.Message, st.AutoEnd, st.Elapsed = e.State, e.Message, e.AutoEndEnabled, seconds(e.Seconds)
	case *wire.CaptureTranscript:
		r.spoke = true
		st.Transcript, st.Language = e.Text, e.Language
	}
	r.enqueueLocked(Event{Kind: EventCapture, Capture: *st})
	r.settle()
}

// assemble feeds the reply's message of type typ, data, to its assembler
// and queues what comes out.
func (r *Reply) assemble(typ string, data []byte) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.touchLocked(typ != wire.TypeReplyAccepted)
	switch typ {
	case wire.TypeTextDelta, wire.TypeAudioStart, wire.TypeTextCompleted:
		r.spoke = true
	}
	if err := r.asm.Push(data); err != nil {
		r.mu.Unlock()
		r.sess.log.Warn("rpengine: dropped malformed engine message", "type", typ, "requestId", r.id, "reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return
	}
	r.drainLocked()
	r.settle()
}

func (r *Reply) drainLocked() {
	for !r.ended {
		out, ok := r.asm.Next()
		if !ok {
			return
		}
		switch out.Kind {
		case stream.OutputText:
			r.text = out.Text
			r.enqueueLocked(Event{Kind: EventText, Text: out.Text})
		case stream.OutputSegment:
			r.enqueueLocked(Event{Kind: EventSegment, Segment: out.Segment})
		case stream.OutputAudioEnd:
			if !r.audioEnd {
				r.audioEnd = true
				r.enqueueLocked(Event{Kind: EventAudioEnd})
			}
		case stream.OutputAnomaly:
			r.anomalies = append(r.anomalies, out.Anomaly.Detail) // logged once unlocked (settle)
			r.enqueueLocked(Event{Kind: EventAnomaly, Anomaly: out.Anomaly})
		case stream.OutputEnd:
			r.final = out.End.Final
			r.finishLocked(r.endError(out.End))
		}
	}
}

func (r *Reply) endError(e stream.End) error {
	if t := r.asm.Text(); t != "" {
		r.text = t
	}
	switch e.State {
	case stream.EndCompleted:
		return nil
	case stream.EndCancelled:
		return &cancelledError{reason: e.Reason}
	}
	return &RequestError{Code: e.Code, Message: e.Message, Retryable: e.Retryable, RequestID: r.id, SourceMessageID: r.source}
}

// enqueueLocked queues ev for the consumer, coalescing text and levels and
// enforcing the slow-consumer bound.
func (r *Reply) enqueueLocked(ev Event) {
	if n := len(r.queue); n > r.head {
		last := &r.queue[n-1]
		if last.Kind == ev.Kind && (ev.Kind == EventText || ev.Kind == EventCapture && sameStage(last.Capture, ev.Capture)) {
			*last = ev
			return
		}
	}
	if ev.Kind == EventSegment {
		r.speech = true
		r.audio += ev.Segment.Duration
		if r.audio > r.maxAudio {
			r.finishLocked(fmt.Errorf("%w: %v of audio not consumed (limit %v)", ErrSlowConsumer, r.audio, r.maxAudio))
			return
		}
	}
	if len(r.queue)-r.head >= maxQueuedEvents {
		r.finishLocked(fmt.Errorf("%w: %d events not consumed", ErrSlowConsumer, maxQueuedEvents))
		return
	}
	r.queue = append(r.queue, ev)
}

// touchLocked resets the idle timer for a message of this reply; active
// says the engine is producing it (any message but reply.accepted).
func (r *Reply) touchLocked(active bool) {
	r.active = r.active || active
	r.resetIdleLocked()
}

// resetIdleLocked arms or resets the idle timer.
func (r *Reply) resetIdleLocked() {
	d := r.sess.srv.opts.IdleTimeout
	if d <= 0 || r.ended {
		return
	}
	if r.idle == nil {
		r.idle = time.AfterFunc(d, r.idleExpired)
		return
	}
	r.idle.Reset(d)
}

// touchWaiting resets the idle timer of a reply the engine has not
// started producing (sent, acked or queued): any engine message shows the
// engine alive and its queue moving. Once the reply is active only its
// own messages count.
func (r *Reply) touchWaiting() {
	r.mu.Lock()
	if !r.active {
		r.resetIdleLocked()
	}
	r.mu.Unlock()
}

func (r *Reply) idleExpired() {
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if ended {
		return
	}
	r.fail(fmt.Errorf("%w: reply %s silent for %v", ErrNoAnswer, r.id, r.sess.srv.opts.IdleTimeout))
	r.sess.post(wire.TypeRequestCancel, idPayload{RequestID: r.id})
}

// seconds converts the engine's seconds to a Duration.
func seconds(s float64) time.Duration {
	if math.IsNaN(s) || s < 0 || s > 1e9 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// sameStage reports whether b only updates a's level: a change of state
// or a transcript is never coalesced away.
func sameStage(a, b CaptureStatus) bool {
	return a.State == b.State && a.Transcript == b.Transcript
}

// newAssembler returns an assembler with the default bounds.
func newAssembler() *stream.Assembler {
	a, _ := stream.NewAssembler(nil) // nil options cannot be invalid
	return a
}
