package stream

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// Assembler assembles one reply's messages into ordered display text,
// whole audio segments in segment order, [Anomaly] reports and one [End].
//
// It is passive: Push records a message and queues the outputs it made
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

	accepted *wire.Accepted
	audioEnd bool // OutputAudioEnd was queued

	// chunks and chunk decode reply.audio.chunk without allocating.
	chunks wire.ChunkDecoder
	chunk  wire.AudioChunk

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
// defaults; an invalid option is a *BoundsError (see [Options]).
func NewAssembler(opts *Options) (*Assembler, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Assembler{opts: o, requestID: o.RequestID}
	a.aud.maxHeld = heldSamplesFor(o.MaxHeldAudio, expectedSampleRate)
	a.chunks.Lend = a.lend
	return a, nil
}

// Push feeds one message of the reply: the text of an engine message
// (one WebSocket text message, or one mailbox file), envelope included.
// A message that is not a valid envelope (docs/rpengine-protocol.md,
// "Envelope") or whose fields do not decode is an error, and nothing
// changes; a valid message that is not part of a reply is an
// [AnomalyUnexpectedEvent]. Push never panics. Anomalies and bound
// violations are reported through [Assembler.Next]; a bound violation
// ends the reply as [EndFailed]. After the End, messages are counted in
// [Stats].Late and dropped. Push keeps no reference to msg: the caller
// may reuse it once Push returns. A request.error without requestId
// (invalid_payload) is taken as this reply's: the caller routed it here.
//
// A reply.audio.chunk is decoded without allocating, its data straight
// into the samples of its segment (with AVX2; otherwise through a scratch
// buffer).
func (a *Assembler) Push(msg []byte) error {
	if _, err := a.chunks.Decode(&a.chunk, msg); err == nil {
		a.pushEvent(&a.chunk, a.chunks.PCM())
		a.chunk.Data = "" // it aliases msg
		return nil
	}
	h, err := wire.DecodeHeader(msg)
	if err != nil {
		return fmt.Errorf("stream: push: %w", err)
	}
	ev := wire.NewEvent(h.Type)
	if ev == nil {
		a.pushEvent(nil, nil)
		return nil
	}
	if err := json.Unmarshal(msg, ev); err != nil {
		return fmt.Errorf("stream: push %s: %s", peertext.Quote(h.Type, peertext.LogBytes), peertext.Clip(err.Error(), peertext.LogBytes))
	}
	a.pushEvent(ev, nil)
	return nil
}

// pushEvent feeds one decoded message; pcm is the data of a chunk as
// the chunk decoder decoded it (wire.ChunkDecoder.PCM), or nil when
// pushChunk must decode it.
func (a *Assembler) pushEvent(ev wire.Event, pcm []byte) {
	if a.done {
		a.stats.Late++
		return
	}
	a.push(ev, pcm)
}

// push dispatches one event; it is a type switch, hence its length.
func (a *Assembler) push(ev wire.Event, pcm []byte) {
	switch e := ev.(type) {
	case *wire.Accepted:
		if e != nil && a.ownedBy(e.RequestID, "reply.accepted") {
			a.pushAccepted(e)
			return
		}
	case *wire.TextDelta:
		if e != nil && a.ownedBy(e.RequestID, "reply.text.delta") {
			a.pushDelta(e)
			return
		}
	case *wire.TextCompleted:
		if e != nil && a.ownedBy(e.RequestID, "reply.text.completed") {
			a.pushTextCompleted(e)
			return
		}
	case *wire.AudioStart:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.start") {
			a.pushAudioStart(e)
			return
		}
	case *wire.AudioChunk:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.chunk") {
			a.pushChunk(e, pcm)
			return
		}
	case *wire.AudioCompleted:
		if e != nil && a.ownedBy(e.RequestID, "reply.audio.completed") {
			a.pushAudioCompleted(e)
			return
		}
	case *wire.Completed:
		if e != nil && a.ownedBy(e.RequestID, "reply.completed") {
			a.pushCompleted()
			return
		}
	case *wire.Cancelled:
		if e != nil && a.ownedBy(e.RequestID, "reply.cancelled") {
			a.end(End{State: EndCancelled, Reason: e.Reason})
			return
		}
	case *wire.Failed:
		if e != nil && (e.RequestID == nil || a.ownedBy(*e.RequestID, "request.error")) {
			a.end(End{State: EndFailed, Code: e.Code, Message: e.Message, Retryable: e.Retryable})
			return
		}
	}
	if isNilEvent(ev) || !isReplyEvent(ev) {
		a.anomaly(Anomaly{Kind: AnomalyUnexpectedEvent, Detail: "not a reply message"})
	}
}

// isNilEvent reports a nil interface or a nil pointer of a known type.
func isNilEvent(ev wire.Event) bool {
	switch e := ev.(type) {
	case nil:
		return true
	case *wire.Accepted:
		return e == nil
	case *wire.TextDelta:
		return e == nil
	case *wire.TextCompleted:
		return e == nil
	case *wire.AudioStart:
		return e == nil
	case *wire.AudioChunk:
		return e == nil
	case *wire.AudioCompleted:
		return e == nil
	case *wire.Completed:
		return e == nil
	case *wire.Cancelled:
		return e == nil
	case *wire.Failed:
		return e == nil
	}
	return false
}

func isReplyEvent(ev wire.Event) bool {
	switch ev.(type) {
	case *wire.CaptureLevel, *wire.CaptureState, *wire.CaptureTranscript:
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

func (a *Assembler) pushAccepted(e *wire.Accepted) {
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
	if f := a.txt.final; f != nil {
		e.Final = &Final{Text: f.Text, TokenCount: f.TokenCount, Elapsed: millis(f.ElapsedMs), Extracted: f.ExtractedContent}
	}
	if t := a.aud.totals; t != nil {
		e.SpeechElapsed = millis(t.ElapsedMs)
	}
	if a.aud.seen() {
		a.audioEnded() // the reply ended in the middle of its audio
	}
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

// audioEnded queues OutputAudioEnd, once.
func (a *Assembler) audioEnded() {
	if !a.audioEnd {
		a.audioEnd = true
		a.enqueue(item{out: Output{Kind: OutputAudioEnd}, textLen: -1})
	}
}

// millis converts the engine's milliseconds to a Duration.
func millis(ms float64) time.Duration {
	if !(ms >= 0 && ms < 1e12) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

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
