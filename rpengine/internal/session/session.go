package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// New returns the Session that a valid hello (helloID, its messageId)
// started; its first outputs are the ack of the hello (when acks are
// on), without a sessionId, and the welcome.
func New(cfg Config, now time.Time, helloID string) *Session {
	if cfg.NewID == nil {
		cfg.NewID = wire.NewID
	}
	cfg.DedupWindow = max(cfg.DedupWindow, 1)
	s := &Session{cfg: cfg, window: wire.NewWindow(cfg.DedupWindow), replies: map[string]*reply{},
		syncs: map[uint64]*syncOp{}, syncMsgs: map[string]*syncOp{}}
	s.out.init(cfg.DedupWindow)
	s.window.Seen(helloID)
	if cfg.Acks {
		// The ack of hello goes before welcome and without a sessionId:
		// the engine does not know the session yet.
		s.emit(Output{Kind: OutAck, AckID: []byte(helloID), NoSession: true})
	}
	var payload any = struct {
		SessionID     string `json:"sessionId"`
		ServerVersion string `json:"serverVersion"`
	}{cfg.ID, cfg.ServerVersion}
	if extra := cfg.WelcomeExtra; extra != nil {
		m := map[string]any{"sessionId": cfg.ID, "serverVersion": cfg.ServerVersion}
		for k, v := range extra {
			m[k] = v
		}
		payload = m
	}
	s.send(now, wire.TypeWelcome, payload)
	return s
}

// Next pops the next output; ok is false when none is left. Drain it
// after every call.
func (s *Session) Next() (out Output, ok bool) {
	if s.head == len(s.outs) {
		clear(s.outs)
		s.outs, s.head = s.outs[:0], 0
		return Output{}, false
	}
	out = s.outs[s.head]
	s.outs[s.head] = Output{}
	s.head++
	return out, true
}

