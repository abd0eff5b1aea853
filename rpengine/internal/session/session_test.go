package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
)

// The tests of the core are tables of messages in and outputs out: no
// socket, no clock, no goroutine. Time is t0 plus what a step says.

var t0 = time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)

const testSID = "sid"

const unitCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`

var zeroHash = strings.Repeat("0", 64)

// harness drives one Session and writes down what comes out, one line
// per output (see line).
type harness struct {
	t    *testing.T
	s    *Session
	now  time.Time
	n    int
	card *card.Card
	got  []string
	outs []Output
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	n := 0
	cfg.ID = testSID
	if cfg.NewID == nil {
		cfg.NewID = func() string { n++; return fmt.Sprint("g", n) }
	}
	if cfg.DedupWindow == 0 {
		cfg.DedupWindow = 2000
	}
	c, err := card.Parse([]byte(unitCard))
	testutil.Success(t, err)
	h := &harness{t: t, now: t0, card: c}
	h.s = New(cfg, t0, "hello-1")
	h.drain()
	return h
}

// drain takes every output and returns their lines.
func (h *harness) drain() []string {
	var lines []string
	for {
		o, ok := h.s.Next()
		if !ok {
			break
		}
		h.outs = append(h.outs, o)
		lines = append(lines, line(o))
	}
	h.got = append(h.got, lines...)
	return lines
}

// line writes an output down: "send TYPE", "ack ID [dup] [nosession]",
// "event REQ KIND detail", "decision REQ accepted|refused|resync",
// "card HASH8", "sync N hash8|failure|resync", "capacity", "log LEVEL
// MSG", "close CODE".
func line(o Output) string {
	switch o.Kind {
	case OutSend:
		b, _ := json.Marshal(o.Payload)
		return "send " + o.Type + " " + string(b)
	case OutAck:
		s := "ack " + string(o.AckID)
		if o.Dup {
			s += " dup"
		}
		if o.NoSession {
			s += " nosession"
		}
		return s
	case OutEvent:
		return "event " + o.RequestID + " " + eventLine(o.Event)
	case OutDecision:
		return "decision " + o.RequestID + " " + [...]string{"", "accepted", "refused", "resync"}[o.Decision]
	case OutCard:
		return "card " + o.Key.CharacterID + " " + o.Hash.String()[:8]
	case OutSync:
		switch {
		case o.Decision == Resync:
			return fmt.Sprintf("sync %d resync", o.SyncID)
		case o.Failure != nil:
			return fmt.Sprintf("sync %d %s", o.SyncID, failureLine(o.Failure))
		}
		return fmt.Sprintf("sync %d %s", o.SyncID, o.Hash.String()[:8])
	case OutCapacity:
		return "capacity"
	case OutLog:
		return "log " + o.Level.String() + " " + o.Msg
	case OutClose:
		return fmt.Sprint("close ", o.Code)
	}
	return "?"
}

func eventLine(ev Event) string {
	switch ev.Kind {
	case EventText:
		return "text " + ev.Text
	case EventSegment:
		return fmt.Sprintf("segment %d %d", ev.Segment.Index, len(ev.Segment.Samples))
	case EventAudioEnd:
		return "audioEnd"
	case EventCapture:
		return "capture " + ev.Capture.State + " " + ev.Capture.Transcript
	case EventAnomaly:
		return "anomaly " + ev.Anomaly.Kind.String()
	case EventEnd:
		if ev.End.Failure != nil {
			return "end " + failureLine(ev.End.Failure)
		}
		return "end ok " + ev.End.Result.Text
	}
	return "?"
}

func failureLine(f *Failure) string {
	switch f.Kind {
	case FailEnded:
		return "ended " + f.Err.Error()
	case FailNoAnswer:
		return "noanswer " + f.Detail
	case FailEngine:
		return "engine " + f.Code + " source=" + f.SourceMessageID
	case FailCancelled:
		return "cancelled " + f.Reason
	}
	return "badanswer " + f.Detail
}

// in delivers an engine message of type typ with fields and returns the
// lines of what came out.
func (h *harness) in(typ string, fields map[string]any) []string {
	h.t.Helper()
	h.n++
	b, err := wire.Encode(typ, fmt.Sprint("e", h.n), testSID, h.now, fields)
	testutil.Success(h.t, err)
	return h.raw(b)
}

// raw delivers a message's text.
func (h *harness) raw(b []byte) []string {
	h.s.Receive(h.now, Inbound{Msg: b})
	return h.drain()
}

// request admits and sends request id for character, and returns its
// message id.
func (h *harness) request(id, character string) string {
	h.t.Helper()
	a, err := h.s.Admit(id, card.Key{IntegrationID: "g", CharacterID: character}, false)
	testutil.Success(h.t, err)
	testutil.Equal(h.t, "admission of "+id, a, AdmitOK)
	msg := "m-" + id
	testutil.Success(h.t, h.s.Send(h.now, Request{RequestID: id, Card: h.card}, msg, wire.TypeReplyRequest))
	h.drain()
	return msg
}

// wait advances the clock by d and ticks when a deadline is due.
func (h *harness) wait(d time.Duration) []string {
	h.now = h.now.Add(d)
	if dl, ok := h.s.Deadline(); ok && !h.now.Before(dl) {
		h.s.Tick(h.now)
	}
	return h.drain()
}

// only keeps the lines that start with one of the prefixes.
func only(lines []string, prefixes ...string) []string {
	var out []string
	for _, l := range lines {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func accepted(id string) map[string]any {
	return map[string]any{"requestId": id, "eventId": "e", "resolvedCardHash": zeroHash, "queueDepth": 1}
}

func capacityUpdate(depth, limit int, accepting bool) map[string]any {
	return map[string]any{"queueDepth": depth, "queueLimit": limit, "acceptingRequests": accepting}
}

func TestSession_welcome(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Acks: true, ServerVersion: "game/1.2"})
	testutil.Equal(t, "ack of hello, then welcome", h.got, []string{
		"ack hello-1 nosession",
		`send welcome {"sessionId":"sid","serverVersion":"game/1.2"}`,
	})
	testutil.Equal(t, "welcome tracked", h.s.Status("g1"), Pending)
	h = newHarness(t, Config{WelcomeExtra: map[string]any{"nextAudioSlot": 3}})
	testutil.Equal(t, "file mode's welcome, no ack", h.got, []string{`send welcome {"nextAudioSlot":3,"serverVersion":"","sessionId":"sid"}`})
	testutil.Equal(t, "the hello is a duplicate now", only(h.raw(mustEncode(t, "x.kind", "hello-1")), "log"),
		[]string{"log DEBUG rpengine: duplicate engine message dropped"})
}

func mustEncode(t *testing.T, typ, id string) []byte {
	b, err := wire.Encode(typ, id, "", t0, nil)
	testutil.Success(t, err)
	return b
}

// Acks, duplicates and the window: messages in, acks out.
func TestSession_acks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    Config
		ids    []string
		want   []string
		status []State
	}{
		{"acked once, duplicates marked", Config{Acks: true}, []string{"a", "b", "a"}, []string{"ack a", "ack b", "ack a dup"}, nil},
		{"no acks", Config{}, []string{"a", "a"}, nil, nil},
		// Window 2: a b [a dup] c (evicts a) [a new].
		{"window per session", Config{Acks: true, DedupWindow: 2}, []string{"a", "b", "a", "c", "a"},
			[]string{"ack a", "ack b", "ack a dup", "ack c", "ack a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tt.cfg)
			var got []string
			for _, id := range tt.ids {
				got = append(got, only(h.raw(mustEncode(t, "x.unknown", id)), "ack")...)
			}
			testutil.Equal(t, "acks", got, tt.want)
		})
	}
	h := newHarness(t, Config{Acks: true})
	testutil.Equal(t, "an ack is never acked", only(h.in("ack", map[string]any{"acknowledgedMessageId": "g1"}), "ack"), []string(nil))
	testutil.Equal(t, "welcome acked", h.s.Status("g1"), Acked)
	h.in("ack", map[string]any{"acknowledgedMessageId": "g1", "duplicate": true})
	testutil.Equal(t, "settled once", h.s.Status("g1"), Acked)
}

// Issue #16: messageIds are remembered by digest whatever their length,
// and an absurd one is reported once per session.
func TestSession_longMessageIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Acks: true})
	big := func(c string) string { return strings.Repeat(c, 1<<20) }
	var acks, logs []string
	for _, id := range []string{big("a"), big("b"), big("a"), "short"} {
		lines := h.raw(mustEncode(t, "future.kind", id))
		for _, l := range only(lines, "ack") {
			acks = append(acks, l[len(l)-min(len(l), 9):])
		}
		logs = append(logs, only(lines, "log WARN")...)
	}
	testutil.Equal(t, "acks", acks, []string{"aaaaaaaaa", "bbbbbbbbb", "aaaaa dup", "ack short"})
	testutil.Equal(t, "reported once", logs, []string{"log WARN rpengine: engine sent a messageId over 256 bytes; said once per session"})
}

// Messages that are not for this session, or not valid, change nothing
// and are said.
func TestSession_dropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{Acks: true})
	other, _ := wire.Encode("capacity.update", "x1", "not-"+testSID, t0, capacityUpdate(1, 20, false))
	tests := []struct {
		name string
		msg  []byte
		want []string
	}{
		{"another session", other, []string{"log WARN rpengine: dropped engine message for another session"}},
		{"not JSON", []byte(`{"protocol":`), []string{"log WARN rpengine: dropped engine message"}},
		{"malformed payload", mustEncodeFields(t, "x2", "capacity.update", `"queueDepth":"many"`), []string{"ack x2", "log WARN rpengine: dropped malformed engine message"}},
		{"second hello", mustEncode(t, "hello", "x3"), []string{"ack x3", "log WARN rpengine: closed connection", "close 1008"}},
		{"reply message for nobody", mustEncodeFields(t, "x4", "reply.text.delta", `"requestId":"nobody","sequence":0,"delta":"x"`),
			[]string{"ack x4", "log DEBUG rpengine: engine message for no pending request"}},
		{"error for nobody", mustEncodeFields(t, "x5", "request.error", `"requestId":"nobody","sourceMessageId":"nobody","code":"x"`),
			[]string{"ack x5", "log WARN rpengine: engine error for no pending request"}},
	}
	for _, tt := range tests {
		testutil.Equal(t, tt.name, h.raw(tt.msg), tt.want)
	}
	testutil.Equal(t, "capacity untouched", h.s.Capacity().Known, false)
	testutil.Equal(t, "not UTF-8 in a text frame", h.s.Receive(t0, Inbound{Msg: []byte(`{"a":"` + "\xff\"\\u0041" + `"}`), Text: true}), false)
}

