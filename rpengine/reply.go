package rpengine

import (
	"context"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/session"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

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
	// TextElapsed is the engine's own time to generate the text, and
	// SpeechElapsed its time to synthesize the speech (elapsedMs of
	// reply.text.completed and reply.audio.completed); zero when the
	// engine did not say (SpeechElapsed always, for a text-only reply).
	TextElapsed, SpeechElapsed time.Duration
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
	id       string
	capture  bool
	maxAudio time.Duration
	done     chan struct{} // closed at the end
	notify   chan struct{} // one slot: an event was queued
	// The engine's decision on the latest attempt, for the Reply call
	// that waits for it (send.go): decided is closed at reply.accepted;
	// refused carries a capacity_exceeded, resync a card_resync_required.
	decided chan struct{}
	refused chan *RequestError
	resync  chan *RequestError

	mu       sync.Mutex // guards following
	ctl      controller // the connection it went out on, once sent
	msgID    string     // messageId of the latest attempt
	sent     card.Transfer
	resyncs  int
	queue    []Event
	head     int
	audio    time.Duration // queued, unconsumed segment audio
	took     bool          // the End event was consumed
	ended    bool
	err      error
	result   Result
	speech   bool // an EventSegment was queued
	audioEnd bool // EventAudioEnd was queued
	accepted bool // decided is closed
}

// controller is the connection a reply went out on (conn.go): it sends
// the reply's cancellation or stop and reports the message's type.
type controller interface {
	control(ctx context.Context, r *Reply, stop bool) (typ string, err error)
}

func newReply(id string, capture bool, maxAudio time.Duration) *Reply {
	return &Reply{id: id, capture: capture, maxAudio: maxAudio, done: make(chan struct{}), notify: make(chan struct{}, 1),
		decided: make(chan struct{}), refused: make(chan *RequestError, 1), resync: make(chan *RequestError, 1)}
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
				r.took = true
			}
			r.mu.Unlock()
			if more {
				r.wake() // another consumer may be waiting for the rest
			}
			return ev, nil
		}
		took := r.took
		r.mu.Unlock()
		if took {
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
	res := r.result
	return &res, nil
}

// Cancel asks the engine to cancel the reply (request.cancel, or
// voice.capture.cancel while a capture is still listening). The reply
// then ends with an error matching ErrCancelled, or normally if it
// finished first.
func (r *Reply) Cancel(ctx context.Context) error { return r.control(ctx, false) }

// Stop ends a voice capture's recording now (voice.capture.stop); the
// reply to what was said follows.
func (r *Reply) Stop(ctx context.Context) error {
	if !r.capture {
		return fmt.Errorf("rpengine: stop: request %s is not a voice capture", r.id)
	}
	return r.control(ctx, true)
}

func (r *Reply) control(ctx context.Context, stop bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	ctl := r.ctl
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	default:
	}
	if ctl == nil {
		return nil // never sent: nothing to cancel on the engine
	}
	typ, err := ctl.control(ctx, r, stop)
	errd.Wrap(&err, "rpengine: "+typ)
	return err
}

func (r *Reply) wake() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// finish ends the reply with err; it reports false when it had ended
// already.
func (r *Reply) finish(err error) bool {
	r.mu.Lock()
	ended := r.ended
	r.finishLocked(err)
	r.mu.Unlock()
	r.wake()
	return !ended
}

func (r *Reply) finishLocked(err error) {
	if r.ended {
		return
	}
	r.ended, r.err = true, err
	if r.speech && !r.audioEnd {
		// The speech ends with the reply, complete or not: a speaker
		// plays what it got and finishes (issue #17).
		r.audioEnd = true
		r.queue = append(r.queue, Event{Kind: EventAudioEnd})
	}
	r.queue = append(r.queue, Event{Kind: EventEnd, Err: err})
	close(r.done)
}

// push queues one event from the session (the connection's goroutine),
// under the slow-consumer rules; it reports true when the reply ended
// for a slow consumer, to be cancelled on the engine.
func (r *Reply) push(ev session.Event) (slow bool) {
	r.mu.Lock()
	defer r.wake()
	defer r.mu.Unlock()
	if r.ended {
		return false
	}
	switch ev.Kind {
	case session.EventEnd:
		if ev.End.Failure == nil {
			res := ev.End.Result
			r.result = Result{RequestID: r.id, Text: res.Text, Extracted: res.Extracted, TokenCount: res.TokenCount, CardHash: res.CardHash,
				TextElapsed: res.TextElapsed, SpeechElapsed: res.SpeechElapsed}
		}
		r.finishLocked(failure(ev.End.Failure))
		return false
	case session.EventAudioEnd:
		if r.audioEnd {
			return false
		}
		r.audioEnd = true
	}
	r.enqueueLocked(Event{Kind: EventKind(ev.Kind), Text: ev.Text, Segment: ev.Segment, Capture: CaptureStatus(ev.Capture), Anomaly: ev.Anomaly})
	return r.ended
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

// decide takes the engine's decision d on the latest attempt (the
// connection's goroutine); f is the engine's error for a refusal.
func (r *Reply) decide(d session.Decision, f *session.Failure) {
	switch d {
	case session.Accepted:
		r.mu.Lock()
		first := !r.accepted
		r.accepted = true
		r.mu.Unlock()
		if first {
			close(r.decided)
		}
	case session.Refused, session.Resync:
		ch := r.refused
		if d == session.Resync {
			ch = r.resync
		}
		select {
		case ch <- failure(f).(*RequestError):
		default: // one per attempt is enough
		}
	}
}

// sameStage reports whether b only updates a's level: a change of state
// or a transcript is never coalesced away.
func sameStage(a, b CaptureStatus) bool {
	return a.State == b.State && a.Transcript == b.Transcript
}
