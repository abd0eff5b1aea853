package stream

import (
	"fmt"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
)

// Assembler assembles one reply's messages into ordered display text,
// whole audio segments in segment order, [Anomaly] reports and one [End].
//
// It is passive: Push records an event and queues the outputs it made
// possible; Next pops them. It starts no goroutine, takes no lock and reads
// no clock. An Assembler is not safe for concurrent use; the caller
// serialises Push and Next (one reader goroutine usually owns it). Drain
// Next after every Push: the queue of outputs is only bounded for anomalies
// (at most 1024 pending; more are counted in [Stats].DroppedAnomalies).
type Assembler struct {
	opts      Options
	requestID string

	queue     []item // outputs; queue[head:] are pending
	head      int
	anomalies int // anomalies in queue[head:]
	done      bool
	stats     Stats

	accepted *Accepted

	txt textState
	aud audioState
}

// item is a queued output. A text output is materialised by Next as the
// first textLen bytes of the assembled text (a slice of it, no copy), and a
// run of deltas pushed between two Next calls extends the pending output
// instead of queueing one per delta.
type item struct {
	out     Output
	textLen int // OutputText not yet materialised: length of its text; else -1
}

// Stats counts what an [Assembler] dropped or accepted without an output.
type Stats struct {
	Late             int // messages pushed after the End, dropped
	Duplicates       int // exact duplicates of a delta, chunk or message, ignored
	DroppedAnomalies int // anomalies not queued because 1024 were pending
	Chunks           int // audio chunks accepted
	Bytes            int // decoded PCM bytes of the accepted chunks
	Segments         int // segments emitted
}

// NewAssembler returns an assembler for one reply. A nil opts means
// defaults (see [Options]).
func NewAssembler(opts *Options) *Assembler {
	o := opts.withDefaults()
	a := &Assembler{opts: o, requestID: o.RequestID}
	a.aud.maxHeld = heldSamplesFor(o.MaxHeldAudio, expectedSampleRate)
	return a
}

// Push feeds one decoded message of this reply: one of the reply payload
// types of this package, as a pointer. It never panics. Anomalies and bound
// violations are reported through [Assembler.Next]; a bound violation ends
// the reply as [EndFailed]. After the End, events are counted in
// [Stats].Late and dropped. Push keeps no reference to ev or its strings
// beyond what it returns in outputs (a *TextCompleted is kept as
// [End].Final and must not be modified). A *Failed with a nil RequestID
// (request.error without requestId) is taken as this reply's: the caller
// routed it here.
func (a *Assembler) Push(ev Event) {
	if a.done {
		a.stats.Late++
		return
	}
	a.push(ev)
}

// push dispatches one event; it is a type switch, hence its length.
func (a *Assembler) push(ev Event) {
	switch e := ev.(type) {
	case *Accepted:
		if e != nil && a.ownedBy(e.RequestID, "reply.accepted") {
			a.pushAccepted(e)
			return
		}
	case *TextDelta:
		if e != nil && a.ownedBy(e.RequestID, "reply.text.delta") {
			a.pushDelta(e)
			return
		}
	case *TextCompleted:
		if e != nil && a.ownedBy(e.RequestID, "reply.text.completed") {
			a.pushTextCompleted(e)
			return
		}
	case *AudioStart:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.start") {
			a.pushAudioStart(e)
			return
		}
	case *AudioChunk:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.chunk") {
			a.pushChunk(e)
			return
		}
	case *AudioCompleted:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.completed") {
			a.pushAudioCompleted(e)
			return
		}
	case *Completed:
		if e != nil && a.ownedBy(e.RequestID, "reply.completed") {
			a.pushCompleted()
			return
		}
	case *Cancelled:
		if e != nil && a.ownedBy(e.RequestID, "reply.cancelled") {
			a.end(End{State: EndCancelled, Reason: e.Reason})
			return
		}
	case *Failed:
		if e != nil && (e.RequestID == nil || a.ownedBy(*e.RequestID, "request.error")) {
			a.end(End{State: EndFailed, Code: e.Code, Message: e.Message, Retryable: e.Retryable})
			return
		}
	}
	if isNilEvent(ev) || !isReplyEvent(ev) {
		a.anomaly(Anomaly{Kind: AnomalyUnexpectedEvent, Detail: fmt.Sprintf("%T is not a reply message", ev)})
	}
}

// isNilEvent reports a nil interface or a nil pointer of a known type.
func isNilEvent(ev Event) bool {
	switch e := ev.(type) {
	case nil:
		return true
	case *Accepted:
		return e == nil
	case *TextDelta:
		return e == nil
	case *TextCompleted:
		return e == nil
	case *AudioStart:
		return e == nil
	case *AudioChunk:
		return e == nil
	case *AudioCompleted:
		return e == nil
	case *Completed:
		return e == nil
	case *Cancelled:
		return e == nil
	case *Failed:
		return e == nil
	}
	return false
}