// mustEncodeFields builds a message of type typ, id, with raw JSON fields.
func mustEncodeFields(t *testing.T, id, typ, fields string) []byte {
	b, err := wire.Encode(typ, id, testSID, t0, nil)
	testutil.Success(t, err)
	return append(append(b[:len(b)-1], ','), fields+"}"...)
}

// A reply from request to end: the engine's messages in, its events out.
func TestSession_reply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	m := h.request("r1", "c")
	testutil.Equal(t, "pending", h.s.Status(m), Pending)
	testutil.Equal(t, "accepted", h.in("reply.accepted", accepted("r1")),
		[]string{"card c 00000000", "decision r1 accepted", "capacity"})
	h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hel"})
	testutil.Equal(t, "delta", h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 1, "delta": "lo"}),
		[]string{"event r1 text Hello"})
	testutil.Equal(t, "conflicting delta", h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 1, "delta": "LO"}),
		[]string{"log DEBUG rpengine: reply stream anomaly", "event r1 anomaly conflicting_delta"})
	h.in("reply.text.completed", map[string]any{"requestId": "r1", "text": "Hello", "tokenCount": 3, "elapsedMs": 9,
		"extractedContent": map[string][]string{"mood": {"calm"}}})
	got := h.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text"}})
	testutil.Equal(t, "completed", got, []string{"event r1 end ok Hello", "capacity"})
	end := h.outs[len(h.outs)-2].Event.End
	testutil.Equal(t, "result", end.Result, Result{Text: "Hello", TokenCount: 3, Extracted: map[string][]string{"mood": {"calm"}}, TextElapsed: 9 * time.Millisecond})
	testutil.Equal(t, "routed no more", only(h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 2, "delta": "!"}), "log"),
		[]string{"log DEBUG rpengine: engine message for no pending request"})
}

