package session

import (
	"encoding/json"
	"log/slog"
	"math"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// Request is what Send needs of a reply's first attempt.
type Request struct {
	RequestID string
	Card      *card.Card // the card sent (planned by the caller), for the planner's OutCard
	Capture   bool       // a voice capture
}

// Send records an attempt of request q, admitted before, whose message
// id (of type typ) the game encoded and is about to write: the first
// attempt starts routing the engine's messages to it and its idle
// timeout (issue #9: an engine that accepted a reply and lost it left
// it pending).
func (s *Session) Send(now time.Time, q Request, id, typ string) error {
	r := s.replies[q.RequestID]
	switch {
	case s.ended:
		return ErrEnded
	case r == nil:
		return ErrEnded // it ended meanwhile
	}
	if !r.sent {
		r.sent, r.card, r.capture = true, q.Card, q.Capture
		a, _ := stream.NewAssembler(nil) // nil options cannot be invalid
		r.asm = a
	}
	s.out.add(now, s.cfg.AckTimeout, &outMsg{id: id, typ: typ, owner: owner{request: r.id}})
	s.resetIdle(now, r)
	return nil
}

// Abort ends request requestID for the game (its call gave up, its
// consumer is too slow, its card cannot be sent): no event follows. When
// cancel is not empty and the request was sent, that message
// (request.cancel or voice.capture.cancel) goes to the engine.
func (s *Session) Abort(now time.Time, requestID, cancel string) {
	r := s.replies[requestID]
	if r == nil {
		return
	}
	s.release(r)
	delete(s.replies, requestID)
	if cancel != "" && r.sent && !s.ended {
		s.send(now, cancel, idPayload{RequestID: requestID})
	}
}

// ControlType returns the type of the message that cancels request
// requestID (request.cancel, or voice.capture.cancel while a capture
// still listens), or that stops it (voice.capture.stop), and false when
// the request is not active.
func (s *Session) ControlType(requestID string, stop bool) (string, bool) {
	r := s.replies[requestID]
	switch {
	case r == nil || !r.sent:
		return "", false
	case stop:
		return wire.TypeCaptureStop, true
	case r.capture && !r.spoke:
		return wire.TypeCaptureCancel, true
	}
	return wire.TypeRequestCancel, true
}

// handle processes one engine message of reply r.
func (s *Session) handle(now time.Time, r *reply, typ string, in Inbound) {
	switch typ {
	case wire.TypeCaptureLevel, wire.TypeCaptureState, wire.TypeCaptureTranscript:
		if !r.capture {
			// An anomaly, and nothing else changes (issue #16: capture
			// events for a plain reply were taken as the capture's).
			s.anomaly(r, stream.Anomaly{Kind: stream.AnomalyUnexpectedEvent, Detail: typ + " for a request that is not a voice capture; dropped"})
			return
		}
		r.answered = true
		ev := wire.NewEvent(typ)
		if s.decodeFor(r, typ, in.Msg, ev) {
			s.captureEvent(now, r, ev)
		}
		return
	case wire.TypeReplyAccepted:
		r.answered = true
		var a wire.Accepted
		if !s.decodeFor(r, typ, in.Msg, &a) {
			return
		}
		s.accept(r, a.ResolvedCardHash)
	case wire.TypeAudioCompleted:
		r.answered = true
		if s.cfg.WholeSegments {
			var ac wire.AudioCompleted
			if s.decodeFor(r, typ, in.Msg, &ac) {
				s.assemble(now, r, typ, s.segmentsCompleted(r, &ac))
			}
			return
		}
	case wire.TypeTextDelta, wire.TypeTextCompleted, wire.TypeAudioStart, wire.TypeAudioChunk,
		wire.TypeReplyCompleted, wire.TypeReplyCancelled:
		r.answered = true
	case typeAudioSegment:
		r.answered = true
		if in.File != nil {
			s.segment(now, r, in.File)
			return
		}
		fallthrough
	default:
		r.answered = true
		s.log(slog.LevelDebug, "rpengine: ignored engine message", "type", peertext.Clip(typ, peertext.LogBytes), "requestId", r.id)
		return
	}
	s.assemble(now, r, typ, in.Msg)
}

// decodeFor is decode for a message of reply r.
func (s *Session) decodeFor(r *reply, typ string, data []byte, v any) bool {
	if err := json.Unmarshal(data, v); err != nil {
		s.log(slog.LevelWarn, "rpengine: dropped malformed engine message", "type", typ, "requestId", r.id, "reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return false
	}
	return true
}

// accept takes r's reply.accepted: the card the engine resolved goes to
// the planner, the waiting call has its decision, the character is free.
func (s *Session) accept(r *reply, hash string) {
	if h, err := card.ParseDigest(hash); err == nil {
		r.hash = h
		s.emit(Output{Kind: OutCard, Key: r.key, Card: r.card, Hash: h})
	} else {
		s.log(slog.LevelWarn, "rpengine: reply.accepted with a bad resolvedCardHash", "requestId", r.id, "resolvedCardHash", peertext.Clip(hash, peertext.LogBytes))
	}
	if !r.accepted {
		r.accepted = true
		s.emit(Output{Kind: OutDecision, RequestID: r.id, Decision: Accepted})
		s.gateAccepted(r)
	}
}

// replyError takes a request.error for r, data. A capacity_exceeded or
// card_resync_required before reply.accepted goes back to the Reply
// call, which waits for the engine's decision, and retries.
func (s *Session) replyError(now time.Time, r *reply, f *wire.Failed, data []byte) {
	r.answered = true
	fl := &Failure{Kind: FailEngine, Code: f.Code, Message: f.Message, Retryable: f.Retryable, RequestID: r.id, SourceMessageID: f.SourceMessageID}
	switch {
	case f.Code == "capacity_exceeded" && !r.accepted:
		s.gateRefused(r)
		s.emit(Output{Kind: OutDecision, RequestID: r.id, Decision: Refused, Failure: fl})
		return
	case f.Code == "card_resync_required" && !r.accepted:
		s.emit(Output{Kind: OutDecision, RequestID: r.id, Decision: Resync, Failure: fl})
		return
	}
	r.source = f.SourceMessageID
	s.assemble(now, r, wire.TypeRequestError, data)
}

// captureEvent takes a voice capture's level, state or transcript: one
// status that accumulates.
func (s *Session) captureEvent(now time.Time, r *reply, ev wire.Event) {
	s.touch(now, r, true)
	st := &r.status
	switch e := ev.(type) {
	case *wire.CaptureLevel:
		st.Elapsed, st.Peak, st.RMS = secondsOf(e.Seconds), e.Peak, e.RMS
	case *wire.CaptureState:
		r.spoke = r.spoke || e.State == "speech_ended"
		st.State, st.Message, st.AutoEnd, st.Elapsed = e.State, e.Message, e.AutoEndEnabled, secondsOf(e.Seconds)
	case *wire.CaptureTranscript:
		r.spoke = true
		st.Transcript, st.Language = e.Text, e.Language
	}
	s.event(r, Event{Kind: EventCapture, Capture: *st})
}

// assemble feeds r's message of type typ, data, to its assembler and
// queues what comes out.
func (s *Session) assemble(now time.Time, r *reply, typ string, data []byte) {
	s.touch(now, r, typ != wire.TypeReplyAccepted)
	switch typ {
	case wire.TypeTextDelta, wire.TypeAudioStart, wire.TypeTextCompleted:
		r.spoke = true
	}
	if err := r.asm.Push(data); err != nil {
		s.log(slog.LevelWarn, "rpengine: dropped malformed engine message", "type", typ, "requestId", r.id, "reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return
	}
	for {
		out, ok := r.asm.Next()
		if !ok {
			return
		}
		switch out.Kind {
		case stream.OutputText:
			s.event(r, Event{Kind: EventText, Text: out.Text})
		case stream.OutputSegment:
			s.event(r, Event{Kind: EventSegment, Segment: out.Segment})
		case stream.OutputAudioEnd:
			s.event(r, Event{Kind: EventAudioEnd})
		case stream.OutputAnomaly:
			s.anomaly(r, out.Anomaly)
		case stream.OutputEnd:
			s.endReply(r, s.endOf(r, out.End))
			return
		}
	}
}

// endOf makes the End of r from its assembler's.
func (s *Session) endOf(r *reply, e stream.End) *End {
	end := &End{Result: Result{Text: r.asm.Text(), CardHash: r.hash, SpeechElapsed: e.SpeechElapsed}}
	if f := e.Final; f != nil {
		end.Result.Extracted, end.Result.TokenCount, end.Result.TextElapsed = f.Extracted, f.TokenCount, f.Elapsed
	}
	switch e.State {
	case stream.EndCancelled:
		end.Failure = &Failure{Kind: FailCancelled, Reason: e.Reason}
	case stream.EndFailed:
		end.Failure = &Failure{Kind: FailEngine, Code: e.Code, Message: e.Message, Retryable: e.Retryable, RequestID: r.id, SourceMessageID: r.source}
	}
	return end
}

// segment takes a whole segment of r (file mode), under the same rules
// as assembled ones.
func (s *Session) segment(now time.Time, r *reply, sg *FileSegment) {
	if sg.Answer != nil {
		// A refused segment is given back too: the engine then puts the
		// silent placeholder back (issue #31: never answered, it stayed
		// unconsumed).
		defer s.send(now, sg.AnswerType, sg.Answer)
	}
	if sg.Err != nil {
		detail := peertext.Clip(sg.Err.Error(), peertext.LineBytes)
		s.log(slog.LevelWarn, "rpengine: dropped reply.audio.segment", "requestId", r.id, "reason", detail)
		s.event(r, Event{Kind: EventAnomaly, Anomaly: stream.Anomaly{Kind: stream.AnomalyInvalidChunk, Segment: sg.Sequence, Detail: detail}})
		return
	}
	r.spoke = true
	s.touch(now, r, true)
	dur := time.Duration(len(sg.Speech)) * time.Second / time.Duration(max(sg.Rate, 1))
	seg := stream.Segment{Index: sg.Sequence, SampleRate: sg.Rate, Samples: sg.Speech, Offset: r.offset, Duration: dur}
	r.offset += dur
	r.files.add(seg)
	s.event(r, Event{Kind: EventSegment, Segment: seg})
}

// segmentsCompleted takes file mode's reply.audio.completed: it checks
// the totals against the whole segments received, queues any anomaly, and
// returns what the assembler is given instead, an empty
// reply.audio.completed (but for its elapsedMs), which ends its (empty)
// audio as the real one would. A repeat is compared with the first.
func (s *Session) segmentsCompleted(r *reply, e *wire.AudioCompleted) []byte {
	var anomalies []stream.Anomaly
	if f := r.files.final; f != nil {
		x := *e
		x.RequestID = f.RequestID
		if x != *f {
			anomalies = append(anomalies, stream.Anomaly{Kind: stream.AnomalyConflictingMessage,
				Detail: "reply.audio.completed differs from the first one; the first is kept"})
		}
	} else {
		c := *e
		r.files.final = &c
		anomalies = r.files.check(e)
	}
	for _, an := range anomalies {
		s.anomaly(r, an)
	}
	b, _ := wire.Encode(wire.TypeAudioCompleted, "files", "", time.Time{}, struct {
		RequestID string  `json:"requestId"`
		ElapsedMs float64 `json:"elapsedMs"`
	}{e.RequestID, r.files.final.ElapsedMs}) // the first one's, as kept
	return b
}

// endReply ends r with e: its last event, and the gate stops counting it.
func (s *Session) endReply(r *reply, e *End) {
	s.event(r, Event{Kind: EventEnd, End: e})
	s.release(r)
	delete(s.replies, r.id)
}

// secondsOf converts the engine's seconds to a Duration.
func secondsOf(v float64) time.Duration {
	if math.IsNaN(v) || v < 0 || v > 1e9 {
		return 0
	}
	return time.Duration(v * float64(time.Second))
}
