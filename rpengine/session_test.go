package rpengine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamelink-go/gamelink/internal/testutil"
	"github.com/gamelink-go/gamelink/rpengine/card"
	"github.com/gamelink-go/gamelink/rpengine/internal/wire"
	"github.com/gamelink-go/gamelink/rpengine/stream"
)

// fakeTransport records what the session sends.
type fakeTransport struct {
	mu     sync.Mutex
	sent   [][]byte
	closed int
}

func (f *fakeTransport) send(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, append([]byte(nil), b...))
	return nil
}
func (f *fakeTransport) close(code int, _ string) {
	f.mu.Lock()
	f.closed = code
	f.mu.Unlock()
}
func (*fakeTransport) mustAck() bool                { return false }
func (*fakeTransport) welcomeExtra() map[string]any { return nil }

// messages returns the sent messages of type typ, decoded.
func (f *fakeTransport) messages(typ string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.sent {
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

const unitCard = `{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"Ari","description":"","personality":"","scenario":"","first_mes":"","mes_example":"","creator_notes":"","system_prompt":"","post_history_instructions":"","creator":"","character_version":"","alternate_greetings":[],"tags":[],"extensions":{}}}`

type unit struct {
	t    *testing.T
	srv  *Server
	ft   *fakeTransport
	sess *session
	card *card.Card
	n    int
}

func newUnit(t *testing.T, opts *ServerOptions) *unit {
	if opts == nil {
		opts = &ServerOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	srv, err := NewServer(opts)
	testutil.Success(t, err)
	ft := &fakeTransport{}
	srv.mu.Lock()
	srv.handshake++
	srv.mu.Unlock()
	sess, err := srv.attach(ft, "hello-1", "test")
	testutil.Success(t, err)
	t.Cleanup(func() { srv.Close() }) // ends the session and its writer
	c, err := card.Parse([]byte(unitCard))
	testutil.Success(t, err)
	return &unit{t: t, srv: srv, ft: ft, sess: sess, card: c}
}

// recv delivers an engine message and waits until what the session
// posted in answer (acks) is written.
func (u *unit) recv(b []byte) {
	u.sess.receive(b)
	<-u.sess.w.drained()
}

// in delivers an engine message with the given fields.
func (u *unit) in(typ string, fields map[string]any) string {
	u.n++
	// The count keeps ids unique where the clock is coarse (Windows).
	id := "e" + strings.Repeat("x", u.n%3) + string(rune('a'+u.n%26)) + strconv.Itoa(u.n) + time.Now().Format("150405.000000000")
	b, err := wire.Encode(typ, id, u.sess.info.ID, time.Now(), fields)
	testutil.Success(u.t, err)
	u.recv(b)
	return id
}

// reply sends request r1 and returns it once it is sent. Reply itself
// returns only at the engine's decision (reply.accepted, issue #15), which
// these tests deliver by hand, so it runs on its own goroutine until then
// (or until the test ends).
func (u *unit) reply(ctx context.Context) *Reply {
	return u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "r1"})
}

// request is reply for any request.
func (u *unit) request(ctx context.Context, req ReplyRequest) *Reply {
	u.t.Helper()
	return u.start(ctx, req.RequestID, func(ctx context.Context) error {
		_, err := u.srv.Reply(ctx, req)
		return err
	})
}

// capture is request for a voice capture.
func (u *unit) capture(ctx context.Context, req CaptureRequest) *Reply {
	u.t.Helper()
	return u.start(ctx, req.RequestID, func(ctx context.Context) error {
		_, err := u.srv.Capture(ctx, req)
		return err
	})
}

// start runs call on its own goroutine until the test ends and returns
// the request id's Reply once its message is sent.
func (u *unit) start(ctx context.Context, id string, call func(context.Context) error) *Reply {
	u.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	u.t.Cleanup(func() {
		cancel()
		<-done
	})
	for {
		u.sess.mu.Lock()
		r := u.sess.replies[id]
		u.sess.mu.Unlock()
		if r != nil && r.MessageID() != "" {
			return r
		}
		select {
		case err := <-done:
			u.t.Fatalf("Reply: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
}

func TestSession_welcome(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{ServerVersion: "game/1.2"})
	acks := u.ft.messages("ack")
	testutil.Equal(t, "hello acked", acks[0]["acknowledgedMessageId"], any("hello-1"))
	_, hasSession := acks[0]["sessionId"]
	testutil.Equal(t, "ack of hello has no session", hasSession, false)
	w := u.ft.messages("welcome")
	testutil.Equal(t, "one welcome", len(w), 1)
	testutil.Equal(t, "session", w[0]["sessionId"], any(u.sess.info.ID))
	testutil.Equal(t, "version", w[0]["serverVersion"], any("game/1.2"))
	testutil.Equal(t, "envelope session", w[0]["sessionId"], w[0]["sessionId"])
	// The ack must come before welcome.
	testutil.Equal(t, "order", strings.Contains(string(u.ft.sent[0]), `"type":"ack"`), true)
}

func TestSession_acksAndDuplicates(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	b, _ := wire.Encode("capacity.update", "cap-1", "", time.Now(), map[string]any{"queueDepth": 1, "queueLimit": 20, "acceptingRequests": true})
	u.recv(b)
	b2, _ := wire.Encode("capacity.update", "cap-1", "", time.Now(), map[string]any{"queueDepth": 9, "queueLimit": 20, "acceptingRequests": false})
	u.recv(b2)
	c, _ := u.srv.Capacity()
	testutil.Equal(t, "duplicate not processed", c, capacity{QueueDepth: 1, QueueLimit: 20, AcceptingRequests: true, Known: true})
	acks := u.ft.messages("ack")
	testutil.Equal(t, "acks", len(acks), 3) // hello + 2
	testutil.Equal(t, "first not duplicate", acks[1]["duplicate"], nil)
	testutil.Equal(t, "second duplicate", acks[2]["duplicate"], any(true))
	// An ack is never acked.
	u.in("ack", map[string]any{"acknowledgedMessageId": "nothing"})
	testutil.Equal(t, "no ack of ack", len(u.ft.messages("ack")), 3)
}

func TestSession_disableAcks(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{DisableAcks: true})
	u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 20, "acceptingRequests": true})
	testutil.Equal(t, "no acks", len(u.ft.messages("ack")), 0)
}