// Issue #33: the engine's elapsedMs of reply.text.completed and
// reply.audio.completed are in the result.
func TestSession_elapsed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.request("r1", "c")
	h.in("reply.accepted", accepted("r1"))
	h.in("reply.text.completed", map[string]any{"requestId": "r1", "text": "Hi.", "tokenCount": 2, "elapsedMs": 812.5})
	h.in("reply.audio.start", map[string]any{"requestId": "r1", "format": "pcm_s16le", "sampleRate": 44100, "channels": 1})
	h.in("reply.audio.completed", map[string]any{"requestId": "r1", "chunkCount": 0, "totalBytes": 0, "segmentCount": 0, "durationSeconds": 0, "elapsedMs": 2040})
	h.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text", "audio"}})
	end := h.outs[len(h.outs)-2].Event.End
	testutil.Equal(t, "elapsed", []time.Duration{end.Result.TextElapsed, end.Result.SpeechElapsed}, []time.Duration{812500 * time.Microsecond, 2040 * time.Millisecond})
}

// Issue #16: voice.capture.* messages for a request that is not a voice
// capture are an anomaly and change nothing: not the phase, not the
// answered flag that stops the ack timeout.
func TestSession_captureEventsForAReply(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{AckTimeout: time.Minute})
	h.request("r1", "c")
	for _, typ := range []string{"voice.capture.state", "voice.capture.level", "voice.capture.transcript"} {
		testutil.Equal(t, typ, only(h.in(typ, map[string]any{"requestId": "r1", "state": "speech_ended", "text": "\x1b]0;owned\x07"}), "event"),
			[]string{"event r1 anomaly unexpected_event"})
	}
	typ, _ := h.s.ControlType("r1", false)
	testutil.Equal(t, "phase", typ, wire.TypeRequestCancel)
	testutil.Equal(t, "not answered: the ack timeout fails it", only(h.wait(time.Minute), "event"),
		[]string{"event r1 end noanswer no ack or answer to reply.request m-r1 within 1m0s"})
}

