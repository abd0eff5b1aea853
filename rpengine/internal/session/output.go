package session

import (
	"log/slog"
	"time"

	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// OutputKind says which fields of an [Output] are set.
type OutputKind int

// Output kinds.
const (
	// OutSend is a message to encode and write: ID, Type, Payload, and
	// NoSession for one without a sessionId. It is tracked already.
	OutSend OutputKind = iota + 1
	// OutAck acknowledges an engine message: AckID (aliasing the
	// message received, valid until the next call), Dup, NoSession.
	OutAck
	// OutEvent is the next event of reply RequestID.
	OutEvent
	// OutDecision is the engine's decision on reply RequestID's latest
	// attempt, which its Reply call waits for: Decision, and Failure for
	// a refusal.
	OutDecision
	// OutCard says the engine holds Card under Key with Hash: the card
	// planner learns it.
	OutCard
	// OutSync ends sync SyncID with Hash, or Failure; with Decision
	// Resync (and the engine's Failure) it asks the waiting call to send
	// the sync again.
	OutSync
	// OutCapacity says that the engine's queue or the gate's count
	// changed: waiting requests may go now.
	OutCapacity
	// OutLog is a line for the game's Logger: Level, Msg, Args.
	OutLog
	// OutClose asks for the connection to be closed with Code and Reason.
	OutClose
)

// Output is one thing a Session produced, in order; Kind says which
// fields are set.
type Output struct {
	Kind      OutputKind
	ID        string // OutSend: the messageId
	Type      string // OutSend
	Payload   any    // OutSend
	NoSession bool   // OutSend, OutAck: no sessionId (the ack of hello)
	AckID     []byte // OutAck
	Dup       bool   // OutAck
	RequestID string // OutEvent, OutDecision
	Event     Event  // OutEvent
	Decision  Decision
	Failure   *Failure    // OutDecision, OutSync
	Key       card.Key    // OutCard
	Card      *card.Card  // OutCard
	Hash      card.Digest // OutCard, OutSync
	SyncID    uint64      // OutSync
	Level     slog.Level  // OutLog
	Msg       string      // OutLog
	Args      []any       // OutLog
	Code      int         // OutClose
	Reason    string      // OutClose
}

// Decision is the engine's answer to a request's attempt.
type Decision int

// Decisions.
const (
	Accepted Decision = iota + 1 // reply.accepted
	Refused                      // capacity_exceeded before reply.accepted: retry after the next capacity.update
	Resync                       // card_resync_required before the engine took it: send the card again
)

// EventKind says which field of an [Event] is set; the values are
// package rpengine's EventKind.
type EventKind int

// Event kinds.
const (
	EventText EventKind = iota + 1
	EventSegment
	EventAudioEnd
	EventCapture
	EventAnomaly
	EventEnd
)

// Event is one event of a reply, as package rpengine's Event.
type Event struct {
	Kind    EventKind
	Text    string
	Segment stream.Segment
	Capture CaptureStatus
	Anomaly stream.Anomaly
	End     *End // EventEnd
}

// CaptureStatus is package rpengine's CaptureStatus (the same fields).
type CaptureStatus struct {
	State, Message       string
	AutoEnd              bool
	Elapsed              time.Duration
	Peak, RMS            float64
	Transcript, Language string
}

// End is how a reply ended: Failure, or nil and its Result.
type End struct {
	Failure *Failure
	Result  Result
}

// Result is what a completed reply gave.
type Result struct {
	Text       string
	Extracted  map[string][]string
	TokenCount int
	CardHash   card.Digest
	// TextElapsed and SpeechElapsed are the engine's elapsedMs of
	// reply.text.completed and reply.audio.completed.
	TextElapsed, SpeechElapsed time.Duration
}

// FailureKind says why a request failed.
type FailureKind int

// Failure kinds.
const (
	// FailEnded: Err ended it (the session ended, or the game did).
	FailEnded FailureKind = iota + 1
	// FailNoAnswer: the engine did not answer in time; Detail says what.
	FailNoAnswer
	// FailEngine: the engine refused it (request.error, or a failed end
	// of the reply's stream): Code, Message, Retryable, RequestID,
	// SourceMessageID.
	FailEngine
	// FailCancelled: reply.cancelled, with Reason.
	FailCancelled
	// FailBadAnswer: the engine's answer cannot be used; Detail says
	// what, Err why.
	FailBadAnswer
)

// Failure says why a request failed, as data: package rpengine makes
// its error of it.
type Failure struct {
	Kind            FailureKind
	Err             error
	Detail          string
	Code, Message   string
	Retryable       bool
	RequestID       string
	SourceMessageID string
	Reason          string
}

// Admission is what the gate says to the request first in line.
type Admission int

// Admissions.
const (
	AdmitOK    Admission = iota + 1 // counted and held: send it
	AdmitFull                       // the engine has no room (or just refused one)
	AdmitHeld                       // an earlier request for the character waits for its reply.accepted
	AdmitEnded                      // the session ended
)

// State is what the engine did with one outbound message, as far as the
// game knows.
type State int

// Message states.
const (
	Unknown   State = iota // never sent in this session, or forgotten
	Pending                // sent, no ack yet
	Acked                  // acknowledged
	Duplicate              // acknowledged as a duplicate: not processed again
	Rejected               // answered by invalid_payload instead of an ack
	Unacked                // no ack within AckTimeout
)

// String returns the state's name.
func (m State) String() string {
	switch m {
	case Pending:
		return "pending"
	case Acked:
		return "acked"
	case Duplicate:
		return "duplicate"
	case Rejected:
		return "rejected"
	case Unacked:
		return "unacked"
	}
	return "unknown"
}

// Capacity is the engine's last capacity.update.
type Capacity struct {
	QueueDepth        int  `json:"queueDepth"`
	QueueLimit        int  `json:"queueLimit"`
	AcceptingRequests bool `json:"acceptingRequests"`
	// Known is false until the first capacity.update of the session;
	// until then the engine is taken to accept requests up to upstream's
	// queueLimit of 20.
	Known bool `json:"-"`
}
