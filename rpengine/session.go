package rpengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gamelink-go/gamelink/internal/errd"
	"github.com/gamelink-go/gamelink/internal/jsonl"
	"github.com/gamelink-go/gamelink/internal/peertext"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// maxMessageIDBytes is the longest messageId that is not reported as
// absurd: ids are UUIDs (36 bytes) on both sides.
const maxMessageIDBytes = 256

// owner is what an outbound message belongs to: a reply or a character
// sync. Its methods may be called from any goroutine.
type owner interface {
	// answered reports whether the engine answered the request at all.
	answered() bool
	// fail ends the request with err (idempotent).
	fail(err error)
}

// outMsg is an outbound message awaiting its ack.
type outMsg struct {
	id, typ string
	owner   owner
	timer   *time.Timer
}

// session is one engine session: everything between a welcome and the end
// of its connection. It is transport-independent (see transport).
type session struct {
	srv  *Server
	t    transport
	w    *writer // writes to t on a goroutine of its own (writer.go)
	info SessionInfo
	log  *slog.Logger
	acks bool
	// overflowed says the writer's queue overflowed (reported once).
	overflowed sync.Once

	// longID says an absurd messageId was reported; reader goroutine only.
	longID bool

	mu      sync.Mutex // guards following
	window  *wire.Window
	out     map[string]*outMsg // pending outbound messages by messageId
	order   []*outMsg          // pending outbound messages in send order (lazily trimmed)
	settled map[string]messageState
	ring    []string // settled ids, oldest first, bounded by DedupWindow
	replies map[string]*Reply
	syncs   map[string]*syncOp // by the messageId of their current attempt
	// accepted are the cards the engine accepted (reply.accepted,
	// character.synced) that the planner has not learnt yet: the reader
	// records them here and the next plan applies them, so the reader
	// never waits for a plan (issue #17: a large card's cold plan takes
	// milliseconds). At most one per request in flight.
	accepted map[card.Key]acceptance
	capacity capacity
	gate     sessionGate // capacity gate (gate.go)
	ended    error

	pmu     sync.Mutex // guards planner; taken by requests, never by the reader
	planner *card.Planner
}

// acceptance is a card the engine accepted, with the hash it reported.
type acceptance struct {
	card *card.Card
	hash card.Digest
}

func newSession(srv *Server, t transport, info SessionInfo) *session {
	s := &session{
		srv:      srv,
		t:        t,
		w:        newWriter(t, srv.opts.WriteTimeout),
		info:     info,
		log:      srv.opts.Logger.With("session", info.ID),
		acks:     !srv.opts.DisableAcks || t.mustAck(),
		window:   wire.NewWindow(srv.opts.DedupWindow),
		out:      make(map[string]*outMsg),
		settled:  make(map[string]messageState),
		replies:  make(map[string]*Reply),
		syncs:    make(map[string]*syncOp),
		accepted: make(map[card.Key]acceptance),
		planner:  card.NewPlanner(srv.opts.Planner),
	}
	return s
}

type welcomePayload struct {
	SessionID     string `json:"sessionId"`
	ServerVersion string `json:"serverVersion"`
}

// welcome acks the hello (when acks are on) and sends welcome.
func (s *session) welcome(helloID string) error {
	if s.acks {
		// The ack of hello goes before welcome and without a sessionId:
		// the engine does not know the session yet.
		s.sendAck(wire.AppendAck(s.w.buffer(), helloID, false, "", time.Now()))
	}
	var payload any = welcomePayload{SessionID: s.info.ID, ServerVersion: s.srv.opts.ServerVersion}
	if extra := s.t.welcomeExtra(); extra != nil {
		m := map[string]any{"sessionId": s.info.ID, "serverVersion": s.srv.opts.ServerVersion}
		for k, v := range extra {
			m[k] = v
		}
		payload = m
	}
	_, err := s.send(wire.TypeWelcome, payload, nil)
	return err
}

// requestName names what a game sends in a message of a type, for a
// *FieldError about the message as a whole.
var requestName = map[string]string{wire.TypeReplyRequest: "ReplyRequest", wire.TypeCaptureStart: "CaptureRequest", wire.TypeCharacterSync: "Card"}

// send encodes one tracked message and waits until it is written. owner,
// when not nil, is failed with ErrNoAnswer if the message gets neither an
// ack nor any answer within AckTimeout.
func (s *session) send(typ string, payload any, o owner) (string, error) {
	return s.sendRegistered(typ, payload, o, nil, true)
}

// post is send without waiting for the write: the reader's (and timers')
// way to answer the engine (see writer).
func (s *session) post(typ string, payload any) {
	_, _ = s.sendRegistered(typ, payload, nil, nil, false)
}