// A voice capture's status accumulates; the phase moves on to the reply
// at speech_ended.
func TestSession_capture(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	_, err := h.s.Admit("c1", card.Key{CharacterID: "c"}, false)
	testutil.Success(t, err)
	testutil.Success(t, h.s.Send(t0, Request{RequestID: "c1", Capture: true}, "m1", wire.TypeCaptureStart))
	typ, _ := h.s.ControlType("c1", false)
	testutil.Equal(t, "cancel while listening", typ, wire.TypeCaptureCancel)
	h.in("voice.capture.state", map[string]any{"requestId": "c1", "state": "listening", "autoEndEnabled": true})
	h.in("voice.capture.level", map[string]any{"requestId": "c1", "seconds": 0.5, "peak": 0.5, "rms": 0.05})
	h.in("voice.capture.state", map[string]any{"requestId": "c1", "state": "speech_ended", "seconds": 0.6})
	h.in("voice.capture.transcript", map[string]any{"requestId": "c1", "text": "Hello.", "language": "en"})
	testutil.Equal(t, "statuses", only(h.got, "event"), []string{"event c1 capture listening ", "event c1 capture listening ",
		"event c1 capture speech_ended ", "event c1 capture speech_ended Hello."})
	last := h.outs[len(h.outs)-1].Event.Capture
	testutil.Equal(t, "accumulated", last, CaptureStatus{State: "speech_ended", Elapsed: 600 * time.Millisecond, Peak: 0.5, RMS: 0.05, Transcript: "Hello.", Language: "en"})
	typ, _ = h.s.ControlType("c1", false)
	testutil.Equal(t, "cancel once replying", typ, wire.TypeRequestCancel)
	typ, _ = h.s.ControlType("c1", true)
	testutil.Equal(t, "stop", typ, wire.TypeCaptureStop)
}