func TestSession_dedupWindowPerSession(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{DedupWindow: 2})
	for _, id := range []string{"a", "b", "a", "c", "a"} {
		b, _ := wire.Encode("x.unknown", id, "", time.Now(), nil)
		u.recv(b)
	}
	var dups []any
	for _, a := range u.ft.messages("ack")[1:] {
		dups = append(dups, a["duplicate"])
	}
	// window 2: a b [a dup] c (evicts a) [a new]
	testutil.Equal(t, "duplicates", dups, []any{nil, nil, true, nil, nil})
}

func TestSession_ackTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 15 * time.Second})
		ctx := context.Background()
		r := u.reply(ctx)
		testutil.Equal(t, "pending", u.srv.MessageStatus(r.MessageID()), MessagePending)
		time.Sleep(14 * time.Second)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("ended before the timeout")
		default:
		}
		time.Sleep(2 * time.Second)
		_, err := r.Wait(ctx)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		testutil.Equal(t, "unacked", u.srv.MessageStatus(r.MessageID()), MessageUnacked)
	})
}

func TestSession_ackedRequestDoesNotTimeOut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: time.Second, IdleTimeout: -1})
		r := u.reply(context.Background())
		u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
		testutil.Equal(t, "acked", u.srv.MessageStatus(r.MessageID()), MessageAcked)
		time.Sleep(time.Hour)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("acked request ended")
		default:
		}
		u.sess.end(ErrConnectionLost)
		_, err := r.Wait(context.Background())
		testutil.ErrorIs(t, err, ErrConnectionLost)
	})
}

func TestSession_idleTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{IdleTimeout: time.Minute})
		ctx := context.Background()
		r := u.reply(ctx)
		u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
		u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 1})
		// Queued: any engine message (here capacity.update) keeps it
		// waiting, however long the queue takes.
		for i := 0; i < 12; i++ {
			time.Sleep(50 * time.Second)
			u.in("capacity.update", map[string]any{"queueDepth": 1, "queueLimit": 20, "acceptingRequests": true})
		}
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("queued reply timed out")
		default:
		}
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hel"})
		time.Sleep(59 * time.Second)
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 1, "delta": "lo"})
		time.Sleep(59 * time.Second)
		synctest.Wait()
		select {
		case <-r.Done():
			t.Fatal("active reply timed out while messages flowed")
		default:
		}
		time.Sleep(2 * time.Second)
		_, err := r.Wait(ctx)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		synctest.Wait()
		testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
	})
}