// sendRegistered is send, or post when wait is false; reg, when not nil,
// runs with s.mu held and the new messageId before the message is queued,
// so an answer cannot overtake the registration. An error from reg aborts
// the send. Messages are queued in the order they are registered, so the
// oldest pending message is the oldest written.
func (s *session) sendRegistered(typ string, payload any, o owner, reg func(id string) error, wait bool) (string, error) {
	id := wire.NewID()
	b, err := wire.Encode(typ, id, s.info.ID, time.Now(), payload)
	if err != nil {
		return "", fmt.Errorf("rpengine: encode %s: %w", typ, err)
	}
	if len(b) > wire.MaxMessageBytes {
		return "", &FieldError{Field: requestName[typ], Reason: fmt.Sprintf("%s is %d bytes, over the 8 MiB limit", typ, len(b))}
	}
	m := &outMsg{id: id, typ: typ, owner: o}
	s.mu.Lock()
	if s.ended != nil {
		err := s.ended
		s.mu.Unlock()
		return "", err
	}
	if reg != nil {
		if err := reg(id); err != nil {
			s.mu.Unlock()
			return "", err
		}
	}
	s.out[id] = m
	s.order = append(s.order, m)
	if d := s.srv.opts.AckTimeout; d > 0 {
		m.timer = time.AfterFunc(d, func() { s.ackExpired(m) })
	}
	s.trimLocked()
	s.srv.rec.Record(jsonl.Out, b)
	if !wait {
		ok := s.w.post(b)
		s.mu.Unlock()
		if !ok {
			s.overflow()
		}
		return id, nil
	}
	done := s.w.enqueue(b)
	s.mu.Unlock()
	if err := <-done; err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return id, fmt.Errorf("%w: write %s: %w", ErrConnectionLost, typ, we.err)
		}
		return id, err
	}
	return id, nil
}

// overflow closes a connection whose engine stopped reading (see writer).
func (s *session) overflow() {
	s.overflowed.Do(func() {
		s.log.Warn("rpengine: closed connection", "reason", errNotReading.Error())
		s.t.close(closePolicy, "the engine is not reading")
	})
}

// trimLocked drops settled messages from the front of order and bounds
// the pending set when acks never come and AckTimeout is disabled.
func (s *session) trimLocked() {
	for len(s.order) > 0 && s.out[s.order[0].id] != s.order[0] {
		s.order[0] = nil
		s.order = s.order[1:]
	}
	for len(s.order) > s.srv.opts.DedupWindow {
		s.settleLocked(s.order[0], messageUnacked)
		s.order = s.order[1:]
	}
}

// settleLocked records the final state of a pending message.
func (s *session) settleLocked(m *outMsg, st messageState) {
	if s.out[m.id] != m {
		return
	}
	delete(s.out, m.id)
	if m.timer != nil {
		m.timer.Stop()
	}
	s.settled[m.id] = st
	s.ring = append(s.ring, m.id)
	if len(s.ring) > s.srv.opts.DedupWindow {
		delete(s.settled, s.ring[0])
		s.ring = s.ring[1:]
	}
}

// sendAck posts ack, an encoded ack in a buffer from s.w.buffer, which
// the writer reuses once it is written (see writer).
func (s *session) sendAck(ack []byte) {
	s.srv.rec.Record(jsonl.Out, ack)
	if !s.w.postReusable(ack) {
		s.overflow()
	}
}

func (s *session) ackExpired(m *outMsg) {
	s.mu.Lock()
	pending := s.out[m.id] == m
	s.settleLocked(m, messageUnacked)
	s.mu.Unlock()
	if pending && m.owner != nil && !m.owner.answered() {
		m.owner.fail(fmt.Errorf("%w: no ack or answer to %s %s within %v", ErrNoAnswer, m.typ, m.id, s.srv.opts.AckTimeout))
	}
}

func (s *session) status(id string) messageState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.out[id]; ok {
		return messagePending
	}
	return s.settled[id]
}

// snapshot returns the session's info with the engine's queue as of now.
func (s *session) snapshot() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.info
	info.Accepting = true // as the gate takes it before the first update
	if c := s.capacity; c.Known {
		info.QueueDepth, info.QueueLimit, info.Accepting = c.QueueDepth, c.QueueLimit, c.AcceptingRequests
	}
	return info
}

// receive handles one inbound message after the handshake. It is called
// by the transport's reader goroutine only.
func (s *session) receive(data []byte) {
	env, err := wire.DecodeEnvelope(data)
	s.handle(data, env, err)
}

// receiveText is receive for a transport whose messages must be valid
// UTF-8 (WebSocket text frames): it reports false, and handles nothing,
// when data is not. A message the envelope decoder read as plain JSON
// text was checked byte by byte already, so an audio chunk's 44 KB are
// not read again.
func (s *session) receiveText(data []byte) bool {
	env, err := wire.DecodeEnvelope(data)
	if !env.Checked && !utf8.Valid(data) {
		return false
	}
	s.handle(data, env, err)
	return true
}