// The ack timeout fails a request that got neither an ack nor an answer;
// an acked one is left to its idle timeout.
func TestSession_ackTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{AckTimeout: 15 * time.Second})
	m := h.request("r1", "c")
	testutil.Equal(t, "nothing at 14 s", h.wait(14*time.Second), []string(nil))
	testutil.Equal(t, "fails at 15 s", only(h.wait(time.Second), "event"), []string{"event r1 end noanswer no ack or answer to reply.request m-r1 within 15s"})
	testutil.Equal(t, "unacked", h.s.Status(m), Unacked)

	h = newHarness(t, Config{AckTimeout: time.Second})
	m = h.request("r1", "c")
	h.in("ack", map[string]any{"acknowledgedMessageId": m})
	testutil.Equal(t, "acked", h.s.Status(m), Acked)
	testutil.Equal(t, "no deadline left", h.wait(time.Hour), []string(nil))
	_, due := h.s.Deadline()
	testutil.Equal(t, "no deadline", due, false)
}

// The idle timeout: while the engine has not started a reply, any engine
// message keeps it waiting; once it is producing, only its own.
func TestSession_idleTimeout(t *testing.T) {
	t.Parallel()
	for _, acceptedFirst := range []bool{false, true} {
		h := newHarness(t, Config{IdleTimeout: time.Minute})
		m := h.request("r1", "c")
		h.in("ack", map[string]any{"acknowledgedMessageId": m})
		if acceptedFirst {
			h.in("reply.accepted", accepted("r1"))
		}
		for range 12 {
			testutil.Equal(t, "queued: kept alive", only(h.wait(50*time.Second), "event"), []string(nil))
			h.in("capacity.update", capacityUpdate(1, 20, true))
		}
		h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hel"})
		h.wait(59 * time.Second)
		h.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 1, "delta": "lo"})
		h.in("capacity.update", capacityUpdate(1, 20, true)) // another message: no longer counts
		testutil.Equal(t, "active, its messages flowing", only(h.wait(59*time.Second), "event"), []string(nil))
		testutil.Equal(t, "silent a minute", only(h.wait(time.Second), "event", "send"), []string{
			"event r1 end noanswer reply r1 silent for 1m0s", `send request.cancel {"requestId":"r1"}`})
	}
}

// Issue #9: a request the engine accepted (or only acked) and then never
// started, with the engine silent, fails after IdleTimeout.
func TestSession_idleTimeoutWhileWaiting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{IdleTimeout: time.Minute})
	h.request("r1", "c")
	h.in("reply.accepted", accepted("r1"))
	testutil.Equal(t, "59 s", h.wait(59*time.Second), []string(nil))
	testutil.Equal(t, "60 s", only(h.wait(time.Second), "event", "send"), []string{
		"event r1 end noanswer reply r1 silent for 1m0s", `send request.cancel {"requestId":"r1"}`})
}

// An invalid_payload carries no ids: it is the oldest message the engine
// has not acked, over one ordered connection the one it refused.
func TestSession_invalidPayloadAttribution(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.in("ack", map[string]any{"acknowledgedMessageId": "g1"}) // welcome
	m1 := h.request("r1", "c")
	h.in("ack", map[string]any{"acknowledgedMessageId": m1})
	m2 := h.request("r2", "d")
	got := h.in("request.error", map[string]any{"code": "invalid_payload", "message": "Missing RPEngine eventId."})
	testutil.Equal(t, "r2 refused", only(got, "event"), []string{"event r2 end engine invalid_payload source=m-r2"})
	testutil.Equal(t, "request", h.outs[len(h.outs)-2].Event.End.Failure.RequestID, "r2")
	testutil.Equal(t, "rejected", h.s.Status(m2), Rejected)
	testutil.Equal(t, "r1 untouched", h.s.Status(m1), Acked)
}