// Issue #9: a reply the engine accepted (or only acked) and then never
// started, with the engine silent, waited forever.
func TestSession_idleTimeoutWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, accepted := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			u := newUnit(t, &ServerOptions{IdleTimeout: time.Minute, AckTimeout: -1})
			ctx := context.Background()
			r := u.reply(ctx)
			u.in("ack", map[string]any{"acknowledgedMessageId": r.MessageID()})
			if accepted {
				u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 3})
			}
			time.Sleep(59 * time.Second)
			synctest.Wait()
			select {
			case <-r.Done():
				t.Fatal("timed out early")
			default:
			}
			time.Sleep(2 * time.Second)
			_, err := r.Wait(ctx)
			testutil.ErrorIs(t, err, ErrNoAnswer)
			synctest.Wait()
			testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
		})
	}
}

func TestSession_failFast(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{FailFast: true})
	u.in("capacity.update", map[string]any{"queueDepth": 20, "queueLimit": 20, "acceptingRequests": false})
	_, err := u.srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi"})
	testutil.ErrorIs(t, err, ErrBusy)
	u.sess.end(ErrConnectionLost)
	_, err = u.srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi"})
	testutil.ErrorIs(t, err, ErrNotConnected)
}

func TestSession_invalidPayloadAttribution(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{AckTimeout: -1})
	ctx := context.Background()
	welcome := u.ft.messages("welcome")[0]["messageId"].(string)
	u.in("ack", map[string]any{"acknowledgedMessageId": welcome})
	r1 := u.reply(ctx)
	u.in("ack", map[string]any{"acknowledgedMessageId": r1.MessageID()})
	// Another character: r2 need not wait for r1's reply.accepted.
	r2 := u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "d", Card: u.card, Text: "again", RequestID: "r2"})
	u.in("request.error", map[string]any{"code": "invalid_payload", "message": "Missing RPEngine eventId."})
	_, err := r2.Wait(ctx)
	var re *RequestError
	testutil.ErrorAs(t, err, &re)
	testutil.ErrorIs(t, err, ErrInvalidPayload)
	testutil.Equal(t, "source", re.SourceMessageID, r2.MessageID())
	testutil.Equal(t, "request", re.RequestID, "r2")
	testutil.Equal(t, "rejected", u.srv.MessageStatus(r2.MessageID()), MessageRejected)
	select {
	case <-r1.Done():
		t.Fatal("the acked request was failed")
	default:
	}
}

func TestSession_slowConsumer(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{MaxPendingAudio: 2 * time.Second})
	ctx := context.Background()
	r := u.reply(ctx)
	u.in("reply.audio.start", map[string]any{"requestId": "r1", "format": "pcm_s16le", "sampleRate": 44100, "channels": 1})
	pcm := base64.StdEncoding.EncodeToString(make([]byte, 2*11025)) // 0.25 s
	for i := 0; i < 12; i++ {
		u.in("reply.audio.chunk", map[string]any{"requestId": "r1", "sequence": i, "segmentSequence": i,
			"segmentChunkSequence": 0, "segmentChunkCount": 1, "data": pcm})
	}
	_, err := r.Wait(ctx)
	testutil.ErrorIs(t, err, ErrSlowConsumer)
	testutil.Equal(t, "cancelled on the engine", len(u.ft.messages("request.cancel")), 1)
	// The events held stay bounded and end with the error.
	var segs int
	var last Event
	for ev := range r.Events() {
		if ev.Kind == EventSegment {
			segs++
		}
		last = ev
	}
	testutil.Equal(t, "segments kept", segs, 8)
	testutil.ErrorIs(t, last.Err, ErrSlowConsumer)
}

func TestSession_textCoalesces(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	for i := 0; i < 5000; i++ {
		u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": i, "delta": "a"})
	}
	ev, err := r.Next(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "kind", ev.Kind, EventText)
	testutil.Equal(t, "latest text", len(ev.Text), 5000)
	r.mu.Lock()
	n := len(r.queue) - r.head
	r.mu.Unlock()
	testutil.Equal(t, "nothing else queued", n, 0)
}

