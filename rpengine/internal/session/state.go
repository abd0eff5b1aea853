package session

import (
	"errors"
	"log/slog"
	"time"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// The state of a Session, what goes in, and the small helpers every part
// of it uses: the files above this one hold its parts (outbound.go,
// gate.go, sync.go, reply.go) and session.go puts them together.

// maxMessageIDBytes is the longest messageId that is not reported as
// absurd: ids are UUIDs (36 bytes) on both sides.
const maxMessageIDBytes = 256

// Close codes a Session asks for (OutClose), WebSocket's; another
// transport maps them as it can.
const closePolicy = 1008

// ErrEnded is returned by the request methods of a Session that ended.
var ErrEnded = errors.New("session ended")

// ErrDuplicateRequest is returned by Admit for a requestId that is
// already active in the session.
var ErrDuplicateRequest = errors.New("request is already active")

// Config is what a Session is made with.
type Config struct {
	ID            string // the sessionId
	ServerVersion string // sent in welcome
	// Acks says whether engine messages are acknowledged (file mode
	// acks whatever the game's options say: acks are how the engine
	// deletes its files).
	Acks bool
	// WelcomeExtra are more welcome fields (file mode: peerInstanceId,
	// nextAudioSlot), or nil.
	WelcomeExtra map[string]any
	// WholeSegments says the transport delivers speech as whole
	// segments (file mode), against which reply.audio.completed is
	// checked (totals.go).
	WholeSegments bool
	// DedupWindow is how many engine messageIds are remembered, and
	// outbound messages tracked (at least 1).
	DedupWindow int
	// AckTimeout and IdleTimeout are ServerOptions'; zero or negative
	// disables them.
	AckTimeout, IdleTimeout time.Duration
	// NewID returns the messageId of each message the Session sends
	// itself. If nil, wire.NewID.
	NewID func() string
}

// Session is one engine session, from the welcome to the end of its
// connection. It is not safe for concurrent use: one goroutine owns it.
type Session struct {
	cfg    Config
	window *wire.Window
	out    outbound
	gate   gate
	// replies are the requests admitted and not ended, by requestId;
	// a reply is routed messages once sent.
	replies  map[string]*reply
	syncs    map[uint64]*syncOp // by the call's id
	syncMsgs map[string]*syncOp // by the messageId of their current attempt
	capacity Capacity
	longID   bool // an absurd messageId was reported
	ended    bool
	outs     []Output
	head     int
}

// Inbound is one engine message for Receive.
type Inbound struct {
	// Msg is the message's text. OutAck outputs alias it: it must stay
	// unchanged until Next has been drained.
	Msg []byte
	// Text says the message must be valid UTF-8 (a WebSocket text frame).
	Text bool
	// File is the audio of a reply.audio.segment that the transport
	// read itself (file mode), or nil.
	File *FileSegment
}

// FileSegment is what a file-mode transport read of a reply.audio.segment
// (Inbound.Segment).
type FileSegment struct {
	// Sequence is its segmentSequence.
	Sequence int
	// Rate is the sample rate (Hz) of Speech, the sentence's samples;
	// Err, when not nil, is why the segment was refused instead (an
	// anomaly of the reply).
	Rate   int
	Speech []int16
	Err    error
	// AnswerType and Answer are the message that gives the slot back
	// (reply.audio.segment.consumed), sent once the segment is taken or
	// when its reply has ended already; Answer is nil when the segment
	// names no slot of this game's.
	AnswerType string
	Answer     any
}

// typeAudioSegment is file mode's reply.audio.segment: a whole sentence
// in a WAV slot (docs/rpengine-protocol.md, "File transport").
const typeAudioSegment = "reply.audio.segment"

type idPayload struct {
	RequestID string `json:"requestId"`
}

// reply is one request (a reply.request or a voice capture) from its
// admission to its end.
type reply struct {
	id       string
	key      card.Key
	card     *card.Card
	capture  bool
	sent     bool // its message went out: engine messages are routed to it
	asm      *stream.Assembler
	answered bool      // the engine answered it at all (stops its ack timeout)
	accepted bool      // reply.accepted arrived
	active   bool      // the engine started producing it
	spoke    bool      // a capture's speech ended: the reply phase began
	idle     time.Time // when it fails for silence; zero without IdleTimeout
	status   CaptureStatus
	source   string // sourceMessageId of the engine's request.error
	hash     card.Digest
	files    segmentTotals // whole segments received (file mode)
	offset   time.Duration // of the next whole segment
	gate     gateState
	gateGen  uint64
}

// syncOp is one character.sync in flight: a SyncCharacter call.
type syncOp struct {
	id       uint64
	key      card.Key
	card     *card.Card
	msg      string // messageId of the current attempt
	answered bool
	idle     time.Time
}

// gateState is where a request stands in the gate's count.
type gateState int

const (
	gateNone     gateState = iota // not counted
	gateSent                      // admitted, not yet accepted
	gateAccepted                  // accepted; counted until the next capacity.update
)

// gate is the capacity gate's view of one session.
type gate struct {
	gen      uint64              // capacity.updates received
	inflight int                 // requests counted on top of the last queueDepth
	accepted int                 // of inflight: accepted since the last capacity.update
	refused  bool                // capacity_exceeded since the last capacity.update
	held     map[card.Key]*reply // per character, the request waiting for reply.accepted
}

// emit queues an output.
func (s *Session) emit(o Output) { s.outs = append(s.outs, o) }

// log queues a line for the game's Logger.
func (s *Session) log(level slog.Level, msg string, args ...any) {
	s.emit(Output{Kind: OutLog, Level: level, Msg: msg, Args: args})
}

// send queues a message of the Session's own (no owner), tracked.
func (s *Session) send(now time.Time, typ string, payload any) {
	id := s.cfg.NewID()
	s.out.add(now, s.cfg.AckTimeout, &outMsg{id: id, typ: typ})
	s.emit(Output{Kind: OutSend, ID: id, Type: typ, Payload: payload})
}

// resetIdle arms r's idle deadline anew.
func (s *Session) resetIdle(now time.Time, r *reply) {
	if d := s.cfg.IdleTimeout; d > 0 {
		r.idle = now.Add(d)
	}
}

// touchWaiting resets the idle deadline of every reply the engine has
// not started producing (sent, acked or queued): any engine message shows
// the engine alive and its queue moving. Once a reply is active only its
// own messages count.
func (s *Session) touchWaiting(now time.Time) {
	for _, r := range s.replies {
		if r.sent && !r.active {
			s.resetIdle(now, r)
		}
	}
}

// touch resets r's idle deadline for a message of its own; active says
// the engine is producing it (any message but reply.accepted).
func (s *Session) touch(now time.Time, r *reply, active bool) {
	r.active = r.active || active
	s.resetIdle(now, r)
}

// anomaly queues an anomaly of r, and its log line.
func (s *Session) anomaly(r *reply, an stream.Anomaly) {
	s.log(slog.LevelDebug, "rpengine: reply stream anomaly", "requestId", r.id, "detail", peertext.Clip(an.Detail, peertext.LogBytes))
	s.event(r, Event{Kind: EventAnomaly, Anomaly: an})
}

func (s *Session) event(r *reply, ev Event) {
	s.emit(Output{Kind: OutEvent, RequestID: r.id, Event: ev})
}