// Receive handles one engine message after the hello. It reports false,
// and handles nothing, when in.Text is set and the message is not valid
// UTF-8: the caller closes the connection. A message the envelope
// decoder read as plain JSON text was checked byte by byte already, so an
// audio chunk's 44 KB are not read again.
func (s *Session) Receive(now time.Time, in Inbound) bool {
	env, err := wire.DecodeEnvelope(in.Msg)
	if in.Text && !env.Checked && !utf8.Valid(in.Msg) {
		return false
	}
	if err != nil {
		s.log(slog.LevelWarn, "rpengine: dropped engine message", "reason", peertext.Clip(err.Error(), peertext.LineBytes))
		return true
	}
	typ := wire.TypeOf(env.Type)
	if env.SessionID != nil && string(env.SessionID) != s.cfg.ID {
		s.log(slog.LevelWarn, "rpengine: dropped engine message for another session", "type", peertext.Clip(typ, peertext.LogBytes),
			"messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes), "sessionId", peertext.Clip(string(env.SessionID), peertext.LogBytes))
		return true
	}
	if len(env.MessageID) > maxMessageIDBytes && !s.longID {
		// Accepted (the engine decides what an id is) and remembered by
		// digest like any other; said once, as an engine sending such ids
		// is broken or hostile (issue #16).
		s.longID = true
		s.log(slog.LevelWarn, "rpengine: engine sent a messageId over 256 bytes; said once per session", "type", peertext.Clip(typ, peertext.LogBytes),
			"bytes", len(env.MessageID), "messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes))
	}
	if s.ended {
		return true
	}
	dup := s.window.SeenBytes(env.MessageID)
	if typ != wire.TypeAck && s.cfg.Acks {
		s.emit(Output{Kind: OutAck, AckID: env.MessageID, Dup: dup})
	}
	if dup {
		s.log(slog.LevelDebug, "rpengine: duplicate engine message dropped", "type", peertext.Clip(typ, peertext.LogBytes),
			"messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes))
		return true
	}
	s.touchWaiting(now)
	s.dispatch(now, typ, env.RequestID, in)
	return true
}

// dispatch routes one new engine message of type typ; requestID aliases
// in.Msg.
func (s *Session) dispatch(now time.Time, typ string, requestID []byte, in Inbound) {
	switch typ {
	case wire.TypeAck:
		var a wire.Ack
		if s.decode(typ, in.Msg, &a) {
			s.out.acked(a.AcknowledgedMessageID, a.Duplicate)
		}
	case wire.TypeHello:
		s.log(slog.LevelWarn, "rpengine: closed connection", "reason", "second hello")
		s.emit(Output{Kind: OutClose, Code: closePolicy, Reason: "second hello on one connection"})
	case wire.TypeCapacity:
		var c Capacity
		if s.decode(typ, in.Msg, &c) {
			c.Known = true
			s.capacity = c
			s.gate.update()
			s.emit(Output{Kind: OutCapacity})
		}
	case wire.TypeCharacterSynced:
		var m syncedPayload
		if s.decode(typ, in.Msg, &m) {
			s.onSynced(m)
		}
	case wire.TypeRequestError:
		var f wire.Failed
		if s.decode(typ, in.Msg, &f) {
			s.onError(now, &f, in.Msg)
		}
	default:
		if len(requestID) == 0 {
			s.log(slog.LevelDebug, "rpengine: ignored engine message", "type", peertext.Clip(typ, peertext.LogBytes))
			return
		}
		if r := s.replies[string(requestID)]; r != nil && r.sent {
			s.handle(now, r, typ, in)
			return
		}
		if typ == typeAudioSegment && in.File != nil && in.File.Answer != nil {
			// A segment of a reply that already ended (cancelled, failed)
			// is still answered, so that the engine puts the silent
			// placeholder back instead of leaving the sentence on disk.
			s.send(now, in.File.AnswerType, in.File.Answer)
			return
		}
		s.log(slog.LevelDebug, "rpengine: engine message for no pending request", "type", peertext.Clip(typ, peertext.LogBytes),
			"requestId", peertext.Clip(string(requestID), peertext.LogBytes))
	}
}

// decode unmarshals a message of type typ into v, or logs why it cannot.
func (s *Session) decode(typ string, data []byte, v any) bool {
	if err := json.Unmarshal(data, v); err != nil {
		s.log(slog.LevelWarn, "rpengine: dropped malformed engine message", "type", peertext.Clip(typ, peertext.LogBytes),
			"reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return false
	}
	return true
}

// onError routes a request.error: by requestId to a reply, by
// sourceMessageId to a sync or reply, and otherwise (invalid_payload,
// which carries neither) to the oldest message the engine has not acked:
// over one ordered connection that is the one it refused.
func (s *Session) onError(now time.Time, f *wire.Failed, data []byte) {
	if f.RequestID != nil && *f.RequestID != "" {
		if r := s.replies[*f.RequestID]; r != nil && r.sent {
			s.replyError(now, r, f, data)
			return
		}
	}
	var m *outMsg
	if f.SourceMessageID != "" {
		if op := s.syncMsgs[f.SourceMessageID]; op != nil {
			s.syncError(op, f)
			return
		}
		m = s.out.pending(f.SourceMessageID)
	} else if m = s.out.oldest(); m != nil {
		s.out.settle(m, Rejected)
	}
	if m == nil || m.owner == (owner{}) {
		s.log(slog.LevelWarn, "rpengine: engine error for no pending request", "code", peertext.Clip(f.Code, peertext.LogBytes),
			"message", peertext.Clip(f.Message, peertext.LogBytes))
		return
	}
	fl := &Failure{Kind: FailEngine, Code: f.Code, Message: f.Message, Retryable: f.Retryable, SourceMessageID: m.id}
	if m.owner.request != "" {
		fl.RequestID = m.owner.request
	}
	s.fail(now, m.owner, fl)
}

// answered reports whether the engine answered the owner's request at all.
func (s *Session) answered(o owner) bool {
	if r := s.replies[o.request]; o.request != "" && r != nil {
		return r.answered
	}
	if op := s.syncs[o.sync]; o.sync != 0 && op != nil {
		return op.answered
	}
	return true // ended already
}

// fail ends the owner's request with f.
func (s *Session) fail(now time.Time, o owner, f *Failure) {
	if r := s.replies[o.request]; o.request != "" && r != nil {
		s.endReply(r, &End{Failure: f})
		return
	}
	if op := s.syncs[o.sync]; o.sync != 0 && op != nil {
		s.endSync(op, card.Digest{}, f)
	}
}

// Tick handles every deadline that now has reached: messages without an
// ack or answer within AckTimeout, replies and syncs silent for
// IdleTimeout.
func (s *Session) Tick(now time.Time) {
	if s.ended {
		return
	}
	for {
		m := s.out.expired(now)
		if m == nil {
			break
		}
		if !s.answered(m.owner) {
			s.fail(now, m.owner, &Failure{Kind: FailNoAnswer,
				Detail: fmt.Sprintf("no ack or answer to %s %s within %v", m.typ, m.id, s.cfg.AckTimeout)})
		}
	}
	for _, r := range s.replies {
		if !r.idle.IsZero() && !now.Before(r.idle) {
			s.endReply(r, &End{Failure: &Failure{Kind: FailNoAnswer, Detail: fmt.Sprintf("reply %s silent for %v", r.id, s.cfg.IdleTimeout)}})
			s.send(now, wire.TypeRequestCancel, idPayload{RequestID: r.id})
		}
	}
	for _, op := range s.syncs {
		if !op.idle.IsZero() && !now.Before(op.idle) {
			s.endSync(op, card.Digest{}, &Failure{Kind: FailNoAnswer, Detail: fmt.Sprintf("no answer to character.sync within %v", s.cfg.IdleTimeout)})
		}
	}
}

// Deadline returns when Tick is next due, if ever.
func (s *Session) Deadline() (time.Time, bool) {
	var d time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (d.IsZero() || t.Before(d)) {
			d = t
		}
	}
	if s.ended {
		return d, false
	}
	earlier(s.out.next())
	for _, r := range s.replies {
		earlier(r.idle)
	}
	for _, op := range s.syncs {
		earlier(op.idle)
	}
	return d, !d.IsZero()
}

// End ends the session: every request pending fails with err (FailEnded).
// It is idempotent; afterwards the request methods return ErrEnded.
func (s *Session) End(err error) {
	if s.ended {
		return
	}
	s.ended = true
	for _, r := range s.replies {
		if r.sent {
			s.endReply(r, &End{Failure: &Failure{Kind: FailEnded, Err: err}})
		} else {
			s.release(r)
			delete(s.replies, r.id)
		}
	}
	for _, op := range s.syncs {
		s.endSync(op, card.Digest{}, &Failure{Kind: FailEnded, Err: err})
	}
	s.out.clear()
}

// Ended reports whether End was called.
func (s *Session) Ended() bool { return s.ended }

// Status reports what the engine did with outbound message id; settled
// states are remembered for the last DedupWindow messages.
func (s *Session) Status(id string) State { return s.out.status(id) }

// Capacity returns the engine's last capacity.update.
func (s *Session) Capacity() Capacity { return s.capacity }

// Track records a message the game encoded itself (a request's, a
// sync's, a cancellation), about to be written: requestID, when not
// empty, is the reply it belongs to, which fails with FailNoAnswer if
// the message gets neither an ack nor any answer within AckTimeout.
func (s *Session) Track(now time.Time, id, typ, requestID string) error {
	if s.ended {
		return ErrEnded
	}
	s.out.add(now, s.cfg.AckTimeout, &outMsg{id: id, typ: typ, owner: owner{request: requestID}})
	return nil
}

// ParseHello checks that msg is a valid hello and returns its messageId
// and clientVersion.
func ParseHello(msg []byte) (id, clientVersion string, err error) {
	h, err := wire.DecodeHeader(msg)
	if err != nil {
		return "", "", err
	}
	if h.Type != wire.TypeHello {
		return "", "", fmt.Errorf("first message is %s, not hello", peertext.Quote(h.Type, peertext.LogBytes))
	}
	var m struct {
		ClientVersion *string `json:"clientVersion"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		// encoding/json quotes a mistyped number whole.
		return "", "", fmt.Errorf("hello: %s", peertext.Clip(err.Error(), peertext.LogBytes))
	}
	if m.ClientVersion == nil {
		return "", "", errors.New("hello without clientVersion")
	}
	return h.MessageID, *m.ClientVersion, nil
}
