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

// segmentOverhead is what a queued segment costs besides its samples, in
// bytes: its Event (248 bytes on 64-bit) and a little more.
const segmentOverhead = 256

// speechRate is the engine's speech rate, Hz (docs/rpengine-protocol.md).
const speechRate = 44100

// Reply is a request in flight and its stream of events.
//
// Slow-consumer policy: the connection's reader never waits for the game.
// Text updates coalesce (only the latest whole text is kept, in the place
// of the one not yet consumed), capture levels coalesce (never a change of
// state), and audio segments queue up to ServerOptions.MaxPendingAudio of
// audio and to the bytes that much audio takes at 44.1 kHz, and an eighth
// more (6 MB for 60 s), each segment counting its samples and 256 bytes of
// bookkeeping; other events (anomalies, capture states, the end of the
// speech) queue up to 1024. When a game leaves more than that unconsumed,
// the reply ends with ErrSlowConsumer and is cancelled on the engine.
// Memory per reply is therefore bounded, in bytes too: segments of 23 ms
// or more at 44.1 kHz reach the audio bound first, while an engine that
// declares a higher sample rate, or sends tinier segments, reaches the
// bytes first.
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
	bytes    int           // queued segments' bytes (samples and bookkeeping)
	maxBytes int
	others   int  // queued events other than segments
	textAt   int  // index of the queued EventText, if it is not consumed
	capAt    int  // index of the latest queued EventCapture, if it is not consumed
	took     bool // the End event was consumed
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
	return &Reply{id: id, capture: capture, maxAudio: maxAudio, maxBytes: 2 * int(maxAudio.Seconds()*speechRate) * 9 / 8,
		textAt: -1, capAt: -1, done: make(chan struct{}), notify: make(chan struct{}, 1),
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
			r.count(ev, -1)
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
		r.appendLocked(Event{Kind: EventAudioEnd})
	}
	r.appendLocked(Event{Kind: EventEnd, Err: err})
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
	}
	r.enqueueLocked(Event{Kind: EventKind(ev.Kind), Text: ev.Text, Segment: ev.Segment, Capture: CaptureStatus(ev.Capture), Anomaly: ev.Anomaly})
	return r.ended
}

// enqueueLocked queues ev for the consumer, coalescing text and levels and
// enforcing the slow-consumer bounds. Text replaces the text not yet
// consumed wherever it is in the queue, as interleaved with segments it
// would never be last (issue #31: 1600 deltas and segments ended a reply
// read in a tight loop).
func (r *Reply) enqueueLocked(ev Event) {
	switch {
	case ev.Kind == EventText && r.queued(r.textAt, EventText):
		r.queue[r.textAt] = ev
		return
	case ev.Kind == EventCapture && r.queued(r.capAt, EventCapture) && sameStage(r.queue[r.capAt].Capture, ev.Capture):
		r.queue[r.capAt] = ev
		return
	case ev.Kind == EventSegment:
		r.speech = true
		if a, b := r.audio+ev.Segment.Duration, r.bytes+segmentBytes(ev.Segment); a > r.maxAudio || b > r.maxBytes {
			r.finishLocked(fmt.Errorf("%w: %v of audio in %d bytes not consumed (limit %v, %d bytes)", ErrSlowConsumer, a, b, r.maxAudio, r.maxBytes))
			return
		}
	case r.others >= maxQueuedEvents:
		r.finishLocked(fmt.Errorf("%w: %d events not consumed", ErrSlowConsumer, maxQueuedEvents))
		return
	}
	r.appendLocked(ev)
}

// queued reports whether the event at i is one of kind k not yet consumed.
func (r *Reply) queued(i int, k EventKind) bool {
	return i >= r.head && i < len(r.queue) && r.queue[i].Kind == k
}

// appendLocked queues ev, counted. A full queue whose consumed front is
// at least half of it is moved down instead of grown, so that its memory
// follows what is queued, not what went through.
func (r *Reply) appendLocked(ev Event) {
	if n := len(r.queue); n == cap(r.queue) && r.head > 0 && r.head >= n/2 {
		k := copy(r.queue, r.queue[r.head:])
		clear(r.queue[k:])
		r.queue = r.queue[:k]
		r.textAt, r.capAt, r.head = r.textAt-r.head, r.capAt-r.head, 0
	}
	switch ev.Kind {
	case EventText:
		r.textAt = len(r.queue)
	case EventCapture:
		r.capAt = len(r.queue)
	case EventAudioEnd:
		r.audioEnd = true
	}
	r.queue = append(r.queue, ev)
	r.count(ev, 1)
}

// count adds ev to the queue's counts (sign 1) or takes it out (-1).
func (r *Reply) count(ev Event, sign int) {
	if ev.Kind != EventSegment {
		r.others += sign
		return
	}
	r.audio += time.Duration(sign) * ev.Segment.Duration
	r.bytes += sign * segmentBytes(ev.Segment)
}

// segmentBytes is what a queued segment counts against the bytes bound.
func segmentBytes(s stream.Segment) int { return 2*len(s.Samples) + segmentOverhead }

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