// Issue #15: the gate counts the requests sent that the last
// capacity.update does not show yet, until an update that follows their
// reply.accepted, or until they end; before the first update upstream's
// limit of 20 is assumed; one character's requests wait for the previous
// one's reply.accepted.
func TestSession_gate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	admit := func(id, character string) Admission {
		a, err := h.s.Admit(id, card.Key{IntegrationID: "g", CharacterID: character}, false)
		testutil.Success(t, err)
		return a
	}
	for i := range 20 {
		h.request(fmt.Sprint("a", i), fmt.Sprint("c", i))
	}
	testutil.Equal(t, "21st before any update", admit("x", "cx"), AdmitFull)
	h.in("capacity.update", capacityUpdate(0, 30, true))
	testutil.Equal(t, "room once the engine says so", admit("x", "cx"), AdmitOK)

	h = newHarness(t, Config{})
	h.in("capacity.update", capacityUpdate(18, 20, true))
	h.request("r1", "a")
	h.request("r2", "b")
	testutil.Equal(t, "18 + 2 in flight", admit("r3", "c"), AdmitFull)
	testutil.Equal(t, "the same character", admit("r1b", "a"), AdmitHeld)
	h.in("reply.accepted", accepted("r1"))
	h.in("capacity.update", capacityUpdate(19, 20, true))
	testutil.Equal(t, "19 + 1", admit("r3", "c"), AdmitFull)
	testutil.Equal(t, "r2 ends before it was accepted", only(h.in("request.error",
		map[string]any{"requestId": "r2", "sourceMessageId": "m-r2", "code": "duplicate_request", "message": "no"}), "event", "capacity"),
		[]string{"event r2 end engine duplicate_request source=m-r2", "capacity"})
	testutil.Equal(t, "19 + 0", admit("r3", "c"), AdmitOK)
	_, err := h.s.Admit("r3", card.Key{IntegrationID: "g", CharacterID: "c"}, false)
	testutil.ErrorIs(t, err, ErrDuplicateRequest)

	h = newHarness(t, Config{})
	h.in("capacity.update", capacityUpdate(0, 20, false))
	testutil.Equal(t, "not accepting", admit("r1", "a"), AdmitFull)
	h.s.End(errors.New("gone"))
	testutil.Equal(t, "ended", admit("r1", "a"), AdmitEnded)
}

// Issue #15, item 2: a capacity_exceeded before reply.accepted goes back
// to the call, which retries first; the character stays held meanwhile.
func TestSession_refusedKeepsCharacter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	key := card.Key{IntegrationID: "g", CharacterID: "a"}
	h.in("capacity.update", capacityUpdate(0, 20, true))
	h.request("r1", "a")
	got := h.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": "m-r1", "code": "capacity_exceeded", "message": "full", "retryable": true})
	testutil.Equal(t, "refused", only(got, "decision"), []string{"decision r1 refused"})
	a, _ := h.s.Admit("r2", key, false)
	testutil.Equal(t, "r2 waits for r1", a, AdmitHeld)
	a, _ = h.s.Admit("r1", key, true)
	testutil.Equal(t, "full until the next update", a, AdmitFull)
	h.in("capacity.update", capacityUpdate(0, 20, true))
	a, _ = h.s.Admit("r1", key, true)
	testutil.Equal(t, "r1 retried first", a, AdmitOK)
	testutil.Success(t, h.s.Send(h.now, Request{RequestID: "r1"}, "m-r1b", wire.TypeReplyRequest))
	h.in("reply.accepted", accepted("r1"))
	a, _ = h.s.Admit("r2", key, false)
	testutil.Equal(t, "r2 after r1's reply.accepted", a, AdmitOK)
}

// card_resync_required before reply.accepted goes back to the call;
// after it, it fails the reply.
func TestSession_resync(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.request("r1", "c")
	resync := map[string]any{"requestId": "r1", "sourceMessageId": "m-r1", "code": "card_resync_required", "message": "no", "retryable": true}
	testutil.Equal(t, "back to the call", only(h.in("request.error", resync), "decision", "event"), []string{"decision r1 resync"})
	h.in("reply.accepted", accepted("r1"))
	testutil.Equal(t, "after reply.accepted it ends the reply", only(h.in("request.error", resync), "decision", "event"),
		[]string{"event r1 end engine card_resync_required source=m-r1"})
}