func TestSession_endFailsEverything(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := u.srv.SyncCharacter(ctx, "g", "d", u.card)
		done <- err
	}()
	for len(u.ft.messages("character.sync")) == 0 {
		time.Sleep(time.Millisecond)
	}
	u.sess.end(ErrConnectionLost)
	_, err := r.Wait(ctx)
	testutil.ErrorIs(t, err, ErrConnectionLost)
	testutil.ErrorIs(t, <-done, ErrConnectionLost)
	_, live := u.srv.Session()
	testutil.Equal(t, "detached", live, false)
	_ = errors.New
}

// Issue #4: duplicate detection is per session; a new session starts a
// fresh window.
func TestSession_dedupPerSession(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	b, _ := wire.Encode("x.unknown", "same-id", "", time.Now(), nil)
	u.recv(b)
	u.recv(b)
	ft2 := &fakeTransport{}
	u.srv.mu.Lock()
	u.srv.handshake++
	u.srv.mu.Unlock()
	sess2, err := u.srv.attach(ft2, "hello-2", "test")
	testutil.Success(t, err)
	testutil.Equal(t, "old transport closed with 3000", u.ft.closed, 3000)
	sess2.receive(b)
	acks := ft2.messages("ack")
	testutil.Equal(t, "fresh window", acks[len(acks)-1]["duplicate"], nil)
	// The old session's messages are no longer processed.
	before := len(u.ft.messages("ack"))
	u.recv(b)
	testutil.Equal(t, "old session ignores", len(u.ft.messages("ack")), before)
}

// segmentTransport is a transport with a reply message of its own, as the
// file mailbox has (reply.audio.segment).
type segmentTransport struct{ fakeTransport }

func (*segmentTransport) handleReply(r *Reply, typ string, data []byte) bool {
	if typ != "reply.audio.segment" {
		return false
	}
	var m struct {
		SegmentSequence int `json:"segmentSequence"`
	}
	_ = json.Unmarshal(data, &m)
	r.pushSegment(stream.Segment{Index: m.SegmentSequence, SampleRate: 44100, Samples: make([]int16, 441), Duration: 10 * time.Millisecond})
	return true
}

func TestSession_transportReplyHandler(t *testing.T) {
	t.Parallel()
	srv, err := NewServer(&ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	testutil.Success(t, err)
	st := &segmentTransport{}
	srv.mu.Lock()
	srv.handshake++
	srv.mu.Unlock()
	sess, err := srv.attach(st, "h", "v")
	testutil.Success(t, err)
	c, _ := card.Parse([]byte(unitCard))
	u := &unit{t: t, srv: srv, ft: &st.fakeTransport, sess: sess, card: c}
	r := u.reply(context.Background())
	b, _ := wire.Encode("reply.audio.segment", "s1", "", time.Now(), map[string]any{"requestId": "r1", "segmentSequence": 0})
	sess.receive(b)
	ev, err := r.Next(context.Background())
	testutil.Success(t, err)
	testutil.Equal(t, "segment", []any{ev.Kind, ev.Segment.Index, len(ev.Segment.Samples)}, []any{EventSegment, 0, 441})
	sess.end(ErrConnectionLost)
}

// Issue #4: resynchronisation can never loop.
func TestSession_resyncNeverLoops(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	ctx := context.Background()
	r := u.reply(ctx)
	for i := 0; i < 10; i++ {
		select {
		case <-r.Done():
		default:
			u.in("request.error", map[string]any{"requestId": "r1", "sourceMessageId": r.MessageID(), "code": "card_resync_required", "message": "no", "retryable": true})
		}
	}
	_, err := r.Wait(ctx)
	testutil.Error(t, err)
	testutil.ErrorIs(t, err, ErrCardResyncRequired)
	sent := u.ft.messages("reply.request")
	if len(sent) > 1+maxResyncs {
		t.Fatalf("%d attempts", len(sent))
	}
	for _, m := range sent {
		testutil.Equal(t, "same requestId", m["requestId"], any("r1"))
	}
	t.Logf("ended after %d attempts: %v", len(sent), err)
}

func TestSession_engineCancelledConnectionLost(t *testing.T) {
	t.Parallel()
	u := newUnit(t, nil)
	r := u.reply(context.Background())
	u.in("reply.cancelled", map[string]any{"requestId": "r1", "reason": "connection_lost"})
	_, err := r.Wait(context.Background())
	testutil.ErrorIs(t, err, ErrConnectionLost)
	testutil.ErrorIs(t, err, ErrCancelled)
}

func TestSession_syncNoAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 5 * time.Second})
		_, err := u.srv.SyncCharacter(context.Background(), "g", "c", u.card)
		testutil.ErrorIs(t, err, ErrNoAnswer)
		u.sess.end(ErrConnectionLost)
	})
}