// handle processes an inbound message whose envelope is env, or err when
// it was refused. env aliases data, which the reader reuses.
func (s *session) handle(data []byte, env wire.Envelope, err error) {
	s.srv.rec.Record(jsonl.In, data)
	if err != nil {
		s.log.Warn("rpengine: dropped engine message", "reason", peertext.Clip(err.Error(), peertext.LineBytes))
		return
	}
	typ := wire.TypeOf(env.Type)
	if env.SessionID != nil && string(env.SessionID) != s.info.ID {
		s.log.Warn("rpengine: dropped engine message for another session", "type", peertext.Clip(typ, peertext.LogBytes),
			"messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes), "sessionId", peertext.Clip(string(env.SessionID), peertext.LogBytes))
		return
	}
	if len(env.MessageID) > maxMessageIDBytes && !s.longID {
		// Accepted (the engine decides what an id is) and remembered by
		// digest like any other; said once, as an engine sending such ids
		// is broken or hostile (issue #16).
		s.longID = true
		s.log.Warn("rpengine: engine sent a messageId over 256 bytes; said once per session", "type", peertext.Clip(typ, peertext.LogBytes),
			"bytes", len(env.MessageID), "messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes))
	}
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	dup := s.window.SeenBytes(env.MessageID)
	s.mu.Unlock()
	if typ != wire.TypeAck && s.acks {
		s.sendAck(wire.AppendAck(s.w.buffer(), env.MessageID, dup, s.info.ID, time.Now()))
	}
	if dup {
		s.log.Debug("rpengine: duplicate engine message dropped", "type", peertext.Clip(typ, peertext.LogBytes), "messageId", peertext.Clip(string(env.MessageID), peertext.LogBytes))
		return
	}
	s.touchWaiting()
	s.dispatch(typ, env.RequestID, data)
}

// touchWaiting tells every reply the engine has not started yet that the
// engine is alive (see Reply.touchWaiting).
func (s *session) touchWaiting() {
	var buf [32]*Reply
	rs := buf[:0]
	s.mu.Lock()
	for _, r := range s.replies {
		rs = append(rs, r)
	}
	s.mu.Unlock()
	for _, r := range rs {
		r.touchWaiting()
	}
}

// dispatch routes one new engine message of type typ; requestID aliases
// data.
func (s *session) dispatch(typ string, requestID, data []byte) {
	switch typ {
	case wire.TypeAck:
		var a wire.Ack
		if s.decode(typ, data, &a) {
			s.onAck(a)
		}
	case wire.TypeHello:
		s.log.Warn("rpengine: closed connection", "reason", "second hello")
		s.t.close(closePolicy, "second hello on one connection")
	case wire.TypeCapacity:
		var c capacity
		if s.decode(typ, data, &c) {
			c.Known = true
			s.mu.Lock()
			s.capacity = c
			s.gateCapacityLocked()
			s.mu.Unlock()
			s.srv.notify()
		}
	case wire.TypeCharacterSynced:
		var m syncedPayload
		if s.decode(typ, data, &m) {
			s.onSynced(m)
		}
	case wire.TypeRequestError:
		var f wire.Failed
		if s.decode(typ, data, &f) {
			s.onError(&f, data)
		}
	default:
		if len(requestID) == 0 {
			s.log.Debug("rpengine: ignored engine message", "type", peertext.Clip(typ, peertext.LogBytes))
			return
		}
		s.mu.Lock()
		r := s.replies[string(requestID)]
		s.mu.Unlock()
		if r != nil {
			r.handle(typ, data)
			return
		}
		s.log.Debug("rpengine: engine message for no pending request", "type", peertext.Clip(typ, peertext.LogBytes), "requestId", peertext.Clip(string(requestID), peertext.LogBytes))
	}
}

func (s *session) decode(typ string, data []byte, v any) bool {
	if err := json.Unmarshal(data, v); err != nil {
		s.log.Warn("rpengine: dropped malformed engine message", "type", peertext.Clip(typ, peertext.LogBytes),
			"reason", peertext.Clip(err.Error(), peertext.LogBytes))
		return false
	}
	return true
}

func (s *session) onAck(a wire.Ack) {
	st := messageAcked
	if a.Duplicate {
		st = messageDuplicate
	}
	s.mu.Lock()
	if m := s.out[a.AcknowledgedMessageID]; m != nil {
		s.settleLocked(m, st)
	}
	s.mu.Unlock()
}

// onError routes a request.error: by requestId to a reply, by
// sourceMessageId to a sync or reply, and otherwise (invalid_payload,
// which carries neither) to the oldest message the engine has not acked:
// over one ordered connection that is the one it refused.
func (s *session) onError(f *wire.Failed, data []byte) {
	if f.RequestID != nil && *f.RequestID != "" {
		if r := s.reply(*f.RequestID); r != nil {
			r.handleError(f, data)
			return
		}
	}
	s.mu.Lock()
	var o owner
	var m *outMsg
	if f.SourceMessageID != "" {
		if op := s.syncs[f.SourceMessageID]; op != nil {
			s.mu.Unlock()
			op.handleError(f)
			return
		}
		if m = s.out[f.SourceMessageID]; m != nil {
			o = m.owner
		}
	} else {
		s.trimLocked()
		if len(s.order) > 0 {
			m = s.order[0]
			o = m.owner
			s.settleLocked(m, messageRejected)
		}
	}
	s.mu.Unlock()
	if o == nil {
		s.log.Warn("rpengine: engine error for no pending request", "code", peertext.Clip(f.Code, peertext.LogBytes), "message", peertext.Clip(f.Message, peertext.LogBytes))
		return
	}
	err := &RequestError{Code: f.Code, Message: f.Message, Retryable: f.Retryable, SourceMessageID: m.id}
	if r, ok := o.(*Reply); ok {
		err.RequestID = r.id
	}
	o.fail(err)
}

func (s *session) reply(id string) *Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replies[id]
}

func (s *session) addReply(r *Reply) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != nil {
		return s.ended
	}
	if _, ok := s.replies[r.id]; ok {
		return &FieldError{Field: "requestId", Reason: fmt.Sprintf("%q is already active", r.id)}
	}
	s.replies[r.id] = r
	return nil
}