func TestSession_cancelled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.request("r1", "c")
	testutil.Equal(t, "cancelled", only(h.in("reply.cancelled", map[string]any{"requestId": "r1", "reason": "connection_lost"}), "event"),
		[]string{"event r1 end cancelled connection_lost"})
	h.request("r2", "c")
	h.s.Abort(h.now, "r2", wire.TypeRequestCancel)
	testutil.Equal(t, "aborted: cancelled on the engine, no event", h.drain(), []string{"capacity", `send request.cancel {"requestId":"r2"}`})
}

// Character syncs: the answer ends the call, a resync goes back to it,
// silence fails it.
func TestSession_sync(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{AckTimeout: 5 * time.Second, IdleTimeout: time.Minute})
	key := card.Key{CharacterID: "s"}
	testutil.Success(t, h.s.Sync(h.now, 1, key, h.card, "sync-1"))
	got := h.in("character.synced", map[string]any{"sourceMessageId": "sync-1", "targetHash": zeroHash})
	testutil.Equal(t, "synced", got, []string{"card s 00000000", "sync 1 00000000"})
	testutil.Success(t, h.s.Sync(h.now, 2, key, h.card, "sync-2"))
	testutil.Equal(t, "resync", h.in("request.error", map[string]any{"sourceMessageId": "sync-2", "code": "card_resync_required"}), []string{"sync 2 resync"})
	testutil.Success(t, h.s.Sync(h.now, 2, key, h.card, "sync-2b"))
	testutil.Equal(t, "bad hash", h.in("character.synced", map[string]any{"sourceMessageId": "sync-2b", "targetHash": "x"}),
		[]string{`sync 2 badanswer engine sent a bad targetHash "x"`})
	testutil.Success(t, h.s.Sync(h.now, 3, key, h.card, "sync-3"))
	testutil.Equal(t, "no ack", h.wait(5*time.Second), []string{"sync 3 noanswer no ack or answer to character.sync sync-3 within 5s"})
	testutil.Success(t, h.s.Sync(h.now, 4, key, h.card, "sync-4"))
	h.in("ack", map[string]any{"acknowledgedMessageId": "sync-4"})
	testutil.Equal(t, "acked, never answered", h.wait(time.Minute), []string{"sync 4 noanswer no answer to character.sync within 1m0s"})
}

// The end of the session ends every request.
func TestSession_end(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{})
	h.request("r1", "c")
	_, err := h.s.Admit("r2", card.Key{CharacterID: "d"}, false) // admitted, not sent
	testutil.Success(t, err)
	testutil.Success(t, h.s.Sync(h.now, 1, card.Key{CharacterID: "s"}, h.card, "sync-1"))
	h.s.End(errors.New("lost"))
	got := h.drain()
	slices.Sort(got)
	testutil.Equal(t, "ended", got, []string{"capacity", "capacity", "event r1 end ended lost", "sync 1 ended lost"})
	testutil.ErrorIs(t, h.s.Send(h.now, Request{RequestID: "r2"}, "m", wire.TypeReplyRequest), ErrEnded)
	testutil.Equal(t, "nothing more", h.in("capacity.update", capacityUpdate(0, 20, true)), []string(nil))
}