// Issue #9: a character.sync the engine acked but never answered waited
// for ever when the caller's context had no deadline.
func TestSession_syncAckedNoAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, &ServerOptions{AckTimeout: 5 * time.Second, IdleTimeout: time.Minute})
		done := make(chan error, 1)
		go func() {
			_, err := u.srv.SyncCharacter(context.Background(), "g", "c", u.card)
			done <- err
		}()
		synctest.Wait()
		syncs := u.ft.messages("character.sync")
		testutil.Equal(t, "sent", len(syncs), 1)
		u.in("ack", map[string]any{"acknowledgedMessageId": syncs[0]["messageId"]})
		time.Sleep(59 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("ended early: %v", err)
		default:
		}
		time.Sleep(2 * time.Second)
		testutil.ErrorIs(t, <-done, ErrNoAnswer)
		u.sess.end(ErrConnectionLost)
	})
}

// Issue #4: nothing but the ack of hello goes before welcome, even for a
// request that was waiting for the session.
func TestSession_welcomeFirst(t *testing.T) {
	t.Parallel()
	srv, err := NewServer(&ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	testutil.Success(t, err)
	c, _ := card.Parse([]byte(unitCard))
	got := make(chan *Reply, 1)
	go func() {
		r, _ := srv.Reply(context.Background(), ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: c, Text: "hi"})
		got <- r
	}()
	ft := &fakeTransport{}
	srv.mu.Lock()
	srv.handshake++
	srv.mu.Unlock()
	sess, err := srv.attach(ft, "h", "v")
	testutil.Success(t, err)
	// Reply returns at the engine's decision (issue #15): wait for the
	// request on the wire instead.
	for len(ft.messages("reply.request")) == 0 {
		time.Sleep(time.Millisecond)
	}
	ft.mu.Lock()
	var types []string
	for _, b := range ft.sent {
		var m struct{ Type string }
		_ = json.Unmarshal(b, &m)
		types = append(types, m.Type)
	}
	ft.mu.Unlock()
	testutil.Equal(t, "order", types, []string{"ack", "welcome", "reply.request"})
	sess.end(ErrConnectionLost)
	if r := <-got; r == nil {
		t.Fatal("Reply returned no handle for a request that was sent")
	}
}

// Issue #15: the gate counts the requests sent that the last
// capacity.update does not show yet, until an update that follows their
// reply.accepted, or until they end.
func TestSession_capacityCountsInflight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, nil)
		ctx := context.Background()
		req := func(id, character string) ReplyRequest {
			return ReplyRequest{IntegrationID: "g", CharacterID: character, Card: u.card, Text: "hi", RequestID: id}
		}
		u.in("capacity.update", map[string]any{"queueDepth": 18, "queueLimit": 20, "acceptingRequests": true})
		u.request(ctx, req("r1", "a"))
		u.request(ctx, req("r2", "b"))
		got := make(chan error, 1)
		go func() {
			_, err := u.srv.Reply(ctx, req("r3", "c"))
			got <- err
		}()
		synctest.Wait()
		testutil.Equal(t, "18 + 2 in flight: r3 waits", len(u.ft.messages("reply.request")), 2)
		// r1 accepted; the update after it shows r1 (19), and r2 still counts.
		u.in("reply.accepted", map[string]any{"requestId": "r1", "eventId": "e", "resolvedCardHash": strings.Repeat("0", 64), "queueDepth": 19})
		u.in("capacity.update", map[string]any{"queueDepth": 19, "queueLimit": 20, "acceptingRequests": true})
		synctest.Wait()
		testutil.Equal(t, "19 + 1: r3 still waits", len(u.ft.messages("reply.request")), 2)
		// r2 ends before it was accepted: it no longer counts.
		u.in("request.error", map[string]any{"requestId": "r2", "sourceMessageId": "x", "code": "duplicate_request", "message": "no", "retryable": false})
		synctest.Wait()
		testutil.Equal(t, "19 + 0: r3 sent", len(u.ft.messages("reply.request")), 3)
		u.sess.end(ErrConnectionLost)
		testutil.Success(t, <-got)
	})
}