func isReplyEvent(ev Event) bool {
	switch ev.(type) {
	case *CaptureLevel, *CaptureState, *CaptureTranscript:
		return false
	}
	return true
}

// ownedBy reports whether requestID belongs to this reply, adopting the
// first non-empty one when no RequestID was configured. An empty requestID
// is accepted: the caller routed the message here.
func (a *Assembler) ownedBy(requestID, typ string) bool {
	switch {
	case requestID == "" || requestID == a.requestID:
		return true
	case a.requestID == "":
		a.requestID = requestID
		return true
	}
	a.anomaly(Anomaly{Kind: AnomalyWrongRequest,
		Detail: fmt.Sprintf("%s for request %s pushed to the assembler of %q", typ, peertext.Quote(requestID, peertext.LogBytes), a.requestID)})
	return false
}

func (a *Assembler) pushAccepted(e *Accepted) {
	if a.accepted == nil {
		c := *e
		a.accepted = &c
		return
	}
	x := *e
	x.RequestID = a.accepted.RequestID // an empty requestId is not a conflict
	a.repeated(*a.accepted == x, "reply.accepted")
}

// repeated counts a repeat of a once-per-reply message as a duplicate when
// it is the same as the first, and reports an AnomalyConflictingMessage
// otherwise; the first one is kept either way.
func (a *Assembler) repeated(same bool, typ string) {
	if same {
		a.stats.Duplicates++
		return
	}
	a.anomaly(Anomaly{Kind: AnomalyConflictingMessage, Detail: typ + " differs from the first one; the first is kept"})
}

func (a *Assembler) pushCompleted() {
	a.flushText()
	if a.aud.seen() && !a.aud.completed && !a.aud.unsupported {
		a.anomaly(Anomaly{Kind: AnomalyMissingAudioCompleted, Detail: "reply.completed before reply.audio.completed"})
	}
	a.flushAudio()
	if !a.done {
		a.end(End{State: EndCompleted})
	}
}

// end queues e (with the final text) and drops everything held.
func (a *Assembler) end(e End) {
	e.Final = a.txt.final
	a.done = true
	a.txt.release()
	a.aud.release()
	a.enqueue(item{out: Output{Kind: OutputEnd, End: e}, textLen: -1})
}

// fail ends the reply as failed because a bound was exceeded.
func (a *Assembler) fail(code, format string, args ...any) {
	a.end(End{State: EndFailed, Code: code, Message: "stream: " + fmt.Sprintf(format, args...)})
}

func (a *Assembler) anomaly(an Anomaly) {
	if a.pendingAnomalies() >= maxPendingAnomalies {
		a.stats.DroppedAnomalies++
		return
	}
	a.enqueue(item{out: Output{Kind: OutputAnomaly, Anomaly: an}, textLen: -1})
}

func (a *Assembler) pendingAnomalies() int { return a.anomalies }

func (a *Assembler) enqueue(it item) {
	if it.out.Kind == OutputAnomaly {
		a.anomalies++
	}
	if a.head == len(a.queue) {
		clear(a.queue) // drop references to popped outputs
		a.queue = a.queue[:0]
		a.head = 0
	}
	a.queue = append(a.queue, it)
}

// Next pops the next output, in order; ok is false when none is pending.
// The End, when produced, is the last output.
func (a *Assembler) Next() (out Output, ok bool) {
	if a.head == len(a.queue) {
		return Output{}, false
	}
	it := &a.queue[a.head]
	a.head++
	if it.out.Kind == OutputAnomaly {
		a.anomalies--
	}
	if it.textLen >= 0 {
		it.out.Text = a.txt.stringOf(it.textLen)
	}
	out = it.out
	*it = item{}
	return out, true
}

// Text returns the display text so far: the deltas in sequence order up to
// the first gap, or the reply.text.completed text once it arrived.
func (a *Assembler) Text() string { return a.txt.text.String() }

// Done reports whether an End has been produced (it may not be popped yet).
func (a *Assembler) Done() bool { return a.done }

// Stats returns the reply's counters so far.
func (a *Assembler) Stats() Stats { return a.stats }

// durationOf returns the duration of n samples at rate Hz.
func durationOf(n int64, rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	sec := n / int64(rate)
	rem := n % int64(rate)
	return time.Duration(sec)*time.Second + time.Duration(rem)*time.Second/time.Duration(rate)
}

// heldSamplesFor converts a held-audio bound to samples at rate Hz.
func heldSamplesFor(d time.Duration, rate int) int {
	return int(int64(d/time.Millisecond) * int64(rate) / 1000)
}