// File mode: whole segments, their answer, and the totals checked as the
// engine computes them.
func TestSession_segments(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{WholeSegments: true})
	h.request("r1", "c")
	seg := func(seq int, err error) *FileSegment {
		return &FileSegment{Sequence: seq, Rate: 44100, Speech: make([]int16, 441), Err: err,
			AnswerType: "reply.audio.segment.consumed", Answer: map[string]int{"segmentSequence": seq}}
	}
	deliver := func(requestID string, sg *FileSegment) []string {
		h.n++
		b, _ := wire.Encode("reply.audio.segment", fmt.Sprint("s", h.n), testSID, h.now, map[string]any{"requestId": requestID})
		h.s.Receive(h.now, Inbound{Msg: b, File: sg})
		return h.drain()
	}
	testutil.Equal(t, "taken and answered", deliver("r1", seg(0, nil)), []string{"event r1 segment 0 441", `send reply.audio.segment.consumed {"segmentSequence":0}`})
	// Issue #31: a refused segment is given back too (it stayed
	// unconsumed in the engine's folder).
	testutil.Equal(t, "refused: an anomaly, and answered", deliver("r1", seg(1, errors.New("bad slot"))),
		[]string{"log WARN rpengine: dropped reply.audio.segment", "event r1 anomaly invalid_chunk", `send reply.audio.segment.consumed {"segmentSequence":1}`})
	testutil.Equal(t, "offset", h.outs[len(h.outs)-2].Event.Anomaly.Segment, 1)
	deliver("r1", seg(1, nil))
	testutil.Equal(t, "second offset", h.outs[len(h.outs)-2].Event.Segment.Offset, 10*time.Millisecond)
	got := h.in("reply.audio.completed", map[string]any{"requestId": "r1", "chunkCount": 2, "totalBytes": 1764, "segmentCount": 2, "durationSeconds": 0.02, "elapsedMs": 1500})
	testutil.Equal(t, "totals as computed", only(got, "event"), []string{"event r1 audioEnd"})
	testutil.Equal(t, "a repeat that differs", only(h.in("reply.audio.completed", map[string]any{"requestId": "r1", "chunkCount": 2, "totalBytes": 1764,
		"segmentCount": 2, "durationSeconds": 0.02, "elapsedMs": 99}), "event"), []string{"event r1 anomaly conflicting_message"})
	h.in("reply.completed", map[string]any{"requestId": "r1", "modalities": []string{"text", "audio"}})
	testutil.Equal(t, "the first elapsedMs", h.outs[len(h.outs)-2].Event.End.Result.SpeechElapsed, 1500*time.Millisecond)
	testutil.Equal(t, "orphan still answered", deliver("nobody", seg(5, nil)), []string{`send reply.audio.segment.consumed {"segmentSequence":5}`})
	testutil.Equal(t, "orphan without a slot of ours", deliver("nobody", &FileSegment{}), []string{"log DEBUG rpengine: engine message for no pending request"})
}

// Time goes in: Deadline is what Tick waits for, and nothing happens
// before it.
func TestSession_Deadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{AckTimeout: 15 * time.Second, IdleTimeout: time.Minute})
	dl, ok := h.s.Deadline()
	testutil.Equal(t, "welcome's ack", []any{dl, ok}, []any{t0.Add(15 * time.Second), true})
	h.in("ack", map[string]any{"acknowledgedMessageId": "g1"})
	_, ok = h.s.Deadline()
	testutil.Equal(t, "none", ok, false)
	h.now = h.now.Add(time.Second)
	m := h.request("r1", "c")
	h.in("ack", map[string]any{"acknowledgedMessageId": m})
	dl, _ = h.s.Deadline()
	testutil.Equal(t, "idle", dl, t0.Add(61*time.Second))
	h.s.Tick(t0.Add(60 * time.Second))
	testutil.Equal(t, "early tick", h.drain(), []string(nil))
	_ = slog.LevelInfo
}

// FuzzParseHello checks the first message of a connection.
func FuzzParseHello(f *testing.F) {
	for _, s := range []string{
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"m","timestamp":"t","clientVersion":"x"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"m","timestamp":"t"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"ack","messageId":"m","timestamp":"t","clientVersion":"x"}`,
		`{"protocol":"gemtavern.rp_engine","protocolVersion":3.0,"type":"hello","messageId":"m","timestamp":"t","clientVersion":"x"}`,
		`{"clientVersion":null}`, `[]`, ``, `{"protocol":"gemtavern.rp_engine","protocolVersion":3,"type":"hello","messageId":"m","timestamp":"t","clientVersion":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, v, err := ParseHello(data)
		if err != nil {
			return
		}
		h, herr := wire.DecodeHeader(data)
		if herr != nil || h.Type != wire.TypeHello || h.MessageID == "" {
			t.Fatalf("accepted hello %q with header %+v, %v", data, h, herr)
		}
		var m struct {
			ClientVersion *string `json:"clientVersion"`
		}
		if json.Unmarshal(data, &m) != nil || m.ClientVersion == nil || *m.ClientVersion != v {
			t.Fatalf("clientVersion %q from %q", v, data)
		}
	})
}