// Issue #15: before the first capacity.update, upstream's limit of 20 is
// assumed.
func TestSession_capacityAssumedBeforeUpdate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		u := newUnit(t, nil)
		ctx := context.Background()
		for i := range 20 {
			u.request(ctx, ReplyRequest{IntegrationID: "g", CharacterID: fmt.Sprint("c", i), Card: u.card, Text: "hi", RequestID: fmt.Sprint("r", i)})
		}
		got := make(chan error, 1)
		go func() {
			_, err := u.srv.Reply(ctx, ReplyRequest{IntegrationID: "g", CharacterID: "c", Card: u.card, Text: "hi", RequestID: "last"})
			got <- err
		}()
		synctest.Wait()
		testutil.Equal(t, "21st waits", len(u.ft.messages("reply.request")), 20)
		u.in("capacity.update", map[string]any{"queueDepth": 0, "queueLimit": 30, "acceptingRequests": true})
		synctest.Wait()
		testutil.Equal(t, "sent once the engine says it has room", len(u.ft.messages("reply.request")), 21)
		u.sess.end(ErrConnectionLost)
		testutil.Success(t, <-got)
	})
}

// Issue #16: voice.capture.* messages for a request that is not a voice
// capture were taken as the capture's (a state event, and speech_ended
// moved the request on to its reply phase). They are an anomaly now and
// change nothing: not the events, not the phase, not the answered flag
// that stops the ack timer.
func TestSession_captureEventsForAReply(t *testing.T) {
	t.Parallel()
	u := newUnit(t, &ServerOptions{AckTimeout: -1, IdleTimeout: -1})
	ctx := context.Background()
	r := u.reply(ctx)
	u.in("voice.capture.state", map[string]any{"requestId": "r1", "state": "speech_ended", "seconds": 1.5})
	u.in("voice.capture.level", map[string]any{"requestId": "r1", "rms": 0.5, "peak": 0.9, "seconds": 1})
	u.in("voice.capture.transcript", map[string]any{"requestId": "r1", "text": "\x1b]0;owned\x07"})
	r.mu.Lock()
	replying, queued := r.replying(), len(r.queue)-r.head
	r.mu.Unlock()
	testutil.Equal(t, "moved on to a reply phase", replying, false)
	testutil.Equal(t, "answered", r.answered(), false)
	testutil.Equal(t, "events queued", queued, 3)
	for i := 0; i < 3; i++ {
		ev, err := r.Next(ctx)
		testutil.Success(t, err)
		testutil.Equal(t, "event kind", ev.Kind, EventAnomaly)
		testutil.Equal(t, "anomaly kind", ev.Anomaly.Kind, stream.AnomalyUnexpectedEvent)
	}
	// The reply itself goes on as if nothing had come.
	u.in("reply.text.delta", map[string]any{"requestId": "r1", "sequence": 0, "delta": "Hi"})
	u.in("reply.completed", map[string]any{"requestId": "r1"})
	res, err := r.Wait(ctx)
	testutil.Success(t, err)
	testutil.Equal(t, "text", res.Text, "Hi")
}

// Issue #16: messageIds are remembered by digest whatever their length,
// duplicates are still found, and an absurd id is reported once per
// session, bounded.
func TestSession_longMessageIDs(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	u := newUnit(t, &ServerOptions{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	big := func(c string) string { return strings.Repeat(c, 1<<20) }
	for _, id := range []string{big("a"), big("b"), big("c"), big("a"), "short"} {
		b, err := wire.Encode("future.kind", id, u.sess.info.ID, time.Now(), nil)
		testutil.Success(t, err)
		u.recv(b)
	}
	acks := u.ft.messages("ack")[1:] // after the hello's
	testutil.Equal(t, "acks", len(acks), 5)
	for i, dup := range []bool{false, false, false, true, false} {
		got, _ := acks[i]["duplicate"].(bool)
		testutil.Equal(t, "duplicate "+strconv.Itoa(i), got, dup)
	}
	testutil.Equal(t, "reports", strings.Count(log.String(), "over 256 bytes"), 1)
	if log.Len() > 2048 {
		t.Errorf("log of %d bytes for one report:\n%.3000s", log.Len(), log.String())
	}
}