func (s *session) removeReply(r *Reply) {
	s.mu.Lock()
	if s.replies[r.id] == r {
		delete(s.replies, r.id)
	}
	s.mu.Unlock()
	s.gateRelease(r)
}

// Card planner access. The planner is not safe for concurrent use and a
// plan can take milliseconds, so it has a lock of its own, which the
// requests' goroutines take and the reader never does.

// plan returns the transfer for card c under key k.
func (s *session) plan(k card.Key, c *card.Card) (card.Transfer, error) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.learnLocked()
	return s.planner.Plan(k, c)
}

// resync returns the transfer to retry with after the engine's
// card_resync_required (rerr), the retries'th time for this request: past
// maxResyncs it is ErrResyncLoop, and a planner error carries rerr.
func (s *session) resync(k card.Key, c *card.Card, sent card.Transfer, retries int, rerr *RequestError) (card.Transfer, error) {
	if retries >= maxResyncs {
		return card.Transfer{}, errd.Chain(fmt.Errorf("%w after %d retries", ErrResyncLoop, retries), rerr)
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.learnLocked()
	t, err := s.planner.Resync(k, c, sent)
	if err != nil {
		return card.Transfer{}, fmt.Errorf("%w (engine: %w)", err, rerr)
	}
	return t, nil
}

// learnLocked tells the planner what the engine accepted since the last
// plan. s.pmu must be held.
func (s *session) learnLocked() {
	s.mu.Lock()
	if len(s.accepted) == 0 {
		s.mu.Unlock()
		return
	}
	learnt := s.accepted
	s.accepted = make(map[card.Key]acceptance)
	s.mu.Unlock()
	for k, a := range learnt {
		s.planner.Accepted(k, a.card, a.hash)
	}
}

// cardAccepted records that the engine holds c under k with hash h; the
// next plan learns it. Reader goroutine.
func (s *session) cardAccepted(k card.Key, c *card.Card, h card.Digest) {
	s.mu.Lock()
	s.accepted[k] = acceptance{c, h}
	s.mu.Unlock()
}

// end finishes the session: every pending request fails with err. It is
// idempotent.
func (s *session) end(err error) {
	s.mu.Lock()
	if s.ended != nil {
		s.mu.Unlock()
		return
	}
	s.ended = err
	s.w.stop(err)
	for _, m := range s.out {
		if m.timer != nil {
			m.timer.Stop()
		}
	}
	replies := make([]*Reply, 0, len(s.replies))
	for _, r := range s.replies {
		replies = append(replies, r)
	}
	syncs := make([]*syncOp, 0, len(s.syncs))
	for _, op := range s.syncs {
		syncs = append(syncs, op)
	}
	s.replies, s.syncs = map[string]*Reply{}, map[string]*syncOp{}
	s.mu.Unlock()
	for _, r := range replies {
		r.fail(err)
	}
	for _, op := range syncs {
		op.fail(err)
	}
	if h := s.srv.endHook; h != nil {
		h()
	}
	s.srv.detach(s)
}
